"""A parsed tree's nodes without sqlglot's generators, where that is faster.

sqlglot's traversals (``Expr.dfs``, ``Expr.iter_expressions``) are generators. In the
mypyc build of STEF (see ``setup.py``) they cost about three times what an index loop
over ``node.args`` does, compiled; run interpreted, the loop costs about twice what the
generators do. So each helper here takes the loop when this module is compiled
(:data:`NATIVE`) and the generators otherwise: the same nodes in the same order either
way (``tests/test_sql_nodes.py`` checks both).
"""

from __future__ import annotations

from typing import Final

from sqlglot import exp

#: Is this module compiled (an extension module, not a ``.py`` source)?
NATIVE: Final = not __file__.endswith(".py")


def push_children(node: exp.Expr, out: list[exp.Expr]) -> None:
    """Append ``node``'s children to ``out`` in ``node.iter_expressions()`` order."""
    if not NATIVE:
        out.extend(node.iter_expressions())
        return
    expr = exp.Expr
    for vs in node.args.values():
        if isinstance(vs, list):
            for v in vs:
                if isinstance(v, expr):
                    out.append(v)
        elif isinstance(vs, expr):
            out.append(vs)


def preorder(node: exp.Expr, prune: tuple[type[exp.Expr], ...] = ()) -> list[exp.Expr]:
    """``list(node.dfs(prune=…))``: ``node`` and the nodes below it, depth first, in
    reading order; the nodes below a node of a ``prune`` class are left out (not the node).

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT a + 1 FROM t WHERE b IN (SELECT c FROM u)")
    >>> [type(n).__name__ for n in preorder(q.args["where"], (exp.Query,))]
    ['Where', 'In', 'Column', 'Identifier', 'Subquery']
    """
    if not NATIVE:
        if not prune:
            return list(node.dfs())
        return list(node.dfs(prune=lambda n: isinstance(n, prune)))
    out: list[exp.Expr] = []
    stack: list[exp.Expr] = [node]
    expr = exp.Expr
    while stack:
        n = stack.pop()
        out.append(n)
        if prune and isinstance(n, prune):
            continue
        values = list(n.args.values())
        i = len(values)
        while i:  # the children in reverse, so that the first is popped first
            i -= 1
            vs = values[i]
            if isinstance(vs, list):
                j = len(vs)
                while j:
                    j -= 1
                    v = vs[j]
                    if isinstance(v, expr):
                        stack.append(v)
            elif isinstance(vs, expr):
                stack.append(vs)
    return out

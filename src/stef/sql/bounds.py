"""Two bounds on one column, the same way, in one AND or OR chain: ``height > 100 OR
height > 3300`` is ``height > 100``, and ``cost > 1500 AND cost > 5000`` is ``cost > 5000``.
One of the two does nothing, so it was meant for another column ("longer than 3300 or
higher than 100") or for the other side; a correct query states each bound once.

Only plain comparisons of a column with a number are read; a range (``x > 1 AND x < 9``)
bounds the column both ways and is never reported.

>>> import sqlglot
>>> redundant_bounds(sqlglot.parse_one("SELECT * FROM t WHERE h > 100 OR h > 3300"))
['h > 100 OR h > 3300']
>>> redundant_bounds(sqlglot.parse_one("SELECT * FROM t WHERE h > 100 AND h < 3300"))
[]
"""

from __future__ import annotations

from sqlglot import exp

_UPPER = (exp.LT, exp.LTE)
_LOWER = (exp.GT, exp.GTE)
_CHAINS = (exp.And, exp.Or)


def _links(node: exp.Expr, chain: type[exp.Expr]) -> list[exp.Expr]:
    """The conditions an AND (or OR) chain joins, parentheses opened."""
    out: list[exp.Expr] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is chain:
            stack += [n.expression, n.this]
        elif isinstance(n, exp.Paren) and type(n.this) is chain:
            stack.append(n.this)
        else:
            out.append(n)
    return out


def _bound(node: exp.Expr) -> tuple[tuple[str, str, bool], str] | None:
    """``((qualifier, column, is lower bound), number)`` of ``column < number`` and the like
    (either side), else None."""
    if not isinstance(node, _UPPER + _LOWER):
        return None
    col, num, lower = node.this, node.expression, isinstance(node, _LOWER)
    if isinstance(num, exp.Column) and isinstance(col, exp.Literal):
        col, num, lower = num, col, not lower
    if not isinstance(col, exp.Column) or not isinstance(num, exp.Literal) or num.is_string:
        return None
    return (col.table.casefold(), col.name.casefold(), lower), num.name


def redundant_bounds(tree: exp.Expr) -> list[str]:
    """The chains (as SQL) holding two bounds on one column the same way with two numbers
    (see the module doc)."""
    found: list[str] = []
    for node in tree.find_all(*_CHAINS):
        up = node.parent.parent if isinstance(node.parent, exp.Paren) else node.parent
        if type(up) is type(node):
            continue  # read from the chain's top
        seen: dict[tuple[str, str, bool], str] = {}
        for link in _links(node, type(node)):
            bound = _bound(link)
            if bound is None:
                continue
            key, number = bound
            if seen.setdefault(key, number) != number:
                found.append(node.sql())
                break
    return found

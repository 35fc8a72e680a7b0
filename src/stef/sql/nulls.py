"""Counts that NULLs make zero: ``COUNT(email) … WHERE email IS NULL`` counts the rows whose
email is NULL, and COUNT of a column skips its NULLs, so it is 0 whatever the data.

>>> import sqlglot
>>> [c.sql() for c in zero_counts(sqlglot.parse_one(
...     "SELECT COUNT(email) FROM customers WHERE email IS NULL"))]
['COUNT(email)']
>>> zero_counts(sqlglot.parse_one("SELECT COUNT(*) FROM customers WHERE email IS NULL"))
[]
"""

from __future__ import annotations

from sqlglot import exp

from stef.sql.predicates import conjuncts
from stef.sql.walk import search

_COUNTS: tuple[type[exp.Count]] = (exp.Count,)


def null_columns(where: exp.Expr) -> set[tuple[str, str]]:
    """(qualifier, column) of each ``col IS NULL`` AND-ed into a condition."""
    out: set[tuple[str, str]] = set()
    for part in conjuncts(where):
        if isinstance(part, exp.Is) and isinstance(part.expression, exp.Null):
            col = part.this
            if isinstance(col, exp.Column):
                out.add((col.table.casefold(), col.name.casefold()))
    return out


def zero_counts(tree: exp.Expr) -> list[exp.Count]:
    """Each COUNT of a column that its own SELECT's WHERE keeps NULL (see the module's doc)."""
    out: list[exp.Count] = []
    for count in search(tree, _COUNTS):
        col = count.this
        if not isinstance(col, exp.Column) or count.find_ancestor(exp.Window) is not None:
            continue
        sel = count.find_ancestor(exp.Select)
        where = sel.args.get("where") if isinstance(sel, exp.Select) else None
        if where is None:
            continue
        nulls = null_columns(where.this)
        if (col.table.casefold(), col.name.casefold()) in nulls or (
            not col.table and any(name == col.name.casefold() for _, name in nulls)
        ):
            out.append(count)
    return out

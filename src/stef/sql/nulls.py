"""Counts that NULLs make zero: ``COUNT(email) … WHERE email IS NULL`` counts the rows whose
email is NULL, and COUNT of a column skips its NULLs, so it is 0 whatever the data.

>>> import sqlglot
>>> q = sqlglot.parse_one("SELECT COUNT(email), COUNT(*) FROM customers WHERE email IS NULL")
>>> [c.sql() for c in zero_counts(list(q.find_all(exp.AggFunc)))]
['COUNT(email)']
"""

from __future__ import annotations

from sqlglot import exp

from stef.sql.predicates import conjuncts


def null_columns(where: exp.Expr) -> set[tuple[str, str]]:
    """(qualifier, column) of each ``col IS NULL`` AND-ed into a condition."""
    out: set[tuple[str, str]] = set()
    for part in conjuncts(where):
        if isinstance(part, exp.Is) and isinstance(part.expression, exp.Null):
            col = part.this
            if isinstance(col, exp.Column):
                out.add((col.table.casefold(), col.name.casefold()))
    return out


def zero_counts(aggs: list[exp.AggFunc]) -> list[exp.Count]:
    """Each COUNT among a query's aggregates (the ones the SQL spec's walk collected) of a
    column that its own SELECT's WHERE keeps NULL (see the module's doc)."""
    out: list[exp.Count] = []
    held: dict[int, set[tuple[str, str]]] = {}  # each SELECT's WHERE read once
    for count in aggs:
        if not isinstance(count, exp.Count):
            continue
        col = count.this
        if not isinstance(col, exp.Column) or count.find_ancestor(exp.Window) is not None:
            continue
        sel = count.find_ancestor(exp.Select)
        where = sel.args.get("where") if isinstance(sel, exp.Select) else None
        if where is None:
            continue
        nulls = held.get(id(where))
        if nulls is None:
            nulls = held[id(where)] = null_columns(where.this)
        if (col.table.casefold(), col.name.casefold()) in nulls or (
            not col.table and any(name == col.name.casefold() for _, name in nulls)
        ):
            out.append(count)
    return out


_NULL_REJECTING = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Like,
    exp.ILike,
    exp.In,
    exp.Between,
)


def left_joins(sel: exp.Select) -> list[exp.Join]:
    """The joins of a SELECT that are LEFT joins of a plain table.

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT 1 FROM a LEFT JOIN b ON b.a_id = a.id JOIN c ON c.id = a.c")
    >>> [j.this.name for j in left_joins(q)]
    ['b']
    """
    return [
        j
        for j in sel.args.get("joins") or ()
        if str(j.args.get("side") or "").upper() == "LEFT" and isinstance(j.this, exp.Table)
    ]


def nullified_outer(sel: exp.Select) -> list[str]:
    """Tables a SELECT LEFT JOINs whose columns a WHERE condition tests in a way no NULL
    passes (``LEFT JOIN orders o … WHERE o.order_date >= '2024-01-01'``): the rows with no
    match are dropped again, as by an inner join. Names of those tables, lower-case.

    >>> import sqlglot
    >>> nullified_outer(sqlglot.parse_one("SELECT c.id, COUNT(o.id) FROM customers c LEFT JOIN"
    ...     " orders o ON o.customer_id = c.id WHERE o.total > 5 GROUP BY c.id"))
    ['orders']
    >>> nullified_outer(sqlglot.parse_one("SELECT c.id FROM customers c LEFT JOIN orders o"
    ...     " ON o.customer_id = c.id AND o.total > 5"))
    []
    """
    where = sel.args.get("where")
    if where is None:
        return []
    lefts = {j.this.alias_or_name.casefold(): j.this.name.casefold() for j in left_joins(sel)}
    out: list[str] = []
    for part in conjuncts(where.this) if lefts else ():
        if not isinstance(part, _NULL_REJECTING) or part.find(exp.Coalesce, exp.Is, exp.Case):
            continue
        for col in part.find_all(exp.Column):
            table = lefts.get(col.table.casefold())
            if table and table not in out and col.find_ancestor(exp.Subquery) is None:
                out.append(table)
    return out


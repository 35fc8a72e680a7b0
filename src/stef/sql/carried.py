"""Which source columns an output carries through a derived table or a CTE.

``SELECT type FROM (SELECT f.building_use AS type …) AS t`` returns the building use under
the name ``type``; a reader of the outer SELECT alone sees a column named ``type``. The
names an output carries are its own column's and, where that column is an output of a
derived table or a CTE of the same query, the columns that output is computed from (a few
levels down). A flag of the SQL spec (:mod:`stef.sql.spec`) that the request checks read.

>>> import sqlglot
>>> carried_columns(sqlglot.parse_one(
...     "SELECT type, n FROM (SELECT f.building_use AS type, COUNT(*) AS n FROM floor AS f"
...     " GROUP BY f.building_use) AS t"))
[['building_use'], []]
>>> carried_columns(sqlglot.parse_one(
...     "WITH s AS (SELECT access_level AS lvl FROM rooms) SELECT x.lvl, lvl FROM s AS x"))
[['access_level'], ['access_level']]
"""

from __future__ import annotations

from sqlglot import exp

#: How many derived tables or CTEs deep an output's columns are followed.
_DEPTH = 3


def _sources(sel: exp.Select, ctes: dict[str, exp.Select]) -> dict[str, exp.Select]:
    """The SELECTs the FROM and JOIN sources of ``sel`` stand for, by the name the query
    gives them (a derived table's alias, a CTE's name or the alias it is read under)."""
    found: dict[str, exp.Select] = {}
    from_ = sel.args.get("from_")
    for src in [from_.this if from_ else None, *(j.this for j in sel.args.get("joins") or ())]:
        if isinstance(src, exp.Subquery) and isinstance(src.this, exp.Select):
            found[src.alias_or_name.casefold()] = src.this
        elif isinstance(src, exp.Table) and src.name.casefold() in ctes:
            inner = ctes[src.name.casefold()]
            found[src.alias_or_name.casefold()] = inner
            found[src.name.casefold()] = inner
    return found


def _carried(
    node: exp.Expr,
    sel: exp.Select,
    ctes: dict[str, exp.Select],
    depth: int,
    seen: dict[int, dict[str, exp.Expr]],
) -> list[str]:
    """The source columns the expression ``node`` of ``sel`` reads through its derived
    tables and CTEs (not the columns of ``sel``'s own sources: those the caller has)."""
    if depth <= 0:
        return []
    sources = _sources(sel, ctes)
    if not sources:
        return []
    names: list[str] = []
    for col in node.find_all(exp.Column):
        qualifier = col.table.casefold()
        if qualifier:  # a column of a base table, or of the derived table it names
            inners = [sources[qualifier]] if qualifier in sources else []
        else:  # unqualified: the one derived source there is, if it has that output
            distinct = list({id(v): v for v in sources.values()}.values())
            inners = distinct if len(distinct) == 1 else []
        for inner in inners:
            out = _outputs_by_name(inner, seen).get(col.name.casefold())
            if out is None:
                continue
            expr = out.unalias()
            names += [c.name.casefold() for c in expr.find_all(exp.Column)]
            names += _carried(expr, inner, ctes, depth - 1, seen)
    return list(dict.fromkeys(n for n in names if n))


def _outputs_by_name(sel: exp.Select, seen: dict[int, dict[str, exp.Expr]]) -> dict[str, exp.Expr]:
    """A SELECT's outputs by their folded names (the first of a repeated name), built once
    per SELECT and call (``seen``): a wide query's outputs are looked up, not scanned, for
    each column."""
    found = seen.get(id(sel))
    if found is None:
        found = {}
        for out in sel.expressions:
            found.setdefault(out.alias_or_name.casefold(), out)
        seen[id(sel)] = found
    return found


def carried_columns(sel: exp.Expr) -> list[list[str]]:
    """For each output of the effective SELECT ``sel``, in order, the source columns it
    carries through derived tables and CTEs (empty where it reads its sources directly)."""
    if not isinstance(sel, exp.Select):
        return []
    root = sel.root()
    ctes = {
        cte.alias_or_name.casefold(): cte.this
        for cte in root.find_all(exp.CTE)
        if isinstance(cte.this, exp.Select)
    }
    seen: dict[int, dict[str, exp.Expr]] = {}
    return [_carried(out.unalias(), sel, ctes, _DEPTH, seen) for out in sel.expressions]

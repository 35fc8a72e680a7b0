"""Which source columns an output carries through a derived table or a CTE.

``SELECT type FROM (SELECT f.building_use AS type …) AS t`` returns the building use under
the name ``type``; a reader of the outer SELECT alone sees a column named ``type``. The
names an output carries are its own column's and, where that column is an output of a
derived table or a CTE of the same query, the columns that output is computed from (a few
levels down). A flag of the SQL spec (:mod:`stef.sql.spec`) that the request checks read.

Columns are read as :class:`~stef.sql.text.TreeText` captured them before rendering (a
rendered subtree's columns stand without their qualifiers until the spec is done).

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

from collections.abc import Mapping, Sequence

from sqlglot import exp

from stef.sql.text import ColumnInfo
from stef.sql.walk import search

#: How many derived tables or CTEs deep an output's columns are followed.
_DEPTH = 3

_Outputs = dict[int, dict[str, exp.Expr]]


class _Reader:
    """One query's look-ups: its CTEs by name, each SELECT's sources and outputs by name
    (each built once), and each column's name and qualifier as captured before rendering."""

    def __init__(self, ctes: Sequence[exp.CTE], columns: Mapping[int, ColumnInfo]) -> None:
        self.columns = columns
        self.ctes = {
            cte.alias_or_name.casefold(): cte.this
            for cte in ctes
            if isinstance(cte.this, exp.Select)
        }
        self.outputs: _Outputs = {}
        self.found: dict[int, dict[str, exp.Select]] = {}

    def column(self, col: exp.Column) -> tuple[str, str]:
        """(qualifier, name) of a column, folded."""
        info = self.columns.get(id(col))
        if info is not None:
            return (info.qualifier or ""), info.raw
        return col.table.casefold(), col.name.casefold()

    def output_name(self, out: exp.Expr) -> str:
        """The name an output goes by: its alias, else its column's name."""
        if isinstance(out, exp.Alias):
            return out.alias.casefold()
        return self.column(out)[1] if isinstance(out, exp.Column) else ""

    def by_name(self, sel: exp.Select) -> dict[str, exp.Expr]:
        """``sel``'s outputs by name (the first of a repeated name)."""
        found = self.outputs.get(id(sel))
        if found is None:
            found = {}
            for out in sel.expressions:
                found.setdefault(self.output_name(out), out)
            self.outputs[id(sel)] = found
        return found

    def sources(self, sel: exp.Select) -> dict[str, exp.Select]:
        """The SELECTs the FROM and JOIN sources of ``sel`` stand for, by the name the query
        gives them (a derived table's alias, a CTE's name or the alias it is read under)."""
        if id(sel) in self.found:
            return self.found[id(sel)]
        found: dict[str, exp.Select] = self.found.setdefault(id(sel), {})
        from_ = sel.args.get("from_")
        for src in [from_.this if from_ else None, *(j.this for j in sel.args.get("joins") or ())]:
            if isinstance(src, exp.Subquery) and isinstance(src.this, exp.Select):
                found[src.alias_or_name.casefold()] = src.this
            elif isinstance(src, exp.Table) and src.name.casefold() in self.ctes:
                inner = self.ctes[src.name.casefold()]
                found[src.alias_or_name.casefold()] = inner
                found[src.name.casefold()] = inner
        return found

    def carried(self, node: exp.Expr, sel: exp.Select, depth: int) -> list[str]:
        """The source columns the expression ``node`` of ``sel`` reads through its derived
        tables and CTEs (not the columns of ``sel``'s own sources: those the caller has)."""
        sources = self.sources(sel) if depth > 0 else {}
        if not sources:
            return []
        distinct = list({id(v): v for v in sources.values()}.values())
        names: list[str] = []
        for col in search(node, (exp.Column,)):
            qualifier, name = self.column(col)
            if qualifier:  # a column of a base table, or of the derived table it names
                inners = [sources[qualifier]] if qualifier in sources else []
            else:  # unqualified: the one derived source there is, if it has that output
                inners = distinct if len(distinct) == 1 else []
            for inner in inners:
                out = self.by_name(inner).get(name)
                if out is None:
                    continue
                expr = out.unalias()
                names += [self.column(c)[1] for c in search(expr, (exp.Column,))]
                names += self.carried(expr, inner, depth - 1)
        return list(dict.fromkeys(n for n in names if n))


def carried_columns(
    sel: exp.Expr,
    columns: Mapping[int, ColumnInfo] | None = None,
    ctes: Sequence[exp.CTE] | None = None,
) -> list[list[str]]:
    """For each output of the effective SELECT ``sel``, in order, the source columns it
    carries through derived tables and CTEs (empty where it reads its sources directly).
    ``columns``: the columns as captured before rendering (:attr:`TreeText.columns`);
    ``ctes``: the query's CTEs, as the SQL spec's one walk of the tree collected them
    (searched for in ``sel``'s tree when not given)."""
    if not isinstance(sel, exp.Select):
        return []
    if ctes is None:
        ctes = search(sel.root(), (exp.CTE,))
    reader = _Reader(ctes, columns or {})
    return [reader.carried(out.unalias(), sel, _DEPTH) for out in sel.expressions]

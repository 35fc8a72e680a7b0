"""What a SELECT's GROUP BY keys determine: columns output bare that they do not
(:func:`bare_under_group`), a month of the year grouped with no year beside it
(:func:`month_without_year`), and totals over the groups (:func:`rolls_up`).

``SELECT first_name, last_name … GROUP BY first_name`` shows one arbitrary last name per
first name: standard SQL refuses it, SQLite and MySQL return some row's value. A column
is determined (and not reported) when it is a key, when a key is its table's identifier
(``GROUP BY c.id`` shows ``c.name``), when an ``=`` of the ON or WHERE conditions ties a
key to a column of its table (``GROUP BY t2.dno`` with ``t1.dno = t2.dno`` shows
``t1.dname``), when it shares a key's stem (``start_station_id`` beside
``start_station_name``), or, in SQLite or where no dialect is named, when the SELECT's one
aggregate is MIN or MAX (SQLite takes the bare columns from the row holding that extreme;
other engines refuse the query or return an arbitrary row's value).

>>> import sqlglot
>>> bare_under_group(sqlglot.parse_one(
...     "SELECT first_name, last_name FROM e GROUP BY first_name ORDER BY COUNT(*) DESC"))
['last_name']
>>> bare_under_group(sqlglot.parse_one("SELECT name, COUNT(*) FROM e GROUP BY id"))
[]
"""

from __future__ import annotations

from sqlglot import exp

from stef.sql.outputs import source_tables, written_key
from stef.sql.sources import own_key
from stef.sql.walk import search

#: Last words of a column that identifies its row (or the row of a table it refers to).
_IDENTIFIER_ENDS = ("id", "key", "code", "number", "_no", "num")

_EQS: tuple[type[exp.EQ]] = (exp.EQ,)
_COLUMNS: tuple[type[exp.Column]] = (exp.Column,)
_AGGREGATES: tuple[type[exp.AggFunc]] = (exp.AggFunc,)

ColumnKey = tuple[str, str]


def _identifier(column: str, table: str) -> bool:
    return own_key(column, table) or column.endswith(_IDENTIFIER_ENDS)


def _keys(sel: exp.Select, group: exp.Group) -> list[exp.Expr]:
    """The expressions grouped (a position or an output's alias stands for that output)."""
    outputs = sel.expressions
    aliases = {e.alias.casefold(): e.unalias() for e in outputs if isinstance(e, exp.Alias)}
    exprs: list[exp.Expr] = []
    for k in group.expressions:
        if isinstance(k, exp.Literal) and k.is_int and 0 < int(k.this) <= len(outputs):
            exprs.append(outputs[int(k.this) - 1].unalias())
        elif type(k) is exp.Column and not k.table and k.name.casefold() in aliases:
            exprs.append(aliases[k.name.casefold()])
        else:
            exprs.append(k)
    return exprs


def _grouped(sel: exp.Select, group: exp.Group) -> tuple[set[ColumnKey], set[str]]:
    """The key columns with every column an ``=`` ties to one, and the expressions grouped
    (as SQL text)."""
    exprs = _keys(sel, group)
    keys = {written_key(c) for e in exprs for c in search(e, _COLUMNS)}
    tied = set(keys)
    for eq in search(sel, _EQS):
        a, b = eq.this, eq.expression
        if type(a) is exp.Column and type(b) is exp.Column:
            if written_key(a) in keys:
                tied.add(written_key(b))
            if written_key(b) in keys:
                tied.add(written_key(a))
    return tied, {e.sql().casefold() for e in exprs}


def bare_under_group(sel: exp.Select, extreme_row: bool = True) -> list[str]:
    """Names of the columns ``sel`` outputs outside any aggregate that its GROUP BY keys
    do not determine (see the module's doc); empty without a GROUP BY. Where
    ``extreme_row`` (SQLite, or no dialect named), a column beside a lone MIN or MAX is that
    row's."""
    group = sel.args.get("group")
    if group is None or not group.expressions or any(e.is_star for e in sel.expressions):
        return []
    aggregates = [
        a
        for e in sel.expressions
        for a in search(e, _AGGREGATES)
        if not a.find_ancestor(exp.Window)
    ]
    if extreme_row and len(aggregates) == 1 and type(aggregates[0]) in (exp.Min, exp.Max):
        return []
    tables = source_tables(sel)
    lone = sel.args.get("from_") is not None and not sel.args.get("joins")  # every qualifier
    # names the one source
    tied, grouped = _grouped(sel, group)
    if lone:
        tied = {("", c) for _, c in tied}
    determined = {q for q, c in tied if _identifier(c, tables.get(q, ""))}
    determined |= {q for q, _ in tied} - {written_key(c)[0] for c in search(group, _COLUMNS)}
    names = {c for _, c in tied}
    out: list[str] = []
    for e in sel.expressions:
        if e.unalias().sql().casefold() in grouped:
            continue
        for col in search(e, _COLUMNS):
            q, name = written_key(col)
            q = "" if lone else q
            if (q, name) in tied or name in names or q in determined or (not q and determined):
                continue
            if col.find_ancestor(*_AGGREGATED) is not None:
                continue
            stem = name.rpartition("_")[0]
            if stem and any(n.startswith(stem + "_") for n in names):
                continue
            if name not in out:
                out.append(name)
    return out


#: What a column is aggregated under: an aggregate, its FILTER (WHERE …) or WITHIN GROUP
#: (ORDER BY …), a window, a subquery.
_AGGREGATED = (exp.AggFunc, exp.Filter, exp.WithinGroup, exp.Window, exp.Subquery)

_TRUNCS = (exp.DateTrunc, exp.TimestampTrunc, exp.DatetimeTrunc, exp.TimeToStr, exp.Year)
_YEAR_NAME = ("year", "date", "time", "_at", "day", "yr")


def _period_part(key: exp.Expr) -> str | None:
    """``"month"`` for a month of the year (``EXTRACT(MONTH FROM d)``, ``MONTH(d)``,
    ``strftime('%m', d)``), ``"year"`` for a key that holds the year (a year, a truncated
    date, a format with ``%Y``, a column named for a year or a date), else None."""
    if isinstance(key, exp.Extract):
        unit = key.name.casefold()
        return "month" if unit == "month" else "year" if "year" in unit else None
    if isinstance(key, exp.Month):
        return "month"
    if isinstance(key, exp.TimeToStr):
        fmt = key.text("format")
        if "%Y" in fmt or "%y" in fmt:
            return "year"
        return "month" if any(m in fmt for m in ("%m", "%b", "%B")) else None
    if isinstance(key, _TRUNCS):
        return "year"
    if type(key) is exp.Column and any(w in key.name.casefold() for w in _YEAR_NAME):
        return "year"
    return None


def month_without_year(sel: exp.Select) -> exp.Expr | None:
    """The month-of-the-year key of a GROUP BY that holds no year beside it (each group
    adds up that month of every year); else None.

    >>> import sqlglot
    >>> month_without_year(sqlglot.parse_one(
    ...     "SELECT EXTRACT(MONTH FROM d), SUM(x) FROM t GROUP BY 1")).sql()
    'EXTRACT(MONTH FROM d)'
    >>> month_without_year(sqlglot.parse_one(
    ...     "SELECT YEAR(d), MONTH(d), SUM(x) FROM t GROUP BY YEAR(d), MONTH(d)"))
    """
    group = sel.args.get("group")
    if group is None or not group.expressions:
        return None
    parts = [(k, _period_part(k.unalias())) for k in _keys(sel, group)]
    month = next((k for k, p in parts if p == "month"), None)
    if month is None or any(p == "year" for _, p in parts):
        return None
    return month.unalias()


_ROLLUPS = (exp.Rollup, exp.Cube, exp.GroupingSets)


def rolls_up(sel: exp.Select) -> bool:
    """Does the SELECT add total rows to its groups: ``GROUP BY ROLLUP (…)``, ``CUBE``,
    ``GROUPING SETS`` or MySQL's ``WITH ROLLUP``?

    >>> import sqlglot
    >>> rolls_up(sqlglot.parse_one("SELECT a, SUM(b) FROM t GROUP BY a WITH ROLLUP", "mysql"))
    True
    >>> rolls_up(sqlglot.parse_one("SELECT a, SUM(b) FROM t GROUP BY ROLLUP (a)"))
    True
    >>> rolls_up(sqlglot.parse_one("SELECT a, SUM(b) FROM t GROUP BY a"))
    False
    """
    group = sel.args.get("group")
    if group is None:
        return False
    if group.args.get("rollup") or group.args.get("cube"):
        return True
    return any(isinstance(e, _ROLLUPS) for e in group.expressions)

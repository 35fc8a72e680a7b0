"""The units of the date differences a query computes: ``DATEDIFF(day, a, b)``,
``TIMESTAMPDIFF(HOUR, a, b)``, BigQuery's ``DATE_DIFF(b, a, DAY)``, MySQL's two-argument
``DATEDIFF(b, a)`` (days), read from the sqlglot tree. A difference scaled by a number
(``TIMESTAMPDIFF(HOUR, a, b) / 24.0``) is converted to another unit, and one in a condition
computes a bound: both are left out.

>>> import sqlglot
>>> q = "SELECT AVG(DATEDIFF(day, created, closed)), DATEDIFF(hour, a, b) / 24.0 FROM t"
>>> diff_units(sqlglot.parse_one(q, read="tsql"), {"datediff", "avg", "div"})
['day']
>>> diff_units(sqlglot.parse_one("SELECT AVG(EXTRACT(EPOCH FROM b - a)) FROM t", read="postgres"))
['second']
"""

from __future__ import annotations

from sqlglot import exp

from stef.sql.clock import LiteralText, interval_amount

#: Function kinds of the walk (lower-case class names) that compute a date difference.
DIFF_FUNCTIONS = frozenset({"datediff", "timestampdiff", "datetimediff", "timediff"})
_DIFFS = (exp.DateDiff, exp.TimestampDiff, exp.DatetimeDiff, exp.TimeDiff)
#: sqlglot's unit names (and abbreviations) as one singular unit.
_UNITS = {
    "second": "second", "ss": "second", "s": "second",
    "minute": "minute", "mi": "minute", "n": "minute",
    "hour": "hour", "hh": "hour",
    "day": "day", "dd": "day", "d": "day",
    "week": "week", "wk": "week", "ww": "week",
    "month": "month", "mm": "month", "m": "month",
    "year": "year", "yy": "year", "yyyy": "year",
}  # fmt: skip
#: Clauses whose differences compute a bound, not a figure the query outputs
#: (``DATEADD(month, DATEDIFF(month, 0, GETDATE()), 0)``: this month's first day).
_CONDITIONS = (exp.Where, exp.Join, exp.Having)
#: Nodes between a difference and the expression that may scale it.
_PASS = (exp.Paren, exp.Cast, exp.TryCast, exp.Coalesce, exp.Round, exp.Abs, exp.AggFunc)


def _scaled(node: exp.Expr) -> bool:
    """Is ``node`` multiplied or divided by a number on its way up (through casts,
    COALESCE, ROUND and aggregates)?"""
    up = node.parent
    while isinstance(up, _PASS):
        up = up.parent
    if not isinstance(up, (exp.Mul, exp.Div)):
        return False
    sides = (up.this, up.expression)
    return any(isinstance(side, exp.Literal) and not side.is_string for side in sides)


def diff_units(tree: exp.Expr, functions: set[str] | None = None) -> list[str]:
    """The distinct units of the unscaled date differences ``tree`` computes, sorted;
    ``functions``, the function kinds the walk found, says at once when there is none."""
    if functions is not None and not (DIFF_FUNCTIONS | {"extract"}) & functions:
        return []
    found: set[str] = set()
    for node in tree.find_all(*_DIFFS, exp.Extract):
        if isinstance(node, exp.Extract):  # PostgreSQL's EXTRACT(EPOCH FROM b - a): seconds
            if node.name.casefold() != "epoch":
                continue
            name = "second"
        else:
            unit = node.args.get("unit")
            raw = unit.name.casefold() if unit is not None else "day"  # MySQL's DATEDIFF: days
            name = _UNITS.get(raw) or _UNITS.get(raw.rstrip("s"), "")
        if name and not _scaled(node) and node.find_ancestor(*_CONDITIONS) is None:
            found.add(name)
    return sorted(found)


def interval_units(literals: list[exp.Expr], text: LiteralText) -> list[list[str]]:
    """Each ``INTERVAL`` literal of the query (the walk's literals, whose parent is one) as
    ``[amount, singular unit]``, in reading order: ``INTERVAL '30 seconds'`` and MySQL's
    ``INTERVAL 30 SECOND`` are both ``['30', 'second']``.

    >>> import sqlglot
    >>> q = "SELECT * FROM t WHERE b - a > INTERVAL '30 seconds'"
    >>> tree = sqlglot.parse_one(q, read="postgres")
    >>> interval_units(list(tree.find_all(exp.Literal)), lambda n: n.name)
    [['30', 'second']]
    """
    found: list[list[str]] = []
    for literal in literals:
        up = literal.parent
        got = interval_amount(up, text) if type(up) is exp.Interval else None
        if got is None:
            continue
        raw = got[1].casefold()
        unit = _UNITS.get(raw) or _UNITS.get(raw.removesuffix("s"))
        if unit:
            found.append([f"{got[0]:g}", unit])
    return found

"""Date conditions relative to the clock: ``c >= DATEADD(day, -30, GETDATE())``,
``c > NOW() - INTERVAL '7 days'``, ``c >= DATE_SUB(CURRENT_DATE, INTERVAL 3 MONTH)``,
``c > GETDATE() - 30`` (T-SQL day arithmetic) and SQLite's ``date('now', '-30 days')``,
read from the sqlglot tree as how far back from now each lower bound reaches (in days).

A question's "in the last 30 days" is compared with these by the alignment
(:func:`stef.align.dates.check_relative_periods`).

>>> import sqlglot
>>> q = "SELECT id FROM posts WHERE created >= DATEADD(day, -30, GETDATE()) AND score > 1"
>>> clock_windows(sqlglot.parse_one(q, read="tsql"))
[['created', 30.0]]
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from dateutil.relativedelta import relativedelta
from sqlglot import exp

from stef.spec import Spec
from stef.sql.walk import search

#: The text of a literal as written (the SQL spec passes the reader that sees through its
#: canonical swaps).
LiteralText = Callable[[exp.Expr], str]


def _as_written(lit: exp.Expr) -> str:
    return str(lit.this)


#: Days in one unit of an interval (a month and a year as their mean lengths).
UNIT_DAYS: dict[str, float] = {
    "minute": 1 / 1440,
    "hour": 1 / 24,
    "day": 1.0,
    "week": 7.0,
    "month": 30.4375,
    "quarter": 91.3125,
    "year": 365.25,
}

#: Functions that read the clock (those sqlglot leaves as anonymous calls).
_CLOCK_CALLS = frozenset(
    {"getdate", "getutcdate", "now", "sysdate", "sysdatetime", "utc_timestamp", "today"}
)
_CLOCK_NODES = (exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentDatetime, exp.CurrentTime)
_LOWER = {exp.GT: "left", exp.GTE: "left", exp.LT: "right", exp.LTE: "right"}
_BOUNDS = tuple(_LOWER)
_CONDITIONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)
#: Calls that move a time by an amount of a unit, and those of them that add it.
#: (``TsOrDsAdd``: Redshift's ``DATEADD`` and Spark's ``date_sub``, ``date_add`` as sqlglot
#: reads them.)
_ADDS = (exp.DateAdd, exp.TimestampAdd, exp.DatetimeAdd, exp.TsOrDsAdd)
_SHIFTS = (*_ADDS, exp.DateSub, exp.TimestampSub, exp.DatetimeSub)
#: SQLite's date functions, which read the clock from the string ``'now'`` (``date('now')``,
#: ``strftime('%Y-%m', 'now')``): sqlglot's nodes for them and the names it leaves anonymous.
_NOW_HOLDERS = (exp.TsOrDsToTimestamp, exp.TsOrDsToDate, exp.Date, exp.TimeToStr, exp.Anonymous)
_NOW_CALLS = frozenset({"date", "datetime", "strftime", "julianday", "unixepoch"})
#: The nodes :func:`_clock_call` may accept, and columns, for :func:`search`.
_CLOCK_READERS = (*_CLOCK_NODES, exp.Anonymous, exp.Literal)
_COLUMNS = (exp.Column,)


def _unit_days(unit: str) -> float | None:
    """``DAY``, ``days``, ``MONTHS`` → days in one unit, else None."""
    u = unit.casefold().rstrip("s")
    return UNIT_DAYS.get(u)


def _clock_call(node: exp.Expr | None, text: LiteralText = _as_written) -> bool:
    """Is ``node`` itself a call that reads the clock (``CURRENT_DATE``, ``GETDATE()``), or
    SQLite's ``'now'`` given to one of its date functions (``text`` reads a literal)?"""
    if isinstance(node, _CLOCK_NODES):
        return True
    if isinstance(node, exp.Literal):
        return _sqlite_now(node, text)
    return isinstance(node, exp.Anonymous) and str(node.this).casefold() in _CLOCK_CALLS


def _sqlite_now(node: exp.Literal, text: LiteralText = _as_written) -> bool:
    """Is ``node`` the string ``'now'`` as the time of a SQLite date function?

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT 'now', date('now'), strftime('%Y', 'now')", read="sqlite")
    >>> [_sqlite_now(n) for n in q.find_all(exp.Literal) if n.this == "now"]
    [False, True, True]
    """
    if not node.is_string or text(node).casefold() != "now":
        return False
    up = node.parent
    if isinstance(up, exp.Anonymous):
        return str(up.this).casefold() in _NOW_CALLS
    return isinstance(up, _NOW_HOLDERS)


def _is_clock(node: exp.Expr | None, text: LiteralText = _as_written) -> bool:
    """Is ``node`` the clock, through casts, parentheses and ``DATE(…)``?"""
    while isinstance(node, (exp.Cast, exp.Paren, exp.Date)) and node.this is not None:
        node = node.this
    return _clock_call(node, text)


#: A date cut to the start of its period: ``DATE_TRUNC('month', CURRENT_DATE)``.
_TRUNCS = (exp.DateTrunc, exp.TimestampTrunc)


def _untruncated(node: exp.Expr | None) -> exp.Expr | None:
    """What a truncation cuts (``DATE_TRUNC('month', now)`` → ``now``): a bound shifted back
    from the start of the current period reaches as far back as the shift, give or take the
    part of the period gone by."""
    return node.this if isinstance(node, _TRUNCS) else node


def _float(text: str) -> float | None:
    """``text`` as a number, else None."""
    try:
        return float(text)
    except ValueError:
        return None


def _number(node: exp.Expr | None, text: LiteralText = _as_written) -> float | None:
    """A literal amount (``30``, ``'3'``, ``-30``, ``30 * -1``), else None."""
    if isinstance(node, exp.Mul):
        a, b = _number(node.this, text), _number(node.expression, text)
        return a * b if a is not None and b is not None else None
    sign = 1.0
    if isinstance(node, exp.Neg):
        sign, node = -1.0, node.this
    amount = _float(text(node)) if isinstance(node, exp.Literal) else None
    return sign * amount if amount is not None else None


def interval_amount(node: exp.Expr | None, text: LiteralText) -> tuple[float, str] | None:
    """``INTERVAL '7 days'`` or ``INTERVAL 3 MONTH`` as (amount, unit name), else None."""
    if not isinstance(node, exp.Interval):
        return None
    written = text(node.this) if isinstance(node.this, exp.Literal) else ""
    parts = written.split()
    unit = node.args.get("unit")
    if len(parts) == 2 and unit is None:  # '7 days'
        amount, name = parts
    elif len(parts) == 1 and unit is not None:
        amount, name = parts[0], unit.name
    else:
        return None
    value = _float(amount)
    return (value, name) if value is not None else None


def _interval_days(node: exp.Expr | None, text: LiteralText) -> float | None:
    """``INTERVAL '7 days'`` or ``INTERVAL 3 MONTH`` in days, else None."""
    interval = interval_amount(node, text)
    per = _unit_days(interval[1]) if interval is not None else None
    return interval[0] * per if interval is not None and per is not None else None


def days_back(node: exp.Expr, text: LiteralText = _as_written) -> float | None:
    """How far before now ``node`` lies, in days, when it is the clock minus a constant.

    >>> import sqlglot
    >>> days_back(sqlglot.parse_one("NOW() - INTERVAL '7 days'", read="postgres"))
    7.0
    >>> days_back(sqlglot.parse_one("DATE_SUB(NOW(), INTERVAL 3 MONTH)", read="mysql"))
    91.3125
    >>> q = "TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)"
    >>> days_back(sqlglot.parse_one(q, read="bigquery"))
    7.0
    >>> days_back(sqlglot.parse_one("date('now', '-30 days')", read="sqlite"))
    30.0
    >>> days_back(sqlglot.parse_one("DATEADD(day, -30, '2020-01-01')", read="tsql")) is None
    True
    >>> days_back(sqlglot.parse_one("date_sub(current_date(), 30)", read="databricks"))
    30.0
    >>> days_back(sqlglot.parse_one("DATEADD(day, -30, GETDATE())", read="redshift"))
    30.0
    >>> q = "FORMAT_DATE('%Y%m%d', DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY))"  # _TABLE_SUFFIX
    >>> days_back(sqlglot.parse_one(q, read="bigquery"))
    7.0
    >>> q = "DATEADD(month, -6, DATE_TRUNC('month', CURRENT_DATE()))"
    >>> days_back(sqlglot.parse_one(q, read="snowflake"))
    182.625
    """
    while isinstance(node, (exp.TimeToStr, exp.TsOrDsToDate)) and node.this is not None:
        if isinstance(node, exp.TimeToStr) and _format_op(node.args.get("format"), text) != (
            "trunc:day"
        ):
            break  # a day written as text ('%Y%m%d'), as a sharded table's suffix holds it
        node = node.this
    if isinstance(node, _SHIFTS) and _is_clock(_untruncated(node.this), text):
        amount = _number(node.expression, text)
        unit = node.args.get("unit")
        per = _unit_days(unit.name) if unit is not None else 1.0
        if amount is None or per is None:
            return None
        reach = amount * per * (-1.0 if isinstance(node, _ADDS) else 1.0)
        return reach if reach > 0 else None
    if isinstance(node, exp.Sub) and _is_clock(_untruncated(node.this), text):
        back = _interval_days(node.expression, text)
        if back is None and isinstance(node.expression, exp.Literal):
            back = _number(node.expression, text)  # GETDATE() - 30: days
        return back if back is not None and back > 0 else None
    if isinstance(node, exp.Anonymous) and str(node.this).casefold() in {"date", "datetime"}:
        args = node.expressions
        strings = len(args) == 2 and all(isinstance(a, exp.Literal) and a.is_string for a in args)
        if strings and text(args[0]).casefold() == "now":
            parts = text(args[1]).split()
            per = _unit_days(parts[1]) if len(parts) == 2 else None
            amount = _float(parts[0]) if per is not None else None
            if amount is not None and per is not None and amount < 0:
                return -amount * per
    return None


def clock_windows(tree: exp.Expr, text: LiteralText = _as_written) -> list[list[str | float]]:
    """``[column, days]`` of each lower bound that reaches back from now (``created >=
    now - 30 days``), in the order they stand; ``text`` reads a literal as written."""
    return clock_reads(tree, text)[0]


def clock_ages(tree: exp.Expr, text: LiteralText = _as_written) -> list[str]:
    """Columns compared, as they stand, with a time a constant back from now, by either
    bound (``created < GETDATE() - 14``, ``birthday <= date('now', '-60 years')``): an age
    kept as a date, where "older than 14 days" reads as ``<``.

    >>> import sqlglot
    >>> q = "SELECT 1 FROM p WHERE created < GETDATE() - 14 AND score > 1"
    >>> clock_ages(sqlglot.parse_one(q, read="tsql"))
    ['created']
    """
    return clock_reads(tree, text)[2]


def clock_columns(tree: exp.Expr) -> list[str]:
    """Columns of the conditions that compare a column with the clock, however they compute
    the period (``YEAR(d) = YEAR(GETDATE()) - 1``, ``d = CURRENT_DATE - 1``, ``DATEDIFF(day,
    d, GETDATE()) <= 30``): the SQL reads the period from the time it runs.

    >>> import sqlglot
    >>> q = "SELECT 1 FROM t WHERE YEAR(d) = YEAR(GETDATE()) - 1 AND n > 2"
    >>> clock_columns(sqlglot.parse_one(q, read="tsql"))
    ['d']
    """
    return clock_reads(tree)[1]


def clock_reads(
    tree: exp.Expr, text: LiteralText = _as_written
) -> tuple[list[list[str | float]], list[str], list[str]]:
    """:func:`clock_windows`, :func:`clock_columns` and :func:`clock_ages` of ``tree`` from
    one search of its conditions (breadth first, as ``find_all`` gives them), each bound's
    :func:`days_back` read once.

    >>> import sqlglot
    >>> q = "SELECT 1 FROM p WHERE created >= GETDATE() - 14 AND YEAR(d) = YEAR(GETDATE())"
    >>> clock_reads(sqlglot.parse_one(q, read="tsql"))
    ([['created', 14.0]], ['created', 'd'], ['created'])
    """
    windows: list[list[str | float]] = []
    columns: list[str] = []
    ages: list[str] = []
    for cond in search(tree, _CONDITIONS):
        if isinstance(cond, _BOUNDS):
            left, right = cond.left, cond.right
            # how far back each side lies, where the other side is a column
            right_back = days_back(right, text) if isinstance(left, exp.Column) else None
            left_back = days_back(left, text) if isinstance(right, exp.Column) else None
            col, back = (left, right_back) if _LOWER[type(cond)] == "left" else (right, left_back)
            if back is not None:
                windows.append([col.name.casefold(), round(back, 4)])
            for side, side_back in ((left, right_back), (right, left_back)):
                if side_back is not None:
                    name = side.name.casefold()
                    if name and name not in ages:
                        ages.append(name)
        if any(_clock_call(n, text) for n in search(cond, _CLOCK_READERS)):
            for c in search(cond, _COLUMNS):
                name = c.name.casefold()
                if name not in columns:
                    columns.append(name)
    return windows, columns, ages


#: Function kinds of the walk without which no condition reads the clock.
_MAY_READ_CLOCK = frozenset(
    {"anonymous", "currentdate", "currenttimestamp", "currentdatetime", "currenttime"}
)
#: SQLite's date functions as sqlglot names them; they read the clock from ``'now'``.
_SQLITE_DATES = frozenset({"date", "timetostr", "tsordstotimestamp", "tsordstodate"})


def may_read_clock(functions: set[str], sql: str) -> bool:
    """May a statement calling ``functions`` compute a value from the clock? (SQLite's
    ``strftime('%Y-%m', 'now')`` only where its text holds ``'now'``.)

    >>> may_read_clock({"count", "timetostr"}, "SELECT strftime('%Y', 'NOW')")
    True
    >>> may_read_clock({"count", "timetostr"}, "SELECT strftime('%Y', d)")
    False
    """
    if _MAY_READ_CLOCK & functions:
        return True
    return bool(_SQLITE_DATES & functions) and "'now'" in sql.casefold()


#: Conditions whose value may be a parameter bound when the query runs.
_VALUE_SLOTS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Like, exp.ILike)


def parameter_columns(tree: exp.Expr) -> list[str]:
    """Columns compared with a parameter bound at run time (``customer_id = ?``, ``= :id``,
    ``= $1``, ``= @cid``): the SQL filters on them, with a value the text does not hold.

    >>> import sqlglot
    >>> parameter_columns(sqlglot.parse_one("SELECT 1 FROM t WHERE customer_id = ? AND n > 2"))
    ['customer_id']
    """
    out: list[str] = []
    for cond in tree.find_all(*_VALUE_SLOTS):
        if cond.find(exp.Placeholder, exp.Parameter) is None:
            continue
        col = cond.this if isinstance(cond.this, exp.Column) else None
        if col is not None and col.name.casefold() not in out:
            out.append(col.name.casefold())
    return out


# ------------------------------------------------------------ calendar periods from the clock

#: Units a truncation may name, as :func:`clock_token` writes them (Oracle's ``TRUNC(d)``
#: and ``'DD'`` are a day; ``'MM'``, ``'Q'``, ``'YYYY'`` its other formats).
_TRUNC_UNITS = {
    "day": "day", "dd": "day", "d": "day", "ddd": "day",
    "week": "week", "iw": "week", "ww": "week",
    "month": "month", "mm": "month", "mon": "month",
    "quarter": "quarter", "q": "quarter",
    "year": "year", "yyyy": "year", "yy": "year", "y": "year",
}  # fmt: skip
#: The largest amount of any unit a shift may move (days of 10,000 years, more than any
#: calendar unit's count that keeps a date): larger ones are left unread.
_MAX_SHIFT = 3_700_000
#: Calendar units of a shift, in months.
_MONTHS = {"month": 1, "quarter": 3, "year": 12}
_PARTS: dict[type[exp.Expr], str] = {exp.Year: "year", exp.Month: "month"}
_DATE_TYPES = frozenset({exp.DataType.Type.DATE})
_DATE_CASTS = (exp.TsOrDsToDate, exp.Date)
#: strftime formats of a date, a month and a year (SQLite's ``strftime('%Y-%m', 'now')``),
#: as the last step of a clock token.
_FORMATS = {
    "%Y-%m-%d": "trunc:day", "%Y%m%d": "trunc:day", "%Y-%m": "fmt:year_month", "%Y": "fmt:year",
    "%Y-%m-01": "trunc:month", "%Y-01-01": "trunc:year",  # MySQL's first day of the month
}


def _format_op(fmt: exp.Expr | None, text: LiteralText) -> str | None:
    """The step a format literal takes (:data:`_FORMATS`), None for any other format.

    >>> _format_op(exp.Literal.string("%Y-%m"), _as_written), _format_op(None, _as_written)
    ('fmt:year_month', None)
    """
    return _FORMATS.get(text(fmt)) if isinstance(fmt, exp.Literal) else None


#: SQLite's modifiers that move a time to the start of its day, month or year.
_SQLITE_STARTS = {"start of day": "day", "start of month": "month", "start of year": "year"}


def _shift(unit: str, amount: float) -> str | None:
    """A shift op of ``amount`` units: ``shift:<months>:<days>``, else None (also for an
    amount no calendar holds: more than 10,000 years either way)."""
    if not math.isfinite(amount) or abs(amount) > _MAX_SHIFT:
        return None
    u = unit.casefold().rstrip("s")
    if u in _MONTHS and amount == int(amount):
        return f"shift:{int(amount) * _MONTHS[u]}:0"
    days = _unit_days(u)
    return f"shift:0:{amount * days:g}" if days is not None else None


def clock_token(node: exp.Expr, text: LiteralText = _as_written) -> str | None:
    """A value computed from the clock alone, as the steps that compute it from the time a
    query runs (``clock|trunc:month|shift:-1:0`` for ``DATE_TRUNC('month', NOW()) -
    INTERVAL '1 month'``), for :func:`resolve_token` to run at a record's time; None for
    anything else (a column, a literal, arithmetic it cannot follow).

    >>> import sqlglot
    >>> t = lambda q, d="postgres": clock_token(sqlglot.parse_one(q, read=d))
    >>> t("date_trunc('month', now()) - interval '1 month'"), t("current_date - 1")
    ('clock|trunc:month|shift:-1:0', 'clock|trunc:day|shift:0:-1')
    >>> t("YEAR(GETDATE()) - 1", "tsql"), t("DATE_TRUNC(CURRENT_DATE(), MONTH)", "bigquery")
    ('clock|trunc:day|shift:-12:0|part:year', 'clock|trunc:day|trunc:month')
    >>> t("now()"), t("created_at - 1"), t("DATEDIFF(day, d, GETDATE())", "tsql")
    ('clock', None, None)
    """
    ops = _clock_ops(node, text)
    return "|".join(["clock", *ops]) if ops is not None else None


def _clock_ops(node: exp.Expr | None, text: LiteralText) -> list[str] | None:
    """The steps of :func:`clock_token` after reading the clock, or None."""
    if node is None:
        return None
    if isinstance(node, exp.Paren):
        return _clock_ops(node.this, text)
    if _clock_call(node, text):
        return ["trunc:day"] if isinstance(node, exp.CurrentDate) else []
    if isinstance(node, (exp.TsOrDsToTimestamp, exp.TimeStrToTime)):
        return _clock_ops(node.this, text)
    if isinstance(node, exp.LastDay):  # MySQL's LAST_DAY(CURDATE()): the month's last day
        inner = _clock_ops(node.this, text)
        return [*inner, "trunc:month", "shift:1:0", "shift:0:-1"] if inner is not None else None
    if isinstance(node, exp.TimeToStr):  # strftime('%Y-%m', 'now')
        last = _format_op(node.args.get("format"), text)
        inner = _clock_ops(node.this, text)
        return [*inner, last] if inner is not None and last is not None else None
    if isinstance(node, exp.Anonymous) and str(node.this).casefold() in _NOW_CALLS:
        return _sqlite_ops(node, text)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        inner = _clock_ops(node.this, text)
        to = node.args.get("to")
        dated = isinstance(to, exp.DataType) and to.this in _DATE_TYPES
        return [*inner, "trunc:day"] if inner is not None and dated else inner
    if isinstance(node, _DATE_CASTS):
        inner = _clock_ops(node.this, text)
        return [*inner, "trunc:day"] if inner is not None else None
    if isinstance(node, (exp.DateTrunc, exp.TimestampTrunc)):
        unit = node.args.get("unit")
        name = text(unit) if isinstance(unit, exp.Literal) else (unit.name if unit else "day")
        inner = _clock_ops(node.this, text)
        trunc = _TRUNC_UNITS.get(name.casefold())
        return [*inner, f"trunc:{trunc}"] if inner is not None and trunc else None
    if type(node) in _PARTS or (isinstance(node, exp.Extract) and node.this.name.casefold()
                                in ("year", "month")):
        part = _PARTS.get(type(node)) or node.this.name.casefold()
        inner = _clock_ops(node.this if type(node) in _PARTS else node.expression, text)
        return [*inner, f"part:{part}"] if inner is not None else None
    return _tsql_start_ops(node, text) or _shifted_ops(node, text)


def _tsql_start_ops(node: exp.Expr, text: LiteralText) -> list[str] | None:
    """T-SQL's first day of the clock's month or year: ``DATEFROMPARTS(YEAR(GETDATE()),
    MONTH(GETDATE()), 1)`` (or ``…, 1, 1)``) and ``DATEADD(month, DATEDIFF(month, 0,
    GETDATE()), 0)``; None for anything else.

    >>> import sqlglot
    >>> q = "DATEFROMPARTS(YEAR(GETDATE()), MONTH(GETDATE()), 1)"
    >>> _tsql_start_ops(sqlglot.parse_one(q, read="tsql"), _as_written)
    ['trunc:day', 'trunc:month']
    >>> q = "DATEADD(year, DATEDIFF(year, 0, GETDATE()), 0)"
    >>> _tsql_start_ops(sqlglot.parse_one(q, read="tsql"), _as_written)
    ['trunc:year']
    """
    if isinstance(node, exp.DateFromParts):
        year, month, day = node.args.get("year"), node.args.get("month"), node.args.get("day")
        inner = _clock_ops(year.this, text) if isinstance(year, exp.Year) else None
        if inner is None or not (isinstance(day, exp.Literal) and text(day) == "1"):
            return None
        if isinstance(month, exp.Month) and _clock_ops(month.this, text) is not None:
            return [*inner, "trunc:month"]
        january = isinstance(month, exp.Literal) and text(month) == "1"
        return [*inner, "trunc:year"] if january else None
    diff = node.expression if isinstance(node, exp.DateAdd) else None
    if not isinstance(diff, exp.DateDiff) or not isinstance(node.this, exp.Literal):
        return None
    unit, inner_unit = node.args.get("unit"), diff.args.get("unit")
    trunc = _TRUNC_UNITS.get(unit.name.casefold()) if unit is not None else None
    same = inner_unit is not None and unit is not None and inner_unit.name == unit.name
    inner = _clock_ops(diff.this, text) if same and text(node.this) == "0" else None
    return [*inner, f"trunc:{trunc}"] if inner is not None and trunc in ("month", "year") else None


def _sqlite_ops(node: exp.Anonymous, text: LiteralText) -> list[str] | None:
    """:func:`_clock_ops` of SQLite's ``date('now', 'start of month', '-1 month')`` or
    ``strftime('%Y', 'now', '-1 year')``: the modifiers applied in turn, then the format.

    >>> import sqlglot
    >>> f = lambda q: _sqlite_ops(sqlglot.parse_one(q, read="sqlite"), _as_written)
    >>> f("date('now', 'start of month', '-1 month')"), f("strftime('%Y', 'now', '-1 years')")
    (['trunc:month', 'shift:-1:0', 'trunc:day'], ['shift:-12:0', 'fmt:year'])
    >>> f("date('now', 'weekday 0')") is None
    True
    """
    name = str(node.this).casefold()
    args = list(node.expressions)
    last: str | None = "trunc:day" if name == "date" else None
    if name == "strftime":
        last = _format_op(args.pop(0) if args else None, text)
        if last is None:
            return None
    elif name != "datetime" and name != "date":
        return None  # julianday, unixepoch: numbers
    if not args or not all(isinstance(a, exp.Literal) and a.is_string for a in args):
        return None
    ops = _clock_ops(args[0], text)
    if ops is None:
        return None
    for mod in args[1:]:
        written = " ".join(text(mod).casefold().split())
        parts = written.split()
        if written in _SQLITE_STARTS:
            ops.append(f"trunc:{_SQLITE_STARTS[written]}")
        elif len(parts) == 2 and (amount := _float(parts[0])) is not None:
            step = _shift(parts[1], amount)
            if step is None:
                return None
            ops.append(step)
        else:
            return None  # 'weekday 0', 'localtime', 'utc': left unread
    return [*ops, last] if last is not None else ops


def _shifted_ops(node: exp.Expr, text: LiteralText) -> list[str] | None:
    """:func:`_clock_ops` of a clock value moved by an amount (``- INTERVAL '1 month'``,
    ``DATEADD(day, -1, …)``, ``- 1`` day, ``YEAR(…) - 1`` year), or None."""
    if isinstance(node, _SHIFTS):
        inner = _clock_ops(node.this, text)
        amount = _number(node.expression, text)
        unit = node.args.get("unit")
        sign = 1.0 if isinstance(node, _ADDS) else -1.0
        moved = _shift(unit.name if unit else "day", sign * amount) if amount is not None else None
        return [*inner, moved] if inner is not None and moved is not None else None
    if not isinstance(node, (exp.Sub, exp.Add)):
        return None
    inner = _clock_ops(node.this, text)
    if inner is None:
        return None
    sign = -1.0 if isinstance(node, exp.Sub) else 1.0
    added = node.expression
    step: str | None = None
    if isinstance(added, exp.Interval):
        interval = interval_amount(added, text)
        step = _shift(interval[1], sign * interval[0]) if interval is not None else None
    elif (amount := _number(added, text)) is not None:
        part = inner[-1].removeprefix("part:") if inner and inner[-1].startswith("part:") else ""
        if part:  # YEAR(NOW()) - 1: the year before, a shift before the part is read
            step = _shift(part, sign * amount)
            return [*inner[:-1], step, inner[-1]] if step is not None else None
        step = _shift("day", sign * amount)  # CURRENT_DATE - 1: days
    return [*inner, step] if step is not None else None


def resolve_token(token: str, now: datetime) -> str | None:
    """The value a :func:`clock_token` has when the clock reads ``now``: an ISO date after a
    truncation to a day or longer, a date and time otherwise, a number for a part.

    >>> now = datetime(2024, 5, 10, 12, 30)
    >>> resolve_token("clock|trunc:month|shift:-1:0", now), resolve_token("clock", now)
    ('2024-04-01', '2024-05-10 12:30:00')
    >>> resolve_token("clock|shift:-12:0|part:year", now), resolve_token("clock|trunc:week", now)
    ('2023', '2024-05-06')
    >>> resolve_token("clock|shift:-1:0|trunc:month|fmt:year_month", now)
    '2024-04'
    >>> resolve_token("clock|shift:-1000000:0", now) is None
    True
    """
    try:
        return _run(token, now)
    except (OverflowError, ValueError):  # a date before year 1 or after 9999
        return None


def _run(token: str, now: datetime) -> str | None:
    """:func:`resolve_token`'s steps, which may leave the calendar (OverflowError,
    ValueError)."""
    t = now.replace(tzinfo=None, microsecond=0)
    dated = False
    for op in token.split("|")[1:]:
        kind, _, arg = op.partition(":")
        if kind == "trunc":
            t = _truncated(t, arg)
            dated = True
        elif kind == "shift":
            months, days = arg.split(":")
            t = t + relativedelta(months=int(months)) + timedelta(days=float(days))
            dated = dated and float(days) == int(float(days))
        elif kind == "part":
            return str(t.year if arg == "year" else t.month)
        elif kind == "fmt":  # the column side truncated to a month or a year (else unread)
            if arg not in ("year_month", "year"):
                return None
            return f"{t.year:04d}-{t.month:02d}" if arg == "year_month" else str(t.year)
        else:
            return None
    return t.date().isoformat() if dated else t.isoformat(sep=" ")


def _truncated(t: datetime, unit: str) -> datetime:
    """``t`` at the start of its day, ISO week (Monday), month, quarter or year."""
    day = datetime(t.year, t.month, t.day)
    if unit == "week":
        return day - timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    if unit == "quarter":
        return day.replace(month=3 * ((t.month - 1) // 3) + 1, day=1)
    if unit == "year":
        return day.replace(month=1, day=1)
    return day


#: The instant a record without a time is read at when its SQL takes its dates from the
#: clock alone (:func:`clock_reference`): two periods relative to now compare the same at
#: any instant, and a Wednesday in the middle of a month keeps both clear of the edges of
#: a week, a month, a quarter and a year.
CLOCK_REFERENCE = datetime(2025, 7, 16, 12, 0, tzinfo=timezone.utc)

#: A value that is a written date or year: ``2024-05-01``, ``20240501``, ``2024``.
_WRITTEN_DATE = re.compile(r"'?(?:19|20)\d\d(?:-?\d\d(?:-?\d\d)?)?\b.*")


def clock_reference(spec: Spec) -> datetime | None:
    """:data:`CLOCK_REFERENCE` when the SQL computes some condition from the clock and
    compares nothing with a written date or year, so that a period the question states
    relative to now can be compared with the SQL's at any instant; None otherwise (a record
    without a time whose SQL writes its dates says nothing of when it ran).

    >>> from stef.spec import Filter
    >>> clocked = {"clock_values": [[0, 0, "clock|trunc:month"]]}
    >>> clock_reference(Spec(filters=[Filter("d", ">=", ("x",))], flags=clocked)).year
    2025
    >>> dated = [Filter("d", ">=", ("x",)), Filter("d", "<", ("2024-06-01",))]
    >>> clock_reference(Spec(filters=dated, flags=clocked)) is None
    True
    """
    tokens = spec.flags.get("clock_values") or ()
    if not tokens:
        return None
    clocked = {index for index, _, _ in tokens}
    for i, f in enumerate(spec.filters):
        if i not in clocked and any(_WRITTEN_DATE.fullmatch(v) for v in f.values):
            return None
    return CLOCK_REFERENCE


def resolve_clock_values(spec: Spec, now: datetime | None, assumed: bool = False) -> Spec:
    """``spec`` with the values its filters compute from the clock (the ``clock_values``
    flag) as they are at ``now``, the record's time, in the ``clock_resolved`` flag
    (``[[filter index, [values]], …]``): ``created_at >= CURRENT_DATE - 1`` run at
    2024-05-10 12:00 keeps rows from 2024-05-09; and the record's day in ``record_date``.
    The filters themselves keep the values the SQL writes (other checks read them);
    :mod:`stef.align.clock_periods` compares the resolved ones with a calendar period the
    question asks for. ``spec`` itself is left as it is (it may be shared); without ``now``
    it is returned unchanged. ``assumed``: ``now`` is :func:`clock_reference`'s instant, not
    the record's (the ``clock_assumed`` flag).

    >>> from stef.spec import Filter
    >>> f = Filter("d", ">=", ("current_date - 1",))
    >>> s = Spec(filters=[f], flags={"clock_values": [[0, 0, "clock|trunc:day|shift:0:-1"]]})
    >>> r = resolve_clock_values(s, datetime(2024, 5, 10, 12))
    >>> r.flags["clock_resolved"], r.filters[0].values, "clock_resolved" in s.flags
    ([[0, ['2024-05-09']]], ('current_date - 1',), False)
    >>> r.flags["record_date"]
    '2024-05-10'
    """
    if now is None:
        return spec
    tokens = spec.flags.get("clock_values") or ()
    values: dict[int, list[str]] = {}
    for index, pos, token in tokens:
        value = resolve_token(token, now)
        if value is None or index >= len(spec.filters):
            continue
        current = values.setdefault(index, list(spec.filters[index].values))
        current[pos] = value
    resolved = [[index, v] for index, v in values.items()]
    day = now.date().isoformat()
    flags = {**spec.flags, "clock_resolved": resolved, "record_date": day}
    if assumed:
        flags["clock_assumed"] = True
    return dataclasses.replace(spec, flags=flags)

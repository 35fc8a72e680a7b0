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

from collections.abc import Callable

from sqlglot import exp

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
_ADDS = (exp.DateAdd, exp.TimestampAdd, exp.DatetimeAdd)
_SHIFTS = (*_ADDS, exp.DateSub, exp.TimestampSub, exp.DatetimeSub)
#: The nodes :func:`_clock_call` may accept, and columns, for :func:`search`.
_CLOCK_READERS = (*_CLOCK_NODES, exp.Anonymous)
_COLUMNS = (exp.Column,)


def _unit_days(unit: str) -> float | None:
    """``DAY``, ``days``, ``MONTHS`` → days in one unit, else None."""
    u = unit.casefold().rstrip("s")
    return UNIT_DAYS.get(u)


def _clock_call(node: exp.Expr | None) -> bool:
    """Is ``node`` itself a call that reads the clock (``CURRENT_DATE``, ``GETDATE()``)?"""
    if isinstance(node, _CLOCK_NODES):
        return True
    return isinstance(node, exp.Anonymous) and str(node.this).casefold() in _CLOCK_CALLS


def _is_clock(node: exp.Expr | None) -> bool:
    """Is ``node`` the clock, through casts, parentheses and ``DATE(…)``?"""
    while isinstance(node, (exp.Cast, exp.Paren, exp.Date)) and node.this is not None:
        node = node.this
    return _clock_call(node)


def _float(text: str) -> float | None:
    """``text`` as a number, else None."""
    try:
        return float(text)
    except ValueError:
        return None


def _number(node: exp.Expr | None, text: LiteralText = _as_written) -> float | None:
    """A literal amount (``30``, ``'3'``, ``-30``), else None."""
    sign = 1.0
    if isinstance(node, exp.Neg):
        sign, node = -1.0, node.this
    amount = _float(text(node)) if isinstance(node, exp.Literal) else None
    return sign * amount if amount is not None else None


def _interval_days(node: exp.Expr | None, text: LiteralText) -> float | None:
    """``INTERVAL '7 days'`` or ``INTERVAL 3 MONTH`` in days, else None."""
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
    per, value = _unit_days(name), _float(amount)
    return value * per if per is not None and value is not None else None


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
    """
    if isinstance(node, _SHIFTS) and _is_clock(node.this):
        amount = _number(node.expression, text)
        unit = node.args.get("unit")
        per = _unit_days(unit.name) if unit is not None else 1.0
        if amount is None or per is None:
            return None
        reach = amount * per * (-1.0 if isinstance(node, _ADDS) else 1.0)
        return reach if reach > 0 else None
    if isinstance(node, exp.Sub) and _is_clock(node.this):
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
        if any(map(_clock_call, search(cond, _CLOCK_READERS))):
            for c in search(cond, _COLUMNS):
                name = c.name.casefold()
                if name not in columns:
                    columns.append(name)
    return windows, columns, ages


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


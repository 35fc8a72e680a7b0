"""Dates and periods compared as intervals.

A question's date (``in 2021``, ``May and June 2021``, ``the 7-day period ending on
2017-07-31``, ``Q1 2020``) and the SQL's conditions on one column (``d BETWEEN
'2021-05-01' AND '2021-06-30'``, ``d >= '2021-01-01' AND d < '2022-01-01'``,
``EXTRACT(YEAR FROM d) = 2021``, ``d LIKE '2021-05%'``, ``_TABLE_SUFFIX BETWEEN
'20170101' AND '20170331'``, a sharded table ``events_20170801``) are each read as the
span of days they select, half-open ``[start, end)``, and compared by those spans, not as
strings. Pure functions; the filters come from the two specs.

>>> from stef.spec import Filter
>>> nl = nl_span(Filter(None, "between", ("2021-05", "2021-06"), func="month"))
>>> sql = column_span([Filter("d", "between", ("2021-05-01", "2021-06-30"))])
>>> nl == sql, nl
(True, Span(start=datetime.date(2021, 5, 1), end=datetime.date(2021, 7, 1)))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import lru_cache

from dateutil.relativedelta import relativedelta

from stef.align.matching import canon_col, int_value
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.spec import Filter, Spec
from stef.sql.clock import UNIT_DAYS
from stef.sql.predicates import DATE_LIKE_NAME


@dataclass(frozen=True)
class Span:
    """Days ``start <= d < end``; ``None`` is unbounded on that side."""

    start: date | None
    end: date | None

    def meet(self, other: Span) -> Span:
        """The days both spans select."""
        starts = [d for d in (self.start, other.start) if d is not None]
        ends = [d for d in (self.end, other.end) if d is not None]
        return Span(max(starts) if starts else None, min(ends) if ends else None)


#: A date of day, month or year precision, ISO-like or compact (``20170801``, ``201708``).
_DATE = re.compile(
    r"(?P<y>(?:1[89]|20)\d\d)(?:(?P<sep>[-/.]?)(?P<m>0[1-9]|1[0-2]|[1-9](?!\d))"
    r"(?:(?P=sep)(?P<d>0[1-9]|[12]\d|3[01]|[1-9](?!\d)))?)?"
)

#: A day written month first: ``1/31/2019``.
_US_DATE = re.compile(r"(?P<m>1[0-2]|0?[1-9])/(?P<d>3[01]|[12]\d|0?[1-9])/(?P<y>(?:1[89]|20)\d\d)")

#: SQL functions whose value is the date itself at some precision (a truncation, a format).
_DATE_FUNCS = frozenset(
    {None, "year", "year_month", "timestamp_trunc", "date_trunc", "strftime", "date", "cast"}
)


@lru_cache(maxsize=16384)
def period(value: str, *, compact: bool = True) -> Span | None:
    """The span of days one date literal names, at its precision (memoised: a pure
    function of the literal, asked for each date filter on each side).

    >>> period("2021")
    Span(start=datetime.date(2021, 1, 1), end=datetime.date(2022, 1, 1))
    >>> period("2021-03").end, period("2021-03-05 10:00").end
    (datetime.date(2021, 4, 1), datetime.date(2021, 3, 6))
    >>> period("20170801").start, period("north"), period("2021-13")
    (datetime.date(2017, 8, 1), None, None)
    """
    v = value.strip().strip("'\"").rstrip("%").rstrip("-_ ")
    us = _US_DATE.fullmatch(v.split(" ")[0])
    if us is not None:  # 1/31/2019, as SQL Server and MySQL read it by default
        try:
            day = date(int(us.group("y")), int(us.group("m")), int(us.group("d")))
        except ValueError:
            return None
        return Span(day, day + timedelta(days=1))
    m = _DATE.fullmatch(v) or _DATE.fullmatch(v.split(" ")[0].split("T")[0])
    if m is None or (not compact and not m.group("sep") and m.group("m")):
        return None
    y = int(m.group("y"))
    if m.group("m") is None:
        return Span(date(y, 1, 1), date(y + 1, 1, 1))
    mo = int(m.group("m"))
    if m.group("d") is None:
        first = date(y, mo, 1)
        return Span(first, first + relativedelta(months=1))
    try:
        day = date(y, mo, int(m.group("d")))
    except ValueError:
        return None
    return Span(day, day + timedelta(days=1))


def _bound(op: str, p: Span) -> Span | None:
    """The span ``column <op> literal`` selects, given the literal's own span ``p``."""
    if op in ("=", "like", "in"):
        return p
    if op == ">=":
        return Span(p.start, None)
    if op == ">":
        return Span(p.end, None)
    if op == "<":
        return Span(None, p.start)
    if op == "<=":
        return Span(None, p.end)
    return None


def filter_span(f: Filter, *, compact: bool = True) -> Span | None:
    """The span of days one filter selects, or None when it is no date condition."""
    if f.func not in _DATE_FUNCS or not f.values:
        return None
    if f.op == "between" and len(f.values) == 2:
        a, b = (period(v, compact=compact) for v in f.values)
        return Span(a.start, b.end) if a and b else None
    if len(f.values) != 1 or (f.op == "like" and not f.values[0].endswith("%")):
        return None
    p = period(f.values[0], compact=compact)
    return _bound(f.op, p) if p is not None else None


def nl_span(f: Filter) -> Span | None:
    """The span of a question's date filter (a bare month without a year has none).

    >>> nl_span(Filter(None, "=", ("2020",), func="year"))
    Span(start=datetime.date(2020, 1, 1), end=datetime.date(2021, 1, 1))
    >>> nl_span(Filter(None, "=", ("3",), func="month")) is None
    True
    """
    if f.func not in (None, "year", "month", "date"):
        return None
    return filter_span(Filter(f.column, f.op, f.values), compact=False)


def column_span(filters: Sequence[Filter]) -> Span | None:
    """The days the conditions on one column select together (``d >= a AND d < b``; a year
    and a month extracted apart), or None when one of them is no date condition.

    >>> year = Filter("d", "=", ("2020",), func="year")
    >>> month = Filter("d", "=", ("3",), func="month")
    >>> column_span([year, month])
    Span(start=datetime.date(2020, 3, 1), end=datetime.date(2020, 4, 1))
    """
    years = [f for f in filters if f.func == "year" and f.op == "=" and len(f.values) == 1]
    months = [f for f in filters if f.func == "month" and f.op == "=" and len(f.values) == 1]
    ranged = [f for f in filters if f.func == "month" and f.op == "between"]
    if (
        len(years) == 1
        and len(ranged) == 1
        and not months
        and all(v.isdigit() and 1 <= int(v) <= 12 for v in ranged[0].values)
    ):  # strftime('%m', d) BETWEEN '08' AND '11' beside the year
        y, (lo, hi) = int(years[0].values[0]), (int(v) for v in ranged[0].values)
        span = Span(date(y, lo, 1), date(y, hi, 1) + relativedelta(months=1))
        return _met(span, [f for f in filters if f is not years[0] and f is not ranged[0]])
    days = [f for f in filters if f.func == "day" and f.op == "=" and len(f.values) == 1]
    rest = [f for f in filters if f not in months and f not in days]
    if months and len(years) == 1 and len(months) == 1 and months[0].values[0].isdigit():
        mo = int(months[0].values[0])
        if 1 <= mo <= 12:
            first = date(int(years[0].values[0]), mo, 1)
            rest = [f for f in rest if f is not years[0]]
            span = Span(first, first + relativedelta(months=1))
            if len(days) == 1 and days[0].values[0].isdigit():
                try:  # the day extracted apart too: strftime('%d', d) = '03'
                    day = first.replace(day=int(days[0].values[0]))
                except ValueError:
                    return None
                span = Span(day, day + timedelta(days=1))
            return _met(span, rest)
    return _met(None, rest)


def _met(span: Span | None, filters: Sequence[Filter]) -> Span | None:
    """``span`` (None: unbounded) met with the span of every filter, or None when one of
    them is no date condition."""
    for f in filters:
        s = filter_span(f)
        if s is None:
            return None
        span = s if span is None else span.meet(s)
    return span


#: A table named for the period it holds: ``events_20170801``, ``ga_sessions_2017*``.
_SHARD = re.compile(r"_(?P<d>(?:1[89]|20)\d\d(?:0[1-9]|1[0-2])?(?:0[1-9]|[12]\d|3[01])?)\*?$")


def table_span(table: str) -> Span | None:
    """The period a sharded table's name holds.

    >>> table_span("ga_sessions_20170801").start, table_span("ga_sessions_2017*").end
    (datetime.date(2017, 8, 1), datetime.date(2018, 1, 1))
    >>> table_span("orders_2") is None
    True
    """
    m = _SHARD.search(table)
    return period(m.group("d")) if m else None


def suffix_filters(filters: Sequence[Filter], tables: Sequence[str]) -> list[Filter]:
    """``_TABLE_SUFFIX`` conditions with the digits of the wildcard table they complete
    (``ga_sessions_2017*`` and ``_TABLE_SUFFIX BETWEEN '0101' AND '0331'``)."""
    prefix = next((m.group(1) for t in tables if (m := re.search(r"_(\d*)\*$", t))), "")
    return [replace(f, values=tuple(_complete(prefix, v) for v in f.values)) for f in filters]


def _complete(prefix: str, suffix: str) -> str:
    """The table date a suffix completes, its leading zeros restored (values are
    normalised as numbers: ``'0101'`` arrives as ``'101'``).

    >>> _complete("2017", "101"), _complete("", "20170101"), _complete("2017", "1")
    ('20170101', '20170101', '201701')
    """
    if not suffix.isdigit():
        return prefix + suffix
    size = len(prefix) + len(suffix)
    target = next((n for n in (4, 6, 8) if n >= size), size)
    return prefix + suffix.zfill(target - len(prefix))


@dataclass(frozen=True)
class DateMatch:
    """The SQL's answer to a question's date: ``sql`` (a filter, or a sharded table as a
    pseudo-filter on ``_table``), the positions of the conditions it stands for, and —
    when the SQL selects another closed period on that column — the two spans."""

    sql: Filter
    positions: list[int]
    want: Span
    got: Span | None = None


def date_match(
    req: Filter, candidates: Sequence[Filter], used: set[int], tables: Sequence[str]
) -> DateMatch | None:
    """The SQL conditions that select the period a question's date names: the date
    conditions on one column, or a sharded table's name; failing that, a column whose
    conditions select another closed period (``got`` set); None when no column's
    conditions read as dates.

    >>> req = Filter(None, "=", ("2021",), func="year")
    >>> sql = [Filter("d", ">=", ("2021-01-01",)), Filter("d", "<", ("2022-01-01",))]
    >>> date_match(req, sql, set(), ["orders"]).positions
    [0, 1]
    >>> date_match(req, [], set(), ["events_2021*"]).sql.values
    ('events_2021*',)
    >>> date_match(req, [Filter("d", "between", ("2020-01-01", "2020-12-31"))], set(), []).got
    Span(start=datetime.date(2020, 1, 1), end=datetime.date(2021, 1, 1))
    """
    want = nl_span(req)
    if want is None:
        return None
    by_column: dict[str, list[int]] = {}
    for i, c in enumerate(candidates):
        if i not in used and c.column:
            by_column.setdefault(c.column.casefold(), []).append(i)
    other: DateMatch | None = None
    for column, positions in by_column.items():
        filters = [candidates[i] for i in positions]
        if column.endswith("_table_suffix"):
            filters = suffix_filters(filters, tables)
        dated = [
            (i, f)
            for i, f in zip(positions, filters, strict=True)
            if f.func in ("month", "day") or filter_span(f) is not None
        ]
        if not dated:
            continue
        got = column_span([f for _, f in dated])
        if got == want or _next_start_included(got, want) or _strict_at_midnight(got, want):
            return DateMatch(candidates[dated[0][0]], [i for i, _ in dated], want)
        for i, f in dated:  # conditions of two branches (INTERSECT, EXCEPT) meet nowhere
            if filter_span(f) == want:
                return DateMatch(candidates[i], [i], want)
        if other is None and got is not None and _closed(got) and _closed(want):
            other = DateMatch(candidates[dated[0][0]], [i for i, _ in dated], want, got)
    for t in tables:
        if table_span(t) == want:
            return DateMatch(Filter("_table", "=", (t,), t), [], want)
    return other or _bound_applied(want, candidates, used)


def _bound_applied(want: Span, candidates: Sequence[Filter], used: set[int]) -> DateMatch | None:
    """A one-sided date (``birthday < '1996-01-01'``, one half of a hint's range) applied
    by a column whose conditions, used or not, hold that same bound (``BETWEEN
    '1990-01-01' AND '1995-12-31 23:59:59'``): the range answers each of its halves.

    >>> half = Span(None, date(1996, 1, 1))
    >>> sql = [Filter("b", "between", ("1990-01-01", "1995-12-31 23:59:59"))]
    >>> _bound_applied(half, sql, {0}).positions
    []
    """
    if (want.start is None) == (want.end is None):
        return None
    by_column: dict[str, list[int]] = {}
    for i, c in enumerate(candidates):
        if c.column and (c.func in ("month", "day") or filter_span(c) is not None):
            by_column.setdefault(c.column.casefold(), []).append(i)
    for positions in by_column.values():
        got = column_span([candidates[i] for i in positions])
        if got is None:
            continue
        same = got.end == want.end if want.start is None else got.start == want.start
        if same:
            free = [i for i in positions if i not in used]
            return DateMatch(candidates[positions[0]], free, want)
    return None


def _next_start_included(got: Span | None, want: Span) -> bool:
    """The period asked for, written with the next period's first day as an inclusive end
    (``BETWEEN '2016-04-01' AND '2016-07-01'`` for Q2 2016): the idiom of an exclusive
    bound, off by the one day that a timestamp at midnight hardly fills.

    >>> q2 = Span(date(2016, 4, 1), date(2016, 7, 1))
    >>> _next_start_included(Span(date(2016, 4, 1), date(2016, 7, 2)), q2)
    True
    >>> _next_start_included(Span(date(2016, 4, 1), date(2016, 7, 3)), q2)
    False
    """
    return (
        got is not None
        and got.start == want.start
        and want.end is not None
        and got.end == want.end + timedelta(days=1)
        and want.end.day == 1
    )


def month_answered(req: Filter, candidates: Sequence[Filter]) -> Filter | None:
    """The SQL condition that answers a bare month (``in April``, no year): one whose span
    of days lies inside that month of some year (``d LIKE '2009-04%'``), or None.

    >>> april = Filter(None, "=", ("4",), func="month")
    >>> month_answered(april, [Filter("d", "like", ("2009-04%",))]).values
    ('2009-04%',)
    """
    if req.func != "month" or req.op != "=" or len(req.values) != 1 or not req.values[0].isdigit():
        return None
    month = int(req.values[0])
    for c in candidates:
        span = filter_span(c)
        if (
            span is not None
            and span.start is not None
            and span.end is not None
            and span.start.month == month
            and span.end <= span.start + relativedelta(months=1)
        ):
            return c
    return None


def _strict_at_midnight(got: Span | None, want: Span) -> bool:
    """``since 1/1/2019`` written ``d > '2019-01-01'``: on a timestamp the strict bound
    leaves out only the instant of midnight, not the day.

    >>> since = Span(date(2019, 1, 1), None)
    >>> _strict_at_midnight(Span(date(2019, 1, 2), None), since)
    True
    """
    return (
        got is not None
        and want.start is not None
        and got.start == want.start + timedelta(days=1)
        and got.end == want.end
    )


def _closed(span: Span) -> bool:
    """A period bounded on both sides and holding at least one day."""
    return span.start is not None and span.end is not None and span.start < span.end


def describe(span: Span) -> str:
    """``2021-05-01 to 2021-06-30`` (the last day included), ``from 2021-05-01``, ``before …``.

    >>> describe(Span(date(2021, 5, 1), date(2021, 7, 1))), describe(Span(date(2021, 5, 1), None))
    ('2021-05-01 to 2021-06-30', 'from 2021-05-01')
    """
    if span.start is None:
        return f"before {span.end}" if span.end else "any date"
    if span.end is None:
        return f"from {span.start}"
    return f"{span.start} to {span.end - timedelta(days=1)}"


#: SQL functions that read the clock or do date arithmetic: a condition built with one is a
#: date condition whatever its column is called.
_CLOCK_FUNCS = frozenset(
    {
        "currenttimestamp",
        "currentdate",
        "dateadd",
        "datediff",
        "datesub",
        "date_sub",
        "date_add",
        "tsordsadd",
        "timestampadd",
        "timestampdiff",
        "timestampsub",
        "datetimeadd",
        "datetimesub",
    }
)


def applies_a_period(sql_filters: Sequence[Filter], functions: Sequence[str]) -> bool:
    """Does the SQL hold some date condition: a filter on a date-named column, one read
    through a date function, or clock arithmetic anywhere?

    >>> applies_a_period([Filter("creationdate", ">=", ("getdate() - 30",))], [])
    True
    >>> applies_a_period([Filter("posttypeid", "=", ("1",))], ["count"])
    False
    """
    if _CLOCK_FUNCS & set(functions):
        return True
    return any(
        (f.func is not None and f.func not in {"lower", "upper", "length"})
        or (f.column is not None and DATE_LIKE_NAME.search(f.column))
        for f in sql_filters
    )


#: A word each match of :data:`lx.RELATIVE <stef.nl.lexicon.RELATIVE>` holds, lower-case.
_RELATIVE_WORDS = (
    *("last", "this", "current", "previous", "past", "next", "prior", "recent"),
    *("today", "yesterday"),
)


def relative_period(text: str) -> re.Match[str] | None:
    """``lx.RELATIVE.search(text)``, not run on ASCII text that holds none of its words
    (on ASCII text ``re.IGNORECASE`` matches what ``str.lower()`` spells the same; the
    pattern opens with ``\\b`` and is tried at every position; docs/performance.md,
    session 17).

    >>> relative_period("in the Last 30 days").group("n"), relative_period("in 2020")
    ('30', None)
    """
    if text.isascii():
        low = text.lower()
        if not any(map(low.__contains__, _RELATIVE_WORDS)):
            return None
    return lx.RELATIVE.search(text)


def asked_days(text: str) -> float | None:
    """How far back a question's relative period reaches, in days ("in the last 30 days",
    "past 3 months", "the past week"), or None ("last year" is a calendar year).

    >>> asked_days("in the last 30 days"), asked_days("past week"), asked_days("last year")
    (30.0, 7.0, None)
    """
    m = relative_period(text)
    if m is None:
        return None
    if m.group("n"):
        raw = m.group("n").casefold()
        n = lx.NUMBER_WORDS[raw] if raw in lx.NUMBER_WORDS else int(raw)
        per = UNIT_DAYS.get(m.group("units").casefold().rstrip("s"))
        return n * per if per is not None else None
    if m.group("unit") and m.group("which").casefold() == "past":
        return UNIT_DAYS.get(m.group("unit").casefold())
    return None


def _report_reach(
    out: FindingCollector,
    asked_text: str,
    asked: float,
    column: str,
    reach: float,
    fragment: str,
    rule: str = "filter_alignment",
) -> None:
    """``filter_wrong_value``: the SQL keeps ``column`` from ``reach`` days back, where the
    question asks ``asked_text`` (about ``asked`` days back)."""
    out.add(
        "filter_wrong_value",
        "error",
        f"question asks for {asked_text!r} (about {asked:g} days back); the SQL keeps"
        f" {column} from {reach:g} days back",
        asked_text,
        fragment,
        rule,
    )


def _same_reach(a: float, b: float) -> bool:
    """Two reaches back from now that name the same period (3 months and 90 days)."""
    return abs(a - b) <= max(1.0, 0.1 * max(a, b))


def absorb_year_bounds(
    matched: list[tuple[Filter, Filter]], candidates: Sequence[Filter], used: set[int]
) -> None:
    """A year asked for as a date range (``d >= '2025-01-01' AND d < '2026-01-01'``): the
    range's other bound belongs to the matched year, it is not an extra filter."""
    for nl_f, s in list(matched):
        if nl_f.func != "year" or not nl_f.values or not s.column:
            continue
        year = int_value(nl_f.values[0])
        if year is None:
            continue
        bounds = (str(year), f"{year + 1}-01-01")
        for i, c in enumerate(candidates):
            if i in used or c is s or canon_col(c.column) != canon_col(s.column):
                continue
            if c.op in ("<", "<=", ">", ">=") and any(v.startswith(bounds) for v in c.values):
                used.add(i)
                matched.append((nl_f, c))


def clock_answer(
    req: Filter,
    candidates: Sequence[Filter],
    used: set[int],
    sql: Spec,
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
) -> int | None:
    """A relative period the record's timestamp resolved ("in the last 30 days" as ``>=
    2026-10-07``, "last year" as ``= 2025``) that the SQL reads from the clock: 0 when it
    is answered, 1 when a bound back from the clock reaches elsewhere
    (``filter_wrong_value``), None when the SQL does not read the clock for it. A current
    period ("this month", "today") is also answered by a lower bound at its first day with
    no upper bound: as of the record's time no later row exists.

    A bound back from the clock (``DATEADD(day, -30, GETDATE())``) is compared with the
    asked reach; a calendar period computed from the clock (``YEAR(d) = YEAR(GETDATE()) -
    1``) is accepted as the question's (``period_from_clock``, info: STEF does not run the
    clock arithmetic), as it is when the record has no timestamp.
    """
    if not req.text or (rel := relative_period(req.text)) is None:
        return None
    if (i := _open_from_start(req, rel, candidates, used)) is not None:
        used.add(i)  # "this month" as >= its first day: nothing after the record's time yet
        matched.append((req, candidates[i]))
        return 0
    windows: list[list[str | float]] = sql.flags.get("clock_windows") or []
    asked = asked_days(req.text)
    for column, reach in windows:
        i = _unused_on(candidates, used, str(column), bound=True)
        if i is None or asked is None:
            continue
        used.add(i)
        if _same_reach(asked, float(reach)):
            matched.append((req, candidates[i]))
            return 0
        _report_reach(out, req.text, asked, str(column), float(reach), candidates[i].text)
        return 1
    for column in sql.flags.get("clock_columns") or ():
        i = _unused_on(candidates, used, column, bound=False)
        if i is None:
            continue
        used.add(i)
        matched.append((req, candidates[i]))
        out.add(
            "period_from_clock",
            "info",
            f"question asks for {req.text!r}; the SQL computes that period from the clock"
            " (not evaluated)",
            req.text,
            candidates[i].text,
            "filter_alignment",
        )
        return 0
    return None


def _open_from_start(
    req: Filter, rel: re.Match[str], candidates: Sequence[Filter], used: set[int]
) -> int | None:
    """The SQL's lower bound at the first day of the current period the question names
    ("this month", "today"), with no upper bound on its column, else None."""
    which = (rel.group("which") or "").casefold()
    current = (which in {"this", "current"} and rel.group("unit")) or (
        (rel.group("day") or "").casefold() == "today"
    )
    if not current or req.op != "=" or len(req.values) != 1:
        return None
    value = req.values[0]
    start = {"month": f"{value}-01", "year": f"{value}-01-01"}.get(req.func or "", value[:10])
    for i, c in enumerate(candidates):
        if i in used or c.op != ">=" or not c.values or c.values[0][:10] != start:
            continue
        if not any(
            j not in used and d.op in ("<", "<=") and canon_col(d.column) == canon_col(c.column)
            for j, d in enumerate(candidates)
        ):
            return i
    return None


def _unused_on(
    candidates: Sequence[Filter], used: set[int], column: str, bound: bool
) -> int | None:
    """The first unused SQL filter on ``column`` (a range bound only, with ``bound``)."""
    for i, c in enumerate(candidates):
        if i in used or canon_col(c.column) != canon_col(column):
            continue
        if not bound or c.op in ("<", "<=", ">", ">="):
            return i
    return None


def check_relative_periods(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """A period relative to now (``in the past 30 days``) that no record time resolved must
    still be applied by some date condition: ``filter_missing`` when the SQL has none. A
    period the SQL reaches back to from the clock (``DATEADD(day, -7, GETDATE())``) must be
    the asked one: ``filter_wrong_value`` when no such bound of the SQL matches it.

    >>> out = FindingCollector()
    >>> check_relative_periods(Spec(filters=[Filter(None, ">=", (), "in past 30 days",
    ...     func="date")]), Spec(), out)
    >>> check_relative_periods(Spec(filters=[Filter(None, ">=", (), "in past 30 days",
    ...     func="date")]), Spec(flags={"clock_windows": [["created", 7.0]]}), out)
    >>> [f.kind for f in out.findings]
    ['filter_missing', 'filter_wrong_value']
    """
    functions = sql.flags.get("functions", ())
    windows: list[list[str | float]] = sql.flags.get("clock_windows") or []
    for f in nl.filters:
        if f.text.casefold() == "today":
            continue  # "how many are there today?": now, not a day to filter on
        asked = asked_days(f.text) if windows and not f.negated and not f.values else None
        if asked is not None and not any(_same_reach(asked, float(w[1])) for w in windows):
            column = str(windows[0][0])
            _report_reach(out, f.text, asked, column, float(windows[0][1]), column, "filter")
            continue
        unresolved = f.func == "date" and not f.values and not f.negated
        if unresolved and not applies_a_period(sql.filters, functions):
            out.add(
                "filter_missing",
                "error",
                f"question asks for {f.text!r}, a period relative to now; the SQL has no "
                "date condition",
                f.text,
                None,
                "filter",
            )


def month_by_name(req: Filter, sql: Spec) -> str | None:
    """A month the question names (``= 2``, of ``month``) that the SQL answers by its name:
    a column named for it (a table with a column a month: ``temperature.Feb``) or a
    literal that is the name itself (``releasedate LIKE '%Mar%'``), or None.

    >>> from stef.spec import Projection
    >>> feb = Filter(None, "=", ("2",), func="month")
    >>> month_by_name(feb, Spec(columns=["city", "feb"]))
    'feb'
    >>> month_by_name(feb, Spec(literals=["%Feb%"])), month_by_name(feb, Spec(columns=["febrile"]))
    ('%Feb%', None)
    """
    if req.func != "month" or req.op != "=" or len(req.values) != 1 or not req.values[0].isdigit():
        return None
    month = int(req.values[0])
    names = {n for n, i in lx.MONTHS.items() if i == month}
    for col in sql.columns:
        if col.casefold().rsplit(".", 1)[-1] in names:
            return col
    literals = [*sql.literals, *(v for f in sql.filters for v in f.values)]
    return next((lit for lit in literals if lit.strip("%_ ").casefold() in names), None)


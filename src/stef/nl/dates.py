"""Dates and periods in an NL text: absolute dates and date ranges, quarters, year ranges,
decades, seasons, years after a temporal cue (``since 2020``), months alone, years alone,
and relative dates (``last year``) resolved against the record's timestamp.

>>> _date_value("January 5, 2023"), _date_value("Jan 2023")
(('2023-01-05', None), ('2023-01', 'month'))
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from dateutil.relativedelta import relativedelta

from stef.nl import lexicon as lx
from stef.nl.context import _Ctx
from stef.nl.words import _prev_words
from stef.spec import Filter

_ISO_DATE_TIME = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ t](.+))?$")
_US_DATE_TIME = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})(?:[ t](.+))?$")


def _date_value(raw: str) -> tuple[str, str | None] | None:
    """``"January 5, 2023"`` → ``("2023-01-05", None)``; ``"Jan 2023"`` → ``("2023-01", "month")``.

    ``a/b/yyyy`` reads as month/day unless the first number cannot be a month.
    """
    s = " ".join(raw.casefold().replace(",", " ").split())
    m = _ISO_DATE_TIME.match(s) or _US_DATE_TIME.match(s)
    if m:
        a, b, c, tm = m.groups()
        y, mo, d = (int(a), int(b), int(c)) if len(a) == 4 else (int(c), int(a), int(b))
        if mo > 12 >= d:
            mo, d = d, mo
        if not (1 <= mo <= 12 and 1 <= d <= 31):
            return None
        out = f"{y:04d}-{mo:02d}-{d:02d}"
        return (f"{out} {_clock(tm)}" if tm else out), None
    parts = [p.rstrip(".") for p in s.replace(" of ", " ").split()]
    month = next((lx.MONTHS[p] for p in parts if p in lx.MONTHS), None)
    year = next((int(p) for p in parts if p.isdigit() and len(p) == 4), None)
    day = next(
        (
            int(p.rstrip("stndrh"))
            for p in parts
            if p[:1].isdigit() and len(p.rstrip("stndrh")) <= 2
        ),
        None,
    )
    if month is None or year is None:
        return None
    if day is not None and 1 <= day <= 31:
        return f"{year:04d}-{month:02d}-{day:02d}", None
    return f"{year:04d}-{month:02d}", "month"


_TIME_OF_DAY = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?\s*([ap]m)?")


def _clock(tm: str) -> str:
    """``"7:37:33 pm"`` → ``"19:37:33"``."""
    m = _TIME_OF_DAY.match(tm)
    if not m:
        return tm
    h, mi, sec, ampm = m.groups()
    hour = int(h) % 12 + (12 if ampm == "pm" else 0) if ampm else int(h)
    return f"{hour:02d}:{mi}" + (f":{sec}" if sec else "")


def _step_dates(ctx: _Ctx) -> None:
    """Relative dates, dates with a year, quarters and months alone."""
    if ctx.has(lx.RELATIVE_DATE_WORDS) or ctx.may_hold(
        "to date", "to-date", "year before", "preceding year"
    ):
        _relative_dates(ctx)  # "year-to-date" too
    if lx.FOUR_DIGITS.search(ctx.text):
        _absolute_dates(ctx)
    if ctx.may_hold("q1", "q2", "q3", "q4", "quarter"):
        _quarters_alone(ctx)
    if ctx.has(lx.MONTH_WORDS):
        _months(ctx)


_EARLIER = re.compile(r"earlier|before", re.I)

# What every match of a pattern holds, tested before running it (see _Ctx.may_have and
# _Ctx.may_hold): a whole word of the first or a part of the others.
#: ``between``/``from`` open each date range (:data:`lx.DATE_RANGE`) and the first form
#: of a year range (:data:`lx.YEAR_RANGE`).
_RANGE_WORDS = lx._words("between from")
#: What joins the two dates of a date range's second form (no "between"/"from" before it).
_DATE_RANGE_JOINS = ("-", "to", "through", "thru", "until", "till")
#: What joins the two years of a year range's second form.
_YEAR_RANGE_JOINS = ("-", "to", "through", "until")
#: A word of each form of :data:`lx.YEAR_OP` (``in or before 2020``, ``2020 onwards``).
_YEAR_OP_WORDS = lx._words(
    "starting before after afterwards earlier later prior through since until up till from by"
    " beyond onward onwards"
)
#: The first three letters of every month name and abbreviation (:data:`lx.MONTHS`).
_MONTH_STARTS = tuple(sorted({m[:3] for m in lx.MONTHS}))


#: A year, then the months of it that a label before it means, in brackets: "summer 2023
#: (June to August)", "fiscal Q1 2024 (April to June)".
_YEAR_THEN_MONTHS = re.compile(
    rf"\b(?P<y>(?:1[89]|20)\d\d)\s*\(\s*(?P<m1>{lx.alternation(lx.MONTHS)})\.?\s*"
    rf"(?:to|through|thru|until|till|-|–)\s*(?P<m2>{lx.alternation(lx.MONTHS)})\.?\s*\)",
    re.I,
)


def _month_run(m: re.Match[str], m1: int, m2: int, src: str) -> Filter:
    """The months ``m1`` to ``m2`` of the year a match's group ``y`` holds, as one filter.

    >>> m = re.match("(?P<y>[0-9]{4})", "2023")
    >>> _month_run(m, 6, 8, "question").values
    ('2023-06', '2023-08')
    """
    y = m.group("y")
    return Filter(None, "between", (f"{y}-{m1:02d}", f"{y}-{m2:02d}"), m.group(0), src, "month")


_MONTH = lx.alternation(lx.MONTHS)
#: A run of months across years, a year label before it in brackets consumed with it:
#: "fiscal year 2024 (July 2023 to June 2024)", "from Nov 2023 through Feb 2024".
_MONTHS_ACROSS = re.compile(
    rf"(?:\b(?:1[89]|20)\d\d\s*\(\s*)?\b(?P<m1>{_MONTH})\.?\s+(?P<y1>(?:1[89]|20)\d\d)\s*"
    rf"(?:to|through|thru|until|till|-|–)\s*(?P<m2>{_MONTH})\.?\s+(?P<y2>(?:1[89]|20)\d\d)\b\)?",
    re.I,
)
#: Days of one month, the days first: "between 1 and 15 June 2024", "1-15 June 2024" (the
#: month first, "June 1 to 15, 2024", is :data:`_DAY_SPAN`'s).
_DAYS_THEN_MONTH = re.compile(
    rf"\b(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s*(?:and|to|through|until|-|–)\s*"
    rf"(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH})\.?,?\s+"
    r"(?P<y>(?:1[89]|20)\d\d)\b",
    re.I,
)


def _spans(ctx: _Ctx) -> None:
    """Runs of months across years and runs of days of one month (:data:`_MONTHS_ACROSS`,
    :data:`_DAYS_THEN_MONTH`), each as one range."""
    src = ctx.source
    for m in ctx.scan(_MONTHS_ACROSS):
        y1, y2 = int(m.group("y1")), int(m.group("y2"))
        m1, m2 = (lx.MONTHS[m.group(k).casefold().rstrip(".")] for k in ("m1", "m2"))
        if (y1, m1) < (y2, m2) and ctx.free(m.start(), m.end()):
            values = (f"{y1}-{m1:02d}", f"{y2}-{m2:02d}")
            ctx.add_filter(Filter(None, "between", values, m.group(0), src, "month"), *m.span())
    for m in ctx.scan(_DAYS_THEN_MONTH):
        month = lx.MONTHS[m.group("m").casefold()]
        d1, d2 = int(m.group("d1")), int(m.group("d2"))
        try:
            a, b = (date(int(m.group("y")), month, d) for d in (d1, d2))
        except ValueError:
            continue  # "between 5 and 31 June": no such day
        if a < b and ctx.free(m.start(), m.end()):
            values = (a.isoformat(), b.isoformat())
            ctx.add_filter(Filter(None, "between", values, m.group(0), src), *m.span())


def _absolute_dates(ctx: _Ctx) -> None:
    """Dates, date ranges, quarters and halves of a year, year ranges, decades, seasons, years
    after a temporal cue."""
    src = ctx.source
    _spans(ctx)
    for m in ctx.scan(_YEAR_THEN_MONTHS) if "(" in ctx.text else ():
        m1, m2 = (lx.MONTHS[m.group(k).casefold()] for k in ("m1", "m2"))
        if m1 < m2 and ctx.free(m.start(), m.end()):  # "summer 2023 (June to August)"
            ctx.add_filter(_month_run(m, m1, m2, src), m.start(), m.end())
    quartered = ctx.may_hold("q", "half", "h1", "h2")
    for m in ctx.scan(_TWO_QUARTERS) if quartered else ():
        q1, q2 = sorted((int(m.group("a")), int(m.group("b"))))
        if q1 < q2 and ctx.free(m.start(), m.end()):  # "Q4 vs Q3 2024": both of 2024
            first, last = (_part_of_year(int(m.group("y")), q, 3, "", src) for q in (q1, q2))
            values = (first.values[0], last.values[1])
            ctx.add_filter(Filter(None, "between", values, m.group(0), src), *m.span())
    for m in (*ctx.scan(lx.QUARTER), *ctx.scan(_YEAR_QUARTER)) if quartered else ():
        half = (m.group("qh") or m.group("part") or "").casefold() in ("h", "half")
        q = int(m.group("q") or lx.QUARTER_ORDINALS[m.group("nth").casefold()])
        if ctx.free(m.start(), m.end()) and not (half and q > 2):
            months = 6 if half else 3
            f = _part_of_year(int(m.group("y")), q, months, m.group(0), src)
            ctx.add_filter(f, m.start(), m.end())
    _periods(ctx)
    dated = ctx.may_have(_RANGE_WORDS) or ctx.may_hold(*_DATE_RANGE_JOINS)
    for m in ctx.scan(lx.DATE_RANGE) if dated else ():
        a = _date_value(m.group("a") or m.group("c"))
        b = _date_value(m.group("b") or m.group("d"))
        if a and b and ctx.free(m.start(), m.end()):
            func = a[1] if a[1] == b[1] else None
            ctx.add_filter(
                Filter(None, "between", (a[0], b[0]), m.group(0), src, func), m.start(), m.end()
            )
    for m in ctx.scan(lx.DATE_RE):
        dv = _date_value(m.group("d"))
        if dv and ctx.free(m.start(), m.end()):
            o = ctx.search(lx.DATE_OP_BEFORE, max(0, m.start() - 25), m.start())
            op = lx.YEAR_OPS.get(" ".join(o.group("op").casefold().split()), "=") if o else "="
            start = o.start() if o else m.start()
            op = "<" if o and _not_since(ctx.low, o) else op  # "not logged in since May 2024"
            f = Filter(None, op, (dv[0],), ctx.text[start : m.end()], src, dv[1])
            ctx.add_filter(f, start, m.end())
    year_range = ctx.may_have(_RANGE_WORDS) or ctx.may_hold(*_YEAR_RANGE_JOINS)
    for m in ctx.scan(lx.YEAR_RANGE) if year_range else ():
        lo, hi = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        if int(lo) <= int(hi) and ctx.free(m.start(), m.end()):
            ctx.add_filter(
                Filter(None, "between", (lo, hi), m.group(0), src, "year"), m.start(), m.end()
            )
    decades = "0s" in ctx.text or "0's" in ctx.text
    for m in lx.DECADE.finditer(ctx.text) if decades else ():
        if ctx.free(m.start(), m.end()):
            decade = int(m.group("y"))
            f = Filter(None, "between", (str(decade), str(decade + 9)), m.group(0), src, "year")
            ctx.add_filter(f, m.start(), m.end())
    for m in lx.SEASON.finditer(ctx.text) if "/" in ctx.text else ():
        if ctx.free(m.start(), m.end()):
            ctx.add_filter(Filter(None, "=", (m.group(0),), m.group(0), src), m.start(), m.end())
    for m in ctx.scan(lx.YEAR_OP) if ctx.may_have(_YEAR_OP_WORDS) else ():
        if not ctx.free(m.start(), m.end()):
            continue
        if m.group("y"):
            op, y = lx.YEAR_OPS.get(" ".join(m.group("op").casefold().split()), "="), m.group("y")
            op = "<" if _not_since(ctx.low, m) else op
        else:
            op = "<=" if _EARLIER.search(m.group("post")) else ">="
            y = m.group("y2")
        ctx.add_filter(Filter(None, op, (y,), m.group(0), src, "year"), m.start(), m.end())


#: A negation in the clause before "since": "have not logged in since May 2024" keeps the
#: rows whose last time is before it.
_NEGATED_CLAUSE = re.compile(r"\b(?:not|never|no\s+longer)\b|n't\b")


def _not_since(low: str, m: re.Match[str]) -> bool:
    """Is the match's operator "since", after a negation in its clause (from the last
    sentence break or comma)?

    >>> low = "users who have not logged in since 2024"
    >>> _not_since(low, lx.YEAR_OP.search(low)), _not_since("sold since 2024", lx.YEAR_OP.search(
    ...     "sold since 2024"))
    (True, False)
    """
    if m.group("op").casefold().split() != ["since"]:
        return False
    clause = re.split(r"[.;:?!,]", low[: m.start()])[-1]
    return _NEGATED_CLAUSE.search(clause) is not None


_MONTH_NAME = lx.alternation(lx.MONTHS)
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
#: Two days of one year, the year written once after both: ``between Jan 15 and Feb 15
#: 2024``, ``from March 3 to March 9, 2024``, ``March 3-9, 2024``.
_DAY_SPAN = re.compile(
    rf"\b(?:(?P<lead>between|from)\s+)?(?P<m1>{_MONTH_NAME})\.?\s+(?P<d1>{_DAY})\s*"
    rf"(?:(?(lead)and|(?!))|to|until|till|through|thru|-)\s*"
    rf"(?:(?P<m2>{_MONTH_NAME})\.?\s+)?(?P<d2>{_DAY}),?\s+(?P<y>(?:1[89]|20)\d\d)\b",
    re.I,
)


#: A week of a month: ``the first week of March 2024`` (days 1-7), ``the last week of May
#: 2023`` (its last seven days).
_WEEK_OF_MONTH = re.compile(
    rf"\b(?P<nth>first|second|third|fourth|last)\s+week\s+of\s+(?P<m>{_MONTH_NAME})\.?,?\s+"
    r"(?:of\s+)?(?P<y>(?:1[89]|20)\d\d)\b",
    re.I,
)


def _day_of(year: str, month: str, day: str) -> date | None:
    """``("2024", "Feb", "15th")`` → ``date(2024, 2, 15)``; None for no such day."""
    try:
        return date(int(year), lx.MONTHS[month.casefold()], int(day.rstrip("stndrh")))
    except ValueError:
        return None


def _periods(ctx: _Ctx) -> None:
    """Runs of days ending on a date, and two months of one year, as date ranges."""
    src = ctx.source
    for m in ctx.scan(lx.DAYS_ENDING) if ctx.may_hold("day") else ():
        last = _date_value(m.group("d"))
        raw = m.group("n").casefold()
        n = lx.NUMBER_WORDS[raw] if raw in lx.NUMBER_WORDS else int(raw)
        if last is None or last[1] is not None or not 1 <= n <= 366:
            continue
        if ctx.free(m.start(), m.end()):
            end = date.fromisoformat(last[0][:10])
            first = (end - timedelta(days=n - 1)).isoformat()
            f = Filter(None, "between", (first, end.isoformat()), m.group(0), src)
            ctx.add_filter(f, m.start(), m.end())
    for m in ctx.scan(_WEEK_OF_MONTH) if ctx.may_hold("week") else ():
        month_start = _day_of(m.group("y"), m.group("m"), "1")
        if month_start is None or not ctx.free(m.start(), m.end()):
            continue
        last_day = month_start + relativedelta(months=1) - timedelta(days=1)
        nth = m.group("nth").casefold()
        begin = (
            last_day - timedelta(days=6)
            if nth == "last"
            else month_start + timedelta(days=7 * (lx.QUARTER_ORDINALS[nth] - 1))
        )
        week_end = min(begin + timedelta(days=6), last_day).isoformat()
        f = Filter(None, "between", (begin.isoformat(), week_end), m.group(0), src)
        ctx.add_filter(f, m.start(), m.end())
    for m in ctx.scan(_DAY_SPAN) if ctx.may_hold(*_MONTH_STARTS) else ():
        since = _day_of(m.group("y"), m.group("m1"), m.group("d1"))
        until = _day_of(m.group("y"), m.group("m2") or m.group("m1"), m.group("d2"))
        if since and until and since <= until and ctx.free(m.start(), m.end()):
            f = Filter(None, "between", (since.isoformat(), until.isoformat()), m.group(0), src)
            ctx.add_filter(f, m.start(), m.end())
    for m in ctx.scan(lx.MONTH_SPAN) if ctx.may_hold(*_MONTH_STARTS) else ():
        m1, m2 = (lx.MONTHS[m.group(k).casefold()] for k in ("m1", "m2"))
        listed = m.group("join").casefold() == "and" and not m.group("lead")
        if m1 >= m2 or (listed and m2 != m1 + 1) or not ctx.free(m.start(), m.end()):
            continue  # "March and May 2021" names two months, not the run between them
        ctx.add_filter(_month_run(m, m1, m2, src), m.start(), m.end())


#: A quarter named without its year ("signups for Q1", "in the third quarter").
_QUARTER_ALONE = re.compile(
    r"\b(?:q(?P<q>[1-4])|(?P<nth>first|second|third|fourth)\s+quarter)\b(?!\s*(?:of\s+|,\s*)?\d)",
    re.I,
)


#: Two quarters of one year, the year written once: "Q4 vs Q3 2024", "Q1 and Q2 2023".
_TWO_QUARTERS = re.compile(
    r"\bq(?P<a>[1-4])\s*(?:vs\.?|versus|and|or|to|through|-|–|&)\s*q(?P<b>[1-4])"
    r"\s*,?\s*(?P<y>(?:19|20)\d\d)\b",
    re.I,
)
#: A quarter or half written after its year: "2024 Q2", "2024-Q2", "2023 H1".
_YEAR_QUARTER = re.compile(
    r"\b(?P<y>(?:19|20)\d\d)[\s-]?(?P<qh>[qh])(?P<q>[1-4])\b(?P<nth>)(?P<part>)", re.I
)


def _quarters_alone(ctx: _Ctx) -> None:
    """A quarter without a year is the latest such quarter begun by the record's time ("Q1"
    asked in May 2024 is 2024-01-01 to 2024-03-31; "Q4" asked then is 2023's); without a
    record time it is no value to look for, only an unresolved cue."""
    for m in ctx.scan(_QUARTER_ALONE):
        if not ctx.free(m.start(), m.end()):
            continue
        if ctx.now is None:
            ctx.cue(f"{m.group(0)} (unresolved: no timestamp)")
            ctx.take(m.start(), m.end())
            continue
        q = int(m.group("q") or lx.QUARTER_ORDINALS[m.group("nth").casefold()])
        year = ctx.now.year - (1 if 3 * q - 2 > ctx.now.month else 0)
        ctx.add_filter(_part_of_year(year, q, 3, m.group(0), ctx.source), m.start(), m.end())


def _part_of_year(year: int, nth: int, months: int, text: str, src: str) -> Filter:
    """The days of the ``nth`` part of ``year`` that is ``months`` long: a quarter (3) or a
    half (6).

    >>> _part_of_year(2023, 2, 6, "H2 2023", "question").values
    ('2023-07-01', '2023-12-31')
    """
    first = date(year, months * (nth - 1) + 1, 1)
    last = first + relativedelta(months=months) - timedelta(days=1)
    return Filter(None, "between", (first.isoformat(), last.isoformat()), text, src)


#: A year stated before "the previous year", "the year before": the year those count back from.
_STATED_YEAR = re.compile(r"\b(?:19|20)\d\d\b(?!\s*[-/]\d)")
_YEAR_BEFORE = re.compile(r"\bthe\s+(?:year\s+before|preceding\s+year)\b", re.I)


def _year_before(ctx: _Ctx, m: re.Match[str], relative: bool = True) -> Filter | None:
    """ "Revenue in 2024 compared to the previous year": the year before the last year the
    text states ahead of the phrase (2023), not the year before the record's time; None
    when no year comes first or the phrase counts back from now ("last year"). ``m``: a
    match of :data:`lx.RELATIVE` (``relative``) or of "the year before"."""
    if relative and (
        (m.group("unit") or "").casefold() != "year"
        or (m.group("which") or "").casefold() not in {"previous", "prior"}
    ):
        return None
    years = _STATED_YEAR.findall(ctx.text, 0, m.start())
    if not years:
        return None
    return Filter(None, "=", (str(int(years[-1]) - 1),), m.group(0), ctx.source, "year")


def _relative_dates(ctx: _Ctx) -> None:
    for m in ctx.scan(_YEAR_BEFORE) if ctx.may_hold("year before", "preceding year") else ():
        before = _year_before(ctx, m, relative=False)
        if before is not None and ctx.free(m.start(), m.end()):
            ctx.add_filter(before, m.start(), m.end())
    for m in ctx.scan(lx.RELATIVE):
        if (m.group("unit") or "").casefold() == "day" and not _day_back(ctx.low, m):
            continue  # "the next day", "the last day any resident moved in": no reach
        if _each_before(ctx.low, m):
            continue  # "each month's revenue and the previous month's": one before each
        if ctx.free(m.start(), m.end()):
            f = _year_before(ctx, m) or _relative_date(m, ctx.now, ctx.source)
            if f.op == "=" and f.func != "date" and _prev_words(ctx.low, m.start(), 1) == ["since"]:
                f = Filter(None, ">=", f.values, f.text, f.clause, f.func)  # "since last year"
            ctx.add_filter(f, m.start(), m.end())
            if not f.values:
                ctx.cue(f"{m.group(0)} (unresolved: no timestamp)")


def _each_before(low: str, m: re.Match[str]) -> bool:
    """Is "the previous month" the one before each of a series ("each month's revenue and the
    previous month's", "every week compared with the prior week"), not one back from now?

    >>> low, last = "each month's revenue and the previous month's", "revenue last month"
    >>> _each_before(low, lx.RELATIVE.search(low)), _each_before(last, lx.RELATIVE.search(last))
    (True, False)
    """
    which, unit = (m.group("which") or "").casefold(), (m.group("unit") or "").casefold()
    if which not in ("previous", "prior") or not unit:
        return False
    each = re.search(rf"\b(?:each|every|per)\s+{unit}", low)
    return low.startswith("'s", m.end()) or each is not None


def _day_back(low: str, m: re.Match[str]) -> bool:
    """Is "past day"/"last day" a reach of a day back from now: "the past day", "in the last
    day" (not "the last day any resident moved in", "the next day")?

    >>> m = lx.RELATIVE.search("errors in the last day")
    >>> _day_back("errors in the last day", m)
    True
    """
    which = m.group("which").casefold()
    if which == "past":
        return True
    return which == "last" and _prev_words(low, m.start(), 2) in (
        ["in", "the"],
        ["over", "the"],
        ["during", "the"],
        ["within", "the"],
    )


def _months(ctx: _Ctx) -> None:
    """``in March``: a month without a year; ``in September and October``: each month."""
    for m in lx.MONTH_ALONE.finditer(ctx.text):
        item: re.Match[str] | None = m
        if _NAME_GOES_ON.match(ctx.text, m.end("m")):
            continue  # "the September Meeting": a name that holds a month
        while item is not None and ctx.free(item.start("m"), item.end("m")):
            month = str(lx.MONTHS[item.group("m").casefold()])
            f = Filter(None, "=", (month,), item.group(0).strip(), ctx.source, "month")
            ctx.add_filter(f, item.start("m"), item.end("m"))
            item = lx.MONTH_NEXT.match(ctx.text, item.end())


#: A capitalised word right after a month name, neither a weekday nor the start of a date:
#: the month is part of a name ("September Meeting").
_NAME_GOES_ON = re.compile(
    r"\s+(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b)[A-Z][a-z]+\b"
)


#: The period each ``?TD`` abbreviation runs to date over.
_TO_DATE = {"y": "year", "m": "month", "q": "quarter", "w": "week"}


#: "yesterday vs the day before": the two days together.
_DAY_BEFORE = re.compile(
    r"\s+(?:vs\.?|versus|and|compared\s+(?:to|with))\s+the\s+day\s+before\b", re.I
)


def _relative_date(m: re.Match[str], now: datetime | None, src: str) -> Filter:
    """``last year`` → ``year = now.year - 1``; ``YTD`` as ``this year``; without ``now`` a
    filter with no values."""
    phrase = m.group(0)
    if m.group("day"):
        if now is None:
            return Filter(None, "=", (), phrase, src, "date")
        d = now.date() - timedelta(days=1 if m.group("day").casefold() == "yesterday" else 0)
        if (before := _DAY_BEFORE.match(m.string, m.end())) is not None:  # "… vs the day before"
            days = ((d - timedelta(days=1)).isoformat(), d.isoformat())
            return Filter(None, "between", days, phrase + before.group(0), src)
        return Filter(None, "=", (d.isoformat(),), phrase, src, "date")
    if m.group("unit") or m.group("td"):
        if m.group("td"):  # "YTD", "MTD": this year, this month … to date
            unit, which = _TO_DATE[m.group("td").casefold()], "this"
        else:
            unit, which = m.group("unit").casefold(), m.group("which").casefold()
        back = 0 if which in {"this", "current"} else -1 if which == "next" else 1
        if unit == "year":
            vals = (str(now.year - back),) if now else ()
            return Filter(None, "=", vals, phrase, src, "year")
        if unit == "month":
            if now is None:
                return Filter(None, "=", (), phrase, src, "month")
            d = date(now.year, now.month, 1) - relativedelta(months=back)
            return Filter(None, "=", (f"{d.year:04d}-{d.month:02d}",), phrase, src, "month")
        if now is None:
            return Filter(None, ">=", (), phrase, src, "date")
        if unit == "quarter":  # the calendar quarter, as a month is the calendar month
            q = now.year * 4 + (now.month - 1) // 3 - back  # quarters since year 0
            return _part_of_year(q // 4, q % 4 + 1, 3, phrase, src)
        reach = {"hour": timedelta(hours=1), "day": timedelta(days=1)}.get(
            unit, timedelta(days=7 * max(back, 1))
        )
        return Filter(None, ">=", ((now - reach).date().isoformat(),), phrase, src)
    raw = m.group("n").casefold()
    count = lx.NUMBER_WORDS[raw] if raw in lx.NUMBER_WORDS else int(raw)
    unit = m.group("units").casefold()
    if now is None:
        return Filter(None, ">=", (), phrase, src, "year" if unit == "years" else "date")
    since = (now - relativedelta(**{unit: count})).date()
    return Filter(None, ">=", (since.isoformat(),), phrase, src)


def _step_years(ctx: _Ctx) -> None:
    """A remaining 19xx/20xx read as a year unless a lower-case noun follows (``2000 students``)."""
    for m in lx.YEAR_ALONE.finditer(ctx.text):
        if not ctx.free(m.start(), m.end()):
            continue
        prev = _prev_words(ctx.low, m.start(), 1)
        nxt = (ctx.low[m.end() : m.end() + 20].split() or [""])[0].strip(",.?!;:)")
        led = bool(prev) and prev[-1] in lx.YEAR_LEADS
        if not led and nxt.isalpha() and nxt.islower() and nxt not in lx.YEAR_TAILS:
            continue
        prep = ctx.search(lx.YEAR_PREP, max(0, m.start() - 10), m.start())
        text = ctx.text[prep.start() if prep else m.start() : m.end()]
        cue = "event" if not led and _names_event(ctx.text, m.start()) else None
        ctx.add_filter(
            Filter(None, "=", (m.group(0),), text, ctx.source, "year", cue), m.start(), m.end()
        )


def _names_event(text: str, pos: int) -> bool:
    """Does a capitalised name run up to the year at ``pos`` (``Black Friday 2023``, ``Prime
    Day 2024``)? Then the year dates that event, and a day inside it answers it.

    >>> _names_event("orders on Black Friday 2023", 23), _names_event("Sales 2023", 6)
    (True, False)
    """
    before = text[:pos].split()
    if len(before) < 2 or not before[-1].isalpha() or not before[-1][0].isupper():
        return False
    return before[-1].casefold() not in lx.MONTHS and not before[-2].endswith((".", "?", "!"))

"""A question's period relative to now against SQL that computes its period from the
clock: a reach back from now (``DATEADD(day, -30, GETDATE())`` for "the last 30 days"), a
current period open from its first day, and a calendar period computed from the clock that
the record's time resolves (``YEAR(d) = YEAR(GETDATE()) - 1`` for "last year"; see
:func:`stef.sql.clock.resolve_clock_values`). Pure functions of the two specs, used by
:mod:`stef.align.filters`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from stef.align.dates import (
    Span,
    applies_a_period,
    asked_days,
    back,
    column_span,
    date_match,
    describe,
    filter_span,
    nl_span,
    period,
    relative_period,
    report_reach,
    same_reach,
)
from stef.align.matching import canon_col
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.spec import Filter, Spec
from stef.sql.clock import UNIT_DAYS


def clock_answer(
    req: Filter,
    candidates: Sequence[Filter],
    used: set[int],
    sql: Spec,
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
    alone: bool = True,
) -> int | None:
    """A relative period the record's timestamp resolved ("in the last 30 days" as ``>=
    2026-10-07``, "last year" as ``= 2025``) that the SQL reads from the clock: 0 when it
    is answered, 1 when a bound back from the clock reaches elsewhere
    (``filter_wrong_value``), None when the SQL does not read the clock for it. A current
    period ("this month", "today") is also answered by a lower bound at its first day with
    no upper bound: as of the record's time no later row exists.

    A bound back from the clock (``DATEADD(day, -30, GETDATE())``) is compared with the
    asked reach. A calendar period computed from the clock (``YEAR(d) = YEAR(GETDATE()) -
    1``, ``d >= DATE_TRUNC('month', NOW())``) that the record's time resolved
    (:func:`stef.sql.clock.resolve_clock_values`) is compared as dates when the question
    names one calendar period ("yesterday", "last month"; ``alone``: no other relative
    period to pair with another column). One that it could not resolve, a reach ("the
    last 6 months" as whole months back from this month's start), a week (calendar or
    seven days), the period's first day as a reference ("since last year" as ``valid_on
    =`` its first day) is accepted as the question's (``period_from_clock``, info: the clock
    arithmetic is not evaluated). A record without a timestamp whose SQL takes its dates
    from the clock alone is read at a fixed day (:func:`stef.sql.clock.clock_reference`):
    two periods relative to now compare alike at any time.
    """
    if not req.text or (rel := relative_period(req.text)) is None:
        return None
    if (i := _open_from_start(req, rel, candidates, used)) is not None:
        used.add(i)  # "this month" as >= its first day: nothing after the record's time yet
        matched.append((req, candidates[i]))
        return 0
    windows: list[list[str | float]] = sql.flags.get("clock_windows") or []
    asked = asked_days(req.text)
    if asked is not None and (hit := _window(req, asked, windows, candidates, used, out)):
        matched.extend([(req, candidates[hit[1]])] if hit[0] == 0 else [])
        return hit[0]
    aged = _aged_instead(req, candidates, used, sql) if asked is not None and not windows else None
    if asked is not None and aged is not None:
        used.add(aged)
        _report_aged(out, req, asked, candidates[aged])
        return 1
    clocked = sql.flags.get("clock_columns") or ()
    calendar = asked is None and alone and (rel.group("unit") or "").casefold() != "week"
    if clocked and calendar and (got := _resolved_dates(req, candidates, used, sql, out)):
        kind, i = got
        if kind == "answered":
            matched.append((req, candidates[i]))
        return 0 if kind == "answered" else 1
    rolled = _calendar_reach(rel) if asked is None else None  # "last quarter" as 91 days back
    if rolled is not None and (hit := _window(req, rolled, windows, candidates, used, out)):
        matched.extend([(req, candidates[hit[1]])] if hit[0] == 0 else [])
        return hit[0]
    for column in clocked:
        i = _unused_on(candidates, used, column, bound=False)
        if i is None:
            continue
        used.add(i)
        matched.append((req, candidates[i]))
        _from_clock(out, req, candidates[i].text)
        return 0
    if clocked and _spent_holds(req, candidates, sql) is not False:
        _from_clock(out, req, None)  # read inside an expression: CASE WHEN m = <this month>
        return 0
    return None  # its clock filters keep none of it: "this month vs last month" as this month


def _reaching(windows: Sequence[Sequence[str | float]], asked: float) -> str | None:
    """The column of the first bound back from now (``windows``: column, days) that reaches
    as far as ``asked``, or None.

    >>> _reaching([["created_at", 30.0], ["paid_at", 90.0]], 91.3)
    'paid_at'
    """
    return next((str(c) for c, reach in windows if same_reach(asked, float(reach))), None)


def _window(
    req: Filter,
    asked: float,
    windows: Sequence[Sequence[str | float]],
    candidates: Sequence[Filter],
    used: set[int],
    out: FindingCollector,
) -> tuple[int, int] | None:
    """The first unused bound back from now (``windows``: column, days) against the asked
    reach: (0, its position) when they name the same period, (1, its position) when it
    reaches elsewhere (reported: ``filter_wrong_value``), None when there is none."""
    for column, reach in windows:
        i = _unused_on(candidates, used, str(column), bound=True)
        if i is None:
            continue
        used.add(i)
        if same_reach(asked, float(reach)):
            return 0, i
        report_reach(out, req.text, asked, str(column), float(reach), candidates[i].text)
        return 1, i
    return None


def _calendar_reach(rel: re.Match[str]) -> float | None:
    """How far back a rolling reading of a past calendar period reaches ("last quarter" as
    the last 91 days, a reading the SQL may take with ``NOW() - INTERVAL '3 months'``), or
    None for a current period or a reach already counted.

    >>> _calendar_reach(relative_period("revenue last quarter"))
    91.3125
    >>> _calendar_reach(relative_period("revenue this quarter")) is None
    True
    >>> _calendar_reach(relative_period("carts abandoned yesterday"))
    1.0
    """
    if (rel.group("day") or "").casefold() == "yesterday":
        return 1.0  # a bound at the start of yesterday, one day back from today's
    which, unit = (rel.group("which") or "").casefold(), (rel.group("unit") or "").casefold()
    if which not in ("last", "previous", "prior") or unit in ("hour", "day"):
        return None
    return UNIT_DAYS.get(unit)


def _spent_holds(req: Filter, candidates: Sequence[Filter], sql: Spec) -> bool | None:
    """Do the SQL's conditions on the columns it compares with the clock, as resolved at the
    record's (or the assumed) day, hold every day of the asked period? None when none is
    resolved or the period has no span."""
    clocked = {canon_col(c) for c in sql.flags.get("clock_columns") or ()}
    alt, resolved, at = _resolved_candidates(candidates, sql)
    mine = [
        a
        for c, a in zip(candidates, alt, strict=True)
        if c.column and canon_col(c.column) in clocked and at.get(id(c), -1) in resolved
    ]
    want = nl_span(req)
    got = column_span(mine) if mine else None
    if want is None or got is None or want.start is None or want.end is None:
        return None
    after_start = got.start is None or got.start <= want.start
    return after_start and (got.end is None or want.end <= got.end)  # open ends hold all


def _aged_instead(
    req: Filter, candidates: Sequence[Filter], used: set[int], sql: Spec
) -> int | None:
    """The position of an upper bound a constant back from now (``created_at < NOW() -
    INTERVAL '30 days'``) where the question asks for the rows since then ("in the last 30
    days") and no bound of the SQL reaches back from now: the SQL keeps the older rows."""
    if req.negated or (req.op not in (">", ">=") and req.values):
        return None
    aged = {canon_col(a) for a in sql.flags.get("clock_ages") or ()}
    for i, c in enumerate(candidates):
        if i not in used and c.op in ("<", "<=") and c.column and canon_col(c.column) in aged:
            return i
    return None


def _report_aged(out: FindingCollector, req: Filter, asked: float, c: Filter) -> None:
    out.add(
        "filter_wrong_operator",
        "error",
        f"question asks for {req.text!r}, the rows since {back(asked)} ago; the SQL keeps"
        f" the {c.column} before that ({c.text})",
        req.text,
        c.text,
        "filter",
    )


def _resolved_candidates(
    candidates: Sequence[Filter], sql: Spec
) -> tuple[list[Filter], dict[int, tuple[str, ...]], dict[int, int]]:
    """The candidates with the values their clock conditions take at the record's (or the
    assumed) day (``clock_resolved``), the resolved values by filter position, and each
    filter's position in ``sql.filters`` by identity."""
    resolved = {k: tuple(v) for k, v in sql.flags.get("clock_resolved") or ()}
    at = {id(f): k for k, f in enumerate(sql.filters)}
    alt = [replace(c, values=resolved[k]) if (k := at.get(id(c), -1)) in resolved else c
           for c in candidates]  # fmt: skip
    return alt, resolved, at


def _resolved_dates(
    req: Filter, candidates: Sequence[Filter], used: set[int], sql: Spec, out: FindingCollector
) -> tuple[str, int] | None:
    """Compare a calendar period with the SQL's conditions computed from the clock, as
    they are at the record's time: ("answered", i) when they select it (``used`` gets
    their positions), ("wrong", i) when they select another period or none of its days
    (reported as ``filter_wrong_value``), None when no resolved condition bears on it."""
    alt, resolved, at = _resolved_candidates(candidates, sql)
    want = nl_span(req)
    dated = date_match(req, alt, used, sql.tables)
    assumed = str(sql.flags.get("record_date") or "") if sql.flags.get("clock_assumed") else ""
    if want is None or dated is None:
        day = str(sql.flags.get("record_date") or "")
        args = (req, want, candidates, alt, used, resolved, at, out, assumed, day)
        return _resolved_elsewhere(*args)
    if not any(at.get(id(candidates[i]), -1) in resolved for i in dated.positions):
        return None
    if dated.got is None and _reference_day(req, alt[dated.positions[0]]):
        return None
    used.update(dated.positions)
    first = dated.positions[0]
    if dated.got is None:
        return "answered", first
    _report_resolved(out, req, want, dated.got, candidates[first], assumed)
    return "wrong", first


def _resolved_elsewhere(
    req: Filter,
    want: Span | None,
    candidates: Sequence[Filter],
    alt: Sequence[Filter],
    used: set[int],
    resolved: dict[int, tuple[str, ...]],
    at: dict[int, int],
    out: FindingCollector,
    assumed: str = "",
    day: str = "",
) -> tuple[str, int] | None:
    """A resolved lower bound that keeps no day of the asked period, only later ones
    ("yesterday" as ``d >= CURRENT_DATE``), or with no upper bound beside it one that
    keeps earlier days too from a calendar start ("this month" as ``d >=
    DATE_TRUNC('year', NOW())``; a reach back, "in the last month" as ``DATEADD(month, -1,
    GETDATE())``, is no calendar start) or, for a period over by the record's time (or the
    assumed day), the days after its first ("last month" as ``d >= DATE_TRUNC('month',
    NOW()) - INTERVAL '1 month'`` alone): ("wrong", i),
    reported; else None. An upper bound before the period (``created_at <
    DATE_TRUNC('month', NOW()) - INTERVAL '1 month'``) may pick a cohort for it, and is
    left alone. ``want`` is ``req``'s span; ``assumed`` the assumed day, if any; ``day`` the
    day the periods are read as of (the record's or the assumed one)."""
    if want is None or want.start is None or want.end is None:
        return None
    for i, c in enumerate(alt):
        if i in used or at.get(id(candidates[i]), -1) not in resolved:
            continue
        got = filter_span(c) if c.op in (">", ">=") and c.clause == "where" else None
        if got is None or got.start is None:
            continue
        alone = not _bounded_above(alt, i, ("<", "<=", "between", "="), set())
        over = bool(day) and want.end.isoformat() <= day and got.start == want.start
        earlier = got.start < want.start and got.start.day == 1  # a calendar start, not a reach
        if got.start >= want.end or (alone and (earlier or over)):
            used.add(i)
            _report_resolved(out, req, want, got, candidates[i], assumed)
            return "wrong", i
    return None


def _report_resolved(
    out: FindingCollector, req: Filter, want: Span, got: Span, sql: Filter, assumed: str
) -> None:
    """``assumed``: the day both periods were read as of (:data:`stef.sql.clock.CLOCK_REFERENCE`)
    when the record has no time; they compare alike whenever the query runs."""
    when = (
        f"the record has no time, so both are read as of {assumed}:"
        if assumed
        else "at the record's time"
    )
    out.add(
        "filter_wrong_value",
        "error",
        f"question asks for {req.text!r} ({describe(want)}); {when} the SQL's"
        f" {sql.column} selects {describe(got)}",
        req.text,
        sql.text,
        "filter",
    )


def _reference_day(req: Filter, sql: Filter) -> bool:
    """Is ``sql`` an equality with the first day of the period ``req`` starts ("since last
    year" and ``valid_on = DATE_TRUNC('year', NOW()) - INTERVAL '1 year'``): the day a
    change is measured from, not a period of its own?

    >>> since = Filter(None, ">=", ("2023",), "since last year", func="year")
    >>> _reference_day(since, Filter("valid_on", "=", ("2023-01-01",)))
    True
    >>> _reference_day(since, Filter("valid_on", ">=", ("2024-01-01",)))
    False
    """
    if req.op not in (">", ">=") or sql.op != "=" or len(sql.values) != 1:
        return False
    want, got = nl_span(req), period(sql.values[0])
    return want is not None and got is not None and want.start == got.start


def _from_clock(out: FindingCollector, req: Filter, sql_text: str | None) -> None:
    out.add(
        "period_from_clock",
        "info",
        f"question asks for {req.text!r}; the SQL computes that period from the clock"
        " (not evaluated)",
        req.text,
        sql_text,
        "filter_alignment",
    )


def _open_from_start(
    req: Filter, rel: re.Match[str], candidates: Sequence[Filter], used: set[int]
) -> int | None:
    """The SQL's lower bound at the first day of the current period the question names
    ("this month", "today"), with no upper bound on its column, else None."""
    which = (rel.group("which") or "").casefold()
    current = (which in {"this", "current"} and rel.group("unit")) or (
        (rel.group("day") or "").casefold() == "today" or bool(rel.group("td"))  # "YTD"
    )
    if not current or req.op != "=" or len(req.values) != 1:
        return None
    value = req.values[0]
    start = {"month": f"{value}-01", "year": f"{value}-01-01"}.get(req.func or "", value[:10])
    for i, c in enumerate(candidates):
        if i in used or c.op != ">=" or not c.values or c.values[0][:10] != start:
            continue
        if not _bounded_above(candidates, i, ("<", "<="), used):
            return i
    return None


def _bounded_above(
    candidates: Sequence[Filter], i: int, ops: tuple[str, ...], skip: set[int]
) -> bool:
    """Does another condition (one of ``ops``, not in ``skip``) bound the column of the
    lower bound at ``i`` from above?

    >>> lower, upper = Filter("d", ">=", ("2023-01-01",)), Filter("d", "<", ("2024-01-01",))
    >>> _bounded_above([lower, upper], 0, ("<",), set()), _bounded_above([lower], 0, ("<",), set())
    (True, False)
    """
    column = canon_col(candidates[i].column)
    return any(
        j != i and j not in skip and d.op in ops and canon_col(d.column) == column
        for j, d in enumerate(candidates)
    )


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


def open_past_period(
    req: Filter, candidates: Sequence[Filter], used: set[int], sql: Spec, out: FindingCollector
) -> int | None:
    """A closed period ("in 2023", "in March 2024") answered by its first day as a lower
    bound alone (``d >= '2023-01-01'``) when the record's time (the ``record_date`` flag,
    :func:`stef.sql.clock.resolve_clock_values`) is after the period: when the query ran
    it kept the later days too (``filter_wrong_value``, 1; ``used`` gets the bound). None
    when that is not the case, or the record has no time.

    >>> from stef.spec import Spec
    >>> req = Filter(None, "=", ("2023",), "in 2023", func="year")
    >>> sql = Spec(flags={"record_date": "2024-05-10"})
    >>> out = FindingCollector()
    >>> open_past_period(req, [Filter("d", ">=", ("2023-01-01",))], set(), sql, out)
    1
    >>> ranged = [Filter("d", ">=", ("2023-01-01",)), Filter("d", "<", ("2024-01-01",))]
    >>> open_past_period(req, ranged, set(), sql, FindingCollector()) is None
    True
    """
    day = sql.flags.get("record_date")
    want = nl_span(req) if day else None
    if want is None or want.start is None or want.end is None or str(day) < want.end.isoformat():
        return None
    for i, c in enumerate(candidates):
        if i in used or c.op not in (">", ">=") or not c.column or c.clause != "where":
            continue
        got = filter_span(c)
        if got is None or got.start != want.start or got.end is not None:
            continue
        if _bounded_above(candidates, i, ("<", "<=", "between", "="), set()):
            continue  # an upper bound elsewhere on the column: the date checks read the range
        used.add(i)
        out.add(
            "filter_wrong_value",
            "error",
            f"question asks for {describe(want)}; the SQL's {c.column} keeps rows from"
            f" {want.start.isoformat()} on, which at the record's time ({day}) includes later"
            " days",
            req.text,
            c.text,
            "filter",
        )
        return 1
    return None


def check_relative_periods(nl: Spec, sql: Spec, out: FindingCollector, question: str = "") -> None:
    """A period relative to now (``in the past 30 days``) that no record time resolved must
    still be applied by some date condition: ``filter_missing`` when the SQL has none. A
    period the SQL reaches back to from the clock (``DATEADD(day, -7, GETDATE())``) must be
    the asked one: ``filter_wrong_value`` when no such bound of the SQL matches it; one the
    SQL keeps only as an upper bound back from the clock (``created < NOW() - INTERVAL '30
    days'``) is turned round (``filter_wrong_operator``).

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
        if f.text.casefold() == "today" and not _TODAY_EVENTS.search(question):
            continue  # "how many are there today?": now, not a day to filter on
        reach = asked_days(f.text) if not f.negated and not f.values else None
        if reach is not None and windows:
            if not any(same_reach(reach, float(w[1])) for w in windows):
                column = str(windows[0][0])
                report_reach(out, f.text, reach, column, float(windows[0][1]), column, "filter")
                continue
        elif reach is not None and (aged := _aged_instead(f, sql.filters, set(), sql)) is not None:
            _report_aged(out, f, reach, sql.filters[aged])  # "last 30 days" as created < …
            continue
        # "in the past 30 days", "last month", "yesterday" that no record time resolved
        relative = f.func == "date" or relative_period(f.text) is not None
        unresolved = relative and not f.values and not f.negated
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


#: A duration after a negation ("have not logged in for 30 days", "no orders for 6 months").
_FOR_DURATION = re.compile(
    rf"\bfor\s+(?:the\s+)?(?:past\s+|last\s+)?(?P<n>\d+|{lx.alternation(lx.NUMBER_WORDS)})"
    r"\s+(?P<unit>day|week|month|year)s?\b"
)


def _duration_days(m: re.Match[str]) -> float | None:
    """The days of a :data:`_FOR_DURATION` match ("for 6 months": 182.625), else None."""
    raw = m.group("n")
    count = lx.NUMBER_WORDS.get(raw) if not raw.isdigit() else int(raw)
    per = UNIT_DAYS.get(m.group("unit"))
    return float(count) * per if count is not None and per is not None else None


#: What makes "today" a day to filter on, not now: an event that happened on it ("orders
#: placed today", "signups so far today"), a series over it ("orders per hour today") or its
#: own rows ("today's orders"). A word in -ed is a participle unless it ends in -eed.
_TODAY_EVENTS = re.compile(
    r"\b(?:[a-z]{2,}(?<!e)ed|so\s+far|per\s+(?:hour|minute)|by\s+(?:hour|minute)|hourly"
    r"|today's|sold|made|sent|won|lost|paid|bought|taken|given|seen|held|run|done|written)\b",
    re.I,
)


def check_periods(
    nl: Spec, sql: Spec, out: FindingCollector, question: str, hints: str | None = None
) -> None:
    """The periods relative to now: as long as asked (:func:`check_relative_periods`), not
    kept as its own rows where the question negates one (:func:`check_negated_periods`), and
    not kept as the newest rows where the question (or its enrichment) asks for older ones
    (:func:`check_aged_periods`).
    """
    check_relative_periods(nl, sql, out, question)
    check_negated_periods(sql, out, question)
    check_aged_periods(sql, out, f"{question}\n{hints}" if hints else question)


#: Rows older than a span: "created more than 3 days ago", "older than a week", "over 30
#: days ago".
_AGED = re.compile(
    rf"\b(?:more\s+than|over|at\s+least|older\s+than)\s+(?P<n>\d+|a|an|one|{lx._NUMW})\s+"
    r"(?P<unit>hour|day|week|month|year)s?(?:\s+(?P<ago>ago|old))?\b"
)


def check_aged_periods(sql: Spec, out: FindingCollector, question: str) -> None:
    """Rows the question asks to be older than a span ("orders created more than 3 days ago",
    "tickets older than a week") that the SQL keeps as those of that span back from now
    (``created_at > NOW() - INTERVAL '3 days'``, a lower bound reaching back as far): the
    newest rows, not the aged ones (``filter_wrong_operator``). "More than 3 days" without
    "ago" or "old" is aged only after "older than".

    >>> sql = Spec(flags={"clock_windows": [["created_at", 3.0]]})
    >>> out = FindingCollector()
    >>> check_aged_periods(sql, out, "Orders created more than 3 days ago")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    """
    windows: list[list[str | float]] = sql.flags.get("clock_windows") or []
    if not windows or sql.flags.get("negation"):
        return
    for m in _AGED.finditer(question.casefold()):
        if not m.group("ago") and not m.group(0).startswith("older"):
            continue  # "stuck for more than 3 days": a duration, maybe of a column
        raw = m.group("n")
        count = 1 if raw in ("a", "an") else int(raw) if raw.isdigit() else lx.NUMBER_WORDS[raw]
        asked = count * UNIT_DAYS[m.group("unit")]
        if (column := _reaching(windows, asked)) is not None:
            out.add(
                "filter_wrong_operator",
                "error",
                f"the question asks for rows {m.group(0)!r}; the SQL keeps the newer ones"
                f" ({column} within {raw} {m.group('unit')}{'s' * (count > 1)} of now)",
                m.group(0),
                column,
                "filter",
            )
            return


def check_negated_periods(sql: Spec, out: FindingCollector, question: str) -> None:
    """A period relative to now that the question negates ("customers who have not ordered
    in the last 90 days") kept by the SQL as its own rows: a bound reaching back that far
    from the clock, and nothing negated (no NOT, NOT EXISTS, EXCEPT or outer join): the SQL
    lists the customers who did (``filter_wrong_operator``).

    >>> sql = Spec(filters=[Filter("created_at", ">=", ("now() - 90",))],
    ...            flags={"clock_windows": [["created_at", 90.0]], "negation": False})
    >>> out = FindingCollector()
    >>> check_negated_periods(sql, out, "Customers who have not ordered in the last 90 days")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    >>> check_negated_periods(sql, FindingCollector(), "Customers who ordered in the last 90 days")
    >>> out = FindingCollector()
    >>> check_negated_periods(sql, out, "Users who haven't ordered for 90 days")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    """
    windows: list[list[str | float]] = sql.flags.get("clock_windows") or []
    if not windows or sql.flags.get("negation") or any(f.negated for f in sql.filters):
        return
    low = question.casefold()
    periods = [
        *((m, asked_days(m.group(0))) for m in lx.RELATIVE.finditer(low)),
        *((m, _duration_days(m)) for m in _FOR_DURATION.finditer(low)),
    ]
    for m, asked in periods:
        if asked is None:
            continue
        start = max(0, m.start() - 40)  # the clause before the period, 40 characters at most
        clause = max(low.rfind(mark, start, m.start()) for mark in ".,;:!?") + 1
        if not lx.NEGATION_ANY.search(low, max(clause, start), m.start()):
            continue
        if (column := _reaching(windows, asked)) is not None:
            out.add(
                "filter_wrong_operator",
                "error",
                f"the question excludes the rows of {m.group(0)!r}; the SQL keeps only them"
                f" ({column} from {back(asked)} ago) and negates nothing",
                m.group(0),
                column,
                "filter",
            )
            return

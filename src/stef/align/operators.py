"""Whether a SQL filter's operator is the one a question's filter asks for (pure).

"more than 10" is ``> 10`` and ``>= 11``; "not in Spring 2010" is an excluded
``semester = 'Spring'`` (EXCEPT, NOT IN); "since 2011-01-01" is ``> '2011-01-01'`` on a
timestamp; "contains 'ee'" is no ``LIKE 'ee'`` (a pattern without a wildcard holds the whole
value only); "older than 14 days" is ``created < GETDATE() - 14`` (an age kept as a date);
"from 1993/3/22 to 1998/12/27" may be its two dates compared one by one; a hint's quoted
``availability = 'mtgo,paper'`` is no ``availability = 'mtgo'``. :func:`ops_compatible`
decides; the filter alignment (:mod:`stef.align.filters`) reports what it refuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date

from stef.align.dates import period
from stef.align.matching import BOUNDS, canon_col, int_value, values_match, word_variant
from stef.spec import NEGATED_OP, Filter

EQUALISH = frozenset({"=", "in", "like"})
NEGATED = frozenset({"!=", "not in", "not like"})
#: Parts of a date a filter may compare on their own (``strftime('%m', d) = '09'``).
DATE_PARTS = frozenset({"year", "month", "day"})
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def ops_compatible(nl: Filter, sql: Filter, nv: str, sv: str) -> bool:
    """Is the SQL operator what the NL operator asks for (given the matched values)?"""
    n, s = nl.op, sql.op
    if n == "like" and s == "like" and wildcard_lost(nv, sv):
        return False
    if n == s:
        return True
    if sql.clause == "case" and n in BOUNDS and NEGATED_OP[n] == s:
        return True  # "over 1000" as the branch after CASE WHEN x <= 1000 (an ELSE): buckets
    if sql.negated and ((n in NEGATED and s in EQUALISH) or (n in BOUNDS and NEGATED_OP[n] == s)):
        return True  # "not in Spring 2010" as EXCEPT … WHERE semester = 'Spring' (or IN); "except
        # those less than 9" (kept: >= 9) as EXCEPT … WHERE amount < 9
    if _same_bound_side(n, s) and (_DAY.match(nv) or _DAY.match(sv)):
        return True  # "since 2011-01-01" as > '2011-01-01': a day's edge of a timestamp
    if nl.func == "year" and n == "=":
        if s in (">=", "<", "<=", ">"):  # one edge of the year's range (a hint's "= 1990"
            # for "after 1990" is taken as loosely as it is written)
            return nl.clause != "question" or _bound_meets_year(s, nv, sv)
        return s in EQUALISH or s == "between"
    if n in EQUALISH and s in EQUALISH:
        return True
    if n in NEGATED and s in NEGATED:
        return True
    if n == "between" and s in (">=", "<=", ">", "<", "between"):
        return True
    if n == "between" and s == "in":
        return _every_step(nl.values, sql.values)  # "from 2023 to 2024" as IN (2023, 2024)
    if n == "between" and s == "=" and _labels_range(nl.values, sql.values):
        return True  # "the 2015–2016 season" as season = '2015/2016': one label
    if s == "between" and n in (">=", "<=", ">", "<"):
        return True  # "below 400" kept by BETWEEN 100 AND 400 (the value is a bound)
    ni, si = int_value(nv), int_value(sv)
    if ni is not None and si is not None:
        # "more than 10" == "> 10" == ">= 11"; "fewer than 5" == "< 5" == "<= 4"
        if n == ">" and s == ">=" and si == ni + 1:
            return True
        if n == "<" and s == "<=" and si == ni - 1:
            return True
        if n == ">=" and s == ">" and si == ni - 1:
            return True
        if n == "<=" and s == "<" and si == ni + 1:
            return True
    return False


def _every_step(bounds: tuple[str, ...], listed: tuple[str, ...]) -> bool:
    """Does a list hold every whole number of a range, and no other?

    >>> _every_step(("2023", "2024"), ("2024", "2023"))
    True
    >>> _every_step(("2022", "2024"), ("2022", "2024"))
    False
    """
    lo, hi = (int_value(b) for b in bounds) if len(bounds) == 2 else (None, None)
    got = {int_value(v) for v in listed}
    if lo is None or hi is None or None in got or hi - lo > 50:
        return False
    return got == set(range(lo, hi + 1))


def _bound_meets_year(op: str, year: str, bound: str) -> bool:
    """Does ``column <op> bound`` keep some day of ``year`` (``< '2024-01-01'`` keeps none
    of 2024, ``>= '2024-01-01'`` keeps all of it)?

    >>> _bound_meets_year("<", "2024", "2024-01-01"), _bound_meets_year(">=", "2024", "2024-01-01")
    (False, True)
    >>> _bound_meets_year("<", "2024", "2025"), _bound_meets_year(">", "2024", "2024")
    (True, False)
    """
    y = int_value(year)
    if y is None:
        return True
    b = int_value(bound)
    if b is not None:  # YEAR(d) < 2025: a year, not a day
        first, last = date(b, 1, 1), date(b + 1, 1, 1)
    else:
        p = period(bound)
        if p is None or p.start is None or p.end is None:
            return True
        first, last = p.start, p.end
    start, end = date(y, 1, 1), date(y + 1, 1, 1)
    if op == "<":
        return first > start
    if op == "<=":
        return last > start
    if op == ">=":
        return first < end
    return last < end  # ">"


def range_stated(nl: Filter, sql: Filter, stated: frozenset[str]) -> bool:
    """A SQL range whose bounds the question states one by one ("from race no. 50 to
    100" read as ``= 50`` and a literal 100, against ``BETWEEN 50 AND 100``).

    >>> range_stated(Filter(None, "=", ("50",)), Filter("r", "between", ("50", "100")),
    ...               frozenset({"50", "100"}))
    True
    """
    return (
        nl.op == "="
        and sql.op == "between"
        and len(sql.values) == 2
        and set(nl.values) <= set(sql.values)
        and set(sql.values) <= stated
    )


def one_off(nl: Filter, sql: Filter) -> bool:
    """The same bound, inclusive on one side and exclusive on the other ("at least 20"
    as ``> 20``): at most the bound itself is in or out, not the direction.

    >>> one_off(Filter(None, ">=", ("20",)), Filter("n", ">", ("20",)))
    True
    >>> one_off(Filter(None, "<", ("10",)), Filter("n", ">", ("10",)))
    False
    """
    return _same_bound_side(nl.op, sql.op) and set(nl.values) == set(sql.values)


#: Words that state whether a bound is in or out ("3 or more", "greater than or equal to
#: 80", "age 50 and above", a symbol ``>=``); "at least 5" or "5000+" against ``> 5`` is
#: how people often write a bound loosely, and says less.
_BOUND_STATED = re.compile(
    r"\bor\s+equal|\bequal\s+to\s+or\b|[<>]=?|=[<>]"
    r"|\d\s*(?:[a-z]+\s+)?(?:old\s+)?(?:or|and)\s+(?:more|above|higher|greater|older|over|"
    r"longer|bigger|larger|up|later|newer|less|fewer|below|lower|younger|under|smaller|"
    r"shorter|earlier)\b",
    re.I,
)


def bound_stated(nl: Filter) -> bool:
    """Does the question's own wording say whether the bound itself is kept ("3 or more",
    "less than or equal to 200", ``score >= 10``)?

    >>> bound_stated(Filter(None, ">=", ("3",), "3 or more")), bound_stated(
    ...     Filter(None, ">=", ("3",), "at least 3"))
    (True, False)
    >>> bound_stated(Filter(None, "<=", ("-2",), "-2 score or less"))
    True
    """
    return _BOUND_STATED.search(nl.text) is not None


def _same_bound_side(a: str, b: str) -> bool:
    """Two operators bounding from the same side, one strict and one not (``>``/``>=``)."""
    return {a, b} in ({">", ">="}, {"<", "<="})


def wildcard_lost(nv: str, sv: str) -> bool:
    """Does the question ask for values containing a text (``%ee%``) that the SQL's LIKE
    pattern, having no wildcard, matches only whole (``LIKE 'ee'``), or does the SQL anchor
    the text at another end than the question ("contains 'pro'" as ``LIKE 'pro%'``, "starts
    with 'pro'" as ``LIKE '%pro%'``)?

    >>> wildcard_lost("%ee%", "ee"), wildcard_lost("%ee%", "%ee%"), wildcard_lost("ee%", "ee")
    (True, False, False)
    >>> wildcard_lost("%pro%", "pro%"), wildcard_lost("pro%", "%pro%"), wildcard_lost("%x", "%x")
    (True, True, False)
    """
    contains = len(nv) > 2 and nv.startswith("%") and nv.endswith("%")
    if contains and "%" not in sv and "_" not in sv:
        return True
    if "%" not in nv.strip("%") and "%" in nv and "%" in sv:
        return (nv[:1] == "%") != (sv[:1] == "%") or (nv[-1:] == "%") != (sv[-1:] == "%")
    return False


#: The operators that keep the same rows of an age when it is kept as a date back from now
#: ("older than 14 days": ``created < now - 14 days``), either bound's inclusion.
_AGE_AS_DATE = {">": ("<", "<="), ">=": ("<=", "<"), "<": (">", ">="), "<=": (">=", ">")}


def age_as_date(nl: Filter, sql: Filter, aged: Iterable[str]) -> bool:
    """Does ``sql`` keep the age ``nl`` asks for as a date a constant back from now, the
    comparison turned round (``aged``: the columns the SQL compares so, the
    ``clock_ages`` flag of its spec)?

    >>> older = Filter(None, ">", ("14",), "older than 14 days")
    >>> age_as_date(older, Filter("creationdate", "<", ("getdate() - 14",)), ["creationdate"])
    True
    >>> age_as_date(older, Filter("creationdate", ">", ("getdate() - 14",)), ["creationdate"])
    False
    """
    if sql.column is None or sql.op not in _AGE_AS_DATE.get(nl.op, ()):
        return False
    return canon_col(sql.column) in {canon_col(c) for c in aged}


#: An age the question states ("older than 3 days", "younger than 2 weeks").
_AGE = re.compile(r"\b(?:older|younger|newer)\b.*\b(?:hours?|days?|weeks?|months?|years?)\b")


def age_turned(nl: Filter, sql: Filter, aged: Iterable[str]) -> bool:
    """Does ``sql`` compare a date back from now the way the question compares the age, so
    that it keeps the other rows ("older than 3 days" as ``created_at > NOW() - 3``, the
    rows of the last three days)? ``aged``: the ``clock_ages`` flag of the SQL's spec.

    >>> older = Filter(None, ">", ("3",), "older than 3 days")
    >>> age_turned(older, Filter("created_at", ">", ("now() - 3",)), ["created_at"])
    True
    >>> age_turned(older, Filter("created_at", "<", ("now() - 3",)), ["created_at"])
    False
    """
    if sql.column is None or nl.op not in _AGE_AS_DATE or not _AGE.search(nl.text.casefold()):
        return False
    same_way = sql.op in BOUNDS and sql.op not in _AGE_AS_DATE[nl.op]  # not turned round
    return same_way and canon_col(sql.column) in {canon_col(c) for c in aged}


def two_points(nl: Filter, candidates: Sequence[Filter]) -> Filter | None:
    """The SQL equality on one of the two dates of a range the question states, when
    another equality on the same column holds the other ("the increase of the balance from
    1993/3/22 to 1998/12/27" as ``CASE WHEN date = '1998-12-27' …`` minus ``CASE WHEN date
    = '1993-03-22' …``): a change between two points, not the rows between them.

    >>> rng = Filter(None, "between", ("1993-03-22", "1998-12-27"), "from … to …")
    >>> a, b = (Filter("date", "=", (v,), "", "case") for v in rng.values)
    >>> two_points(rng, [a, b]) is a, two_points(rng, [a]) is None
    (True, True)
    """
    if nl.op != "between" or len(nl.values) != 2:
        return None
    low, high = nl.values
    for c in candidates:
        if c.op != "=" or c.column is None or low not in c.values:
            continue
        col = canon_col(c.column)
        for d in candidates:
            if d.op == "=" and d.column and canon_col(d.column) == col and high in d.values:
                return c
    return None


def as_of(nl: Filter, candidates: Sequence[Filter]) -> Filter | None:
    """The SQL's start bound when it reads the rows valid at one day of the period the
    question asks for: a start column at or before the day and an end column after it
    (``started_at <= '2024-03-31' AND (ended_at IS NULL OR ended_at > '2024-03-31')`` for
    "active subscriptions on 2024-03-31", or for "MRR for March 2024" at its last day), the
    validity interval of a snapshot or of a slowly changing dimension's row.

    >>> start = Filter("started_at", "<=", ("2024-03-31",), "")
    >>> end = Filter("ended_at", ">", ("2024-03-31",), "", "or")
    >>> month = Filter(None, "=", ("2024-03",), "March 2024", func="year_month")
    >>> as_of(month, [start, end]) is start
    True
    >>> as_of(Filter(None, "=", ("2024-04-02",), "on 2024-04-02"), [start, end]) is None
    True
    """
    if nl.op != "=" or len(nl.values) != 1 or not _ISO_PREFIX.match(nl.values[0]):
        return None
    period = nl.values[0]
    for c in candidates:
        if c.op not in ("<=", "<") or c.column is None or len(c.values) != 1:
            continue
        day = c.values[0][:10]
        if not (_ISO_PREFIX.match(day) and day.startswith(period[:10])):
            continue
        for d in candidates:
            other = d.column is not None and canon_col(d.column) != canon_col(c.column)
            if d.op in (">", ">=") and other and d.values and d.values[0][:10] == day:
                return c
    return None


#: An ISO date or its year-month or year prefix.
_ISO_PREFIX = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")


def hint_value_differs(nl: Filter, s: Filter) -> bool:
    """Does the SQL compare the column a hint pins (``availability = 'mtgo,paper'``) with
    another string than the hint writes (``availability = 'mtgo'``)? Both equalities of one
    string value; letter case, surrounding spaces, the quote mark written for an
    apostrophe (``Ancestor`s Chosen``) and a word's variant (a demonym, a one-letter typo:
    :func:`~stef.align.matching.word_variant`) do not count.

    >>> h = Filter("availability", "=", ("mtgo,paper",), "availability = 'mtgo,paper'", "enriched")
    >>> hint_value_differs(h, Filter("availability", "=", ("mtgo",), "availability = 'mtgo'"))
    True
    >>> hint_value_differs(h, Filter("availability", "=", ("MTGO,paper",), ""))
    False
    """
    if nl.clause == "enriched" and nl.op == s.op == "in" and nl.column and s.column:
        return _list_short(nl, s)
    if nl.clause != "enriched" or nl.op != "=" or s.op != "=" or not nl.column or not s.column:
        return False
    if len(nl.values) != 1 or len(s.values) != 1 or "=" not in nl.text:
        return False
    if canon_col(nl.column) != canon_col(s.column):
        return False  # another column ("tag = '<humor>'" against ``tagname``)
    a, b = nl.values[0], s.values[0]
    if not any(q + a + q in nl.text.lower() for q in "'\"`"):
        return False  # the hint does not quote the value it writes, or leaves it open
    if _SIGNED_NUMBER.fullmatch(a) or _SIGNED_NUMBER.fullmatch(b):
        return False
    pa, pb = _plain_value(a), " ".join(_plain_value(b).replace(" ,", ",").split())
    return pa != pb and not word_variant(pa, pb)  # "Europearn" for 'European': a typo


_SIGNED_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def _list_short(nl: Filter, s: Filter) -> bool:
    """Does the SQL's IN list on the column a hint's IN list pins leave out one of the
    hint's values (``region IN ('Europe', 'Middle East', 'Africa')`` kept as ``IN
    ('Europe', 'Africa')``)?

    >>> h = Filter("region", "in", ("europe", "middle east", "africa"), "", "enriched")
    >>> _list_short(h, Filter("region", "in", ("europe", "africa")))
    True
    >>> _list_short(h, Filter("region", "in", ("africa", "middle east", "europe", "asia")))
    False
    """
    if canon_col(nl.column or "") != canon_col(s.column or ""):
        return False
    return any(not any(values_match(v, w) for w in s.values) for v in nl.values)


def _plain_value(v: str) -> str:
    return v.strip().strip("'\"`").replace("`", "'").replace("\u2019", "'").casefold()


def other_range(nl: Filter, sql: Filter) -> bool:
    """Two ranges that share a bound and not the other ("between 50 and 100" as ``BETWEEN
    50 AND 1000``).

    >>> other_range(Filter(None, "between", ("50", "100")), Filter("t", "between", ("50", "1000")))
    True
    """
    if not (nl.op == sql.op == "between" and len(nl.values) == len(sql.values) == 2):
        return False
    # the bounds the wrong way round select nothing: another range too
    return not all(values_match(a, b) for a, b in zip(nl.values, sql.values, strict=True))


def other_bound(bound: Filter, candidates: Sequence[Filter]) -> bool:
    """Does another condition bound ``bound``'s column from the other side (``price <= 20``
    beside ``price >= 10``), so that the two keep a range?

    >>> low, high = Filter("price", ">=", ("10",)), Filter("price", "<=", ("20",))
    >>> other_bound(low, [low, high]), other_bound(low, [low])
    (True, False)
    """
    side = bound.op[0]  # ">" or "<"
    return any(
        c is not bound
        and c.op in BOUNDS
        and c.op[0] != side
        and canon_col(c.column) == canon_col(bound.column)
        and c.func == bound.func
        for c in candidates
    )


def _labels_range(bounds: tuple[str, ...], values: tuple[str, ...]) -> bool:
    """Is one SQL value a label that holds both bounds of a range as its numbers ("the
    2015–2016 season" as ``'2015/2016'``)?

    >>> _labels_range(("2015", "2016"), ("2015/2016",)), _labels_range(("2015", "2016"), ("2015",))
    (True, False)
    """
    if len(bounds) != 2 or len(values) != 1:
        return False
    parts = [p for p in _NOT_DIGIT.split(values[0]) if p]
    return len(parts) == 2 and parts == list(bounds)


_NOT_DIGIT = re.compile(r"\D+")

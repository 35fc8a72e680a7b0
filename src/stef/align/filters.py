"""The filter class of the alignment and the entry point :func:`align` (pure, deterministic).

Matches the question's required filters to the SQL's filters and gives the filter class of
DESIGN.md (fully applied / with extras / partially / not applied), the leniency boost and
the filter findings (wrong operator, column or value, missing, extra, implied, benign).
:func:`align` then runs the other checks, each in its own module: aggregation
(:mod:`stef.align.aggregation`), grouping (:mod:`stef.align.grouping`), ordering and
limits (:mod:`stef.align.order`), literals, hints and schema linking
(:mod:`stef.align.hints`), structure (:mod:`stef.align.structure`) and intent
(:mod:`stef.align.intent`). The four production normalisation rules excuse differences,
and each excused difference is recorded as an ``info`` finding naming the rule
(``required_group_by``, ``benign_group_by``, ``order_by_tolerance``, ``limit_tolerance``).

>>> from stef.spec import Spec, Filter
>>> nl = Spec(filters=[Filter(None, "=", ("north",), "in the North", "question")])
>>> sql = Spec(filters=[Filter("region", "=", ("north",), "region = 'North'")])
>>> a = align(nl, sql)
>>> a.filter_status, a.filter_points
('fully_applied', 5.0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stef.align.aggregation import check_aggregations
from stef.align.answers import (
    counted_by_limit,
    counted_by_pairs,
    hundredfold,
    number_in_code,
    number_in_names,
    parameter_answer,
    percent_scaled,
    value_as_key,
)
from stef.align.dates import (
    absorb_year_bounds,
    check_relative_periods,
    clock_answer,
    date_match,
    describe,
    month_answered,
    month_by_name,
)
from stef.align.grouping import check_grouping
from stef.align.hints import (
    check_hint_functions,
    check_literals_and_hints,
    check_schema_linking,
    check_value_case,
)
from stef.align.intent import check_intent
from stef.align.matching import (
    BOUNDS,
    NEUTRAL_LITERALS,
    canon_col,
    checked_cues,
    int_value,
    name_mentioned,
    searchable,
    text_mentions,
    text_stems,
    value_in_names,
    values_match,
)
from stef.align.operators import (
    DATE_PARTS,
    EQUALISH,
    age_as_date,
    hint_value_differs,
    one_off,
    ops_compatible,
    range_stated,
    two_points,
)
from stef.align.order import check_order_limit
from stef.align.structure import check_structure
from stef.findings import Finding, FindingCollector
from stef.rules import Rules
from stef.spec import WEAK_CUE, Filter, Spec

#: Filter-alignment classes, best first (DESIGN.md).
FILTER_CLASSES = ("fully_applied", "fully_applied_with_extras", "partially_applied", "not_applied")

_LISTS = frozenset({"in", "not in"})


@dataclass
class Alignment:
    """How the SQL matches the question.

    ``filter_status`` is one of :data:`FILTER_CLASSES`; ``filter_points`` and
    ``leniency_boost`` come from the rules' scoring; ``findings`` holds every mismatch and
    every excused difference (with the rule that excused it); ``evidence`` counts the NL
    cues that were checked against the SQL (0 means the question said nothing checkable).
    """

    filter_status: str
    filter_points: float
    leniency_boost: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    matched_filters: list[tuple[Filter, Filter]] = field(default_factory=list)
    missing_filters: list[Filter] = field(default_factory=list)
    extra_filters: list[Filter] = field(default_factory=list)
    benign_filters: list[Filter] = field(default_factory=list)
    evidence: int = 0
    #: Whether the record came with an enriched question (Q_e) to check against.
    enriched: bool = False
    #: Whether extra filters are excused as benign: the precision gate found that an extra
    #: filter is no evidence of an error in this context (``filter_extra`` among the kinds
    #: :meth:`stef.align.precision.PrecisionGate.excused_filter_kinds` gives).
    extras_excused: bool = False

    @property
    def benign_extras_only(self) -> bool:
        """True when there are extra filters and every one of them is benign: declared so
        by the rules, or excused as a kind of finding that has not earned its weight.

        >>> extra = [Filter("x", "=")]
        >>> Alignment("fully_applied_with_extras", 4.0, extra_filters=extra).benign_extras_only
        False
        >>> Alignment("fully_applied_with_extras", 4.0, extra_filters=extra,
        ...           extras_excused=True).benign_extras_only
        True
        """
        if self.extras_excused:
            return bool(self.benign_filters or self.extra_filters)
        return bool(self.benign_filters) and not self.extra_filters

    def to_dict(self) -> dict[str, Any]:
        return {
            "filter_status": self.filter_status,
            "filter_points": self.filter_points,
            "leniency_boost": self.leniency_boost,
            "findings": [f.to_dict() for f in self.findings],
            "matched_filters": [[a.to_dict(), b.to_dict()] for a, b in self.matched_filters],
            "missing_filters": [f.to_dict() for f in self.missing_filters],
            "extra_filters": [f.to_dict() for f in self.extra_filters],
            "benign_filters": [f.to_dict() for f in self.benign_filters],
            "evidence": self.evidence,
            "enriched": self.enriched,
        }


# --------------------------------------------------------------------------- filter matching


@dataclass
class _Match:
    nl: Filter
    sql: Filter | None
    problem: str | None = None  # None | "wrong_operator" | "wrong_column" | "wrong_value"


def _match_filter(nl: Filter, candidates: Sequence[Filter]) -> _Match:
    best: _Match | None = None
    for s in candidates:
        if nl.func != s.func and {nl.func, s.func} <= DATE_PARTS:
            continue  # "in September" is no year 9: another part of the date
        pairs = [(nv, sv) for nv in nl.values for sv in s.values if values_match(nv, sv)]
        if not pairs and nl.op != s.op and nl.op in BOUNDS and s.op in BOUNDS:
            # "more than 50" as >= 51: a strict bound written one off (the operators
            # decide below whether the step is the right one)
            pairs = [
                (nv, sv)
                for nv in nl.values
                for sv in s.values
                if (a := int_value(nv)) is not None
                and (b := int_value(sv)) is not None
                and abs(a - b) == 1
            ]
        if not pairs and nl.op in (">", "<") and s.op == "between" and len(s.values) == 2:
            # "more than 50 but less than 60" as BETWEEN 51 AND 59 (whole numbers): the
            # low bound one above a strict lower bound, the high one below a strict upper
            sv, step = (s.values[0], 1) if nl.op == ">" else (s.values[1], -1)
            bound = int_value(sv)
            pairs = [
                (nv, sv)
                for nv in nl.values
                if bound is not None and (n := int_value(nv)) is not None and bound == n + step
            ]
        if not pairs and s.column and re.search(r"yr|year", canon_col(s.column)):
            # "in 2017" as yr_data = 17: a year kept as its last two digits
            pairs = [
                (nv, sv)
                for nv in nl.values
                for sv in s.values
                if re.fullmatch(r"(?:19|20)\d\d", nv) and sv == nv[2:]
            ]
        if not pairs and percent_scaled(nl, s):
            pairs = [(nv, sv) for nv in nl.values for sv in s.values if hundredfold(nv, sv)]
        if not pairs:
            continue
        nv, sv = pairs[0]
        ok_op = ops_compatible(nl, s, nv, sv)
        if not ok_op and int_value(nv) is not None and len(pairs) > 1:
            ok_op = any(ops_compatible(nl, s, a, b) for a, b in pairs)
        col_ok = (
            nl.column is None
            or s.column is None
            or canon_col(nl.column) in canon_col(s.column)
            or (len(canon_col(s.column)) >= 4 and canon_col(s.column) in canon_col(nl.column))
            # the hint that tied the value names the SQL's column too ("Germany is a name
            # of country" filtered on country)
            or name_mentioned(s.column, text_stems(searchable(nl.text)))
        )
        m = _Match(
            nl, s, None if ok_op and col_ok else ("wrong_operator" if not ok_op else "wrong_column")
        )
        if m.problem is None and hint_value_differs(nl, s):
            m = _Match(nl, s, "wrong_value")
        if m.problem is None:
            return m
        best = best or m
    if best is not None:
        return best
    # same column (known on both sides) compared against another value
    if nl.column:
        for s in candidates:
            if s.column and canon_col(s.column) == canon_col(nl.column) and s.values:
                return _Match(nl, s, "wrong_value")
    return _Match(nl, None, None)


def _benign_match(f: Filter, patterns: Iterable[Filter]) -> bool:
    for p in patterns:
        if canon_col(p.column) != canon_col(f.column):
            continue
        if p.op != f.op and not (p.op in EQUALISH and f.op in EQUALISH):
            continue
        if p.values == ("?",) or not p.values or set(p.values) == set(f.values):
            return True
    return False


# --------------------------------------------------------------------------- alignment


def align_filters(
    nl: Spec,
    sql: Spec,
    out: FindingCollector,
    *,
    text: str,
    benign: Sequence[Filter] = (),
    excused: frozenset[str] = frozenset(),
    hints: str | None = None,
    question: str = "",
) -> tuple[list[tuple[Filter, Filter]], list[Filter], list[Filter], list[Filter], int]:
    """Match required (NL) filters to SQL filters. Returns matched, missing, extra, benign, bad.

    A near miss whose finding kind is in ``excused`` (``filter_wrong_operator`` when the
    precision gate found it no evidence of an error) still answers its filter. ``hints``
    is the enriched question, whose clauses may tie a number to a column."""
    candidates = [f for f in sql.filters if f.values]
    required = [f for f in nl.filters if f.values]
    used: set[int] = set()
    matched: list[tuple[Filter, Filter]] = []
    missing: list[Filter] = []
    bad = 0
    stated = frozenset(v for f in required for v in f.values) | frozenset(nl.literals)
    for req in required:
        dated = _date_answer(req, candidates, used, sql, matched, out, hints)
        if dated is not None:
            bad += dated
            continue
        m = _best_match(req, candidates, used)
        if m.sql is not None:
            used.add(next(i for i, c in enumerate(candidates) if c is m.sql))
        if m.sql is not None and m.problem is None:
            matched.append((req, m.sql))
        elif m.sql is None and (
            req.cue == WEAK_CUE or (literal := _stated_literal(req, sql)) is not None
        ):
            wrong = _named_column_other_value(req, candidates, used, text)
            if wrong is not None:
                bad += 1
                _report_wrong_filter(req, _Match(req, wrong, "wrong_value"), out)
            else:
                # a weak cue short-circuits the look-up above; a strong one found its literal
                _weak_value(req, sql, matched, out, None if req.cue == WEAK_CUE else literal)
        elif (
            m.sql is None
            and req.column
            and _asks_whether(nl, text, question)  # two searches: only when it decides
            and _answered_by_output(req, sql, matched, out)
        ):
            pass
        elif m.sql is None and (key := parameter_answer(req, sql, candidates, used)) is not None:
            used.add(key)  # customer_id = ? for "customer 42": bound when the query runs
            matched.append((req, candidates[key]))
            message = f"the question's {', '.join(req.values)} is bound to a run-time parameter"
            out.add("value_parameterized", "info", message, req.text, candidates[key].text)
        elif m.sql is None and (key := value_as_key(req, candidates, used)) is not None:
            used.add(key)
            c = candidates[key]
            message = (
                f"the question's {req.column} = {', '.join(req.values)} is applied as the key "
                f"{c.text!r}, whose value the SQL alone cannot confirm"
            )
            _answer_elsewhere(req, f"key {c.text!r}", c.text, matched, out, message)
        elif not _answered_otherwise(req, m, sql, hints, excused, matched, out, stated):
            bad += 1
            if not _report_wrong_filter(req, m, out):
                missing.append(req)
                _report_missing_filter(req, out)
    absorb_year_bounds(matched, candidates, used)
    extra: list[Filter] = []
    benign_found: list[Filter] = []
    for i, f in enumerate(candidates):
        if i in used or f.clause in ("case", "or") or _note_benign(f, benign, benign_found, out):
            continue  # an unmatched CASE condition shapes an output, it filters nothing
        _classify_unasked(f, text, matched, extra, out)
    for f in sql.filters:
        if not f.values:
            _note_benign(f, benign, benign_found, out)
    return matched, missing, extra, benign_found, bad


def _date_answer(
    req: Filter,
    candidates: Sequence[Filter],
    used: set[int],
    sql: Spec,
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
    hints: str | None = None,
) -> int | None:
    """Answer a date filter by the period the SQL selects: None when no SQL condition reads
    as dates, else the filters made bad (0 when the periods are the same, 1 when the SQL
    selects another period)."""
    if (clock := clock_answer(req, candidates, used, sql, matched, out)) is not None:
        return clock  # "in the last 30 days" as DATEADD(day, -30, GETDATE())
    dated = date_match(req, candidates, used, sql.tables)
    if used and (dated is None or dated.got is not None):
        # a hint restating the question's period ("in 2019" and "BETWEEN '2019-01-01' AND
        # '2019-12-31'") is answered by the condition that answered the question
        again = date_match(req, candidates, set(), sql.tables)
        if again is not None and again.got is None:
            matched.append((req, again.sql))
            return 0
    if dated is None and (month := month_answered(req, candidates)) is not None:
        matched.append((req, month))  # "in April" beside "April, 2009" as LIKE '2009-04%'
        return 0
    if dated is None or (dated.got is not None and number_in_names(req, sql, hints)):
        return None  # another period, but a name holds the year ("A15 … crimes in 1995")
    used.update(dated.positions)
    if dated.got is None:
        matched.append((req, dated.sql))
        return 0
    out.add(
        "filter_wrong_value",
        "error",
        f"question asks for {describe(dated.want)}; the SQL's {dated.sql.column} "
        f"selects {describe(dated.got)}",
        req.text,
        dated.sql.text,
        "filter_alignment",
    )
    return 1


#: A question that asks whether something holds ("… carcinogenic or not?").
_WHETHER = re.compile(r"\b(?:whether|or not|or non|tell me if)\b")
#: A question ending in a choice of two ("… treated as inpatient or outpatient?").
_ALTERNATIVE = re.compile(r"\b[a-z]+\s+or\s+[a-z]+\s*\?\s*$", re.I)


def _answer_elsewhere(
    req: Filter,
    where: str,
    fragment: str | None,
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
    message: str | None = None,
) -> None:
    """Record ``req`` as answered by ``where`` in the SQL (a literal, a name, an output),
    not by a filter: a matched pseudo-filter and an ``info`` finding."""
    matched.append((req, Filter(None, req.op, req.values, where, "name")))
    out.add(
        "value_answered_elsewhere",
        "info",
        message or f"the question's {', '.join(req.values)} is answered by the SQL's {where}",
        req.text,
        fragment,
        "filter_alignment",
    )


def _asks_whether(nl: Spec, text: str, question: str) -> bool:
    """Does the question ask whether something holds, or choose between two?

    >>> _asks_whether(Spec(), " is it carcinogenic or not ", ""), _asks_whether(
    ...     Spec(), " list the names ", "Is he an inpatient or outpatient?")
    (True, True)
    """
    return (
        bool(nl.flags.get("yes_no"))
        or _WHETHER.search(text) is not None
        or _ALTERNATIVE.search(question) is not None
    )


def _answered_by_output(
    req: Filter,
    sql: Spec,
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
) -> bool:
    """A hint's value for a property the question asks about ("Is molecule TR151
    carcinogenic?" with the hint "label = '+' means carcinogenic"), answered by selecting
    the property's column rather than filtering on it: called when no SQL filter matched
    ``req``, which names a column, and the question asks whether (:func:`_asks_whether`)."""
    assert req.column is not None
    col = canon_col(req.column)
    shown = next(
        (p for p in sql.projections if not p.is_aggregate and col in map(canon_col, p.columns)),
        None,
    )
    if shown is None:
        return False
    message = (
        f"the question asks whether {req.column} is {', '.join(req.values)}; "
        f"the SQL shows {req.column}"
    )
    where, fragment = f"output {shown.expr!r}", shown.text or shown.expr
    _answer_elsewhere(req, where, fragment, matched, out, message)
    return True


def _answered_otherwise(
    req: Filter,
    m: _Match,
    sql: Spec,
    hints: str | None,
    excused: frozenset[str],
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
    stated: frozenset[str] = frozenset(),
) -> bool:
    """A required filter no SQL filter applies as asked, answered anyway: a number held by
    a name, a bound one off in inclusiveness, a range's two dates compared one by one, an
    age kept as a date, or a near miss of a kind without weight."""
    if m.sql is None and (name := number_in_names(req, sql, hints)) is not None:
        _answer_elsewhere(req, f"name {name!r}", name, matched, out)
        return True
    if m.sql is None and (code := number_in_code(req, sql)) is not None:
        _answer_elsewhere(req, f"code {code!r}", code, matched, out)
        return True
    if m.sql is None and (month := month_by_name(req, sql)) is not None:
        _answer_elsewhere(req, f"name {month!r}", month, matched, out)
        return True
    if m.sql is None and counted_by_limit(req, sql):
        _answer_elsewhere(req, f"LIMIT {sql.limit}", None, matched, out)
        return True
    if m.sql is None and counted_by_pairs(req, sql):
        _answer_elsewhere(req, "self-join pairing distinct rows", None, matched, out)
        return True
    if m.sql is not None and m.problem == "wrong_operator" and range_stated(req, m.sql, stated):
        matched.append((req, m.sql))  # "from account 1 to account 10" as BETWEEN 1 AND 10
        return True
    if (point := two_points(req, [f for f in sql.filters if f.values])) is not None:
        matched.append((req, point))  # "from 1993/3/22 to 1998/12/27" as date = each
        message = f"the question's {req.text!r} is read as its two dates, compared one by one"
        out.add("range_as_points", "info", message, req.text, point.text, "filter_alignment")
        return True
    if m.sql is not None and age_as_date(req, m.sql, sql.flags.get("clock_ages") or ()):
        matched.append((req, m.sql))  # "older than 14 days" as created < GETDATE() - 14
        message = f"the question's age ({req.text}) is kept as a date back from now"
        out.add("age_as_date", "info", message, req.text, m.sql.text, "filter_alignment")
        return True
    if m.sql is not None and m.problem == "wrong_operator" and one_off(req, m.sql):
        out.add(
            "filter_bound_inclusive",
            "warning",
            f"question asks {req.op} {', '.join(req.values)}; the SQL uses {m.sql.op}, "
            "which includes or excludes the bound itself the other way",
            req.text,
            m.sql.text,
            "filter_alignment",
        )
        matched.append((req, m.sql))
        return True
    if m.sql is not None and m.problem and f"filter_{m.problem}" in excused:
        _report_wrong_filter(req, m, out)  # a kind without weight: the value is applied
        matched.append((req, m.sql))
        return True
    return False


def _named_column_other_value(
    req: Filter, candidates: Sequence[Filter], used: set[int], text: str
) -> Filter | None:
    """An equality on a column the question names, with a value the question never
    states, while the question's own capitalised value goes unmatched: the SQL compares
    the right attribute with another value (``the Toys category`` → ``category = 'Books'``)."""
    if req.cue != WEAK_CUE or req.op != "=":
        return None
    for i, c in enumerate(candidates):
        if i in used or c.op != "=" or not c.column or len(canon_col(c.column)) < 4:
            continue
        if f" {c.column.casefold()} " not in text:
            continue
        if not any(v in NEUTRAL_LITERALS or text_mentions(v, text) for v in c.values):
            return c
    return None


def _stated_literal(req: Filter, sql: Spec) -> str | None:
    """A literal of the SQL outside its filters that holds the required value (a label the
    answer should show, ``CASE … THEN 'TOTAL'``; a value inside an OR'ed LIKE)."""
    if req.op not in ("=", "like") or req.func is not None:
        return None
    return next((s for v in req.values for s in sql.literals if values_match(v, s)), None)


def _weak_value(
    req: Filter,
    sql: Spec,
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
    literal: str | None = None,
) -> None:
    """A value no SQL filter applies: answered when a literal elsewhere in the SQL (an
    OR'ed LIKE, a CASE label) or — for a value read only from capitalisation — a name (a
    table, a column) holds it; a capitalised value held nowhere is reported as unmatched,
    without making the filters partial — such a phrase is as often a title, a product or
    a metric as a value to filter on. ``literal`` is the SQL literal already found for it,
    if any (it is looked up here otherwise)."""
    vals = ", ".join(req.values)
    literal = literal if literal is not None else _stated_literal(req, sql)
    names = [*sql.tables, *sql.columns, *(p.alias for p in sql.projections if p.alias)]
    name = (
        None
        if literal
        else next((n for v in req.values if (n := value_in_names(v, names)) is not None), None)
    )
    if literal is None and name is None:
        bare = not sql.filters  # and the SQL restricts nothing at all: value_unfiltered
        why = "neither a filter nor a name of the SQL holds it"
        why = "the SQL filters nothing" if bare else why
        out.add(
            "value_unfiltered" if bare else "value_unmatched",
            "warning",
            f"the question names {vals}; {why}",
            req.text,
            None,
            "filter_alignment",
        )
        return
    where = f"literal {literal!r}" if literal is not None else f"name {name!r}"
    _answer_elsewhere(req, where, literal or name, matched, out)


def _best_match(req: Filter, candidates: Sequence[Filter], used: set[int]) -> _Match:
    """The SQL filter that answers a required filter, preferring filters not used yet."""
    # a SQL IN list may answer several required values ("San Diego" and "Santa Barbara")
    free = [c for i, c in enumerate(candidates) if i not in used or c.op in _LISTS]
    m = _match_filter(req, free or candidates)
    if (m.sql is None or m.problem) and free:
        # the enrichment restating the question ('Poster' for "Posters") is answered
        # by the filter that answered the question
        again = _match_filter(req, [c for i, c in enumerate(candidates) if i in used])
        if again.sql is not None and again.problem is None:
            m = again
    return m


def _report_wrong_filter(req: Filter, m: _Match, out: FindingCollector) -> bool:
    """Report a SQL filter that answers ``req`` with the wrong operator, column or value;
    False when ``m`` is no such near miss."""
    vals = ", ".join(req.values)
    if m.sql is not None and m.problem == "wrong_operator":
        lost = req.op == m.sql.op == "like"  # "contains 'ee'" as LIKE 'ee' (see wildcard_lost)
        out.add(
            "filter_wrong_operator",
            "error",
            f"question asks for values containing {vals.strip('%')!r}; the SQL's LIKE "
            f"{', '.join(m.sql.values)!r} has no wildcard and matches whole values only"
            if lost
            else f"question asks {req.op} {vals} but the SQL uses {m.sql.op}",
            req.text,
            m.sql.text,
            "filter_alignment",
        )
    elif m.sql is not None and m.problem == "wrong_column":
        out.add(
            "filter_wrong_column",
            "warning",
            f"value {vals} is filtered on {m.sql.column!r}, the question ties it to {req.column!r}",
            req.text,
            m.sql.text,
            "filter_alignment",
        )
    elif m.sql is not None and m.problem == "wrong_value":
        out.add(
            "filter_wrong_value",
            "error",
            f"question asks {req.column or m.sql.column} {req.op} {vals}, the SQL compares it with "
            f"{', '.join(m.sql.values)}",
            req.text,
            m.sql.text,
            "filter_alignment",
        )
    else:
        return False
    return True


def _report_missing_filter(req: Filter, out: FindingCollector) -> None:
    vals = ", ".join(req.values)
    col = f"{req.column} " if req.column else ""
    out.add(
        "filter_missing",
        "error",
        f"question requires {col}{req.op} {vals}; no SQL filter applies it",
        req.text,
        None,
        "filter_alignment",
    )


def _note_benign(
    f: Filter, benign: Sequence[Filter], benign_found: list[Filter], out: FindingCollector
) -> bool:
    """Record ``f`` as benign when a rules pattern declares it so."""
    if not _benign_match(f, benign):
        return False
    benign_found.append(f)
    out.add(
        "filter_benign",
        "info",
        "extra filter is declared benign by the rules",
        None,
        f.text,
        "benign_filter",
    )
    return True


def _classify_unasked(
    f: Filter,
    text: str,
    matched: list[tuple[Filter, Filter]],
    extra: list[Filter],
    out: FindingCollector,
) -> None:
    """A SQL filter no required filter matched: implied when the question states its
    values, else extra."""
    if all(v in NEUTRAL_LITERALS or text_mentions(v, text) for v in f.values):
        matched.append((Filter(f.column, f.op, f.values, "", "question"), f))
        out.add(
            "filter_implied",
            "info",
            f"filter value {', '.join(f.values)} is stated in the question",
            ", ".join(f.values),
            f.text,
            "filter_alignment",
        )
    else:
        extra.append(f)
        unexplained = [v for v in f.values if not text_mentions(v, text)]
        out.add(
            "filter_extra",
            "warning",
            f"filter on {f.column or 'an expression'} with "
            f"{', '.join(unexplained)} is not asked for by the question",
            None,
            f.text,
            "filter_alignment",
        )


def _filter_status(n_required: int, n_matched_required: int, bad: int, extras: int) -> str:
    if n_required and n_matched_required == 0 and bad:
        return "not_applied"
    if bad:
        return "partially_applied"
    return "fully_applied_with_extras" if extras else "fully_applied"


def align(
    nl: Spec,
    sql: Spec,
    rules: Rules | None = None,
    *,
    question: str = "",
    enriched_question: str | None = None,
    benign: Sequence[Filter] = (),
    excused: frozenset[str] = frozenset(),
) -> Alignment:
    """Align an NL spec with a SQL spec.

    ``question`` and ``enriched_question`` are searched for the SQL's literals (a filter
    whose value the question states is implied, not extra); ``benign`` holds the rules'
    benign-filter patterns (see :func:`stef.sql.spec.predicate_filters`); ``excused`` the
    filter finding kinds that cost no filter points (see :func:`align_filters`).
    """
    r = rules or Rules()
    text = searchable(question, enriched_question)
    out = FindingCollector()
    matched, missing, extra, benign_found, bad = align_filters(
        nl,
        sql,
        out,
        text=text,
        benign=benign,
        excused=excused,
        hints=enriched_question,
        question=question,
    )
    required = [f for f in nl.filters if f.values]
    matched_required = sum(1 for a, _ in matched if a in required)
    status = _filter_status(len(required), matched_required, bad, len(extra) + len(benign_found))
    fp = float(getattr(r.scoring.filter_points, status))
    check_relative_periods(nl, sql, out)
    check_aggregations(nl, sql, out, enriched_question)
    check_grouping(nl, sql, out, r)
    check_order_limit(nl, sql, out, r, enriched_question)
    answered = (*extra, *benign_found, *(f for pair in matched for f in pair))
    reported = {v for f in answered for v in f.values}
    check_literals_and_hints(nl, sql, out, text, reported, r.column_synonyms, question)
    stems = text_stems(text)
    check_schema_linking(sql, out, stems, r, [s for _, s in matched], benign_found)
    check_value_case(sql, out, question, enriched_question)
    check_hint_functions(nl, sql, out, enriched_question)
    check_structure(sql, out)
    check_intent(
        nl,
        sql,
        out,
        lambda name: name_mentioned(name, stems),
        question,
        enriched_question,
        r.column_synonyms,
        r.context_terms,
    )
    evidence = checked_cues(nl, required, matched, question)
    alignment = Alignment(
        filter_status=status,
        filter_points=fp,
        findings=out.findings,
        matched_filters=matched,
        missing_filters=missing,
        extra_filters=extra,
        benign_filters=benign_found,
        evidence=evidence,
        enriched=bool(enriched_question and enriched_question.strip()),
        extras_excused="filter_extra" in excused,
    )
    if status == "fully_applied_with_extras" and alignment.benign_extras_only:
        alignment.leniency_boost = float(r.scoring.leniency_boost)
    return alignment

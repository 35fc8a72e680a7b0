"""Alignment of the NL spec against the SQL spec (pure, deterministic).

Produces the filter class of DESIGN.md (fully applied / with extras / partially / not
applied), the leniency boost, and typed findings for projections, aggregations,
grouping, ordering and limits. The four production normalisation rules excuse
differences, and each excused difference is recorded as an ``info`` finding naming the
rule (``required_group_by``, ``benign_group_by``, ``order_by_tolerance``,
``limit_tolerance``).

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
from functools import lru_cache
from typing import Any

from stef.align.intent import check_intent
from stef.findings import Finding, FindingCollector
from stef.rules import Rules
from stef.spec import Filter, Spec, normalize_value

#: Filter-alignment classes, best first (DESIGN.md).
FILTER_CLASSES = ("fully_applied", "fully_applied_with_extras", "partially_applied", "not_applied")

#: Literals so common in SQL that their absence from the question says nothing.
NEUTRAL_LITERALS = frozenset({"0", "1", "100", "1.0", "", "%", "null", "true", "false", "-1", " "})

_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_EQUALISH = frozenset({"=", "in", "like"})
_NEGATED = frozenset({"!=", "not in", "not like"})


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

    @property
    def benign_extras_only(self) -> bool:
        """True when there are extra filters and every one of them is benign."""
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


# --------------------------------------------------------------------------- text helpers

_WORD_CHARS = re.compile(r"[^\w%.\-/:]+", re.UNICODE)


def searchable(*texts: str | None) -> str:
    """Question text prepared for literal look-ups: case-folded, punctuation spaced.

    >>> searchable("Users in 'New  York'?", "Since 2024.")
    ' users in new york since 2024 '
    """
    joined = " ".join(t for t in texts if t)
    tokens = (t.strip(".-/:") for t in _WORD_CHARS.sub(" ", joined.casefold()).split())
    return " " + " ".join(t for t in tokens if t) + " "


def _text_mentions(value: str, text: str) -> bool:
    """Is ``value`` (normalised) mentioned in ``text`` (from :func:`searchable`)?"""
    core = value.strip("%_ ").replace("%", " ").replace("_", " ")
    core = " ".join(_WORD_CHARS.sub(" ", core).split())
    if not core:
        return True
    if f" {core} " in text:
        return True
    # dates: a year (or year-month) of the date mentioned
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}( .*)?", core):
        return f" {core[:4]} " in text or f" {core[:7]} " in text
    # short codes such as 'M' for male are explained only by an explicit mention
    return False


@lru_cache(maxsize=65536)
def _canon_col_cached(name: str) -> str:
    return _NON_ALNUM.sub("", name.casefold())


def _canon_col(name: str | None) -> str:
    return _canon_col_cached(name) if name else ""


# --------------------------------------------------------------------------- filter matching


def _values_match(nv: str, sv: str) -> bool:
    """Does an NL value match a SQL literal? Exact, LIKE-pattern, year-of-date, or word-contained.

    >>> _values_match("alameda county", "alameda"), _values_match("2023", "2023-01-01")
    (True, True)
    >>> _values_match("north", "south"), _values_match("13", "agent 13")
    (False, True)
    >>> _values_match("2013-04", "201304"), _values_match("2010-02-22%", "2010-02-22 00:00:00")
    (True, True)
    """
    if nv == sv:
        return True
    if not nv or not sv:
        return False
    nv, sv = nv.strip(_STRAY_QUOTES), sv.strip(_STRAY_QUOTES)  # a hint's "Sublime Epiphany'"
    if nv == sv:
        return True
    if "%" in nv and _like(nv).fullmatch(sv):
        return True  # the question's pattern '2010-02-22%' holds '2010-02-22 00:00:00'
    if len(nv) >= 6 and _digits(nv) == _digits(sv) and (_ISO_DATE.match(nv) or _ISO_DATE.match(sv)):
        return True  # '2013-04' and '201304': one date, two spellings
    core = sv.strip("%_ ")
    if not core:
        return False
    if re.fullmatch(r"\d{4}", nv) and re.match(rf"{nv}(-|$|%)", sv):
        return True
    if re.fullmatch(r"\d{4}", core) and re.match(rf"{core}(-|$)", nv):
        return True
    if nv.isdigit() and re.search(rf"(?<![\w.]){nv}(?![\w.])", core):
        return True  # '13' of 'Agent 13'
    if len(core) >= 4 and len(nv) >= 4 and nv.rstrip("s") == core.rstrip("s"):
        return True  # 'Poster' for 'Posters'
    if len(core) >= 3 and len(nv) >= 3:
        a, b = f" {nv} ".replace("-", " "), f" {core} ".replace("-", " ")
        return a in b or b in a  # 'Italian' in "Italian-language"
    return False


#: Quotes a hint leaves at one end of a value; both sides are already normalised
#: (:func:`stef.spec.normalize_value`: dates ISO style, matched quote pairs removed).
_STRAY_QUOTES = " '\"`"
_ISO_DATE = re.compile(r"\d{4}-\d{2}")
_NON_DIGIT = re.compile(r"\D+")


def _digits(v: str) -> str:
    return _NON_DIGIT.sub("", v)


def _like(pattern: str) -> re.Pattern[str]:
    """A LIKE pattern as a regular expression (``%`` any run, ``_`` one character)."""
    return re.compile(
        "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    )


_LISTS = frozenset({"in", "not in"})
_BOUNDS = frozenset({"<", ">", "<=", ">="})


def _int(v: str) -> int | None:
    try:
        f = float(v)
    except ValueError:
        return None
    return int(f) if f.is_integer() else None


def _ops_compatible(nl: Filter, sql: Filter, nv: str, sv: str) -> bool:
    """Is the SQL operator what the NL operator asks for (given the matched values)?"""
    n, s = nl.op, sql.op
    if n == s:
        return True
    if nl.func == "year" and n == "=":
        return s in _EQUALISH or s in (">=", "<", "<=", ">", "between")
    if n in _EQUALISH and s in _EQUALISH:
        return True
    if n in _NEGATED and s in _NEGATED:
        return True
    if n == "between" and s in (">=", "<=", ">", "<", "between"):
        return True
    if s == "between" and n in (">=", "<=", ">", "<"):
        return True  # "below 400" kept by BETWEEN 100 AND 400 (the value is a bound)
    ni, si = _int(nv), _int(sv)
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


@dataclass
class _Match:
    nl: Filter
    sql: Filter | None
    problem: str | None = None  # None | "wrong_operator" | "wrong_column" | "wrong_value"


def _match_filter(nl: Filter, candidates: Sequence[Filter]) -> _Match:
    best: _Match | None = None
    for s in candidates:
        pairs = [(nv, sv) for nv in nl.values for sv in s.values if _values_match(nv, sv)]
        if not pairs and nl.op != s.op and nl.op in _BOUNDS and s.op in _BOUNDS:
            # "more than 50" as >= 51: a strict bound written one off (the operators
            # decide below whether the step is the right one)
            pairs = [
                (nv, sv)
                for nv in nl.values
                for sv in s.values
                if (a := _int(nv)) is not None and (b := _int(sv)) is not None and abs(a - b) == 1
            ]
        if not pairs:
            continue
        nv, sv = pairs[0]
        ok_op = _ops_compatible(nl, s, nv, sv)
        if not ok_op and _int(nv) is not None and len(pairs) > 1:
            ok_op = any(_ops_compatible(nl, s, a, b) for a, b in pairs)
        col_ok = (
            nl.column is None
            or s.column is None
            or _canon_col(nl.column) in _canon_col(s.column)
            or (len(_canon_col(s.column)) >= 4 and _canon_col(s.column) in _canon_col(nl.column))
            # the hint that tied the value names the SQL's column too ("Germany is a name
            # of country" filtered on country)
            or name_mentioned(s.column, text_stems(searchable(nl.text)))
        )
        m = _Match(
            nl, s, None if ok_op and col_ok else ("wrong_operator" if not ok_op else "wrong_column")
        )
        if m.problem is None:
            return m
        best = best or m
    if best is not None:
        return best
    # same column (known on both sides) compared against another value
    if nl.column:
        for s in candidates:
            if s.column and _canon_col(s.column) == _canon_col(nl.column) and s.values:
                return _Match(nl, s, "wrong_value")
    return _Match(nl, None, None)


def _benign_match(f: Filter, patterns: Iterable[Filter]) -> bool:
    for p in patterns:
        if _canon_col(p.column) != _canon_col(f.column):
            continue
        if p.op != f.op and not (p.op in _EQUALISH and f.op in _EQUALISH):
            continue
        if p.values == ("?",) or not p.values or set(p.values) == set(f.values):
            return True
    return False


def _pinned_columns(sql: Spec) -> set[str]:
    return {
        _canon_col(f.column)
        for f in sql.filters
        if f.column and f.op == "=" and len(f.values) == 1 and f.clause in ("where", "join")
    }


# --------------------------------------------------------------------------- alignment


def align_filters(
    nl: Spec,
    sql: Spec,
    out: FindingCollector,
    *,
    text: str,
    benign: Sequence[Filter] = (),
) -> tuple[list[tuple[Filter, Filter]], list[Filter], list[Filter], list[Filter], int]:
    """Match required (NL) filters to SQL filters. Returns matched, missing, extra, benign, bad."""
    candidates = [f for f in sql.filters if f.values]
    required = [f for f in nl.filters if f.values]
    used: set[int] = set()
    matched: list[tuple[Filter, Filter]] = []
    missing: list[Filter] = []
    bad = 0
    for req in required:
        # a SQL IN list may answer several required values ("San Diego" and "Santa Barbara")
        free = [c for i, c in enumerate(candidates) if i not in used or c.op in _LISTS]
        m = _match_filter(req, free or candidates)
        if (m.sql is None or m.problem) and free:
            # the enrichment restating the question ('Poster' for "Posters") is answered
            # by the filter that answered the question
            again = _match_filter(req, [c for i, c in enumerate(candidates) if i in used])
            if again.sql is not None and again.problem is None:
                m = again
        vals = ", ".join(req.values)
        if m.sql is not None:
            used.add(next(i for i, c in enumerate(candidates) if c is m.sql))
        if m.sql is not None and m.problem is None:
            matched.append((req, m.sql))
        elif m.sql is not None and m.problem == "wrong_operator":
            bad += 1
            out.add(
                "filter_wrong_operator",
                "error",
                f"question asks {req.op} {vals} but the SQL uses {m.sql.op}",
                req.text,
                m.sql.text,
                "filter_alignment",
            )
        elif m.sql is not None and m.problem == "wrong_column":
            bad += 1
            out.add(
                "filter_wrong_column",
                "warning",
                f"value {vals} is filtered on {m.sql.column!r}, "
                f"the question ties it to {req.column!r}",
                req.text,
                m.sql.text,
                "filter_alignment",
            )
        elif m.sql is not None and m.problem == "wrong_value":
            bad += 1
            out.add(
                "filter_wrong_value",
                "error",
                f"question asks {req.column} {req.op} {vals}, the SQL compares it with "
                f"{', '.join(m.sql.values)}",
                req.text,
                m.sql.text,
                "filter_alignment",
            )
        else:
            bad += 1
            missing.append(req)
            col = f"{req.column} " if req.column else ""
            out.add(
                "filter_missing",
                "error",
                f"question requires {col}{req.op} {vals}; no SQL filter applies it",
                req.text,
                None,
                "filter_alignment",
            )
    _absorb_year_bounds(matched, candidates, used)
    extra: list[Filter] = []
    benign_found: list[Filter] = []

    def note_benign(f: Filter) -> bool:
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

    for i, f in enumerate(candidates):
        if i in used or f.clause == "case" or note_benign(f):
            continue  # an unmatched CASE condition shapes an output, it filters nothing
        if all(v in NEUTRAL_LITERALS or _text_mentions(v, text) for v in f.values):
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
            unexplained = [v for v in f.values if not _text_mentions(v, text)]
            out.add(
                "filter_extra",
                "warning",
                f"filter on {f.column or 'an expression'} with "
                f"{', '.join(unexplained)} is not asked for by the question",
                None,
                f.text,
                "filter_alignment",
            )
    for f in sql.filters:
        if not f.values:
            note_benign(f)
    return matched, missing, extra, benign_found, bad


def _absorb_year_bounds(
    matched: list[tuple[Filter, Filter]], candidates: Sequence[Filter], used: set[int]
) -> None:
    """A year asked for as a date range (``d >= '2025-01-01' AND d < '2026-01-01'``): the
    range's other bound belongs to the matched year, it is not an extra filter."""
    for nl_f, s in list(matched):
        if nl_f.func != "year" or not nl_f.values or not s.column:
            continue
        year = _int(nl_f.values[0])
        if year is None:
            continue
        bounds = (str(year), f"{year + 1}-01-01")
        for i, c in enumerate(candidates):
            if i in used or c is s or _canon_col(c.column) != _canon_col(s.column):
                continue
            if c.op in ("<", "<=", ">", ">=") and any(v.startswith(bounds) for v in c.values):
                used.add(i)
                matched.append((nl_f, c))


def _filter_status(n_required: int, n_matched_required: int, bad: int, extras: int) -> str:
    if n_required and n_matched_required == 0 and bad:
        return "not_applied"
    if bad:
        return "partially_applied"
    return "fully_applied_with_extras" if extras else "fully_applied"


def _sql_aggs(sql: Spec) -> set[str]:
    return {a.func for a in sql.aggregations}


#: Name parts of a column that holds an aggregate already (``avgscrmath``, ``answercount``,
#: ``basesetsize``, ``numtsttakr``), by the function it stands for.
_STORED_AGGREGATES = {
    "avg": re.compile(r"avg|average|mean"),
    "count": re.compile(r"count|cnt|size|total|^num(?!ber$)"),
    "sum": re.compile(r"total|sum"),
}


def _stored_aggregate(func: str, sql: Spec) -> str | None:
    """An output or sort column whose name says it stores ``func`` already ("the highest
    average score" as ``ORDER BY avgscrmath``), else None.

    >>> from stef.spec import OrderKey, Projection
    >>> _stored_aggregate("avg", Spec(order_by=[OrderKey("avgscrmath", "desc")]))
    'avgscrmath'
    >>> _stored_aggregate("count", Spec(projections=[Projection("number", columns=("number",))]))
    """
    pattern = _STORED_AGGREGATES.get(func)
    if pattern is None:
        return None
    names = [c for p in sql.projections if not p.is_aggregate for c in p.columns]
    names += [o.key for o in sql.order_by if not o.is_aggregate]
    return next((n for n in names if pattern.search(_canon_col(n))), None)


def _check_aggregations(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    aggs = _sql_aggs(sql)
    first_order = sql.order_by[0] if sql.order_by else None
    for na in nl.aggregations:
        f = na.func
        if f in aggs:
            if (
                f == "count"
                and na.distinct
                and not any(a.func == "count" and a.distinct for a in sql.aggregations)
                and not sql.distinct
                and not sql.group_by
            ):
                out.add(
                    "distinct_missing",
                    "warning",
                    "question counts distinct things; the SQL counts rows",
                    na.text,
                    None,
                    "aggregation",
                )
            continue
        stored = _stored_aggregate(f, sql)
        if stored:
            out.add(
                "aggregation_stored",
                "info",
                f"question asks for {f.upper()}; the SQL reads a stored one ({stored})",
                na.text,
                stored,
                "aggregation",
            )
            continue
        if f == "avg":
            if sql.flags.get("division"):
                out.add(
                    "aggregation_equivalent",
                    "info",
                    "average computed as a division",
                    na.text,
                    None,
                    "aggregation",
                )
            else:
                out.add(
                    "aggregation_missing",
                    "error",
                    "question asks for an average; the SQL has no AVG or division",
                    na.text,
                    None,
                    "aggregation",
                )
        elif f == "count":
            if "sum" in aggs:
                out.add(
                    "aggregation_substituted",
                    "warning",
                    "question asks how many; the SQL sums instead of counting",
                    na.text,
                    None,
                    "aggregation",
                )
            else:
                out.add(
                    "aggregation_missing",
                    "error",
                    "question asks how many; the SQL has no COUNT",
                    na.text,
                    None,
                    "aggregation",
                )
        elif f == "sum":
            if "count" in aggs:
                out.add(
                    "aggregation_substituted",
                    "warning",
                    "question asks for a total; the SQL counts rows",
                    na.text,
                    None,
                    "aggregation",
                )
            elif sql.flags.get("division") or "avg" in aggs:
                out.add(
                    "aggregation_missing",
                    "warning",
                    "question asks for a total; the SQL has no SUM",
                    na.text,
                    None,
                    "aggregation",
                )
            else:
                out.add(
                    "aggregation_missing",
                    "error",
                    "question asks for a total; the SQL has no SUM",
                    na.text,
                    None,
                    "aggregation",
                )
        elif f in ("max", "min"):
            want = "desc" if f == "max" else "asc"
            other = "min" if f == "max" else "max"
            if first_order is not None and first_order.direction == want and sql.limit is not None:
                out.add(
                    "superlative_via_order",
                    "info",
                    f"{f.upper()} answered with ORDER BY … {want.upper()} LIMIT {sql.limit}",
                    na.text,
                    first_order.text,
                    "aggregation",
                )
            elif other in aggs and not first_order:
                out.add(
                    "aggregation_direction",
                    "error",
                    f"question asks for the {'highest' if f == 'max' else 'lowest'}; "
                    f"the SQL uses {other.upper()}",
                    na.text,
                    None,
                    "aggregation",
                )
            elif (
                first_order is not None and first_order.direction != want and sql.limit is not None
            ):
                out.add(
                    "order_direction_mismatch",
                    "error",
                    f"question asks for the {'highest' if f == 'max' else 'lowest'}; "
                    f"the SQL sorts {first_order.direction.upper()}",
                    na.text,
                    first_order.text,
                    "ordering",
                )
            else:
                out.add(
                    "aggregation_missing",
                    "warning",
                    f"question asks for the {'highest' if f == 'max' else 'lowest'}; "
                    f"the SQL has neither {f.upper()} nor a sorted LIMIT",
                    na.text,
                    None,
                    "aggregation",
                )
        else:
            out.add(
                "aggregation_missing",
                "warning",
                f"question asks for {f.upper()}; the SQL does not use it",
                na.text,
                None,
                "aggregation",
            )
    if (
        nl.distinct
        and not any(na.distinct for na in nl.aggregations)
        and not (sql.distinct or sql.group_by or any(a.distinct for a in sql.aggregations))
    ):
        out.add(
            "distinct_missing",
            "warning",
            "question asks for different/unique values; the SQL has no DISTINCT",
            None,
            None,
            "distinct",
        )
    wants_ratio = nl.flags.get("ratio") or nl.flags.get("division")
    if wants_ratio and not (sql.flags.get("division") or "avg" in aggs):
        severity = "error" if nl.flags.get("division") else "warning"
        out.add(
            "division_missing",
            severity,
            "question asks for a ratio or percentage; the SQL divides nothing",
            ", ".join(nl.formulas) or None,
            None,
            "aggregation",
        )
    if (
        nl.flags.get("list")
        and not nl.aggregations
        and not nl.flags.get("count_question")
        and sql.projections
        and all(p.is_aggregate for p in sql.projections)
        and not nl.flags.get("superlative")
        and not nl.flags.get("ratio")
    ):
        out.add(
            "aggregation_unexpected",
            "warning",
            "question asks for a list; the SQL returns only aggregates",
            None,
            ", ".join(p.text or p.expr for p in sql.projections),
            "aggregation",
        )


def _check_grouping(nl: Spec, sql: Spec, out: FindingCollector, rules: Rules) -> None:
    if nl.group_by and not sql.group_by and not sql.window_functions:
        out.add(
            "group_by_missing",
            "warning",
            f"question groups by {', '.join(nl.group_by)}; the SQL has no GROUP BY",
            ", ".join(nl.group_by),
            None,
            "grouping",
        )
        return
    if not sql.group_by:
        return
    nl_keys = {_canon_col(g) for g in nl.group_by}
    plain_proj = {_canon_col(c) for p in sql.projections if not p.is_aggregate for c in p.columns}
    plain_proj |= {_canon_col(p.expr) for p in sql.projections if not p.is_aggregate}
    plain_proj |= {_canon_col(p.alias) for p in sql.projections if p.alias and not p.is_aggregate}
    mixes = any(p.is_aggregate for p in sql.projections) and bool(plain_proj)
    pinned = _pinned_columns(sql)
    benign = {_canon_col(c) for c in rules.benign_group_by}
    ranks = bool(sql.order_by) and any(o.is_aggregate for o in sql.order_by)
    for key in sql.group_by:
        k = _canon_col(key)
        if k in nl_keys or any(k in n or n in k for n in nl_keys if n):
            continue
        if k in benign:
            out.add(
                "group_by_benign",
                "info",
                f"GROUP BY {key} is declared benign by the rules",
                None,
                key,
                "benign_group_by",
            )
        elif k in pinned:
            out.add(
                "group_by_benign",
                "info",
                f"GROUP BY {key} is harmless: a WHERE equality pins it to one value",
                None,
                key,
                "benign_group_by",
            )
        elif mixes and k in plain_proj:
            out.add(
                "group_by_inferred",
                "info",
                f"GROUP BY {key} is required: the SELECT mixes aggregates and plain columns",
                None,
                key,
                "required_group_by",
            )
        elif ranks or nl.flags.get("superlative") or nl.limit:
            out.add(
                "group_by_inferred",
                "info",
                f"GROUP BY {key} serves the ranking the question asks for",
                None,
                key,
                "required_group_by",
            )
        elif k in plain_proj:
            out.add(
                "group_by_inferred",
                "info",
                f"GROUP BY {key} groups the selected column",
                None,
                key,
                "required_group_by",
            )
        else:
            out.add(
                "group_by_unexpected",
                "warning",
                f"GROUP BY {key} is neither asked for nor selected",
                None,
                key,
                "grouping",
            )


def _check_order_limit(nl: Spec, sql: Spec, out: FindingCollector, rules: Rules) -> None:
    asked_order = bool(nl.order_by)
    topk = nl.limit
    first = sql.order_by[0] if sql.order_by else None
    aggs = _sql_aggs(sql)
    # direction
    if asked_order and first is not None:
        want = nl.order_by[0].direction
        if first.direction != want and not (set(aggs) & {"max", "min"} and sql.limit is None):
            out.add(
                "order_direction_mismatch",
                "error",
                f"question asks for {want.upper()} order; the SQL sorts {first.direction.upper()}",
                nl.order_by[0].text,
                first.text,
                "ordering",
            )
    elif asked_order and first is None:
        superlative_by_agg = bool(set(aggs) & {"max", "min"}) or sql.subqueries > 0
        if (topk is not None and topk > 1) or not superlative_by_agg:
            out.add(
                "order_by_missing",
                "warning" if not topk else "error",
                "question asks for an order; the SQL has no ORDER BY",
                nl.order_by[0].text,
                None,
                "ordering",
            )
    elif (
        not asked_order
        and first is not None
        and (sql.limit is None or sql.limit >= rules.safety_limit_min)
    ):
        out.add(
            "order_by_tolerated",
            "info",
            "the SQL sorts although the question asked for no order; a default sort is harmless",
            None,
            first.text,
            "order_by_tolerance",
        )
    # limit
    lim = sql.limit
    if topk is not None:
        if lim is None:
            via_agg = topk == 1 and (bool(set(aggs) & {"max", "min"}) or sql.subqueries > 0)
            if not via_agg:
                out.add(
                    "limit_missing",
                    "error",
                    f"question asks for the top {topk}; the SQL returns every row",
                    nl.order_by[0].text if nl.order_by else None,
                    None,
                    "limit",
                )
        elif lim != topk:
            tolerated = lim >= rules.safety_limit_min
            out.add(
                "limit_mismatch",
                "error",
                f"question asks for {topk} rows; the SQL "
                + (f"has only a safety LIMIT {lim}" if tolerated else f"returns {lim}"),
                nl.order_by[0].text if nl.order_by else None,
                f"LIMIT {lim}",
                "limit",
            )
    elif lim is not None:
        if lim >= rules.safety_limit_min:
            out.add(
                "limit_tolerated",
                "info",
                f"LIMIT {lim} is a safety limit (≥ {rules.safety_limit_min}), not a top-k",
                None,
                f"LIMIT {lim}",
                "limit_tolerance",
            )
        elif first is None:
            out.add(
                "limit_unexpected",
                "warning",
                f"LIMIT {lim} truncates an unordered result the question did not limit",
                None,
                f"LIMIT {lim}",
                "limit",
            )
        elif not (asked_order or any(a.func in ("max", "min") for a in nl.aggregations)):
            # a sorted LIMIT answers "the highest …", "the lowest …" (a superlative)
            out.add(
                "limit_unexpected",
                "warning",
                f"LIMIT {lim} keeps only the top {lim}; the question asked for no top-k",
                None,
                f"LIMIT {lim}",
                "limit",
            )


#: Words a hint's prose uses that are no column ("one of the district names").
_HINT_PROSE = frozenset(
    ("one", "ones", "the", "this", "that", "these", "those", "each", "all", "any", "some", "none")
)


def _hint_column_used(c: str, sql_cols: set[str], sql: Spec) -> bool:
    """Does the SQL use the column a hint names? Also when the SQL spells it as a word
    of a longer name (``ana`` of `` `ana pattern` ``), with one slip (``covertedmanacost``),
    as a table's ``id`` (``alignment.id`` → ``alignment_id``), or when the "column" is a
    value or (part of) a table's name the SQL uses (``TR001_10_11 is the bond id``, "gas
    stations" for ``gasstations``).

    >>> s = Spec(columns=["ana pattern", "convertedmanacost", "alignment_id"], literals=["f"],
    ...          tables=["gasstations"])
    >>> cols = {_canon_col(c) for c in s.columns}
    >>> [_hint_column_used(c, cols, s) for c in ("ana", "covertedmanacost", "id", "f", "age")]
    [True, True, True, True, False]
    >>> _hint_column_used("stations", cols, s)
    True
    """
    if c in sql_cols or c in _HINT_PROSE or len(c) < 2:
        return True
    if c in sql.literals or any(c == t or (len(c) >= 4 and c in t) for t in sql.tables):
        return True
    words = {w for col in sql.columns for w in _NAME_SPLIT.split(col.casefold()) if w}
    if c in words:
        return True  # a word of a longer name: ``acl`` of `` `aCL IgA` ``
    for s in sql_cols:
        if len(c) >= 4 and c in s:
            return True
        if c == "id" and s.endswith("id"):
            return True
        if len(c) >= 6 and abs(len(s) - len(c)) <= 2 and _one_slip(c, s):
            return True
    return False


def _one_slip(a: str, b: str) -> bool:
    """Are two names the same but for one inserted, dropped or changed letter?"""
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + (len(a) == len(b)) :] == b[i + 1 :]


def _number_used(v: str, values: set[str], sql: Spec) -> bool:
    """Does the SQL use the question's number ``v``: as a value, as a word of a longer
    value or name ('Agent 13', ``numge1500``, `` `enrollment (ages 5-17)` ``), or one off
    as the other side of a strict bound ("more than 50" as ``BETWEEN 51 AND 59``, "after
    1996" as ``>= '1997-01-01'``)?

    >>> s = Spec(columns=["numge1500"], literals=["agent 13", "51", "1997-01-01", "2024"],
    ...          filters=[Filter("speed", ">=", ("51",)), Filter("d", ">=", ("1997-01-01",)),
    ...                   Filter("year", "=", ("2024",))])
    >>> [_number_used(v, set(s.literals), s) for v in ("13", "1500", "50", "1996", "2025")]
    [True, True, True, True, False]
    """
    if any(_values_match(v, s) for s in values):
        return True
    word = re.compile(rf"(?<![\d.]){re.escape(v)}(?![\d]|\.\d)")
    if any(word.search(s) for s in [*values, *sql.columns]):
        return True
    n = _int(v)
    if n is None:
        return False
    bounds = [b for f in sql.filters if f.op in _BOUNDS or f.op == "between" for b in f.values]
    return any(_values_match(str(m), b) for m in (n - 1, n + 1) for b in bounds)


def _check_literals_and_hints(
    nl: Spec, sql: Spec, out: FindingCollector, text: str, reported: set[str]
) -> None:
    sql_cols = {_canon_col(c) for c in sql.columns}
    sql_cols |= {_canon_col(p.alias) for p in sql.projections if p.alias}
    for col in nl.columns:
        c = _canon_col(col)
        if c and not _hint_column_used(c, sql_cols, sql):
            out.add(
                "hint_column_missing",
                "warning",
                f"the enriched question names column {col!r}; the SQL never uses it",
                col,
                None,
                "hint",
            )
    sql_values = set(sql.literals)
    if sql.limit is not None:
        sql_values.add(str(sql.limit))
    for v in nl.literals:
        if normalize_value(v) != v:
            continue
        if _int(v) is None and not re.fullmatch(r"-?\d+(\.\d+)?", v):
            continue
        if v in NEUTRAL_LITERALS or v in reported:
            continue
        if not _number_used(v, sql_values, sql):
            out.add(
                "number_missing",
                "warning",
                f"the question mentions {v}; the SQL never uses it",
                v,
                None,
                "literal",
            )
    for lit in sql.literals:
        if lit in NEUTRAL_LITERALS or lit in reported:
            continue
        if not _text_mentions(lit, text):
            reported.add(lit)
            out.add(
                "literal_unexplained",
                "warning",
                f"SQL literal {lit!r} appears in neither the question nor the enriched question",
                None,
                lit,
                "literal",
            )


_NAME_SPLIT = re.compile(r"[^0-9a-z]+")


def text_stems(text: str) -> frozenset[str]:
    """Five-letter stems of the words of a :func:`searchable` text.

    Four-letter prefixes are kept too, so a short column word (``name``) matches its
    plural or longer form (``names``).

    >>> sorted(text_stems(" list the names "))
    ['list', 'name', 'names', 'the']
    """
    words = [t for t in _NAME_SPLIT.split(text) if len(t) >= 3]
    return frozenset([w[:5] for w in words] + [w[:4] for w in words])


def name_mentioned(name: str, stems: frozenset[str], synonyms: Sequence[str] = ()) -> bool:
    """Does the question mention a column name (or one of its synonyms)?

    A word of the name whose five-letter stem the question uses, or — for a long name
    written without separators — a question stem inside it, counts. Names with no word
    of three letters or more (``id``, ``x``) cannot be checked and count as mentioned.

    >>> s = text_stems(" how many students are enrolled ")
    >>> [name_mentioned(n, s) for n in ("studentname", "enrollment_count", "salary")]
    [True, True, False]
    """
    for candidate in (name, *synonyms):
        words = [
            w for w in _NAME_SPLIT.split(candidate.casefold()) if len(w) >= 3 and not w.isdigit()
        ]
        if not words:
            return True
        for w in words:
            if w[:5] in stems:
                return True
            if len(w) >= 7 and any(len(st) >= 4 and st in w for st in stems):
                return True
    return False


#: ``count(x)`` without DISTINCT: a row count, whatever column it names.
_ROW_COUNT = re.compile(r"count\((?!distinct\b)[^(),]*\)")


def _check_schema_linking(
    sql: Spec,
    out: FindingCollector,
    stems: frozenset[str],
    rules: Rules,
    matched: Sequence[Filter] = (),
    benign: Sequence[Filter] = (),
) -> None:
    """Columns the SQL selects or filters on that the question never names (filters that
    apply a value the question states are explained by that value); ``stems`` are the
    :func:`text_stems` of the question and its enrichment."""
    explained = {id(f) for f in matched}
    benign_cols = {_canon_col(f.column) for f in benign if f.column}
    syn: dict[str, list[str]] = {c.casefold(): list(v) for c, v in rules.column_synonyms.items()}
    seen: set[str] = set()
    for p in sql.projections:
        if _ROW_COUNT.fullmatch(p.expr):
            continue  # COUNT(col) counts rows: which column it names says nothing
        for col in p.columns:
            if col in seen:
                continue
            seen.add(col)
            if not name_mentioned(col, stems, syn.get(col, ())):
                out.add(
                    "projection_unexplained",
                    "warning",
                    f"selected column {col!r} is named nowhere in the question or its enrichment",
                    None,
                    p.text or p.expr,
                    "schema_linking",
                )
    for f in sql.filters:
        fcol = f.column
        if (
            not fcol
            or fcol in seen
            or f.clause in ("join", "case")
            or not f.values
            or id(f) in explained
            or _canon_col(fcol) in benign_cols
        ):
            continue
        seen.add(fcol)
        if not name_mentioned(fcol, stems, syn.get(fcol, ())):
            out.add(
                "filter_column_unexplained",
                "warning",
                f"filtered column {fcol!r} is named nowhere in the question or its enrichment",
                None,
                f.text,
                "schema_linking",
            )


def _check_value_case(
    sql: Spec, out: FindingCollector, question: str, enriched: str | None
) -> None:
    """String literals the question writes in another letter case: ``=`` on strings is
    case-sensitive in SQLite, PostgreSQL and others, so ``'alameda'`` misses 'Alameda'."""
    raw = f"{question} {enriched or ''}"
    folded = raw.casefold()
    for s in sql.flags.get("string_literals") or ():
        core = s.strip("%_ ")
        if len(core) < 2 or not any(ch.isalpha() for ch in core) or core in raw:
            continue
        if re.search(rf"(?<!\w){re.escape(core.casefold())}(?!\w)", folded):
            out.add(
                "value_case_mismatch",
                "warning",
                f"SQL literal {core!r} is written with another letter case in the question; "
                "string comparison is case-sensitive in most databases",
                core,
                s,
                "literal",
            )


_HINT_FUNCTION = re.compile(
    r"\b(count|sum|avg|min|max|year|subtract|divide|substr|cast)\s*\(", re.I
)
_HINT_DISTINCT = re.compile(r"\bdistinct\b", re.I)


#: A LIKE pattern that keeps a year ('1964%'): the year of a date, as YEAR() would.
_YEAR_PATTERN = re.compile(r"[12][0-9]{3}-?%")


def _check_hint_functions(nl: Spec, sql: Spec, out: FindingCollector, enriched: str | None) -> None:
    """Functions the enriched question prescribes (``SUM(cost)``, ``year(dob) > 1980``,
    ``DISTINCT``) that the SQL does not use."""
    if not enriched:
        return
    named = {m.lower() for m in _HINT_FUNCTION.findall(enriched)}
    if _HINT_DISTINCT.search(enriched):
        named.add("distinct")
    if not named:
        return
    aggs = _sql_aggs(sql)
    funcs = set(sql.flags.get("functions") or ())
    first = sql.order_by[0] if sql.order_by else None
    divides = "div" in funcs  # anywhere: an output, HAVING, ORDER BY, WHERE
    # AVG is SUM / COUNT; SUM(CASE WHEN … THEN 1 ELSE 0 END) is a conditional COUNT
    average = "avg" in aggs
    conditional_count = "sum" in aggs and bool(funcs & {"case", "if"})
    have = {
        "count": "count" in aggs or average or conditional_count,
        "sum": "sum" in aggs or average,
        "avg": average or divides,
        "min": "min" in aggs
        or (first is not None and first.direction == "asc" and sql.limit is not None),
        "max": "max" in aggs
        or (first is not None and first.direction == "desc" and sql.limit is not None),
        "year": any(f.func == "year" for f in sql.filters)
        or bool(funcs & {"year", "timetostr", "extract", "strftime"})
        or any(
            f.op == "like" and any(_YEAR_PATTERN.fullmatch(v) for v in f.values)
            for f in sql.filters
        ),
        "subtract": "sub" in funcs,
        "divide": divides or average,
        "substr": bool(funcs & {"substring", "substr"}),
        "cast": bool(sql.flags.get("cast")),
        "distinct": sql.distinct or any(a.distinct for a in sql.aggregations) or bool(sql.group_by),
    }
    for name in sorted(named):
        if not have.get(name, True):
            out.add(
                "hint_function_missing",
                "warning",
                f"the enriched question prescribes {name.upper()}; the SQL does not use it",
                name.upper(),
                None,
                "hint",
            )


def _check_structure(sql: Spec, out: FindingCollector) -> None:
    flags = sql.flags
    for table in flags.get("redundant_tables") or ():
        out.add(
            "table_redundant",
            "warning",
            f"table {table!r} is joined but none of its columns is used",
            None,
            table,
            "structure",
        )
    for table in flags.get("bridge_tables") or ():
        out.add(
            "table_bridge_only",
            "warning",
            f"table {table!r} only links two other tables; none of its columns is used",
            None,
            table,
            "structure",
        )
    if flags.get("integer_division"):
        out.add(
            "integer_division",
            "warning",
            "integer operands are divided without a CAST: the dialect truncates the result",
            None,
            None,
            "structure",
        )
    if flags.get("identical_set_sides"):
        out.add(
            "set_operation_identical",
            "error",
            "both sides of the set operation are the same query",
            None,
            " ".join(sql.set_operations).upper(),
            "structure",
        )
    if flags.get("cartesian_join"):
        out.add(
            "cartesian_join",
            "warning",
            "tables are joined with no linking condition",
            None,
            ", ".join(sql.tables),
            "structure",
        )
    if flags.get("duplicate_projections"):
        out.add(
            "duplicate_projection",
            "warning",
            "the same expression is selected twice",
            None,
            None,
            "structure",
        )
    if flags.get("aggregate_in_where"):
        out.add(
            "aggregate_in_where",
            "error",
            "an aggregate appears in WHERE (it belongs in HAVING)",
            None,
            None,
            "structure",
        )
    if flags.get("nested_aggregate"):
        out.add(
            "nested_aggregate",
            "warning",
            "an aggregate is nested inside another",
            None,
            None,
            "structure",
        )


def align(
    nl: Spec,
    sql: Spec,
    rules: Rules | None = None,
    *,
    question: str = "",
    enriched_question: str | None = None,
    benign: Sequence[Filter] = (),
) -> Alignment:
    """Align an NL spec with a SQL spec.

    ``question`` and ``enriched_question`` are searched for the SQL's literals (a filter
    whose value the question states is implied, not extra); ``benign`` holds the rules'
    benign-filter patterns (see :func:`stef.sql.spec.predicate_filters`).
    """
    r = rules or Rules()
    text = searchable(question, enriched_question)
    out = FindingCollector()
    matched, missing, extra, benign_found, bad = align_filters(
        nl, sql, out, text=text, benign=benign
    )
    required = [f for f in nl.filters if f.values]
    matched_required = sum(1 for a, _ in matched if a in required)
    status = _filter_status(len(required), matched_required, bad, len(extra) + len(benign_found))
    fp = float(getattr(r.scoring.filter_points, status))
    boost = (
        float(r.scoring.leniency_boost)
        if status == "fully_applied_with_extras" and benign_found and not extra
        else 0.0
    )
    _check_aggregations(nl, sql, out)
    _check_grouping(nl, sql, out, r)
    _check_order_limit(nl, sql, out, r)
    reported = {v for f in (*extra, *benign_found, *(s for _, s in matched)) for v in f.values}
    _check_literals_and_hints(nl, sql, out, text, reported)
    stems = text_stems(text)
    _check_schema_linking(sql, out, stems, r, [s for _, s in matched], benign_found)
    _check_value_case(sql, out, question, enriched_question)
    _check_hint_functions(nl, sql, out, enriched_question)
    _check_structure(sql, out)
    check_intent(
        nl,
        sql,
        out,
        lambda name: name_mentioned(name, stems),
        question,
        enriched_question,
        r.column_synonyms,
    )
    evidence = (
        len(required)
        + len(nl.aggregations)
        + (1 if nl.limit is not None else 0)
        + (1 if nl.order_by else 0)
        + (1 if nl.group_by else 0)
        + (1 if nl.distinct else 0)
        + len(nl.columns)
        + len(nl.formulas)
    )
    return Alignment(
        filter_status=status,
        filter_points=fp,
        leniency_boost=boost,
        findings=out.findings,
        matched_filters=matched,
        missing_filters=missing,
        extra_filters=extra,
        benign_filters=benign_found,
        evidence=evidence,
        enriched=bool(enriched_question and enriched_question.strip()),
    )

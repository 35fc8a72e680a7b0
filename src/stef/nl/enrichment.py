"""Does the agent's enrichment (Q_e) keep the intent of the user's question (Q_u)?

Both texts go through the deterministic extractor (:func:`stef.nl.spec.analyze_text`) and
their specs are compared. Q_e comes in two shapes:

* a **restatement** (a reformulated question): every value, number and year the question
  states must survive, no value may appear from nowhere, and the aggregation, top-k and
  DISTINCT must stay the same;
* **hints** (``women refers to SEX = 'F'``, notes): Q_e legitimately maps words to codes and
  says nothing about the rest, so only contradictions count: a hint that restates the
  question's year with another year, a code filter on a value the question never implies,
  a bare aggregate of another kind, a different top-k.

A value is consistent when it is a prefix, abbreviation or part of a question phrase
(``'F'`` for "female", ``'Alameda'`` for "Alameda County", ``'PO Box'`` for "post office
boxes"), or when a hint whose phrase comes from the question states it. Every finding is a
``warning`` with ``rule="enrichment_check"``; ``nl`` quotes the question's phrase and the
message quotes Q_e. Pure and deterministic.

>>> check_enrichment("How many customers in Germany?", "How many customers in France?").consistent
False
>>> check_enrichment("How many female patients?", "female refers to SEX = 'F'").consistent
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from stef.findings import Finding
from stef.nl import lexicon as lx
from stef.nl.context import Mapping, TextAnalysis
from stef.nl.spec import TextsAnalysis, analyze_text
from stef.nl.words import (
    WordPool,
    grounded,
    related_values,
    stem,
    text_pool,
    text_words,
    word_in,
    word_tokens,
)
from stef.rules import Rules
from stef.spec import Filter, normalize_number

__all__ = ["EnrichmentResult", "check_analyses", "check_enrichment"]

_RULE = "enrichment_check"
_AGG_KINDS = frozenset({"count", "sum", "avg"})
_BOUNDS = frozenset({">", ">=", "<", "<="})
# Words that say how to ask, not what about: a restatement may word them differently.
_NOT_TOPIC = (
    lx.PHRASE_STOPS
    | lx.RELATIVE_DATE_WORDS
    | lx.TIME_UNITS
    | lx.AGGREGATE_WORDS
    | lx.DISTINCT_WORDS
    | lx.SUPERLATIVE_WORDS
    | lx.REQUEST_OPENERS
    | frozenset({"many", "much", "there", "all"})
)
_NUMBER = re.compile(r"\d(?<![\w.]\d)\d*(?:[.,]\d+)*(?!\w)")  # (?<![\w.])\d+…: see lx.BARE_NUMBER
_YEAR = re.compile(r"(?<!\d)(?:1[89]|20)\d\d(?!\d)")
_QUOTED = re.compile(r"'[^']+'|\"[^\"]+\"")
_FORMAT_MASK = re.compile(r"^(?=.*[:./])(?:(?:hh|mm|ss|dd|yy|yyyy|m|s|h|d|mmm)[:./ -]?)+$")
_CODE_TEXT = re.compile(r"[=<>()]")
_WORDS = re.compile(r"[^\W\d_]+(?:[ '-][^\W\d_]+)*")
_SHORT_CODE = re.compile(r"[^\W\d_]{1,3}")
_DATE_START = re.compile(r"(?:1[89]|20)\d\d-\d\d")


@dataclass
class EnrichmentResult:
    """The verdict of the enrichment check: ``consistent`` is True when no finding."""

    consistent: bool
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"consistent": self.consistent, "findings": [f.to_dict() for f in self.findings]}


@dataclass
class _Text:
    """A text prepared for coverage tests: its words and its numbers."""

    low: str
    words: list[str]
    numbers: set[str]

    @classmethod
    def of(cls, text: str) -> _Text:
        low = " ".join(text.casefold().split())
        numbers = {n for n in (normalize_number(m.group(0)) for m in _NUMBER.finditer(low)) if n}
        return cls(low, list(text_words(text.casefold())), numbers)  # the words of ``low``

    @cached_property
    def pool(self) -> WordPool:
        return WordPool(self.words)

    def states(self, value: str, literals: list[str], bound: bool = False) -> bool:
        """Is a normalised value stated here, or related to one of ``literals``? A ``bound``
        (the value of ``>``, ``<=`` …) may move by one: "more than 10" is ">= 11"."""
        v = value.strip("%").strip()
        if not v or word_in(v, self.low):
            return True
        if _is_number(v):
            return any(_near(v, n) for n in self.numbers) if bound else v in self.numbers
        if _is_date(v):
            return self._states_date(v, literals)
        words = word_tokens(v)
        long_words = [w for w in words if len(w) > 2 or w.isdigit()]
        if words and all(self._has_word(w) for w in (long_words or words)):
            return True
        return any(related_values(v, lit.strip("%")) for lit in literals)

    def _states_date(self, v: str, literals: list[str]) -> bool:
        """A date or month is stated by the same date, a date inside it, or its year alone
        ("2005-09" vs ``YEAR(date) = 2005``) unless another date of that year is given."""
        dates = [lit for lit in literals if _is_date(lit)]
        if any(lit.startswith(v) or v.startswith(lit) for lit in dates):
            return True
        same_year = [lit for lit in dates if lit[:4] == v[:4]]
        return not same_year and (v[:4] in self.numbers or v[:4] in literals)

    def _has_word(self, w: str) -> bool:
        if w.isdigit():
            return w in self.numbers or any(n.startswith(w) and len(n) >= 6 for n in self.numbers)
        if len(w) <= 2:  # an abbreviation: "f" for female, "po" for post office
            content = [x for x in self.words if not x.isdigit() and x not in _NOT_TOPIC]
            return w in "".join(x[0] for x in content) or any(x.startswith(w) for x in content)
        return self.pool.has(w)


def _is_date(v: str) -> bool:
    return bool(_DATE_START.match(v))


def _is_number(v: str) -> bool:
    return normalize_number(v) is not None


def _near(a: str, b: str) -> bool:
    """Numbers within one of each other: "more than 10" restated as ">= 11"."""
    try:
        return abs(float(a) - float(b)) <= 1
    except ValueError:
        return False


def _finding(kind: str, message: str, nl: str | None = None) -> Finding:
    return Finding(kind, "warning", message, nl or None, None, _RULE)


def _mapping_of(f: Filter, mappings: list[Mapping]) -> Mapping | None:
    return next((m for m in mappings if f in m.filters), None)


def _is_code_filter(f: Filter) -> bool:
    """A filter Q_e wrote as code (``BountyAmount = 50``), not one read from its prose."""
    return bool(_CODE_TEXT.search(f.text))


_WORD_CHAR = re.compile(r"\w")


def _is_code_value(v: str) -> bool:
    return v in lx.CODE_VALUES or not _WORD_CHAR.search(v) or bool(_FORMAT_MASK.match(v.strip("%")))


_DIGIT_OR_CAPITAL = re.compile(r"\d|(?<=\s)[A-Z]")


def _names_entity(phrase: str) -> bool:
    """A hint phrase that names something itself: a quoted string, a number, a capital."""
    return bool(_QUOTED.search(phrase) or _DIGIT_OR_CAPITAL.search(phrase))


def _years(values: tuple[str, ...]) -> set[str]:
    return {y for v in values for y in _YEAR.findall(v)}


def _restated(q: TextAnalysis, e: TextAnalysis) -> bool:
    """Is Q_e a reformulation of Q_u: a request sharing a quarter of the question's topic
    words (its values, cue words and dates left out, since those are what may drift)?"""
    if e.style != "restatement":
        return False
    values = {w for f in q.spec.filters for v in f.values for w in word_tokens(v)}
    words = {
        w
        for w in word_tokens(q.text.casefold())
        if len(w) > 2 and w.isalpha() and w not in values and w not in _NOT_TOPIC
    }
    if not words:
        return True
    e_words = WordPool(word_tokens(e.text.casefold()))
    shared = sum(1 for w in words if e_words.has(w))
    return shared / len(words) >= 0.25


def _dropped(q: TextAnalysis, e: TextAnalysis, restated: bool) -> list[tuple[str, Finding]]:
    """Question values Q_e drops (restatement) or replaces with another year (hints)."""
    out: list[tuple[str, Finding]] = []
    if not any(f.values for f in q.spec.filters):
        return out  # no value to drop: the enrichment need not be read
    et = _Text.of(e.text)
    mapped = {f for m in e.mappings for f in m.filters}
    e_years = sorted(
        {
            y
            for f in e.spec.filters
            if restated or (_is_code_filter(f) and f not in mapped)
            for y in _years(f.values)
        }
    )
    seen: set[str] = set()
    for f in q.spec.filters:
        for v in f.values:
            if v in seen or et.states(v, e.spec.literals, f.op in _BOUNDS):
                continue
            seen.add(v)
            if restated:
                message = f"the question states {v!r}; the enrichment drops it"
                out.append((v, _finding("enrichment_dropped_value", message, f.text)))
            elif _years((v,)) and e_years:
                message = f"the question states {v!r}; the enrichment uses {', '.join(e_years)}"
                out.append((v, _finding("enrichment_changed_value", message, f.text)))
    return out


def _remapped_years(e: TextAnalysis) -> list[Finding]:
    """Hints that restate a question phrase's year with another year."""
    out: list[Finding] = []
    for m in e.mappings:
        said = set(_YEAR.findall(m.phrase))
        got = {y for f in m.filters for y in _years(f.values)}
        exact = any(f.op in {"=", "between", "in"} for f in m.filters)
        if (
            said
            and got
            and not said & got
            and (exact or not any(_near(a, b) for a in said for b in got))
        ):
            out.append(
                _finding(
                    "enrichment_changed_value",
                    f"the enrichment maps {m.phrase!r} to year {', '.join(sorted(got))}: "
                    f"{m.text!r}",
                    m.phrase,
                )
            )
    return out


def _invented(q: TextAnalysis, e: TextAnalysis, restated: bool) -> list[tuple[str, Finding]]:
    """Q_e filters on values the question never states nor implies."""
    out: list[tuple[str, Finding]] = []
    if not e.spec.filters:
        return out  # no filter to invent a value: the question need not be read
    qt = _Text.of(q.text)
    # a hint grounded in the question grounds the words it maps to ("active loan refers to
    # running contracts" grounds "Status = 'C' stands for running contract")
    q_pool = text_pool(q.text)
    hint_words = [
        w
        for hint in e.mappings
        if grounded(hint.phrase, q_pool) or hint.phrase.casefold() in qt.low
        for w in word_tokens(hint.text.casefold())
    ]
    if hint_words:
        q_pool = WordPool(qt.words + hint_words)
    per_column: dict[str, int] = {}
    for hint in e.mappings:
        for f in hint.filters:
            if f.column:
                per_column[f.column] = per_column.get(f.column, 0) + 1
    q_has_year = any(_years(f.values) for f in q.spec.filters)
    seen: set[str] = set()
    for f in e.spec.filters:
        if q_has_year and (f.func == "year" or _is_date(f.values[0] if f.values else "")):
            continue  # years are compared by _dropped
        m = _mapping_of(f, e.mappings)
        if m is not None and (grounded(m.phrase, q_pool) or m.phrase.casefold() in qt.low):
            continue  # a stated mapping of a question phrase
        if m is not None and (
            per_column.get(f.column or "", 0) >= 3 or not _names_entity(m.phrase)
        ):
            continue  # a code table, or a hint on something the question does not mention
        if m is None and not restated and not _is_code_filter(f):
            continue  # prose notes
        for v in f.values:
            if v in seen or _is_code_value(v) or qt.states(v, q.spec.literals, f.op in _BOUNDS):
                continue
            seen.add(v)
            message = (
                f"the enrichment filters on {v!r} ({f.text!r}), which the question never states"
            )
            out.append((v, _finding("enrichment_invented_value", message)))
    return out


def _unpaired(
    dropped: list[tuple[str, Finding]], invented: list[tuple[str, Finding]]
) -> list[Finding]:
    """Drop each dropped word that an invented short code replaces: "Germany" restated as
    ``country = 'DE'`` is a mapping, "Germany" restated as "France" is not."""
    words = [
        i
        for i, (v, f) in enumerate(dropped)
        if f.kind == "enrichment_dropped_value" and _WORDS.fullmatch(v)
    ]
    codes = [i for i, (v, _) in enumerate(invented) if _SHORT_CODE.fullmatch(v)]
    pairs = min(len(words), len(codes))
    gone_d, gone_i = set(words[:pairs]), set(codes[:pairs])
    return [f for i, (_, f) in enumerate(dropped) if i not in gone_d] + [
        f for i, (_, f) in enumerate(invented) if i not in gone_i
    ]


def _agg_text(t: TextAnalysis, funcs: set[str]) -> str:
    return ", ".join(a.text for a in t.spec.aggregations if a.func in funcs)


def _aggregation(q: TextAnalysis, e: TextAnalysis, restated: bool) -> list[Finding]:
    """A count asked for and a sum given (or the reverse); a dropped aggregate."""
    if q.spec.flags.get("ratio") or e.spec.flags.get("ratio"):
        return []
    qa = {a.func for a in q.spec.aggregations} & _AGG_KINDS
    mapped = {a for m in e.mappings for a in m.aggregations}
    ea = {a.func for a in e.spec.aggregations if restated or a not in mapped} & _AGG_KINDS
    if not qa:
        return []
    if ea and not qa & ea:
        return [
            _finding(
                "enrichment_aggregation_changed",
                f"the question asks for {'/'.join(sorted(qa))}; the enrichment computes "
                f"{'/'.join(sorted(ea))} ({_agg_text(e, ea)!r})",
                _agg_text(q, qa),
            )
        ]
    if restated and not e.spec.aggregations:
        return [
            _finding(
                "enrichment_aggregation_changed",
                f"the question asks for {'/'.join(sorted(qa))}; the enrichment asks for none",
                _agg_text(q, qa),
            )
        ]
    return []


def _topk(q: TextAnalysis, e: TextAnalysis, restated: bool) -> list[Finding]:
    """A different number of rows asked for."""
    ql, el = q.spec.limit, e.spec.limit
    q_cue = q.spec.order_by[0].text if q.spec.order_by else None
    if ql is not None and el is not None and ql != el and (restated or min(ql, el) > 1):
        return [
            _finding(
                "enrichment_topk_changed",
                f"the question asks for {ql} rows; the enrichment for {el}",
                q_cue,
            )
        ]
    if not restated or (ql is None) == (el is None):
        return []
    if el is not None:
        return [
            _finding(
                "enrichment_topk_changed",
                f"the enrichment asks for the top {el}; the question for no top-k",
            )
        ]
    if ql == 1 and any(a.func in {"max", "min"} for a in e.spec.aggregations):
        return []
    return [
        _finding(
            "enrichment_topk_changed",
            f"the question asks for the top {ql}; the enrichment drops it",
            q_cue,
        )
    ]


def _distinct(q: TextAnalysis, e: TextAnalysis, restated: bool) -> list[Finding]:
    if not (restated and q.spec.distinct and not e.spec.distinct):
        return []
    cue = next(
        (c for c in q.spec.cues if c.casefold() in {"different", "distinct", "unique"}), None
    )
    return [
        _finding(
            "enrichment_distinct_changed",
            "the question asks for distinct things; the enrichment drops it",
            cue,
        )
    ]


#: An enrichment that widens a set to all of it: ``all tickets``, ``every order``.
_WIDENING = re.compile(r"\b(?:all|every|any)\s+(?:of\s+)?(?:the\s+)?(?P<noun>[a-z][a-z-]{2,})")
_PAIR = re.compile(r"\b(?P<q>[a-z][a-z-]{2,})\s+(?P<noun>[a-z][a-z-]{2,})\b")

#: Words before a noun that restrict nothing (quantities, request words, aggregates).
_NOT_QUALIFIERS = lx.PHRASE_STOPS | lx.REQUEST_STOPS | lx.NUMBER_OWNERS | lx._words(
    "many much number count total sum list show give find name return display distinct "
    "different unique same other any some several my our your the those these new"
)


_LOWER_WORDS = re.compile(r"[a-z][a-z-]+")


def _widened(q: TextAnalysis, e: TextAnalysis) -> list[Finding]:
    """A restricting word of the question that the enrichment drops while it widens the
    set to all of it: "open tickets" restated as "all tickets" is drift, not a restatement.

    >>> from stef.nl.spec import analyze_text
    >>> q = analyze_text("How many open tickets are there?", "question")
    >>> [f.message for f in _widened(q, analyze_text("Count all tickets.", "enriched"))]
    ["the question asks for 'open tickets'; the enrichment widens it to 'all tickets'"]
    >>> _widened(q, analyze_text("Count all open tickets.", "enriched"))
    []
    """
    if e.style == "hints":
        return []
    qlow, elow = q.text.casefold(), e.text.casefold()
    kept = {stem(w) for w in _LOWER_WORDS.findall(elow)}
    out: list[Finding] = []
    for w in _WIDENING.finditer(elow):
        noun = stem(w.group("noun"))
        for p in _PAIR.finditer(qlow):
            qualifier = p.group("q")
            if stem(p.group("noun")) != noun or qualifier in _NOT_QUALIFIERS:
                continue
            if stem(qualifier) in kept or qualifier.endswith("ly"):
                continue
            phrase = f"{qualifier} {p.group('noun')}"
            wide = w.group(0)
            message = f"the question asks for {phrase!r}; the enrichment widens it to {wide!r}"
            out.append(_finding("enrichment_dropped_qualifier", message, phrase))
            break
    return out


def check_enrichment(
    question: str,
    enriched: str | None,
    rules: Rules | None = None,
    now: datetime | None = None,
) -> EnrichmentResult:
    """Compare Q_u with Q_e; ``enriched`` None or empty is consistent.

    >>> r = check_enrichment("List the top 5 products of 2023", "List the top 10 products of 2023")
    >>> [(f.kind, f.message) for f in r.findings]
    [('enrichment_topk_changed', 'the question asks for 5 rows; the enrichment for 10')]
    """
    if not enriched or not enriched.strip():
        return EnrichmentResult(True, [])
    q = analyze_text(question or "", "question", rules, now)
    e = analyze_text(enriched, "enriched", rules, now)
    return _compare(q, e)


def check_analyses(texts: TextsAnalysis) -> EnrichmentResult:
    """:func:`check_enrichment` on texts already read (shared with the NL spec's merge).

    >>> from stef.nl.spec import analyze_texts
    >>> check_analyses(analyze_texts("Customers in Germany?", "Customers in France?")).consistent
    False
    """
    if texts.enriched is None:
        return EnrichmentResult(True, [])
    return _compare(texts.question, texts.enriched)


def _compare(q: TextAnalysis, e: TextAnalysis) -> EnrichmentResult:
    restated = _restated(q, e)
    findings = [
        *_unpaired(_dropped(q, e, restated), _invented(q, e, restated)),
        *_remapped_years(e),
        *_aggregation(q, e, restated),
        *_topk(q, e, restated),
        *_distinct(q, e, restated),
        *_widened(q, e),
    ]
    return EnrichmentResult(not findings, findings)

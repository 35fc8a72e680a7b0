"""Deterministic NL spec extractor: what a question (Q_u) and its enrichment (Q_e) ask for.

No LLM, no schema: cue lexicons (:mod:`stef.nl.lexicon`) and precompiled regexes over the
natural-language text. Pure: the same text, rules and ``now`` give the same spec; relative
dates ("last year") resolve against ``now`` (the record's timestamp) and stay unresolved
without it. An enrichment is read as hints (``women refers to SEX = 'F'``: a
:class:`stef.nl.context.Mapping`) or, when it has none, as a restated question.

This module is the orchestrator: :func:`analyze_text` runs the reading steps in order, and
:func:`merge_analyses` merges Q_u's analysis with Q_e's. The steps live by cue family:
:mod:`stef.nl.code` (code in a text), :mod:`stef.nl.hints` (Q_e hints),
:mod:`stef.nl.values` (quoted and capitalised values, numbers), :mod:`stef.nl.dates`
(dates and periods), :mod:`stef.nl.cues` (order, top-k, superlatives, aggregations,
grouping, flags), on top of :mod:`stef.nl.context` (the reading context) and
:mod:`stef.nl.words` (word-level helpers).

>>> s = extract_text_spec("List the top 5 customers in Germany with more than 10 orders in 2023.")
>>> s.limit, [(f.column, f.op, f.values, f.func) for f in s.filters]
(5, [(None, '=', ('germany',), None), (None, '>', ('10',), None), (None, '=', ('2023',), 'year')])
>>> m = extract_nl_spec("How many women were born in 1980?",
...                     "women refers to SEX = 'F'; born in 1980 refers to YEAR(Birthday) = 1980")
>>> [(f.column, f.values, f.func) for f in m.filters]
[('sex', ('f',), None), ('birthday', ('1980',), 'year')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property, lru_cache

from stef.nl import hint_patterns as hp
from stef.nl import lexicon as lx
from stef.nl.code import _scan_code
from stef.nl.context import TextAnalysis, _Ctx, _rules_lexicon, _RulesLexicon, adjacent_keys
from stef.nl.cues import (
    _step_aggregations,
    _step_distinct,
    _step_flags,
    _step_group_by,
    _step_order,
    _step_period_series,
    _step_superlatives,
    _step_topk,
)
from stef.nl.dates import _step_dates, _step_years
from stef.nl.hints import _step_hints
from stef.nl.request import request_projections
from stef.nl.values import (
    _step_answer_format,
    _step_attribute_numbers,
    _step_capitalised,
    _step_code_names,
    _step_comparatives,
    _step_initials,
    _step_quoted,
    _step_synonym_columns,
    _step_value_synonyms,
)
from stef.nl.words import (
    TEXT_CACHE_SIZE,
    _known_index,
    _search_ci,
    grounded,
    opposed,
    phrase_keys,
    plain_ascii,
    related_values,
    text_pool,
    text_words,
    word_tokens,
)
from stef.rules import Rules
from stef.spec import Filter, Spec

#: What a name written as code needs (a ``#``, a ``+``, a dot inside a word) where the text
#: has no digit: :func:`stef.nl.values._step_code_names` runs only then.
_CODE_MARKS = re.compile(r"[#+]|\.\w")
#: Words every top-k cue holds one of ("the top 5", "the bottom 10", "the 3 largest").
_TOPK_WORDS = lx.SUPERLATIVE_WORDS | {"bottom"}

__all__ = [
    "TextsAnalysis",
    "analyze_text",
    "analyze_texts",
    "extract_nl_spec",
    "extract_text_spec",
    "merge_analyses",
]


_DEFAULT_RULES = Rules.model_validate({})


#: Boolean flags every NL spec carries.
FLAGS = (
    "superlative",
    "ratio",
    "division",
    "percent",
    "yes_no",
    "list",
    "list_after",
    "count_question",
    "aggregate_answer",
    "negation",
)


def analyze_text(
    text: str,
    source: str = "question",
    rules: Rules | None = None,
    now: datetime | None = None,
    known_columns: Iterable[str] = (),
    probes: list[str | tuple[int, int]] | None = None,
) -> TextAnalysis:
    """Extract the spec of one text, with its enrichment hints and style.

    ``known_columns`` are column names from elsewhere (Q_e) that may be attached to this
    text's values and aggregation arguments. A ``probes`` list gets the reading's column
    look-ups (see :attr:`stef.nl.context._Ctx.probes`).

    >>> a = analyze_text("male refers to SEX = 'M'; average age refers to AVG(age)", "enriched")
    >>> a.style, [(m.phrase, m.columns) for m in a.mappings], [x.func for x in a.spec.aggregations]
    ('hints', [('male', ('sex',)), ('average age', ('age',))], ['avg'])
    """
    lexicon = _rules_lexicon(rules or _DEFAULT_RULES)
    synonyms = lexicon.synonyms
    ctx = _context(text, source, lexicon, now, known_columns)
    ctx.probes = probes
    norm = ctx.text
    digits = bool(hp.DIGIT.search(norm))
    numeric = digits or ctx.has(lx.NUMBER_WORD_SET)
    style = "question"
    if source == "question":
        if hp.CODE_OPS.search(norm):
            for c in _scan_code(ctx, norm, 0, symbol_only=True):
                ctx.add_column(c)
    else:
        _step_hints(ctx)
        style = "restatement" if not ctx.mappings and _is_request(norm) else "hints"
        if ctx.spec.columns:
            ctx.known = _known_index(synonyms, [*known_columns, *ctx.spec.columns], lexicon.known)
    _step_answer_format(ctx)
    if hp.QUOTE_CHARS.search(norm):
        _step_quoted(ctx)
    if ctx.has(lx.INITIAL_WORDS):
        _step_initials(ctx)
    _step_dates(ctx)
    if numeric:
        _step_comparatives(ctx)
    if digits:
        _step_years(ctx)
    if ctx.has(lx.ORDER_WORDS):
        _step_order(ctx)
    if numeric and ctx.may_have(_TOPK_WORDS):  # every top-k cue holds one whole
        _step_topk(ctx)
    if ctx.has(lx.SUPERLATIVE_WORDS):
        _step_superlatives(ctx)
    if digits:
        _step_attribute_numbers(ctx)
    if style != "hints" and hp.UPPER.search(norm, 1):
        _step_capitalised(ctx)
    if style != "hints" and (digits or _CODE_MARKS.search(norm)):
        _step_code_names(ctx)
    _step_value_synonyms(ctx)
    _step_synonym_columns(ctx)
    if ctx.terms or ctx.has(lx.AGGREGATE_WORDS) or "#" in norm:
        _step_aggregations(ctx)
    if ctx.has(lx.DISTINCT_WORDS):
        _step_distinct(ctx)
    if ctx.has(lx.GROUP_WORDS):
        _step_group_by(ctx)
    _step_period_series(ctx)
    _step_flags(ctx, style)
    if style != "hints":
        ctx.spec.projections = request_projections(norm)
    for k in FLAGS:
        ctx.spec.flags.setdefault(k, False)
    ctx.spec.filters.sort(key=lambda f: _position(norm, f))
    return TextAnalysis(ctx.spec, style, norm, ctx.mappings)


def _context(
    text: str,
    source: str,
    lexicon: _RulesLexicon,
    now: datetime | None,
    known_columns: Iterable[str],
) -> _Ctx:
    """The reading context of one text: normalised, case-folded, nothing taken yet."""
    norm, low = _normalized(text)
    ctx = _Ctx(
        text=norm,
        low=low,
        source=source,
        synonyms=lexicon.synonyms,
        values=lexicon.values,
        terms=lexicon.terms,
        now=now,
        known=_known_index(lexicon.synonyms, known_columns, lexicon.known),
        mask=bytearray(len(norm)),
        lexicon=lexicon,
    )
    ctx.words = _word_set(low)
    ctx.ascii = plain_ascii(norm)
    return ctx


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _word_set(low: str) -> frozenset[str]:
    return frozenset(text_words(low))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _normalized(text: str | None) -> tuple[str, str]:
    """The text as read (same-length rewrites) and its case-folded twin, position for
    position (memoised: a question is read alone, then perhaps with Q_e's columns)."""
    text = text or ""
    if not text.isascii():  # TRANSLATE rewrites only non-ASCII characters
        text = text.translate(lx.TRANSLATE)
    norm = lx.SPLIT_OPS.sub(lambda m: m.group(1) + "= ", text)
    low = norm.casefold()
    if len(low) != len(norm):  # a few characters change length when case-folded
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in norm)
    return norm, low


def _is_request(text: str) -> bool:
    """Does a text read like a question or a request (a restated question), not notes? A
    description of what the query returns ("Returns the latest suggested edits …", "This
    query lists …") restates the question as well.

    >>> _is_request("Returns the latest edits by anonymous users."), _is_request("Nice!")
    (True, False)
    """
    if _search_ci(hp.HINT_STYLE, text):
        return False
    words = word_tokens(text.casefold())[:3]
    if words[:2] == ["this", "query"]:
        words = words[2:]
    first = (words or [""])[0]
    return text.rstrip().endswith("?") or first in lx.REQUEST_OPENERS or first in _DESCRIBES


#: Verbs a description of the query opens with ("Returns …", "This query lists …").
_DESCRIBES = lx._words(
    "returns shows lists finds gets displays retrieves fetches selects counts calculates "
    "computes gives provides"
)


def _position(text: str, f: Filter) -> int:
    i = text.find(f.text) if f.text else -1
    return i if i >= 0 else len(text)


def extract_text_spec(
    text: str, source: str = "question", rules: Rules | None = None, now: datetime | None = None
) -> Spec:
    """The spec of one text; every filter's ``clause`` is ``source``.

    >>> s = extract_text_spec("What is the average salary of employees hired since 2020?")
    >>> [(a.func, a.text) for a in s.aggregations], [(f.op, f.values, f.func) for f in s.filters]
    ([('avg', 'average salary')], [('>=', ('2020',), 'year')])
    """
    return analyze_text(text, source, rules, now).spec


def extract_nl_spec(
    question: str,
    enriched: str | None = None,
    rules: Rules | None = None,
    now: datetime | None = None,
) -> Spec:
    """The merged spec of Q_u and Q_e (see :func:`merge_analyses`).

    >>> s = extract_nl_spec("Customers in Germany?", "Germany refers to country = 'Germany'")
    >>> [(f.column, f.values, f.clause) for f in s.filters]
    [('country', ('germany',), 'enriched')]
    """
    if not enriched or not enriched.strip():
        return extract_text_spec(question, "question", rules, now)
    e = analyze_text(enriched, "enriched", rules, now)
    q = analyze_text(question, "question", rules, now, known_columns=_hint_columns(e))
    return merge_analyses(q, e)


def _hint_columns(e: TextAnalysis) -> list[str]:
    """The columns an enrichment names, which the question's values may attach to."""
    return [*e.spec.columns, *(c for mp in e.mappings for c in mp.columns)]


@dataclass(frozen=True)
class TextsAnalysis:
    """Q_u and Q_e of one record, each read once, for merging and the enrichment check.

    ``question`` is Q_u read alone (what :func:`stef.nl.enrichment.check_analyses` compares);
    ``hinted`` is Q_u read with the columns Q_e's hints name (what merging uses; the same
    object as ``question`` when the question cannot name one of them, see
    :func:`_may_look_up`); ``enriched`` is None for a blank Q_e.
    """

    question: TextAnalysis
    enriched: TextAnalysis | None
    hinted: TextAnalysis

    # Written out, not generated by @dataclass: mypyc compiles it (docs/performance.md).
    def __init__(
        self,
        question: TextAnalysis,
        enriched: TextAnalysis | None,
        hinted: TextAnalysis,
    ) -> None:
        object.__setattr__(self, "question", question)
        object.__setattr__(self, "enriched", enriched)
        object.__setattr__(self, "hinted", hinted)

    def merged(self) -> Spec:
        """The merged NL spec, as :func:`extract_nl_spec` gives it: merged once per
        analysis (an evaluator reuses analyses of the same texts), and each call gets a
        copy that shares no list or dict with the others."""
        if self.enriched is None:
            return self.question.spec
        return _fresh(self._merged)

    @cached_property
    def _merged(self) -> Spec:
        assert self.enriched is not None
        return merge_analyses(self.hinted, self.enriched)


def _fresh(spec: Spec) -> Spec:
    """A copy of ``spec`` with its own lists and dicts (the items in them are frozen).

    >>> s = Spec(columns=["a"], joins=[{"type": "inner"}])
    >>> c = _fresh(s)
    >>> c == s, c.columns is s.columns, c.joins[0] is s.joins[0], c.flags is s.flags
    (True, False, False, False)
    """
    # every field through the constructor: a Spec compiled with mypyc has no __dict__ to
    # fill and refuses object.__new__ (docs/performance.md, session 17)
    return Spec(
        projections=spec.projections.copy(),
        aggregations=spec.aggregations.copy(),
        filters=spec.filters.copy(),
        group_by=spec.group_by.copy(),
        order_by=spec.order_by.copy(),
        limit=spec.limit,
        offset=spec.offset,
        distinct=spec.distinct,
        set_operations=spec.set_operations.copy(),
        window_functions=spec.window_functions.copy(),
        window_aggregations=spec.window_aggregations.copy(),
        subqueries=spec.subqueries,
        ctes=spec.ctes,
        tables=spec.tables.copy(),
        joins=[dict(j) for j in spec.joins],
        columns=spec.columns.copy(),
        literals=spec.literals.copy(),
        formulas=spec.formulas.copy(),
        cues=spec.cues.copy(),
        flags=spec.flags.copy(),
    )


def analyze_texts(
    question: str,
    enriched: str | None = None,
    rules: Rules | None = None,
    now: datetime | None = None,
) -> TextsAnalysis:
    """Read Q_u and Q_e once for both :func:`extract_nl_spec` and the enrichment check.

    >>> a = analyze_texts("How many women?", "women refers to SEX = 'F'")
    >>> [(f.column, f.values) for f in a.merged().filters], a.hinted is a.question
    ([('sex', ('f',))], True)
    >>> a = analyze_texts("List the birth date of women", "birth date refers to Birth_Date")
    >>> a.hinted is a.question  # no look-up of the question reads "birth date"
    True
    >>> a = analyze_texts("The average birth date of women", "birth date refers to Birth_Date")
    >>> a.hinted is a.question, a.hinted.spec.aggregations[0].arg
    (False, 'birth_date')
    """
    probes: list[str | tuple[int, int]] = []
    q = analyze_text(question, "question", rules, now, probes=probes)
    if not enriched or not enriched.strip():
        return TextsAnalysis(q, None, q)
    e = analyze_text(enriched, "enriched", rules, now)
    columns = _hint_columns(e)
    hinted = q
    lexicon = _rules_lexicon(rules or _DEFAULT_RULES)
    if (
        columns
        and _may_look_up(question, columns, lexicon)
        and _probed(question, probes, columns, lexicon)
    ):
        hinted = analyze_text(question, "question", rules, now, known_columns=columns)
    return TextsAnalysis(q, e, hinted)


def _probed(
    question: str,
    probes: list[str | tuple[int, int]],
    columns: list[str],
    lexicon: _RulesLexicon,
) -> bool:
    """Did reading ``question`` look up a spelling that ``columns`` add to the known-column
    index? Up to its first such look-up, a reading with ``columns`` known does and finds
    exactly what the reading without them did (the index keeps the spellings it had), so
    without one the two readings are the same.

    >>> lex, q = _rules_lexicon(_DEFAULT_RULES), "patients whose age is 30"
    >>> _probed(q, ["whose"], ["age"], lex), _probed(q, ["the patients"], ["patient"], lex)
    (False, True)
    >>> _probed(q, [(22, 24)], ["age"], lex), _probed(q, [(22, 24)], ["sex"], lex)
    (True, False)
    """
    base = lexicon.known
    added = _known_index(lexicon.synonyms, columns, base).keys() - base.keys()
    low = _normalized(question)[1]
    for p in probes:
        keys = phrase_keys(p) if isinstance(p, str) else adjacent_keys(low, *p)
        if any(k in added for k in keys):
            return True
    return False


def _may_look_up(question: str, columns: list[str], lexicon: _RulesLexicon) -> bool:
    """Could reading ``question`` look up a spelling that ``columns`` add to the known-column
    index? Every look-up is a run of the question's words (perhaps less a final "s"), so
    a spelling with a word absent from the question is never looked up: without such a
    spelling, reading it with ``columns`` known gives the very same analysis.

    >>> lex = _rules_lexicon(_DEFAULT_RULES)
    >>> _may_look_up("How many female patients?", ["sex"], lex)
    False
    >>> _may_look_up("List each patient's birth date", ["Birth_Date"], lex)
    True
    """
    base = lexicon.known
    low = _normalized(question)[1]
    added = _known_index(lexicon.synonyms, columns, base).keys() - base.keys()
    return any(all(w in low for w in k.split()) for k in added)


def _phrase_in(phrase: str, spaced: str) -> bool:
    """Is ``phrase`` in ``spaced`` (a text case-folded, its spaces collapsed to one)?"""
    p = " ".join(phrase.casefold().strip(" '\"").split())
    return bool(p) and p in spaced


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DISTINCT_WORD = re.compile(r"\bdistinct\b", re.I)
_FORMULA_MARK = re.compile(r"[<>*/+]")


def _supersede(qf: Filter, e: TextAnalysis, values: frozenset[str]) -> Filter | None:
    """The question filter as the merged spec keeps it: None when Q_e restates it with more
    detail (a hint on its phrase, or the same value with a column), else with the column a
    column-only hint gives it, unless that column is one of the question's ``values``."""
    qtext = " ".join(qf.text.casefold().split())
    column = qf.column
    for mp in e.mappings:
        phrase = " ".join(mp.phrase.casefold().split())
        if not qtext or not (
            qtext in phrase or (qf.values and all(v in phrase for v in qf.values))
        ):
            continue
        if mp.filters:
            return None
        if (
            mp.columns
            and qtext != phrase
            and not mp.aggregations
            and not _FORMULA_MARK.search(mp.text)
            and all(_NUMBER.fullmatch(v) for v in qf.values)
        ):
            return None  # "grades 1 through 12 refers to `Enrollment (K-12)`": a name's number
        if (
            len(mp.columns) == 1
            and column is None
            and mp.columns[0].casefold() not in values
            and set(_NUMBER.findall(phrase)) <= set(_NUMBER.findall(qtext))
        ):  # not a value the question states ("ANA", "LAM") as a column, nor a word of a
            column = mp.columns[0]  # phrase whose own number is the condition ("SAT … 1500")
    if _restating(qf, e, column) is not None:
        return None
    return replace(qf, column=column, cue=qf.cue if column is None else None)


def _restating(qf: Filter, e: TextAnalysis, column: str | None) -> Filter | None:
    """The filter of Q_e that restates question filter ``qf`` (same operator, function and
    values, with a column, or the very values), if any."""
    for ef in e.spec.filters:
        if ef.op != qf.op or ef.func != qf.func or len(ef.values) != len(qf.values):
            continue
        if (ef.column is None and column is not None) or not all(
            related_values(a, b) for a, b in zip(qf.values, ef.values, strict=True)
        ):
            continue
        if ef.column is not None or ef.values == qf.values:
            return ef
    return None


def merge_analyses(q: TextAnalysis, e: TextAnalysis) -> Spec:
    """Merge a question's analysis with its enrichment's.

    Q_e's column hints attach to Q_u's values; a question filter that a Q_e hint restates
    (``"Germany refers to country = 'Germany'"``) gives way to the hint's filter; hints
    whose phrase the question never uses (a glossary of codes) add no filter; filters are
    deduplicated by (column, op, values, func), preferring the one with a column. Only a
    restated question adds an order or a top-k of its own.
    """
    qs, es = q.spec, e.spec
    q_words = text_pool(q.text)
    spaced = " ".join(q.text.casefold().split())
    glossary = {
        f
        for mp in e.mappings
        if mp.filters
        and (
            (not grounded(mp.phrase, q_words) and not _phrase_in(mp.phrase, spaced))
            or opposed(mp.phrase, q.text)  # "normal" defined, "abnormal" asked
        )
        for f in mp.filters
    }
    # a hint's filter the question restates ("no more than 2" beside a formula's
    # "AnswerCount <= 2") is asked, whatever the phrase its hint defines
    glossary -= {ef for qf in qs.filters if (ef := _restating(qf, e, qf.column)) is not None}
    out = Spec()
    values = frozenset(v for qf in qs.filters for v in qf.values)
    kept = [f for f in (_supersede(qf, e, values) for qf in qs.filters) if f is not None]
    for f in [*kept, *(f for f in es.filters if f not in glossary)]:
        if f not in out.filters:
            out.filters.append(f)
    with_col = {(f.op, f.values, f.func) for f in out.filters if f.column is not None}
    out.filters = [
        f for f in out.filters if f.column is not None or (f.op, f.values, f.func) not in with_col
    ]

    for qa in qs.aggregations:
        hint = next((ea for ea in es.aggregations if ea.func == qa.func and ea.arg), None)
        agg = (
            replace(qa, arg=hint.arg, distinct=qa.distinct or hint.distinct)
            if hint and not qa.arg
            else qa
        )
        if agg not in out.aggregations:
            out.aggregations.append(agg)
    out.aggregations += [
        ea
        for ea in es.aggregations
        if not any(a.func == ea.func and a.arg == ea.arg for a in out.aggregations)
    ]
    out.group_by = list(dict.fromkeys([*qs.group_by, *es.group_by]))
    out.projections = list(qs.projections)
    if e.style == "restatement":
        out.projections += [p for p in es.projections if p not in out.projections]
    out.order_by = list(qs.order_by)
    out.limit, out.offset = qs.limit, qs.offset
    if e.style == "restatement":  # the ranking of hints' prose is commentary, not a request
        out.order_by += [
            eo for eo in es.order_by if not any(o.direction == eo.direction for o in qs.order_by)
        ]
        out.limit = qs.limit if qs.limit is not None else es.limit
        out.offset = qs.offset if qs.offset is not None else es.offset
    # "different" in a description's prose ("are different deleted users") asks for nothing;
    # a restated question's does, and so does a hint that says "distinct"
    out.distinct = qs.distinct or (
        es.distinct and (e.style == "restatement" or _DISTINCT_WORD.search(e.text) is not None)
    )
    out.columns = list(dict.fromkeys([*qs.columns, *es.columns]))
    out.literals = list(dict.fromkeys([*qs.literals, *es.literals]))
    out.formulas = list(dict.fromkeys([*qs.formulas, *es.formulas]))
    out.cues = list(dict.fromkeys([*qs.cues, *es.cues]))
    out.flags = {
        k: bool(qs.flags.get(k))
        if k in {"yes_no", "list", "aggregate_answer", "period_series"}
        else bool(qs.flags.get(k) or es.flags.get(k))
        for k in sorted(set(qs.flags) | set(es.flags))
        if k != "distinct_counts"
    }
    out.flags["distinct_counts"] = int(qs.flags.get("distinct_counts", 0))
    return out

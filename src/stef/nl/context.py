"""The reading context of the NL extractor and the shapes it fills.

:class:`_Ctx` is one text being read (its spec so far and the characters already consumed);
every step module (:mod:`stef.nl.code`, :mod:`~stef.nl.hints`, :mod:`~stef.nl.values`,
:mod:`~stef.nl.dates`, :mod:`~stef.nl.cues`) reads and fills it. :class:`_RulesLexicon` is
what a set of rules contributes, built once per rules object. :class:`Mapping` and
:class:`TextAnalysis` are the results :func:`stef.nl.spec.analyze_text` returns. Also here:
the two column look-ups that need the context (:func:`_adjacent_column`, :func:`_order_key`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime

from stef.nl import lexicon as lx
from stef.nl.words import (
    _known_index,
    _match_column,
    _noun_phrase,
    _prev_words,
    _sentence_span,
)
from stef.rules import Rules
from stef.spec import (
    WEAK_CUE,
    Aggregation,
    Filter,
    Spec,
    normalize_column,
    normalize_value,
)

__all__ = ["Mapping", "TextAnalysis"]


@dataclass(frozen=True)
class Mapping:
    """One enrichment hint: an NL ``phrase`` mapped to columns and/or filters.

    ``"women refers to SEX = 'F'"`` → ``Mapping("women", ("sex",), (Filter("sex", "=", ("f",)),))``.
    """

    phrase: str
    columns: tuple[str, ...] = ()
    filters: tuple[Filter, ...] = ()
    text: str = ""
    aggregations: tuple[Aggregation, ...] = ()


@dataclass
class TextAnalysis:
    """The spec of one text plus what merging and the enrichment check need.

    ``style`` is ``"question"`` for Q_u, ``"hints"`` for an enrichment written as hints
    (``X refers to col = v``), ``"restatement"`` for one that rewrites the question in prose.
    ``text`` is the normalised text the filters' ``text`` fragments come from.
    """

    spec: Spec
    style: str
    text: str
    mappings: list[Mapping] = field(default_factory=list)


@dataclass(frozen=True)
class _RulesLexicon:
    """What every reading with one set of rules needs, derived from the rules once."""

    synonyms: dict[str, str]
    values: dict[str, str]
    terms: dict[str, str]
    known: dict[str, str]  # _known_index of the synonyms alone
    value_rx: re.Pattern[str] | None  # value spellings (2+ characters) as whole words
    synonym_rx: re.Pattern[str] | None  # column synonyms (2+ characters) as whole words
    term_rxs: tuple[tuple[re.Pattern[str], str], ...]  # term_functions as whole words
    context: frozenset[str] = frozenset()  # context_terms, case-folded: never filter values

    @classmethod
    def of(cls, rules: Rules) -> _RulesLexicon:
        synonyms, values = rules.synonym_map(), rules.value_map()
        terms = {k.casefold(): v.casefold() for k, v in rules.term_functions.items()}
        return cls(
            synonyms,
            values,
            terms,
            _known_index(synonyms, ()),
            _words_rx([k for k in values if len(k) >= 2]),
            _words_rx([k for k in synonyms if len(k) >= 2]),
            tuple((re.compile(rf"(?<!\w){re.escape(t)}(?!\w)"), f) for t, f in terms.items()),
            rules.context_keys(),
        )


def _words_rx(keys: list[str]) -> re.Pattern[str] | None:
    return re.compile(rf"(?<!\w)(?:{lx.alternation(keys)})(?!\w)") if keys else None


_LEXICONS: dict[int, tuple[Rules, _RulesLexicon]] = {}


def _rules_lexicon(rules: Rules) -> _RulesLexicon:
    """The lexicon of a rules object, built on its first reading (rules are frozen)."""
    hit = _LEXICONS.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    lexicon = _RulesLexicon.of(rules)
    if len(_LEXICONS) >= 16:
        _LEXICONS.clear()
    _LEXICONS[id(rules)] = (rules, lexicon)
    return lexicon


@dataclass
class _Ctx:
    """One text being read: its spec so far and the characters already consumed."""

    text: str
    low: str
    source: str
    synonyms: dict[str, str]
    values: dict[str, str]
    terms: dict[str, str]
    now: datetime | None
    known: dict[str, str]
    mask: bytearray
    lexicon: _RulesLexicon
    words: frozenset[str] = frozenset()
    ascii: bool = False  # ``low`` is plain ASCII: case-insensitive cues run as lower-case twins
    spec: Spec = field(default_factory=Spec)
    mappings: list[Mapping] = field(default_factory=list)
    topk_index: int | None = None  # the top-k's order key, until a superlative names it
    #: When a list, every column look-up of the reading is noted in it: a phrase (see
    #: :meth:`match_column`) or the (start, end) of a value (see :func:`_adjacent_column`).
    probes: list[str | tuple[int, int]] | None = None

    def has(self, words: frozenset[str]) -> bool:
        """Does the text contain one of ``words`` (cheap test before a costly regex)?"""
        return not self.words.isdisjoint(words)

    def may_have(self, words: frozenset[str]) -> bool:
        """:meth:`has` where a word test is exact (ASCII text); True elsewhere."""
        return not self.ascii or not self.words.isdisjoint(words)

    def may_hold(self, *parts: str) -> bool:
        """Does ``low`` hold one of ``parts`` (lower-case), where every match of a cue holds
        one (a cheap test before a costly regex)? True on text that is not plain ASCII,
        where a case-insensitive pattern may match other characters."""
        return not self.ascii or any(p in self.low for p in parts)

    def rx(self, rx: re.Pattern[str]) -> re.Pattern[str]:
        """A case-insensitive pattern to run on ``low`` (or a slice of it): its fast
        case-sensitive twin when the text is ASCII."""
        return lx.folded(rx) if self.ascii else rx

    def scan(
        self, rx: re.Pattern[str], finder: re.Pattern[str] | None = None
    ) -> Iterator[re.Match[str]]:
        """``rx.finditer(text)`` for a case-insensitive ``rx``; on ASCII text the twin
        finds the matches in ``low`` and ``rx`` re-reads each in the text's case.
        ``finder`` stands for the twin: the same spans, in a form the engine scans fast
        (see :meth:`free_matches`)."""
        if not self.ascii:
            yield from rx.finditer(self.text)
            return
        for m in (finder or lx.folded(rx)).finditer(self.low):
            full = rx.match(self.text, m.start())
            assert full is not None and full.end() == m.end()
            yield full

    def search(self, rx: re.Pattern[str], pos: int, endpos: int) -> re.Match[str] | None:
        """``rx.search(text, pos, endpos)`` for a case-insensitive ``rx`` (see :meth:`scan`)."""
        if not self.ascii:
            return rx.search(self.text, pos, endpos)
        m = lx.folded(rx).search(self.low, pos, endpos)
        return rx.match(self.text, m.start(), endpos) if m else None

    def match_column(self, phrase: str) -> str | None:
        """The known column ``phrase`` names (:func:`~stef.nl.words._match_column`)."""
        if self.probes is not None:
            self.probes.append(phrase)
        return _match_column(phrase, self.known)

    def free(self, start: int, end: int) -> bool:
        return self.mask.find(1, start, end) == -1

    def take(self, start: int, end: int) -> None:
        self.mask[start:end] = b"\x01" * (end - start)

    def cue(self, text: str) -> None:
        t = " ".join(text.split())
        if t and t not in self.spec.cues:
            self.spec.cues.append(t)

    def value(self, raw: str) -> str:
        v = normalize_value(raw)
        return self.values.get(v, v)

    def column(self, raw: str) -> str:
        return normalize_column(raw, self.synonyms)

    def add_column(self, col: str) -> None:
        if col and col not in self.spec.columns:
            self.spec.columns.append(col)

    def add_literal(self, v: str) -> None:
        if v and v not in self.spec.literals:
            self.spec.literals.append(v)

    def add_filter(self, f: Filter, start: int = -1, end: int = -1) -> None:
        """Record a filter the text states; one stated in an enrichment's commentary (a
        sentence with ``will``/``would``/``could``/``might``: "anything over 30 answers
        will not fit on a page") describes rather than restates, so its cue is weak."""
        if (
            start >= 0
            and self.source == "enriched"
            and f.cue is None
            and f.column is None
            and _COMMENTARY.search(self.low, *_sentence_span(self.low, start, ".;?!\n"))
        ):
            f = replace(f, cue=WEAK_CUE)
        if f not in self.spec.filters:
            self.spec.filters.append(f)
        for v in f.values:
            self.add_literal(v)
        if f.column:
            self.add_column(f.column)
        self.cue(f.text)
        if start >= 0:
            self.take(start, end)

    def free_matches(
        self, rx: re.Pattern[str], finder: re.Pattern[str] | None = None
    ) -> Iterator[re.Match[str]]:
        """The matches of ``rx`` in ``low`` (its twin's on ASCII text) that start at a
        character not taken. ``finder``, for the twin, matches where it does, with the
        same spans, in a form the regular-expression engine scans fast (each branch opens
        with its first character); the twin then reads each match (docs/performance.md,
        session 17)."""
        if finder is None or not self.ascii:
            for m in self.rx(rx).finditer(self.low):
                if self.mask[m.start()] == 0:
                    yield m
            return
        twin = lx.folded(rx)
        for f in finder.finditer(self.low):
            if self.mask[f.start()] == 0:
                full = twin.match(self.low, f.start())
                assert full is not None and full.end() == f.end()
                yield full


#: Modal verbs of commentary: what will or could happen, not what to select.
_COMMENTARY = re.compile(r"\b(?:will|would|could|might)\b")


def _adjacent_column(ctx: _Ctx, start: int, end: int) -> str | None:
    """A known column named right before a value (``region 'North'``, ``whose country is X``)
    or right after it (``the 'North' territory``). ``the X of V`` names what is asked
    about V, not V's column, so ``of`` is no link."""
    if ctx.probes is not None:
        ctx.probes.append((start, end))
    if not ctx.known:
        return None
    for key in adjacent_keys(ctx.low, start, end):
        if key in ctx.known:
            return ctx.known[key]
    return None


def adjacent_keys(low: str, start: int, end: int) -> Iterator[str]:
    """The spellings :func:`_adjacent_column` looks up for the value at ``low[start:end]``,
    in its order: the last three, two, one words before it, the first two, one after it."""
    prev = _prev_words(low, start, 4)
    while prev and prev[-1] in lx.COLUMN_LINKS:
        prev.pop()
    for size in (3, 2, 1):
        if len(prev) >= size:
            yield " ".join(prev[-size:])
    phrase, _ = _noun_phrase(low, end, 2)
    for size in (2, 1):
        cand = " ".join(phrase.split()[:size])
        if cand:
            yield cand


def _order_key(ctx: _Ctx, phrase: str) -> str:
    """Canonical column for an ordering phrase when known, else its head (last) word."""
    col = ctx.match_column(phrase)
    if col:
        return col
    words = phrase.split()
    return words[-1] if words else phrase

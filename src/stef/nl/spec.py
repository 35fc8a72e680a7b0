"""Deterministic NL spec extractor: what a question (Q_u) and its enrichment (Q_e) ask for.

No LLM, no schema: cue lexicons (:mod:`stef.nl.lexicon`) and precompiled regexes over the
natural-language text. Pure: the same text, rules and ``now`` give the same spec; relative
dates ("last year") resolve against ``now`` (the record's timestamp) and stay unresolved
without it. An enrichment is read as hints (``women refers to SEX = 'F'``: a
:class:`Mapping`) or, when it has none, as a restated question.

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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

from dateutil.relativedelta import relativedelta

from stef.nl import lexicon as lx
from stef.nl.request import request_projections
from stef.rules import Rules
from stef.spec import (
    Aggregation,
    Filter,
    OrderKey,
    Spec,
    normalize_column,
    normalize_number,
    normalize_value,
)

__all__ = [
    "Mapping",
    "TextAnalysis",
    "TextsAnalysis",
    "WordPool",
    "analyze_text",
    "analyze_texts",
    "extract_nl_spec",
    "extract_text_spec",
    "grounded",
    "merge_analyses",
    "related_values",
    "same_word",
    "stem",
    "word_in",
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
    "count_question",
    "negation",
)


# ----------------------------------------------------------------------------- results


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


# ----------------------------------------------------------------------------- context


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
    ascii: bool = False  # ``low`` is ASCII: case-insensitive cues run as lower-case twins
    spec: Spec = field(default_factory=Spec)
    mappings: list[Mapping] = field(default_factory=list)
    topk_index: int | None = None  # the top-k's order key, until a superlative names it

    def has(self, words: frozenset[str]) -> bool:
        """Does the text contain one of ``words`` (cheap test before a costly regex)?"""
        return not self.words.isdisjoint(words)

    def may_have(self, words: frozenset[str]) -> bool:
        """:meth:`has` where a word test is exact (ASCII text); True elsewhere."""
        return not self.ascii or not self.words.isdisjoint(words)

    def rx(self, rx: re.Pattern[str]) -> re.Pattern[str]:
        """A case-insensitive pattern to run on ``low`` (or a slice of it): its fast
        case-sensitive twin when the text is ASCII."""
        return lx.folded(rx) if self.ascii else rx

    def scan(self, rx: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """``rx.finditer(text)`` for a case-insensitive ``rx``; on ASCII text the twin
        finds the matches in ``low`` and ``rx`` re-reads each in the text's case."""
        if not self.ascii:
            yield from rx.finditer(self.text)
            return
        for m in lx.folded(rx).finditer(self.low):
            full = rx.match(self.text, m.start())
            assert full is not None and full.end() == m.end()
            yield full

    def search(self, rx: re.Pattern[str], pos: int, endpos: int) -> re.Match[str] | None:
        """``rx.search(text, pos, endpos)`` for a case-insensitive ``rx`` (see :meth:`scan`)."""
        if not self.ascii:
            return rx.search(self.text, pos, endpos)
        m = lx.folded(rx).search(self.low, pos, endpos)
        return rx.match(self.text, m.start(), endpos) if m else None

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
        if f not in self.spec.filters:
            self.spec.filters.append(f)
        for v in f.values:
            self.add_literal(v)
        if f.column:
            self.add_column(f.column)
        self.cue(f.text)
        if start >= 0:
            self.take(start, end)

    def free_matches(self, rx: re.Pattern[str]) -> Iterator[re.Match[str]]:
        for m in self.rx(rx).finditer(self.low):
            if self.mask[m.start()] == 0:
                yield m


# ----------------------------------------------------------------------------- helpers


@lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """Crude stem for matching words across Q_u and Q_e.

    >>> stem("boxes"), stem("published"), stem("cities")
    ('box', 'publish', 'city')
    """
    w = word.casefold()
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ing", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: len(w) - len(suffix)] + repl
    return w


def same_word(a: str, b: str) -> bool:
    """Equal stems, or one stem (4+ letters) starts the other: ``blond``/``blonde``."""
    if a == b:
        return True
    sa, sb = stem(a), stem(b)
    short, long_ = (sa, sb) if len(sa) <= len(sb) else (sb, sa)
    return sa == sb or (len(short) >= 4 and long_.startswith(short))


class WordPool:
    """The words of a text, for many :func:`same_word` look-ups (stems computed once).

    >>> pool = WordPool("the blonde women".split())
    >>> pool.has("blond"), pool.has("woman"), pool.has("man")
    (True, False, False)
    """

    def __init__(self, words: Iterable[str]) -> None:
        self.words = set(words)
        self.stems = {stem(x) for x in self.words}

    def has(self, word: str) -> bool:
        """Is one of the pool's words :func:`same_word` as ``word``?"""
        if word in self.words:
            return True
        s = stem(word)
        if s in self.stems:
            return True
        for t in self.stems:
            short, long_ = (s, t) if len(s) <= len(t) else (t, s)
            if len(short) >= 4 and long_.startswith(short):
                return True
        return False


def grounded(phrase: str, text_words: Iterable[str] | WordPool) -> bool:
    """Does a hint's NL phrase come from a text (60% of its content words occur there)?

    >>> grounded("double bond", "what is the bond type".split())
    False
    >>> grounded("female patients", "how many female patient".split())
    True
    """
    words = [
        w
        for w in lx.WORD_TOKEN.findall(phrase.casefold())
        if len(w) > 1 and w not in lx.PHRASE_STOPS
    ]
    if not words:
        return False
    pool = text_words if isinstance(text_words, WordPool) else WordPool(text_words)
    hits = sum(1 for w in words if pool.has(w))
    return hits / len(words) >= 0.6


def word_in(phrase: str, text: str, before_only: bool = False) -> bool:
    r"""Does ``phrase`` occur in ``text`` with no word character right before it (nor right
    after it, unless ``before_only``)? ``re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)",
    text)`` without compiling a pattern per phrase.

    >>> word_in("ca", "los angeles, ca"), word_in("ca", "cal"), word_in("ca", "cal", True)
    (True, False, True)
    """
    n = len(phrase)
    i = text.find(phrase)
    while i >= 0:
        if (i == 0 or not _is_word_char(text[i - 1])) and (
            before_only or i + n == len(text) or not _is_word_char(text[i + n])
        ):
            return True
        i = text.find(phrase, i + 1)
    return False


def _is_word_char(c: str) -> bool:
    r"""Regex ``\w`` for one character."""
    return c.isalnum() or c == "_"


def related_values(a: str, b: str) -> bool:
    """Do two normalised values name the same thing: equal, one starting a word of the other
    (``'alameda'``/``'alameda county'``), or one the initials of the other (``'us'``)?

    >>> related_values("alameda", "alameda county"), related_values("us", "united states")
    (True, True)
    """
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if not short or normalize_number(short) is not None or normalize_number(long_) is not None:
        return False
    if len(short) >= 3 and word_in(short, long_, before_only=True):
        return True
    words = long_.split()
    return len(words) > 1 and short.replace(" ", "") == "".join(w[0] for w in words)


def _parse_number(text: str) -> tuple[str, bool] | None:
    """``"$1,000"`` → ``("1000", False)``; ``"20 %"`` → ``("20", True)``."""
    m = lx.NUM_TEXT.match(text.strip())
    if not m:
        return None
    raw = m.group("n").casefold()
    num = str(lx.NUMBER_WORDS[raw]) if raw in lx.NUMBER_WORDS else normalize_number(raw)
    if num is None:
        return None
    if m.group("mult"):
        val = float(num) * lx.MULTIPLIERS[m.group("mult").casefold()]
        num = normalize_number(str(int(val)) if val.is_integer() else str(val)) or num
    return num, bool(m.group("pct"))


def _noun_phrase(low: str, start: int, max_words: int = 3) -> tuple[str, int]:
    """Up to ``max_words`` words from ``start`` (determiners skipped) until a stop word."""
    words: list[str] = []
    pos = end = start
    for m in lx.LOW_WORD.finditer(low, start):
        if low[pos : m.start()].strip() not in {"", "-"}:
            break
        w = m.group(0).rstrip("'")
        possessive = w.endswith("'s")
        w = w.removesuffix("'s")
        pos = m.end()
        if not words and w in lx.DETERMINERS:
            continue
        if w in lx.PHRASE_STOPS or w.isdigit() or (words and _is_participle(w)):
            break
        words.append(w)
        end = m.end()
        if len(words) >= max_words or possessive:
            break
    return " ".join(words), end


def _is_participle(word: str) -> bool:
    """``made``, ``published``, ``taught``: a verb form that ends a noun phrase."""
    regular = len(word) >= 5 and word.endswith("ed") and not word.endswith("eed")
    return regular or word in lx.IRREGULAR_PARTICIPLES


def _prev_words(low: str, pos: int, n: int = 3) -> list[str]:
    return lx.PREV_WORD.findall(low, max(0, pos - 60), pos)[-n:]


def _search_ci(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``rx.search(text)`` for a case-insensitive ``rx``: on ASCII text its twin finds the
    match in ``text.lower()`` and ``rx`` re-reads it in the text's case."""
    if not text.isascii():
        return rx.search(text)
    m = lx.folded(rx).search(text.lower())
    return rx.match(text, m.start()) if m else None


_DISTINCT_WORD = re.compile(r"\bdistinct\b", re.I)


def _lower_rx(rx: re.Pattern[str], low: str) -> re.Pattern[str]:
    """A case-insensitive pattern for the lower-case string ``low``: its fast twin when ASCII."""
    return lx.folded(rx) if low.isascii() else rx


def _is_plural(word: str) -> bool:
    if word in lx.IRREGULAR_PLURALS:
        return True
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s"))


@lru_cache(maxsize=8192)
def _column_variants(raw: str) -> frozenset[str]:
    """Spellings of a column an NL text might use: ``first_name``/``FirstName`` → ``first name``."""
    base = normalize_column(raw)
    camel = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", raw.split(".")[-1].strip('`"[]'))
    out = {base, base.replace("_", " "), camel.casefold().replace("_", " ")}
    out |= {v[:-1] for v in out if v.endswith("s") and len(v) > 3}
    return frozenset(" ".join(v.split()) for v in out if v.strip())


def _known_index(
    synonyms: dict[str, str], extra: Iterable[str], base: dict[str, str] | None = None
) -> dict[str, str]:
    """Every spelling of a known column (rules synonyms, Q_e hints) → canonical name;
    ``base`` is this index without ``extra``, when already built."""
    if base is not None:
        out = dict(base)
    else:
        out = {}
        for syn, canon in synonyms.items():
            for v in _column_variants(syn):
                out.setdefault(v, canon)
    for raw in extra:
        canon = normalize_column(raw, synonyms)
        for v in _column_variants(raw):
            out.setdefault(v, canon)
    return out


def _match_column(phrase: str, known: dict[str, str]) -> str | None:
    """The known column a noun phrase names, longest sub-phrase first.

    >>> _match_column("average free meal counts", {"free meal count": "free_meal_count"})
    'free_meal_count'
    """
    if not known or not phrase:
        return None
    words = phrase.casefold().split()
    for size in range(len(words), 0, -1):
        for i in range(len(words) - size + 1):
            cand = " ".join(words[i : i + size])
            if cand in known:
                return known[cand]
            if cand.endswith("s") and cand[:-1] in known:
                return known[cand[:-1]]
    return None


def _adjacent_column(ctx: _Ctx, start: int, end: int) -> str | None:
    """A known column named right before a value (``region 'North'``, ``whose country is X``)
    or right after it (``the 'North' territory``). ``the X of V`` names what is asked
    about V, not V's column, so ``of`` is no link."""
    if not ctx.known:
        return None
    prev = _prev_words(ctx.low, start, 4)
    while prev and prev[-1] in lx.COLUMN_LINKS:
        prev.pop()
    for size in (3, 2, 1):
        if len(prev) >= size and " ".join(prev[-size:]) in ctx.known:
            return ctx.known[" ".join(prev[-size:])]
    phrase, _ = _noun_phrase(ctx.low, end, 2)
    for size in (2, 1):
        cand = " ".join(phrase.split()[:size])
        if cand and cand in ctx.known:
            return ctx.known[cand]
    return None


def _order_key(ctx: _Ctx, phrase: str) -> str:
    """Canonical column for an ordering phrase when known, else its head (last) word."""
    col = _match_column(phrase, ctx.known)
    if col:
        return col
    words = phrase.split()
    return words[-1] if words else phrase


# ----------------------------------------------------------------------------- Q_e code


class _Tok(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


def _code_tokens(text: str, offset: int) -> list[_Tok]:
    return [
        _Tok(m.lastgroup or "", m.group(0), m.start() + offset, m.end() + offset)
        for m in lx.CODE_TOKEN.finditer(text)
    ]


def _is_codey(tok: _Tok) -> bool:
    """Does an identifier look like a column name rather than an English word?"""
    t = tok.text
    return (
        tok.kind == "bq"
        or "_" in t
        or "." in t
        or bool(lx.CAMEL.search(t))
        or (t.isupper() and len(t) >= 2)
        or any(ch.isdigit() for ch in t)
    )


def _literal(tok: _Tok) -> str | None:
    if tok.kind == "num":
        return tok.text
    if tok.kind != "str":
        return None
    closed = len(tok.text) > 1 and tok.text[-1] == tok.text[0]
    inner = tok.text[1:-1] if closed else tok.text[1:]
    return inner.replace("''", "'") if tok.text[0] == "'" else inner


def _depths(toks: list[_Tok]) -> list[int]:
    out, d = [], 0
    for t in toks:
        if t.kind == "rp":
            d = max(0, d - 1)
        out.append(d)
        if t.kind == "lp":
            d += 1
    return out


def _matching(toks: list[_Tok], i: int, step: int) -> int:
    """Index of the parenthesis matching ``toks[i]`` (``step`` 1: forward, -1: back)."""
    depth = 0
    j = i
    while 0 <= j < len(toks):
        k = toks[j].kind
        depth += (k == "lp") - (k == "rp") if step == 1 else (k == "rp") - (k == "lp")
        if depth == 0:
            return j
        j += step
    return len(toks) - 1 if step == 1 else -1


def _column_tokens(toks: list[_Tok]) -> list[_Tok]:
    """The tokens of a call's arguments that name columns (``Date`` in ``YEAR(Date)``)."""
    return [
        t
        for k, t in enumerate(toks)
        if t.kind == "bq"
        or (
            t.kind == "id"
            and (
                t.text.casefold() not in lx.CODE_WORDS
                or t.text.casefold() in lx.CODE_NAMES_AS_COLUMNS
            )
            and not (k + 1 < len(toks) and toks[k + 1].kind == "lp")
        )
    ]


def _operand_before(toks: list[_Tok], i: int) -> tuple[str | None, str | None, int] | None:
    """(column, function, first token index) of the operand that ends before token ``i``."""
    if i == 0:
        return None
    prev = toks[i - 1]
    if prev.kind == "bq":
        return prev.text.strip("`"), None, i - 1
    if prev.kind == "id":
        low = prev.text.casefold()
        if low in lx.CODE_WORDS and low not in lx.CODE_NAMES_AS_COLUMNS:
            return None
        before = toks[i - 2] if i >= 2 else None
        phrase = (
            not _is_codey(prev)
            and before is not None
            and before.kind == "id"
            and before.text.casefold() not in lx.CODE_BOUNDARIES
        )
        return (None if phrase else prev.text), None, i - 1
    if prev.kind == "rp":
        lp = _matching(toks, i - 1, -1)
        if lp <= 0 or toks[lp - 1].kind != "id":
            return None if lp < 0 else (None, None, lp)
        func: str | None = toks[lp - 1].text.casefold()
        inner = toks[lp + 1 : i - 1]
        ids = _column_tokens(inner)
        fmt = next((t.text.strip("'\"").casefold() for t in inner if t.kind == "str"), None)
        if func == "strftime" and fmt:
            func = lx.STRFTIME_FUNCS.get(fmt, "strftime")
        if func in lx.ARITHMETIC_FUNCS:
            func = None
        nested = any(t.kind == "lp" for t in inner)
        column = ids[0].text.strip("`") if len(ids) == 1 and not nested else None
        return column, func, lp - 1
    return None


def _comparison_op(toks: list[_Tok], i: int) -> tuple[str, int] | None:
    """The operator starting at token ``i`` and the index after it, for code comparisons."""
    t = toks[i]
    if t.kind == "op":
        return {"==": "=", "<>": "!="}.get(t.text, t.text), i + 1
    if t.kind != "id":
        return None
    w = t.text.casefold()
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    nw = nxt.text.casefold() if nxt else ""
    after = toks[i + 2] if i + 2 < len(toks) else None
    if w == "is" and nw == "not":
        return "!=", i + 2
    if w == "is" and nxt is not None and (nxt.kind == "str" or nw == "null"):
        return "=", i + 1
    if w == "not" and nw == "in" and after is not None and after.kind == "lp":
        return "not in", i + 2
    if w == "not" and nw in {"like", "between"}:
        return "not " + nw, i + 2
    if w == "in" and nxt is not None and nxt.kind == "lp":
        return "in", i + 1
    if w in {"like", "between"}:
        return w, i + 1
    return None


def _operand_values(
    toks: list[_Tok], op: str, j: int, column_lhs: bool
) -> tuple[list[str], str, int] | None:
    """(values, operator, index after) of the right-hand side starting at token ``j``.

    A bare word is a value only after a column and when short like a code (``Sex = F``).
    """
    n = len(toks)
    if j >= n:
        return None
    if op in {"in", "not in"}:
        rp = _matching(toks, j, 1)
        return [v for v in map(_literal, toks[j + 1 : rp]) if v is not None], op, rp + 1
    if op in {"between", "not between"}:
        got = [v for v in map(_literal, toks[j : j + 3]) if v is not None]
        return (got[:2], op, min(n, j + 3)) if len(got) >= 2 else None
    rt = toks[j]
    lit = _literal(rt)
    if lit is not None:
        return [lit], op, j + 1
    word = rt.text.casefold()
    if word == "null":
        return [], ("is null" if op == "=" else "is not null"), j + 1
    if word == "not" and j + 1 < n and toks[j + 1].text.casefold() == "null":
        return [], "is not null", j + 2
    bare = rt.text.rstrip("'\"")
    if rt.kind != "id" or (j + 1 < n and toks[j + 1].kind == "lp") or not column_lhs:
        return None
    if len(bare) > 3 or bare.casefold().endswith("id"):
        return None  # a column compared with a column (a join), or prose
    return [bare], op, j + 1


def _scan_code(ctx: _Ctx, text: str, offset: int, symbol_only: bool = False) -> list[str]:
    """Add the comparisons and aggregates written as code in ``text``; return its columns
    (compared ones first, then every identifier-like operand or argument).

    ``symbol_only`` (for questions) keeps only ``col > 5``-style comparisons on
    identifier-like columns.
    """
    toks = _code_tokens(text, offset)
    depth = _depths(toks)
    columns: list[str] = []
    calls: list[tuple[int, int]] = []
    last: tuple[str | None, str | None] | None = None
    i = 0
    while i < len(toks):
        t = toks[i]
        found = _comparison_op(toks, i)
        if found is None or (symbol_only and t.kind != "op"):
            if (
                not symbol_only
                and t.kind == "id"
                and i + 1 < len(toks)
                and toks[i + 1].kind == "lp"
            ):
                _code_call(ctx, toks, i, depth)
                calls.append((t.start, toks[_matching(toks, i + 1, 1)].end))
            i += 1
            continue
        op, j = found
        lhs = _operand_before(toks, i)
        if lhs is None and last is not None and i and toks[i - 1].text.casefold() in {"and", "or"}:
            lhs = (last[0], last[1], i)
        rhs = _operand_values(toks, op, j, lhs[0] is not None) if lhs is not None else None
        if (
            lhs is None
            or rhs is None
            or (symbol_only and (lhs[0] is None or not _is_codey(toks[i - 1])))
        ):
            i += 1
            continue
        col_raw, func, first = lhs
        vals, op, end_idx = rhs
        if not vals and op not in {"is null", "is not null"}:
            i += 1
            continue
        last = (col_raw, func)
        column = ctx.column(col_raw) if col_raw else None
        if column:
            columns.append(column)
        start, end = toks[first].start, toks[end_idx - 1].end
        frag = " ".join(ctx.text[start:end].split())
        f = Filter(column, op, tuple(ctx.value(v) for v in vals), frag, ctx.source, func)
        ctx.add_filter(f, start, end)
        i = end_idx
    for start, end in calls:
        ctx.take(start, end)
    return columns if symbol_only else columns + _code_columns(ctx, toks)


def _code_call(ctx: _Ctx, toks: list[_Tok], i: int, depth: list[int]) -> None:
    """A top-level aggregate call (``AVG(salary)``) → an aggregation; ``DIVIDE`` → division."""
    func = toks[i].text.casefold()
    if func == "divide":
        ctx.spec.flags["division"] = True
    if func not in lx.CODE_AGGREGATES or depth[i] > 0:
        return
    rp = _matching(toks, i + 1, 1)
    neighbours = (toks[i - 1] if i else None, toks[rp + 1] if rp + 1 < len(toks) else None)
    if any(t is not None and t.kind in {"arith", "op"} for t in neighbours):
        return  # part of a formula or a comparison, not the asked-for aggregate
    inner = toks[i + 2 : rp]
    ids = _column_tokens(inner)
    arg: str | None = None
    if not ids and any(x.text == "*" for x in inner):
        arg = "*"
    elif len(ids) == 1 and not any(x.kind == "lp" for x in inner):
        arg = ctx.column(ids[0].text.strip("`"))
    distinct = any(x.text.casefold() == "distinct" for x in inner)
    text = " ".join(ctx.text[toks[i].start : toks[rp].end].split())
    agg = Aggregation(lx.CODE_AGGREGATES[func], arg, distinct, text)
    if agg not in ctx.spec.aggregations:
        ctx.spec.aggregations.append(agg)
    ctx.spec.distinct = ctx.spec.distinct or distinct
    ctx.cue(text)


def _code_columns(ctx: _Ctx, toks: list[_Tok]) -> list[str]:
    """Identifier-like names in code: function arguments and arithmetic operands."""
    out: list[str] = []
    for k, t in enumerate(toks):
        if t.kind == "bq":
            out.append(ctx.column(t.text.strip("`")))
            continue
        low = t.text.casefold()
        if t.kind != "id" or low in lx.CODE_WORDS:
            continue
        prev = toks[k - 1].kind if k else ""
        nxt = toks[k + 1].kind if k + 1 < len(toks) else ""
        if nxt == "lp":
            continue
        if (
            _is_codey(t)
            or prev in {"lp", "comma", "arith", "op"}
            or nxt in {"rp", "comma", "arith", "op"}
        ):
            out.append(ctx.column(t.text))
    return out


def _formula(ctx: _Ctx, code: str, name: str | None) -> None:
    """Record ``code`` as a formula when it computes something (``DIVIDE(...)``, ``a / b``)."""
    bare = lx.STRINGS.sub("''", code)
    if not (_search_ci(lx.FORMULA_OPS, bare) and lx.FORMULA_SHAPE.search(bare)):
        return
    norm = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", " ".join(code.split()).casefold()))
    norm = norm.strip(" .;")
    if norm not in ctx.spec.formulas:
        ctx.spec.formulas.append(norm)
    if _search_ci(lx.DIVISION, bare):
        ctx.spec.flags["division"] = True
    if (name and _search_ci(lx.RATIO_RE, name)) or _search_ci(lx.PERCENT_FORMULA, bare):
        ctx.spec.flags["ratio"] = True
    ctx.cue(norm if len(norm) <= 80 else norm[:77] + "...")


# ----------------------------------------------------------------------------- Q_e hints


_PARENS_AND_COMMAS = re.compile(r"[(),]")


def _clauses(text: str) -> list[tuple[int, int]]:
    """Clause spans of an enrichment: split at ``;``, newlines, sentence ends, and at commas
    outside parentheses that open a new hint (``..., element = 's' means Sulfur``)."""
    cuts = [(m.start(), m.end()) for m in lx.CLAUSE_SPLIT.finditer(text)]
    depth = 0
    for m in _PARENS_AND_COMMAS.finditer(text) if "," in text else ():
        ch, i = m.group(), m.start()
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and lx.NEW_HINT.match(text, i + 1):
            cuts.append((i, i + 1))
    out: list[tuple[int, int]] = []
    pos = 0
    for a, b in sorted(cuts):
        if a >= pos:
            out.append((pos, a))
            pos = b
    out.append((pos, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t,.:":
        start += 1
    while end > start and text[end - 1] in " \t,.:":
        end -= 1
    return start, end


def _step_hints(ctx: _Ctx) -> None:
    """Read each clause of an enrichment as a hint, a definition or code; consume it."""
    for start, end in _clauses(ctx.text):
        if _hint_clause(ctx, ctx.text[start:end], start):
            ctx.take(start, end)


def _split_hint(clause: str) -> tuple[int, int, int, int] | None:
    """(lhs start, lhs end, rhs start, rhs end) of ``X refers to Y`` or ``name = formula``."""
    verb = _search_ci(lx.MAPPING_VERB, clause)
    if verb:
        return 0, verb.start(), verb.end(), len(clause)
    d = lx.DEFINITION.match(clause)
    if d:
        lhs, rhs = d.group("lhs").strip(), d.group("rhs")
        named = lhs.casefold() in lx.CODE_WORDS | {"formula", "difference"}
        lhs_words = lhs.casefold().split()
        if not lhs_words:
            return None  # "= x" defines nothing
        condition = not lx.CONDITION_WORDS.isdisjoint(lhs_words) or lhs_words[0] in lx.IMPERATIVES
        if not condition and (" " in lhs or named or (lhs.islower() and re.search(r"[=<>(]", rhs))):
            return d.start("lhs"), d.end("lhs"), d.start("rhs"), d.end("rhs")
    return None


def _hint_clause(ctx: _Ctx, clause: str, offset: int) -> bool:
    """Turn one clause into a :class:`Mapping` (or code filters); False for plain prose."""
    parts = _split_hint(clause)
    if parts is None:
        im = _search_ci(lx.IS_MAPPING, clause)
        if im and _names_value(clause[: im.start()].strip()) and len(im.group("rhs").split()) <= 6:
            _is_hint(ctx, clause[: im.start()].strip(), im.group("rhs").strip().rstrip("."), clause)
            return True
        if lx.CODE_HINT.search(clause):  # code among prose: its comparisons and calls only
            for c in _scan_code(ctx, clause, offset):
                ctx.add_column(c)
            _formula(ctx, clause, None)
        return False
    ls, le = _strip_span(ctx.text, offset + parts[0], offset + parts[1])
    rs, re_ = _strip_span(ctx.text, offset + parts[2], offset + parts[3])
    if lx.LHS_CODE.search(ctx.text[ls:le]) and not lx.CODE_HINT.search(ctx.text[rs:re_]):
        (ls, le), (rs, re_) = (rs, re_), (ls, le)  # "element = 'cl' means Chlorine"
    phrase, rhs = ctx.text[ls:le], ctx.text[rs:re_]
    before, aggs_before = len(ctx.spec.filters), len(ctx.spec.aggregations)
    cols = _scan_code(ctx, rhs, rs)
    filters = ctx.spec.filters[before:]
    if not filters and not cols:
        filters, cols = _plain_rhs(ctx, rhs)
    for c in cols:
        ctx.add_column(c)
    _formula(ctx, rhs, phrase)
    if _search_ci(_DISTINCT_WORD, rhs):
        ctx.spec.distinct = True
    for qm in lx.STRINGS.finditer(phrase):
        ctx.add_literal(ctx.value(qm.group(0)))
    aggs = tuple(ctx.spec.aggregations[aggs_before:])
    clause_text = " ".join(clause.split())
    ctx.mappings.append(
        Mapping(phrase, tuple(dict.fromkeys(cols)), tuple(filters), clause_text, aggs)
    )
    ctx.cue(f"{phrase} -> {rhs}" if len(rhs) < 80 else phrase)
    return True


def _names_value(subj: str) -> bool:
    """A subject that names a value: quoted, or a few capitalised words (``Elijah Allen``)."""
    if not subj or lx.CODE_HINT.search(subj):
        return False
    if subj[0] in "'\"":
        return True
    words = subj.split()
    return (
        len(words) <= 4
        and words[0].casefold() not in lx.NOT_VALUES
        and all(w[0].isupper() or w[0].isdigit() or w in lx.VALUE_CONNECTORS for w in words)
    )


def _plain_rhs(ctx: _Ctx, rhs: str) -> tuple[list[Filter], list[str]]:
    """A hint's right side without code: a lone literal, or a list of column names."""
    q = lx.QUOTED_ONLY.fullmatch(rhs)
    num = _parse_number(rhs)
    raw = num[0] if num else q.group(1) or q.group(2) if q else None
    if raw:
        f = Filter(None, "=", (ctx.value(raw.replace("''", "'")),), rhs.strip(), ctx.source)
        ctx.add_filter(f)
        return [f], []
    named = lx.COLUMN_WORD.fullmatch(rhs.strip())
    if named:  # "Germany refers to the country column"
        return [], [ctx.column(named.group("a") or named.group("b"))]
    ids = lx.IDENT_LIST.match(rhs)
    if not ids:
        return [], []
    names = [t for t in re.split(r"\s*(?:,|\band\b|&|\+)\s*", ids.group("ids")) if t]
    return [], [ctx.column(t.strip("`")) for t in names if t.casefold() not in lx.CODE_WORDS]


def _is_hint(ctx: _Ctx, subj: str, rhs: str, clause: str) -> None:
    """``'Tiago' is the DisplayName`` / ``Commentator is the name of the badge``."""
    rhs = re.sub(r"^(?:the|a|an)\s+", "", rhs, flags=re.I)
    col_raw = re.split(r"\s+(?:of|in|for)\s+", rhs, maxsplit=1)[0].strip()
    column = ctx.column(col_raw) if col_raw and " " not in col_raw else None
    f = Filter(column, "=", (ctx.value(subj),), " ".join(clause.split()), ctx.source)
    ctx.add_filter(f)
    ctx.mappings.append(Mapping(subj.strip("'\""), (column,) if column else (), (f,), f.text))


# ----------------------------------------------------------------------------- NL: values


def _step_quoted(ctx: _Ctx) -> None:
    """Backquoted names are columns; quoted strings are values (``=``, ``like``, ``!=``)."""
    for m in lx.BQ.finditer(ctx.text):
        if ctx.free(m.start(), m.end()):
            ctx.add_column(ctx.column(m.group(1)))
            ctx.cue(m.group(0))
            ctx.take(m.start(), m.end())
    for rx in (lx.DQ, lx.SQ):
        for m in rx.finditer(ctx.text):
            inner = m.group(1).replace("''", "'") if rx is lx.SQ else m.group(1)
            if not ctx.free(m.start(), m.end()) or not inner.strip():
                continue
            before = ctx.low[max(0, m.start() - 40) : m.start()]
            if before.endswith("the ") and ctx.low.startswith(" of", m.end()) and inner.islower():
                ctx.add_column(ctx.column(inner))  # Find the "date became customers" of ...
                ctx.take(m.start(), m.end())
                continue
            _add_value(ctx, ctx.value(inner), m.start(), m.end(), quoted=True)


def _add_value(ctx: _Ctx, value: str, start: int, end: int, quoted: bool = False) -> None:
    """A value the text names: ``=``, or ``like``/``!=`` after a cue (``contains 'Led'``,
    ``not from Germany``), tied to a known column next to it. An unquoted value is a
    pattern only after ``the letter``/``starts with`` (``contains Calcium`` is equality)."""
    before = ctx.low[max(0, start - 40) : start]
    op = "="
    like = ctx.rx(lx.LIKE_CUES).search(before)
    kind = next((k for k in ("contains", "starts", "ends", "like") if like and like.group(k)), "")
    if like and (quoted or like.group("noun") or kind in {"starts", "ends"}):
        op = "like"
        value = {"starts": f"{value}%", "ends": f"%{value}"}.get(kind, f"%{value}%")
    if ctx.rx(lx.NEGATION_BEFORE).search(before):
        op = "not like" if op == "like" else "!="
    col = _adjacent_column(ctx, start, end)
    ctx.add_filter(Filter(col, op, (value,), ctx.text[start:end], ctx.source), start, end)


def _date_value(raw: str) -> tuple[str, str | None] | None:
    """``"January 5, 2023"`` → ``("2023-01-05", None)``; ``"Jan 2023"`` → ``("2023-01", "month")``.

    ``a/b/yyyy`` reads as month/day unless the first number cannot be a month.
    """
    s = " ".join(raw.casefold().replace(",", " ").split())
    m = re.match(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ t](.+))?$", s) or re.match(
        r"^(\d{1,2})/(\d{1,2})/(\d{4})(?:[ t](.+))?$", s
    )
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


def _clock(tm: str) -> str:
    """``"7:37:33 pm"`` → ``"19:37:33"``."""
    m = re.match(r"(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?\s*([ap]m)?", tm)
    if not m:
        return tm
    h, mi, sec, ampm = m.groups()
    hour = int(h) % 12 + (12 if ampm == "pm" else 0) if ampm else int(h)
    return f"{hour:02d}:{mi}" + (f":{sec}" if sec else "")


def _step_dates(ctx: _Ctx) -> None:
    """Relative dates, dates with a year, months alone."""
    if ctx.has(lx.RELATIVE_DATE_WORDS):
        _relative_dates(ctx)
    if lx.FOUR_DIGITS.search(ctx.text):
        _absolute_dates(ctx)
    if ctx.has(lx.MONTH_WORDS):
        _months(ctx)


def _absolute_dates(ctx: _Ctx) -> None:
    """Dates, date ranges, quarters, year ranges, decades, seasons, years after a temporal cue."""
    src = ctx.source
    for m in ctx.scan(lx.QUARTER):
        if ctx.free(m.start(), m.end()):
            q = int(m.group("q") or lx.QUARTER_ORDINALS[m.group("nth").casefold()])
            first = date(int(m.group("y")), 3 * q - 2, 1)
            last = first + relativedelta(months=3) - timedelta(days=1)
            f = Filter(None, "between", (first.isoformat(), last.isoformat()), m.group(0), src)
            ctx.add_filter(f, m.start(), m.end())
    for m in ctx.scan(lx.DATE_RANGE):
        a, b = _date_value(m.group("a")), _date_value(m.group("b"))
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
            f = Filter(None, op, (dv[0],), ctx.text[start : m.end()], src, dv[1])
            ctx.add_filter(f, start, m.end())
    for m in ctx.scan(lx.YEAR_RANGE):
        lo, hi = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        if int(lo) <= int(hi) and ctx.free(m.start(), m.end()):
            ctx.add_filter(
                Filter(None, "between", (lo, hi), m.group(0), src, "year"), m.start(), m.end()
            )
    for m in lx.DECADE.finditer(ctx.text):
        if ctx.free(m.start(), m.end()):
            decade = int(m.group("y"))
            f = Filter(None, "between", (str(decade), str(decade + 9)), m.group(0), src, "year")
            ctx.add_filter(f, m.start(), m.end())
    for m in lx.SEASON.finditer(ctx.text):
        if ctx.free(m.start(), m.end()):
            ctx.add_filter(Filter(None, "=", (m.group(0),), m.group(0), src), m.start(), m.end())
    for m in ctx.scan(lx.YEAR_OP):
        if not ctx.free(m.start(), m.end()):
            continue
        if m.group("y"):
            op, y = lx.YEAR_OPS.get(" ".join(m.group("op").casefold().split()), "="), m.group("y")
        else:
            op = "<=" if re.search(r"earlier|before", m.group("post"), re.I) else ">="
            y = m.group("y2")
        ctx.add_filter(Filter(None, op, (y,), m.group(0), src, "year"), m.start(), m.end())


def _relative_dates(ctx: _Ctx) -> None:
    for m in ctx.scan(lx.RELATIVE):
        if ctx.free(m.start(), m.end()):
            f = _relative_date(m, ctx.now, ctx.source)
            ctx.add_filter(f, m.start(), m.end())
            if not f.values:
                ctx.cue(f"{m.group(0)} (unresolved: no timestamp)")


def _months(ctx: _Ctx) -> None:
    """``in March``: a month without a year."""
    for m in lx.MONTH_ALONE.finditer(ctx.text):
        if ctx.free(m.start("m"), m.end("m")):
            month = str(lx.MONTHS[m.group("m").casefold()])
            f = Filter(None, "=", (month,), m.group(0), ctx.source, "month")
            ctx.add_filter(f, m.start("m"), m.end("m"))


def _relative_date(m: re.Match[str], now: datetime | None, src: str) -> Filter:
    """``last year`` → ``year = now.year - 1``; without ``now`` a filter with no values."""
    phrase = m.group(0)
    if m.group("day"):
        if now is None:
            return Filter(None, "=", (), phrase, src, "date")
        d = now.date() - timedelta(days=1 if m.group("day").casefold() == "yesterday" else 0)
        return Filter(None, "=", (d.isoformat(),), phrase, src, "date")
    if m.group("unit"):
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
        days = (7 if unit == "week" else 91) * max(back, 1)
        return Filter(None, ">=", ((now.date() - timedelta(days=days)).isoformat(),), phrase, src)
    raw = m.group("n").casefold()
    count = lx.NUMBER_WORDS[raw] if raw in lx.NUMBER_WORDS else int(raw)
    unit = m.group("units").casefold()
    if now is None:
        return Filter(None, ">=", (), phrase, src, "year" if unit == "years" else "date")
    since = now.date() - relativedelta(**{unit: count})
    return Filter(None, ">=", (since.isoformat(),), phrase, src)


def _number_filter(ctx: _Ctx, op: str, nums: list[str], m: re.Match[str]) -> None:
    parsed = [_parse_number(n) for n in nums]
    if any(p is None for p in parsed):
        return
    vals = tuple(p[0] for p in parsed if p)
    if any(p[1] for p in parsed if p):
        ctx.spec.flags["percent"] = True
    col = _adjacent_column(ctx, m.start(), m.end())
    ctx.add_filter(Filter(col, op, vals, m.group(0), ctx.source), m.start(), m.end())


def _step_comparatives(ctx: _Ctx) -> None:
    """``between 5 and 10``, ``more than 10``, ``at least 3``, ``18 or older``."""
    for m in ctx.scan(lx.BETWEEN_RE):
        lo, hi = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        if m.group("c"):
            nxt = ctx.low[m.end() : m.end() + 12].split()
            if not nxt or nxt[0] in lx.PHRASE_STOPS:
                continue
        pa, pb = _parse_number(lo), _parse_number(hi)
        if pa and pb and float(pa[0]) <= float(pb[0]) and ctx.free(m.start(), m.end()):
            _number_filter(ctx, "between", [lo, hi], m)
    for m in ctx.scan(lx.CMP_RE):
        if not ctx.free(m.start(), m.end()):
            continue
        cue = " ".join(m.group("cue").casefold().split())
        op = lx.COMPARATIVES[cue]
        if op in {">=", ">"} and m.group("n").casefold() in {"one", "zero"}:
            ctx.cue(f"{m.group(0)} (existence)")  # "at least one order": a join, not a number
            ctx.take(m.start(), m.end())
            continue
        negated = ctx.rx(lx.NEGATION_BEFORE).search(ctx.low[max(0, m.start() - 12) : m.start()])
        if negated and op in {">", "<", ">=", "<="} and not cue.startswith(("not", "no ")):
            op = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}[op]
        _number_filter(ctx, op, [m.group("n")], m)
    for m in ctx.scan(lx.POSTFIX_RE):
        if ctx.free(m.start(), m.end()):
            _number_filter(ctx, ">=" if m.group("ge") else "<=", [m.group("n")], m)


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
        ctx.add_filter(
            Filter(None, "=", (m.group(0),), text, ctx.source, "year"), m.start(), m.end()
        )


def _step_attribute_numbers(ctx: _Ctx) -> None:
    """``district 5``, ``user ID 13``, ``No. 5`` → ``=`` filters; other numbers → literals."""
    for m in lx.NO_NUMBER.finditer(ctx.text):
        if ctx.free(m.start(), m.end()):
            num = normalize_number(m.group("n")) or m.group("n")
            col = _adjacent_column(ctx, m.start(), m.end())
            ctx.add_filter(Filter(col, "=", (num,), m.group(0), ctx.source), m.start(), m.end())
    for m in lx.BARE_NUMBER.finditer(ctx.text):
        num = normalize_number(m.group(0))
        if num is None or not ctx.free(m.start(), m.end()):
            continue
        prev = _prev_words(ctx.low, m.start(), 1)
        word = prev[-1] if prev else ""
        nxt = (ctx.low[m.end() : m.end() + 16].split() or [""])[0]
        follows_ok = not nxt[:1].isalpha() or nxt.rstrip(",.?!;:)") in lx.AFTER_IDENTIFIER_NUMBER
        if (
            word.isalpha()
            and ctx.low[m.start() - 1 : m.start()] == " "
            and ctx.low[m.start() - 1 - len(word) : m.start() - 1] == word
            and word not in lx.NOT_ATTRIBUTE_BEFORE_NUMBER
            and word not in lx.NUMBER_WORDS
            and not word.endswith(("ed", "ing", "ly"))
            and follows_ok
        ):
            col = _adjacent_column(ctx, m.start(), m.end())
            f = Filter(col, "=", (num,), f"{word} {m.group(0)}", ctx.source)
            ctx.add_filter(f, m.start(), m.end())
        else:
            ctx.add_literal(num)


def _step_capitalised(ctx: _Ctx) -> None:
    """Capitalised phrases inside a sentence are values: ``customers in Germany``."""
    text = ctx.text
    words = [(m.start(), m.end(), m.group(0)) for m in lx.WORD.finditer(text)]
    parens = bytearray(len(text))
    for p in lx.PARENS.finditer(text):
        parens[p.start() : p.end()] = b"\x01" * (p.end() - p.start())
    i, n = 0, len(words)
    while i < n:
        s, e, w = words[i]
        if not w[0].isupper() or not ctx.free(s, e) or parens[s]:
            i += 1
            continue
        run, i = _capitalised_run(ctx, words, i, parens)
        if lx.SENTENCE_START.search(text[max(0, s - 3) : s]):
            run = run[1:]  # the first word of a sentence is capitalised anyway
        while run and (
            run[0][2].casefold() in lx.NOT_VALUES or run[0][2].casefold().rstrip(".") in lx.MONTHS
        ):
            run = run[1:]
        while run and run[-1][2] in lx.VALUE_CONNECTORS:
            run = run[:-1]
        if run and _is_value_run(ctx, run):
            start, end = run[0][0], run[-1][1]
            if text.endswith("'s", start, end):
                end -= 2
            _add_value(ctx, ctx.value(text[start:end]), start, end)


def _capitalised_run(
    ctx: _Ctx, words: list[tuple[int, int, str]], i: int, parens: bytearray
) -> tuple[list[tuple[int, int, str]], int]:
    """Consecutive capitalised words from ``i``, joined by spaces and connectors (``of the``)."""
    run = [words[i]]
    j = i + 1
    while j < len(words):
        s2, e2, w2 = words[j]
        gap = ctx.text[run[-1][1] : s2]
        if (
            gap not in {" ", "-", " - ", " & "}
            or not ctx.free(s2, e2)
            or parens[s2]
            or run[-1][2].endswith("'s")
        ):
            break
        if w2[0].isupper():
            run.append(words[j])
            j += 1
            continue
        k = j
        while k < len(words) and k - j < 2 and words[k][2] in lx.VALUE_CONNECTORS:
            k += 1
        spaced = all(
            ctx.text[words[x][1] : words[x + 1][0]] == " "
            for x in range(j - 1, min(k, len(words) - 1))
        )
        if k == j or k >= len(words) or w2 == "the" or not words[k][2][0].isupper() or not spaced:
            break
        run.extend(words[j:k])
        j = k
    return run, j


def _is_value_run(ctx: _Ctx, run: list[tuple[int, int, str]]) -> bool:
    """Reject runs that name attributes (``TG level``, ``School Ownership Code``) or units."""
    first, last = run[0][2], run[-1][2]
    if len(run) == 1 and (
        first.casefold() in lx.NOT_VALUES or re.fullmatch(r"[A-Z]-\d+", first) or first == "I"
    ):
        return False
    if any("_" in w and not lx.CODE_ID.match(w) for _, _, w in run):  # Student_Club: a name
        return False
    end = run[-1][1]
    nxt = (ctx.low[end : end + 20].split() or [""])[0].strip(",.?!;:")
    if nxt in lx.ATTRIBUTE_NOUNS:
        return False
    if len(run) > 1 and last.casefold().removesuffix("'s") in lx.ATTRIBUTE_HEADS:
        return False
    before = ctx.text[max(0, run[0][0] - 12) : run[0][0]]
    return not (len(run) == 1 and first.isupper() and re.search(r"\d\s*$", before))  # "98832 USD"


def _step_value_synonyms(ctx: _Ctx) -> None:
    """Spellings from the rules' ``value_synonyms`` found in the text → ``=`` filters."""
    rx = ctx.lexicon.value_rx
    if rx is None:
        return
    for m in rx.finditer(ctx.low):
        if ctx.free(m.start(), m.end()):
            _add_value(ctx, ctx.values[" ".join(m.group(0).split())], m.start(), m.end())


def _step_synonym_columns(ctx: _Ctx) -> None:
    """Column names and synonyms from the rules found in the text → columns."""
    rx = ctx.lexicon.synonym_rx
    if rx is None:
        return
    for m in rx.finditer(ctx.low):
        if ctx.free(m.start(), m.end()):
            ctx.add_column(ctx.synonyms[" ".join(m.group(0).split())])
            ctx.cue(ctx.text[m.start() : m.end()])


# ----------------------------------------------------------------------------- NL: shape


def _step_order(ctx: _Ctx) -> None:
    """Explicit ordering: ``sorted by X descending``, ``in alphabetical order``, ``from A to Z``."""
    for rx in (lx.ORDER_BY_RE, lx.IN_ORDER_RE, lx.FROM_TO_RE):
        for m in ctx.free_matches(rx):
            has_key = bool(m.groupdict().get("key"))
            cue_end = m.start("key") if has_key else m.end()
            if not ctx.free(m.start(), cue_end):
                continue  # "in descending order" around an "order by X" already read
            lo, hi = _sentence_span(ctx.low, m.start())
            direction_rx = ctx.rx(lx.DIRECTION)
            d = direction_rx.search(ctx.low, m.start(), min(hi, m.end() + 40))
            d = d or direction_rx.search(ctx.low, max(lo, m.start() - 30), m.start())
            direction = "desc" if d and d.group("desc") else "asc"
            phrases, end = _order_phrases(ctx, m) if has_key else ([], cue_end)
            if rx is lx.ORDER_BY_RE and not phrases:
                continue
            if d and d.start() >= end and ctx.free(end, d.end()):
                end = d.end()  # "... by X in descending order": one cue
            text = " ".join(ctx.text[m.start() : end].split())
            for phrase in phrases or [_prev_noun(ctx.low, m.start())]:
                key = _order_key(ctx, phrase) if phrase else "?"
                ctx.spec.order_by.append(OrderKey(key, direction, False, text))
            ctx.cue(text)
            ctx.take(m.start(), end)


def _sentence_span(low: str, pos: int) -> tuple[int, int]:
    """Start and end of the sentence (or clause) around ``pos``."""
    start = max(low.rfind(c, 0, pos) for c in ".;?!") + 1
    ends = [i for i in (low.find(c, pos) for c in ".;?!") if i >= 0]
    return start, min(ends, default=len(low))


def _order_phrases(ctx: _Ctx, m: re.Match[str]) -> tuple[list[str], int]:
    """The noun phrases an ordering cue sorts by (``by sales and profits`` → two) and where
    they end; direction words and determiners are skipped."""
    phrases: list[str] = []
    words: list[str] = []
    start = end = m.start("key")
    for w in lx.LOW_WORD.finditer(ctx.low, start, m.end("key")):
        token = w.group(0)
        if token == "and" and words and len(phrases) < 2:
            phrases.append(" ".join(words))
            words = []
            continue
        if lx.DIRECTION.fullmatch(token) or token in {"in", "order"}:
            if words:
                break
            continue
        if token in lx.DETERMINERS or token in lx.SUPERLATIVES or token in {"each", "every"}:
            end = w.end()
            continue  # "by each city's highest latitude" sorts by latitude
        if token in lx.PHRASE_STOPS or len(words) == 3 or (words and _is_participle(token)):
            break
        end = w.end()
        if token.endswith(("'s", "'")):
            words = []  # a possessive modifies the head that follows
            continue
        words.append(token)
    if words:
        phrases.append(" ".join(words))
    return phrases, end


def _prev_noun(low: str, pos: int) -> str:
    words = _prev_words(low, pos, 3)
    while words and (
        words[-1] in lx.PHRASE_STOPS or words[-1] in {"them", "it", "results", "result"}
    ):
        words.pop()
    return words[-1] if words else ""


def _step_topk(ctx: _Ctx) -> None:
    """``top 5``, ``first 3``, ``the three largest``, ``which 3 wineries ... the most``."""
    low = ctx.low
    for m in ctx.rx(lx.TOPK_RE).finditer(low):
        g = next(k for k in ("a", "b", "c", "d") if m.group(k))
        parsed = _parse_number(m.group(g))
        if (
            not parsed
            or not parsed[0].isdigit()
            or int(parsed[0]) == 0
            or not ctx.free(m.start(g), m.end(g))
        ):
            continue
        if g == "c":
            prev = _prev_words(low, m.start(), 1)
            if prev and prev[-1] not in lx.TOPK_LEADS:
                continue  # "room 111 most recently"
            direction = lx.SUPERLATIVES[m.group("sup")]
        elif g == "b":
            direction = "asc" if m.group("fl") == "first" else "desc"
        elif g == "d":
            direction = lx.SUPERLATIVES[m.group("sup2")]  # "the latest 10 comments"
        else:
            direction = "desc"
        _set_topk(ctx, int(parsed[0]), direction, m, m.group("sup") or m.group("sup2") or "top")
        return
    if ctx.rx(lx.SUP_RE).search(low):
        for m in ctx.rx(lx.WHICH_N_RE).finditer(low):
            parsed = _parse_number(m.group("n"))
            if (
                parsed
                and parsed[0].isdigit()
                and 1 < int(parsed[0]) <= 100
                and ctx.free(m.start("n"), m.end("n"))
            ):
                _set_topk(ctx, int(parsed[0]), "desc", m)
                return


def _set_topk(ctx: _Ctx, k: int, direction: str, m: re.Match[str], word: str = "top") -> None:
    """Record a top-k; ``top 5 customers by total sales`` ranks by what follows ``by``."""
    ctx.spec.limit = k
    ctx.spec.flags["superlative"] = True
    target, tend = _noun_phrase(ctx.low, m.end(), 3)
    key = _superlative_key(ctx, word, target) if target else "?"
    text = " ".join(f"{m.group(0)} {target}".split())
    by = ctx.rx(lx.RANKED_BY).match(ctx.low, tend) if target else None
    if by:
        ranked, rend = _noun_phrase(ctx.low, by.end(), 3)
        if ranked:
            key = _order_key(ctx, ranked)
            text = " ".join(ctx.text[m.start() : rend].split())
            ctx.take(by.start(), by.end())  # "by" ranks here; the phrase may still aggregate
    ctx.topk_index = len(ctx.spec.order_by)
    ctx.spec.order_by.append(OrderKey(key, direction, False, text))
    ctx.cue(text)
    ctx.take(m.start(), m.end())


def _superlative_key(ctx: _Ctx, word: str, target: str) -> str:
    base = word.split()[0]
    first = target.split()[0] if target else ""
    if base in {"most", "least"} and first in lx.FREQUENCY_WORDS:
        return "count"
    if (
        word.startswith("most recent")
        or base in lx.TEMPORAL_SUPERLATIVES
        or first in lx.TEMPORAL_SUPERLATIVES
    ):
        return _match_column(target, ctx.known) or "date"
    if base in {"most", "least"} and first.endswith(lx.ADJECTIVE_SUFFIXES):
        return _match_column(first, ctx.known) or first  # "the most expensive"
    if target.startswith(("number of ", "count of ", "amount of ")):
        target = target.split(" of ", 1)[1]
    return _order_key(ctx, target) if target else base


def _step_superlatives(ctx: _Ctx) -> None:
    """``the highest X`` → order key (+ limit 1 for a singular target); ``what is the highest X``
    → ``max``; ``the second highest`` → offset 1."""
    low, spec = ctx.low, ctx.spec
    for m in ctx.free_matches(lx.SUP_RE):
        word = " ".join(m.group("w").split())
        start, end = m.start(), m.end()
        ordinal = ctx.rx(lx.ORDINAL_BEFORE).search(low, max(0, start - 15), start)
        prev = _prev_words(low, start, 1)
        nxt = (low[end : end + 30].split() or [""])[0].strip(",.?!;:")
        if word in {"most", "least"} and (
            (prev and prev[-1] == "at") or nxt in {"of", "likely", "part"}
        ):
            continue
        if word in {"first", "last"} and (
            not prev or prev[-1] != "the" or low[end : end + 1] == "-" or nxt in lx.NOT_RANKED
        ):
            continue  # "first name", "the first half", "first-grade"
        if word == "top" and (not nxt or nxt.isdigit() or nxt in lx.NUMBER_WORDS):
            continue
        base = word.split()[0]
        direction = (
            "desc"
            if word.startswith("most recent")
            else lx.SUPERLATIVES.get(base, "asc" if base == "first" else "desc")
        )
        target, _ = _noun_phrase(low, end, 3)
        key = _superlative_key(ctx, word, target)
        text = " ".join(f"{ctx.text[ordinal.start() if ordinal else start : end]} {target}".split())
        ctx.cue(text)
        if _value_form(low, start, word, target):
            func = "max" if direction == "desc" else "min"
            agg = Aggregation(func, _match_column(target, ctx.known), False, text)
            if agg not in spec.aggregations:
                spec.aggregations.append(agg)
            continue
        spec.flags["superlative"] = True
        if ctx.topk_index is not None:
            topk = spec.order_by[ctx.topk_index]
            spec.order_by[ctx.topk_index] = replace(
                topk, key=key, direction=direction, text=f"{topk.text} {text}"
            )
            ctx.topk_index = None
            continue
        if not any(o.key == key and o.direction == direction for o in spec.order_by):
            spec.order_by.append(OrderKey(key, direction, False, text))
        if ordinal and spec.limit is None:
            o = ordinal.group("ord").casefold()
            spec.limit, spec.offset = 1, (lx.ORDINALS[o] if o in lx.ORDINALS else int(o[:-2])) - 1
        elif spec.limit is None and not _plural_subject(low, start):
            spec.limit = 1


def _value_form(low: str, start: int, word: str, target: str) -> bool:
    """``what is the highest salary`` asks for a value (MAX), not for a row. A temporal
    superlative asks for a value only when its target is a date (``the latest date``)."""
    base = word.split()[0]
    before = low[max(0, start - 60) : start]
    # "the average and minimum price", "minimum and maximum salaries"
    listed = _AGG_LIST.search(before) or _AGG_LIST_AFTER.match(low, start + len(word))
    if base in {"first", "last"} or not (listed or _lower_rx(lx.VALUE_FORM, before).search(before)):
        return False
    temporal = base in lx.TEMPORAL_SUPERLATIVES or word.startswith("most recent")
    return not temporal or (target.split() or [""])[-1] in {"date", "time", "year", "day", "month"}


_AGG_LIST = re.compile(
    r"\b(?:average|avg|mean|maximum|max|minimum|min|total|highest|lowest)\s*(?:,|and|or)\s*$"
)
_AGG_LIST_AFTER = re.compile(
    r"\s*(?:,|and|or)\s*(?:and\s+)?(?:the\s+)?(?:average|avg|mean|maximum|max|minimum|min|total)\b"
)
_SUBJECT_VERB = re.compile(
    r"^\W*(?:(?:please\s+)?(?:list|name|show|give|find|provide|state)\s+)?(?:which|what)\s+"
    r"(?P<np>(?:[\w\-]+\s+){0,4}?)(?P<v>has|have|is|are|was|were|does|do|did|had)\b"
)
_WITH_BEFORE = re.compile(
    r"([a-z\-]+)\s+(?:with|having|who|that|which|whose|where)\s+(?:\w+\s+){0,3}$"
)
_LIST_HEAD = re.compile(
    r"^\W*(?:list|name|show|give|find|provide|state|what\s+are)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?"
    r"(?P<np>(?:[\w\-]+\s+){0,2}[\w\-]+)"
)


def _plural_subject(low: str, sup_start: int) -> bool:
    """Does a superlative rank a plural subject (``which schools have the highest``)?"""
    m = _SUBJECT_VERB.match(low)
    if m and m.end() <= sup_start:
        v = m.group("v")
        if v in {"has", "is", "was", "does"}:
            return False
        if v in {"have", "are", "were", "do"}:
            return True
        words = m.group("np").split()
        return bool(words) and _is_plural(words[-1])
    w = _WITH_BEFORE.search(low[max(0, sup_start - 80) : sup_start])
    if w:
        return _is_plural(w.group(1))
    head = _LIST_HEAD.match(low)
    if head:
        last = head.group("np").split()[-1]
        return last not in {"name", "id", "title"} and _is_plural(last)
    return False


def _step_aggregations(ctx: _Ctx) -> None:
    """Aggregate cues (``how many``, ``number of``, ``total``, ``average`` …) → aggregations."""
    low, spec = ctx.low, ctx.spec
    found: list[tuple[int, int, str]] = []
    for m in ctx.free_matches(lx.AGG_RE):
        func = _agg_func(ctx, m, any(f == "count" for *_, f in found))
        if func:
            found.append((m.start(), m.end(), func))
    for term_rx, func in ctx.lexicon.term_rxs:
        for m in term_rx.finditer(low):
            if ctx.free(m.start(), m.end()) and func in {"count", "sum", "avg", "min", "max"}:
                found.append((m.start(), m.end(), func))
    for start, end, func in sorted(found):
        target, tend = _noun_phrase(low, end, 3)
        distinct = False
        if func == "count":
            d = re.match(
                r"\s+(?:of\s+)?(?:the\s+)?(?:different|distinct|unique|kinds?\s+of|types?\s+of)\b",
                low[end:],
            )
            if d:
                distinct = True
                target, tend = _noun_phrase(low, end + d.end(), 3)
        if target.startswith(("number of ", "count of ")):
            target = target.split(" of ", 1)[1]
        arg = _match_column(target, ctx.known)
        text = " ".join(ctx.text[start : max(end, tend)].split())
        if not any(
            a.func == func and a.arg == arg and a.distinct == distinct for a in spec.aggregations
        ):
            spec.aggregations.append(Aggregation(func, arg, distinct, text))
        ctx.cue(" ".join(ctx.text[start:end].split()))
    if any(a.func == "count" for a in spec.aggregations):
        spec.flags["count_question"] = True


def _agg_func(ctx: _Ctx, m: re.Match[str], has_count: bool) -> str | None:
    """The aggregate an :data:`lx.AGG_RE` match asks for, or None when it names an attribute."""
    low = ctx.low
    kind = m.lastgroup or ""
    start, end = m.start(), m.end()
    prev = _prev_words(low, start, 1)
    p = prev[-1] if prev else ""
    rest = low[end : end + 40]
    value_form = bool(ctx.rx(lx.VALUE_FORM).search(low[max(0, start - 60) : start]))
    if kind == "howmany":
        if re.match(r"\s+(?:percent|percentage|%|times)\b", rest):
            ctx.spec.flags["ratio"] = True
            return None
        return None if re.match(r"\s+(?:more|less|fewer)\b", rest) else "count"
    if kind == "total_number":
        return "count"
    if kind == "number":
        if p in lx.NUMBER_LABELS or p in lx.NUMBER_OWNERS or rest.startswith(" the "):
            return None
        return "count"
    if kind == "count":
        initial = start == 0 or bool(lx.SENTENCE_START.search(low[max(0, start - 3) : start]))
        nxt = (rest.split() or [""])[0]
        lead = p in {"the", "a", "total"} and nxt == "of"
        verb = nxt in {"the", "how", "all", "distinct", "different", "unique", "number", "each"}
        return "count" if initial or lead or (verb and p not in lx.DETERMINERS) else None
    if kind == "sum":
        phrase = " ".join(m.group(0).split())
        if phrase == "total":
            if p in lx.NUMBER_OWNERS or re.match(r"\s+(?:number|count|no\.?)\b", rest):
                return None
            _, tend = _noun_phrase(low, end, 3)
            after = low[tend : tend + 14]
            if re.match(
                r"\s*(?:of\s+)?(?:over|above|under|below|more|less|greater|beyond|within|is|was|are|were)\b",
                after,
            ):
                return None
            tied = re.match(
                r"\s+(?:of|for|per|by|across|spent|paid|earned|sold|made|in|from)\b", after
            )
            return "sum" if value_form or tied else None
        return None if phrase == "in total" and has_count else "sum"
    if kind == "avg":
        if m.group(0) == "mean" and not value_form:
            return None
        return None if p in {"an", "above", "below", "than"} else "avg"
    if kind in {"max", "min"} and m.group(0) in {"max", "min"}:
        return kind if re.match(r"\s*(?:\(|of\b)", rest) or value_form else None
    return None  # "maximum"/"minimum" are read as superlatives


def _step_distinct(ctx: _Ctx) -> None:
    for m in ctx.free_matches(lx.DISTINCT_RE):
        word = m.group(0)
        if word[0] in "kts" and not re.search(
            r"how\s+many\s+(?:different\s+)?$", ctx.low[max(0, m.start() - 20) : m.start()]
        ):
            continue
        ctx.spec.distinct = True
        ctx.cue(word)


def _step_group_by(ctx: _Ctx) -> None:
    """``per X``, ``for each X``, ``grouped by X`` (and ``by X`` right after an aggregate)."""
    spec, low = ctx.spec, ctx.low
    if not spec.aggregations and not re.search(r"\bgroup(?:ed)?\s+by\b", low):
        return
    for m in ctx.free_matches(lx.GROUP_RE):
        cue = " ".join(m.group("cue").casefold().split())
        prev = _prev_words(low, m.start(), 4)
        p = prev[-1] if prev else ""
        if cue == "by":
            agg_near = any(w in lx.AGGREGATE_WORDS for w in prev)
            if not agg_near or p in lx.NOT_GROUP_BY or p.endswith(("ed", "en", "ght")):
                continue
            if ctx.text[m.start("rest")].isupper() or ctx.text[m.start("rest")] in "'\"":
                continue
        if cue == "each" and p in {"for", "in", "of", "on", "by"}:
            continue
        phrase, pend = _noun_phrase(low, m.start("rest"), 3)
        if not phrase or phrase.split()[0] in {"other", "others", "one", "way", "time", "times"}:
            continue
        if cue == "by" and re.match(r"\s*(?:['\"]|[A-Z])", ctx.text[pend : pend + 3]):
            continue  # "albums by the artist 'Metallica'": an agent, not a grouping
        if cue == "per" and (phrase.split()[0] in lx.RATE_UNITS or p.isdigit()):
            continue
        if phrase.split()[-1].endswith("ed"):
            continue
        col = _match_column(phrase, ctx.known) or phrase
        if col not in spec.group_by:
            spec.group_by.append(col)
        ctx.cue(" ".join(ctx.text[m.start() : pend].split()))


def _step_flags(ctx: _Ctx, style: str) -> None:
    spec, low = ctx.spec, ctx.low
    first = re.match(r"\W*([a-z']+)(?:\s+([a-z']+))?", low)
    w1, w2 = (first.group(1), first.group(2) or "") if first else ("", "")
    if style != "hints":
        spec.flags["yes_no"] = w1 in lx.YES_NO_OPENERS
        spec.flags["list"] = w1 in lx.LIST_OPENERS or (w1 == "what" and w2 in {"are", "were"})
    ratio = ctx.may_have(lx.RATIO_WORDS) or "percent" in low
    for m in ctx.free_matches(lx.RATIO_RE) if ratio else ():
        prev = _prev_words(low, m.start(), 1)
        word = m.group(0).split()[0]
        if word in {"how", "in"} or not prev or prev[-1] in lx.RATIO_LEADS:
            if word == "rate" and not low.startswith(" of", m.end()):
                continue
            spec.flags["ratio"] = True
            ctx.cue(m.group(0))
            break
    if ctx.may_have(lx.DIVIDED_WORDS) and ctx.rx(lx.DIVIDED_RE).search(low):
        spec.flags["division"] = True
    negated = ctx.may_have(lx.NEGATION_WORDS) or "n't" in low
    negations = ctx.rx(lx.NEGATION_ANY).finditer(low) if negated else ()
    if any(ctx.mask[m.start()] == 0 for m in negations) or any(
        f.op in {"!=", "not in", "not like", "not between"} for f in spec.filters
    ):
        spec.flags["negation"] = True


# ----------------------------------------------------------------------------- public API


def analyze_text(
    text: str,
    source: str = "question",
    rules: Rules | None = None,
    now: datetime | None = None,
    known_columns: Iterable[str] = (),
) -> TextAnalysis:
    """Extract the spec of one text, with its enrichment hints and style.

    ``known_columns`` are column names from elsewhere (Q_e) that may be attached to this
    text's values and aggregation arguments.

    >>> a = analyze_text("male refers to SEX = 'M'; average age refers to AVG(age)", "enriched")
    >>> a.style, [(m.phrase, m.columns) for m in a.mappings], [x.func for x in a.spec.aggregations]
    ('hints', [('male', ('sex',)), ('average age', ('age',))], ['avg'])
    """
    rules = rules or _DEFAULT_RULES
    norm, low = _normalized(text)
    lexicon = _rules_lexicon(rules)
    synonyms = lexicon.synonyms
    ctx = _Ctx(
        text=norm,
        low=low,
        source=source,
        synonyms=synonyms,
        values=lexicon.values,
        terms=lexicon.terms,
        now=now,
        known=_known_index(synonyms, known_columns, lexicon.known),
        mask=bytearray(len(norm)),
        lexicon=lexicon,
    )
    ctx.words = frozenset(lx.WORD_TOKEN.findall(low))
    ctx.ascii = norm.isascii()
    digits = bool(lx.DIGIT.search(norm))
    numeric = digits or ctx.has(lx.NUMBER_WORD_SET)
    style = "question"
    if source == "question":
        if lx.CODE_OPS.search(norm):
            for c in _scan_code(ctx, norm, 0, symbol_only=True):
                ctx.add_column(c)
    else:
        _step_hints(ctx)
        style = "restatement" if not ctx.mappings and _is_request(norm) else "hints"
        if ctx.spec.columns:
            ctx.known = _known_index(synonyms, [*known_columns, *ctx.spec.columns], lexicon.known)
    if lx.QUOTE_CHARS.search(norm):
        _step_quoted(ctx)
    _step_dates(ctx)
    if numeric:
        _step_comparatives(ctx)
    if digits:
        _step_years(ctx)
    if ctx.has(lx.ORDER_WORDS):
        _step_order(ctx)
    if numeric:
        _step_topk(ctx)
    if ctx.has(lx.SUPERLATIVE_WORDS):
        _step_superlatives(ctx)
    if digits:
        _step_attribute_numbers(ctx)
    if style != "hints" and lx.UPPER.search(norm, 1):
        _step_capitalised(ctx)
    _step_value_synonyms(ctx)
    _step_synonym_columns(ctx)
    if ctx.terms or ctx.has(lx.AGGREGATE_WORDS):
        _step_aggregations(ctx)
    if ctx.has(lx.DISTINCT_WORDS):
        _step_distinct(ctx)
    if ctx.has(lx.GROUP_WORDS):
        _step_group_by(ctx)
    _step_flags(ctx, style)
    if style != "hints":
        ctx.spec.projections = request_projections(norm)
    for k in FLAGS:
        ctx.spec.flags.setdefault(k, False)
    ctx.spec.filters.sort(key=lambda f: _position(norm, f))
    return TextAnalysis(ctx.spec, style, norm, ctx.mappings)


def _normalized(text: str | None) -> tuple[str, str]:
    """The text as read (same-length rewrites) and its case-folded twin, position for position."""
    norm = lx.SPLIT_OPS.sub(lambda m: m.group(1) + "= ", (text or "").translate(lx.TRANSLATE))
    low = norm.casefold()
    if len(low) != len(norm):  # a few characters change length when case-folded
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in norm)
    return norm, low


def _is_request(text: str) -> bool:
    """Does a text read like a question or a request (a restated question), not notes?"""
    if _search_ci(lx.HINT_STYLE, text):
        return False
    first = (lx.WORD_TOKEN.findall(text.casefold()) or [""])[0]
    return text.rstrip().endswith("?") or first in lx.REQUEST_OPENERS


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

    def merged(self) -> Spec:
        """The merged NL spec, as :func:`extract_nl_spec` gives it."""
        if self.enriched is None:
            return self.question.spec
        return merge_analyses(self.hinted, self.enriched)


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
    >>> a.hinted is a.question
    False
    """
    q = analyze_text(question, "question", rules, now)
    if not enriched or not enriched.strip():
        return TextsAnalysis(q, None, q)
    e = analyze_text(enriched, "enriched", rules, now)
    columns = _hint_columns(e)
    hinted = q
    if columns and _may_look_up(question, columns, _rules_lexicon(rules or _DEFAULT_RULES)):
        hinted = analyze_text(question, "question", rules, now, known_columns=columns)
    return TextsAnalysis(q, e, hinted)


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


def _phrase_in(phrase: str, text: str) -> bool:
    p = " ".join(phrase.casefold().strip(" '\"").split())
    return bool(p) and p in " ".join(text.casefold().split())


def _supersede(qf: Filter, e: TextAnalysis) -> Filter | None:
    """The question filter as the merged spec keeps it: None when Q_e restates it with more
    detail (a hint on its phrase, or the same value with a column), else with the column a
    column-only hint gives it."""
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
        if len(mp.columns) == 1 and column is None:
            column = mp.columns[0]
    for ef in e.spec.filters:
        if ef.op != qf.op or ef.func != qf.func or len(ef.values) != len(qf.values):
            continue
        if (ef.column is None and column is not None) or not all(
            related_values(a, b) for a, b in zip(qf.values, ef.values, strict=True)
        ):
            continue
        if ef.column is not None or ef.values == qf.values:
            return None
    return replace(qf, column=column)


def merge_analyses(q: TextAnalysis, e: TextAnalysis) -> Spec:
    """Merge a question's analysis with its enrichment's.

    Q_e's column hints attach to Q_u's values; a question filter that a Q_e hint restates
    (``"Germany refers to country = 'Germany'"``) gives way to the hint's filter; hints
    whose phrase the question never uses (a glossary of codes) add no filter; filters are
    deduplicated by (column, op, values, func), preferring the one with a column. Only a
    restated question adds an order or a top-k of its own.
    """
    qs, es = q.spec, e.spec
    q_words = WordPool(lx.WORD_TOKEN.findall(q.text.casefold()))
    glossary = {
        f
        for mp in e.mappings
        if mp.filters and not grounded(mp.phrase, q_words) and not _phrase_in(mp.phrase, q.text)
        for f in mp.filters
    }
    out = Spec()
    kept = [f for f in (_supersede(qf, e) for qf in qs.filters) if f is not None]
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
    out.distinct = qs.distinct or es.distinct
    out.columns = list(dict.fromkeys([*qs.columns, *es.columns]))
    out.literals = list(dict.fromkeys([*qs.literals, *es.literals]))
    out.formulas = list(dict.fromkeys([*qs.formulas, *es.formulas]))
    out.cues = list(dict.fromkeys([*qs.cues, *es.cues]))
    out.flags = {
        k: bool(qs.flags.get(k))
        if k in {"yes_no", "list"}
        else bool(qs.flags.get(k) or es.flags.get(k))
        for k in sorted(set(qs.flags) | set(es.flags))
    }
    return out

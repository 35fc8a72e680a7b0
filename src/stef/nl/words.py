"""Word-level helpers of the NL extractor: stems, word matching, noun phrases, numbers and
the spellings by which a text may name a column.

Plain functions of strings (no reading context): :mod:`stef.nl.enrichment` uses the public
ones to compare Q_u with Q_e.

>>> same_word("blond", "blonde"), related_values("us", "united states")
(True, True)
>>> _parse_number("$1,000"), _noun_phrase("the average salary of staff", 0)
(('1000', False), ('average salary', 18))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from stef.nl import hint_patterns as hp
from stef.nl import lexicon as lx
from stef.spec import normalize_column, normalize_number

#: Entries of each memo keyed by a whole question or enrichment text. A text may hold up to
#: 20,000 characters (``stef.record.MAX_TEXT_CHARS``), so the bound keeps a long-running
#: server's memos within tens of megabytes whatever it is sent; one record's repeated
#: look-ups, which are the gain, need a handful.
TEXT_CACHE_SIZE = 1024

__all__ = ["WordPool", "grounded", "related_values", "same_word", "stem", "word_in"]


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
        self.stems = set(map(stem, self.words))
        self._prefixes: set[str] | None = None  # every stem's starts of 4+ letters

    def has(self, word: str) -> bool:
        """Is one of the pool's words :func:`same_word` as ``word``?

        That is, a stem ``t`` of the pool equals ``word``'s stem ``s``, or the shorter of
        the two has 4+ letters and starts the other: ``s`` starts with a ``t`` of 4+
        letters (look-ups of ``s``'s starts), or ``s`` (4+ letters) starts a ``t`` (a
        look-up in the set of the stems' starts, built on the first such question).
        """
        if word in self.words:
            return True
        s = stem(word)
        stems = self.stems
        if s in stems:
            return True
        n = len(s)
        for k in range(4, n):
            if s[:k] in stems:
                return True
        if n < 4:
            return False
        prefixes = self._prefixes
        if prefixes is None:
            prefixes = self._prefixes = {t[:k] for t in stems for k in range(4, len(t) + 1)}
        return s in prefixes


def grounded(phrase: str, text_words: Iterable[str] | WordPool) -> bool:
    """Does a hint's NL phrase come from a text (60% of its content words occur there)?

    >>> grounded("double bond", "what is the bond type".split())
    False
    >>> grounded("female patients", "how many female patient".split())
    True
    """
    words = _content_words(phrase)
    if not words:
        return False
    pool = text_words if isinstance(text_words, WordPool) else WordPool(text_words)
    hits = sum(1 for w in words if pool.has(w))
    return hits / len(words) >= 0.6


#: Words that deny the state right after them ("isn't normal", "non-carcinogenic"); "not"
#: denies it after a form of "be" ("is not normal"): "does not contain fluorine" still
#: needs the fluorine a hint defines.
_NEGATORS = lx._words("non isn't aren't wasn't weren't")
_BE = lx._words("is are was were be been")
#: Prefixes that make a word its opposite ("abnormal", "unpaid", "noncarcinogenic").
_OPPOSITE_PREFIXES = ("ab", "un", "non", "in", "dis")
_NEGATION_TOKEN = re.compile(r"[a-z]+(?:'t)?")


def _negated(tokens: list[str], i: int) -> bool:
    before = tokens[max(0, i - 2) : i]
    return bool(before) and (
        before[-1] in _NEGATORS or (before[-1] == "not" and len(before) == 2 and before[0] in _BE)
    )


@lru_cache(maxsize=64)
def _word_places(text: str) -> tuple[list[str], dict[str, list[int]]]:
    """The words of ``text`` (case-folded) and each word's places among them: built once for
    the hints a question is read against."""
    words = _NEGATION_TOKEN.findall(text.casefold())
    places: dict[str, list[int]] = {}
    for j, t in enumerate(words):
        places.setdefault(t, []).append(j)
    return words, places


def opposed(phrase: str, text: str) -> bool:
    """Does ``text`` (a question) deny the state a hint's ``phrase`` defines: a word of the
    phrase that the text holds only with a negating prefix ("normal" against "abnormal"),
    or only denied ("isn't normal", "non-carcinogenic") where the phrase states it? A hint
    that defines "normal" then says nothing the question asks of the other values.

    >>> opposed("a normal level of red blood cell", "has an abnormal level of red blood cell")
    True
    >>> opposed("Hematoclit is normal", "whose level of Hematoclit isn't normal")
    True
    >>> opposed("molecules are carcinogenic", "among the non-carcinogenic molecules")
    True
    >>> opposed("non-carcinogenic", "among the non-carcinogenic molecules")
    False
    >>> opposed("contain fluorine", "molecules that do not contain fluorine")
    False
    >>> opposed("normal range", "is the level within the normal range")
    False
    """
    pw = _NEGATION_TOKEN.findall(phrase.casefold())
    tw, places = _word_places(text)
    for i, w in enumerate(pw):
        if len(w) < 4 or w in _NEGATORS or _negated(pw, i):
            continue
        at = places.get(w, ())
        if at and all(_negated(tw, j) for j in at):
            return True
        if not at and any(pre + w in places for pre in _OPPOSITE_PREFIXES):
            return True
    return False


#: The ASCII characters :data:`~stef.nl.lexicon.WORD_TOKEN` does not match, each to a space.
_ASCII_NON_TOKEN = {c: " " for c in range(128) if not hp.WORD_TOKEN.match(chr(c))}


#: From this length on, :func:`word_tokens` translates ASCII text: ``str.translate`` pays
#: a dictionary look-up per distinct character, the engine a class test per character.
TRANSLATE_FROM = 80


def word_tokens(text: str) -> list[str]:
    """``hp.WORD_TOKEN.findall(text)``: on a long ASCII text by ``str.translate`` and
    ``str.split`` (every whitespace character is a separator; docs/performance.md,
    session 17).

    >>> word_tokens("the 3 blonde women's  cats"), word_tokens("café-2")
    (['the', '3', 'blonde', 'women', 's', 'cats'], ['caf', '2'])
    """
    if len(text) >= TRANSLATE_FROM and text.isascii():
        return text.translate(_ASCII_NON_TOKEN).split()
    return hp.WORD_TOKEN.findall(text)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _content_words(phrase: str) -> tuple[str, ...]:
    """The words :func:`grounded` looks for (memoised: the merge and the enrichment check
    ask about the same hint phrases)."""
    return tuple(
        w
        for w in word_tokens(phrase.casefold())
        if len(w) > 1 and w not in lx.PHRASE_STOPS
    )


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def text_words(low: str) -> tuple[str, ...]:
    """The words (:data:`~stef.nl.lexicon.WORD_TOKEN`) of a case-folded text, memoised: the
    reading's word set, the merge's and the enrichment check's pools and word lists all
    start from them. Collapsing the text's spaces changes none of them.

    >>> text_words("the 3 blonde women's  cats")
    ('the', '3', 'blonde', 'women', 's', 'cats')
    """
    return tuple(word_tokens(low))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def text_pool(text: str) -> WordPool:
    """The :class:`WordPool` of a text's words (memoised: the merge and the enrichment
    check pool the same question; a pool is only read).

    >>> text_pool("The blonde women").has("blond"), text_pool("x") is text_pool("x")
    (True, True)
    """
    return WordPool(text_words(text.casefold()))


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


#: A number's spelled-out scale: ``2 million``.
MULTIPLIERS = {"thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
#: A number's suffix, either case: ``10k``, ``$1M``, ``2.5B``, ``3bn`` (``5m`` is 5 million).
SUFFIXES = {"k": 1000, "m": 1_000_000, "mn": 1_000_000, "b": 1_000_000_000, "bn": 1_000_000_000}


def _parse_number(text: str) -> tuple[str, bool] | None:
    """``"$1,000"`` → ``("1000", False)``; ``"20 %"`` → ``("20", True)``; ``"1.5k"`` →
    ``("1500", False)``.

    >>> _parse_number("100K"), _parse_number("1.5k"), _parse_number("$1,000")
    (('100000', False), ('1500', False), ('1000', False))
    >>> _parse_number("$1M"), _parse_number("2.5B")
    (('1000000', False), ('2500000000', False))
    """
    m = lx.NUM_TEXT.match(text.strip())
    if not m:
        return None
    raw = m.group("n").casefold()
    num = str(lx.NUMBER_WORDS[raw]) if raw in lx.NUMBER_WORDS else normalize_number(raw)
    if num is None:
        return None
    factor = MULTIPLIERS[m.group("mult").casefold()] if m.group("mult") else 1
    factor *= SUFFIXES[m.group("k").casefold()] if m.group("k") else 1
    if factor != 1:
        val = float(num) * factor
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


#: An aggregate word listed after another ("the maximum and minimum age", "the average,
#: minimum, and maximum salary"): the list shares the noun phrase after its last word.
_COORDINATED_AGG = re.compile(
    r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?:the\s+)?(?:average|mean|minimum|maximum|min|max"
    r"|total|highest|lowest|largest|smallest)\b"
)


#: Heads of a count that name what they count after "of" ("the number of silver medals").
_COUNT_HEADS = frozenset({"number", "amount", "count"})


def shared_target(low: str, end: int, max_words: int = 3) -> str:
    """The noun phrase an aggregate word ending at ``end`` shares with the aggregate words
    listed right after it; "" when none follows.

    >>> low = "what is the maximum and minimum age of students?"
    >>> shared_target(low, low.index(" and")), shared_target(low, low.index(" of"))
    ('age', '')
    >>> low = "the average, minimum, and maximum salary"
    >>> shared_target(low, low.index(","))
    'salary'
    >>> low = "the maximum and minimum number of silver medals"
    >>> shared_target(low, low.index(" and"))
    'silver medals'
    """
    pos = end
    while (m := _COORDINATED_AGG.match(low, pos)) is not None:
        pos = m.end()
    if pos == end:
        return ""
    phrase, stop = _noun_phrase(low, pos, max_words)
    if phrase in _COUNT_HEADS and low.startswith(" of ", stop):
        return _noun_phrase(low, stop + 4, max_words)[0]  # "the number of silver medals"
    return phrase


def _is_participle(word: str) -> bool:
    """``made``, ``published``, ``taught``: a verb form that ends a noun phrase."""
    regular = len(word) >= 5 and word.endswith("ed") and not word.endswith("eed")
    return regular or word in lx.NOUN_PHRASE_PARTICIPLES


def _sentence_span(low: str, pos: int, ends: str = ".;?!") -> tuple[int, int]:
    """Start and end of the sentence (or clause) around ``pos``; ``ends`` are the
    characters that end one.

    >>> _sentence_span("a b. c d; e", 6), _sentence_span("a b. c d; e", 6, ".")
    ((4, 8), (4, 11))
    """
    start = max(low.rfind(c, 0, pos) for c in ends) + 1
    stops = [i for i in (low.find(c, pos) for c in ends) if i >= 0]
    return start, min(stops, default=len(low))


def _prev_words(low: str, pos: int, n: int = 3) -> list[str]:
    return lx.PREV_WORD.findall(low, max(0, pos - 60), pos)[-n:]


def plain_ascii(text: str) -> bool:
    """Is ``text`` ASCII, without the separators ``\\x1c``-``\\x1f``: a text on which an ASCII
    pattern (:func:`stef.nl.lexicon.folded`) matches as its Unicode original does?

    >>> plain_ascii("a\tb"), plain_ascii("café"), plain_ascii("a\x1fb")
    (True, False, False)
    """
    # \x1c-\x1f: what \s matches in a Unicode pattern and not in an ASCII one; four
    # substring tests (memchr), not a class the regular-expression engine tests character
    # by character (docs/performance.md, session 17)
    return (
        text.isascii()
        and "\x1c" not in text
        and "\x1d" not in text
        and "\x1e" not in text
        and "\x1f" not in text
    )


def _search_ci(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``rx.search(text)`` for a case-insensitive ``rx``: on plain ASCII text its twin finds
    the match in ``text.lower()`` and ``rx`` re-reads it in the text's case."""
    if not plain_ascii(text):
        return rx.search(text)
    m = lx.folded(rx).search(text.lower())
    return rx.match(text, m.start()) if m else None


def _lower_rx(rx: re.Pattern[str], low: str) -> re.Pattern[str]:
    """A case-insensitive pattern for the lower-case string ``low``: its fast twin when
    plain ASCII."""
    return lx.folded(rx) if plain_ascii(low) else rx


def _is_plural(word: str) -> bool:
    if word in lx.IRREGULAR_PLURALS:
        return True
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s"))


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@lru_cache(maxsize=8192)
def _column_variants(raw: str) -> frozenset[str]:
    """Spellings of a column an NL text might use: ``first_name``/``FirstName`` → ``first name``."""
    base = normalize_column(raw)
    camel = _CAMEL_BOUNDARY.sub(" ", raw.split(".")[-1].strip('`"[]'))
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
    for cand in phrase_keys(phrase):
        if cand in known:
            return known[cand]
    return None


def phrase_keys(phrase: str) -> Iterator[str]:
    """The spellings :func:`_match_column` looks up for a phrase, in its order: each run of
    words, longest first, then that run less a final "s".

    >>> list(phrase_keys("Free meals"))
    ['free meals', 'free meal', 'free', 'meals', 'meal']
    """
    words = phrase.casefold().split()
    for size in range(len(words), 0, -1):
        for i in range(len(words) - size + 1):
            cand = " ".join(words[i : i + size])
            yield cand
            if cand.endswith("s"):
                yield cand[:-1]

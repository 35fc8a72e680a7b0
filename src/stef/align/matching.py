"""How the question's words and values are matched to the SQL's names and literals.

The shared primitives of the alignment checks: question text prepared for look-ups
(:func:`searchable`), literal mentions, canonical column names, value matching (exact,
LIKE pattern, year of a date, word contained), and column names the question mentions
(:func:`text_stems`, :func:`name_mentioned`). Pure functions, no findings.

>>> values_match("alameda county", "alameda"), canon_col("Order_Date")
(True, 'orderdate')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import methodcaller

from stef.nl.lexicon import BQ, DQ, SQ
from stef.nl.places import place_code
from stef.nl.states import state_words
from stef.nl.words import TEXT_CACHE_SIZE, word_tokens
from stef.spec import Filter, Spec

#: Literals so common in SQL that their absence from the question says nothing.
NEUTRAL_LITERALS = frozenset({"0", "1", "100", "1.0", "", "%", "null", "true", "false", "-1", " "})

_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_FOUR_DIGITS = re.compile(r"\d{4}")


def _year_end(rest: str, marks: str) -> bool:
    """What follows a year at the start of a value: the end (or a last newline, as ``$``
    allows) or one of ``marks`` (a dash; a LIKE wildcard on the SQL side)."""
    return rest in ("", "\n") or (rest[:1] != "" and rest[0] in marks)


def _word_or_dot(ch: str) -> bool:
    """A character of a word (``\\w``) or a dot: no boundary around a number."""
    return ch.isalnum() or ch in "_."


def occurs(
    needle: str,
    hay: str,
    bad_before: Callable[[str], bool],
    bad_after: Callable[[str], bool],
    bad_after_pair: Callable[[str], bool] | None = None,
) -> bool:
    """Does ``needle`` occur in ``hay`` with neither neighbour refused? ``str.find`` with a
    boundary test, so that thousands of numbers against thousands of values compile no
    regular expression each (a regex per pair overflowed Python's cache: issue 13, item 5).
    ``bad_after_pair`` sees the two characters after (``'.5'`` after a number).

    >>> [occurs("13", s, _word_or_dot, _word_or_dot) for s in ("Agent 13", "A130", "1.13")]
    [True, False, False]
    """
    start = hay.find(needle)
    while start >= 0:
        end = start + len(needle)
        after = hay[end : end + 1]
        if (
            (start == 0 or not bad_before(hay[start - 1]))
            and not (after and bad_after(after))
            and not (bad_after_pair is not None and bad_after_pair(hay[end : end + 2]))
        ):
            return True
        start = hay.find(needle, start + 1)
    return False


_WORD_CHARS = re.compile(r"[^\w%.\-/:]+", re.UNICODE)
#: The ASCII characters :data:`_WORD_CHARS` replaces, each to a space (``str.translate``).
_ASCII_NON_WORD = {c: " " for c in range(128) if _WORD_CHARS.match(chr(c))}


def _word_runs(text: str) -> list[str]:
    """``_WORD_CHARS.sub(" ", text).split()``: on ASCII text by ``str.translate``, which
    spaces the same characters without a class test a character (no whitespace is a word
    character, so the split finds the same words; docs/performance.md, session 17)."""
    if text.isascii():
        return text.translate(_ASCII_NON_WORD).split()
    return _WORD_CHARS.sub(" ", text).split()


#: ``t.strip(".-/:")`` as a function, for ``map``.
_strip_punctuation = methodcaller("strip", ".-/:")


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def quoted_terms(text: str, backquoted: bool = True) -> frozenset[str]:
    """The terms a text quotes, case-folded: in double or single quotes, and in backquotes
    unless ``backquoted`` is False (memoised: the same question comes back per check).

    >>> sorted(quoted_terms("the status ('CURRENT' if yes) of `hg pull`"))
    ['current', 'hg pull']
    >>> sorted(quoted_terms("the status ('CURRENT' if yes) of `hg pull`", backquoted=False))
    ['current']
    """
    kinds = (BQ, DQ, SQ) if backquoted else (DQ, SQ)
    return frozenset(m.group(1).casefold().strip() for rx in kinds for m in rx.finditer(text))


def written_strings(sql: Spec) -> frozenset[str]:
    """The SQL's string literals, case-folded as its filters' values are: what a filter
    compares as written, not a value the SQL computes (a date format inside ``FORMAT_DATE``,
    a number).

    >>> sorted(written_strings(Spec(flags={"string_literals": ["Sales", "8/%"]})))
    ['8/%', 'sales']
    """
    return frozenset(s.casefold() for s in sql.flags.get("string_literals") or ())


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def searchable(*texts: str | None) -> str:
    """Question text prepared for literal look-ups: case-folded, punctuation spaced
    (memoised: the same texts come back with each SQL written for them).

    >>> searchable("Users in 'New  York'?", "Since 2024.")
    ' users in new york since 2024 '
    """
    joined = " ".join(filter(None, texts))
    words = _word_runs(joined.casefold())
    return " " + " ".join(filter(None, map(_strip_punctuation, words))) + " "


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}( .*)?")


def text_mentions(value: str, text: str) -> bool:
    """Is ``value`` (normalised) mentioned in ``text`` (from :func:`searchable`)?"""
    core = value.strip("%_ ").replace("%", " ").replace("_", " ")
    core = " ".join(_word_runs(core))
    if not core:
        return True
    if f" {core} " in text:
        return True
    # dates: a year (or year-month) of the date mentioned
    if _ISO_DAY.fullmatch(core):
        return f" {core[:4]} " in text or f" {core[:7]} " in text
    # short codes such as 'M' for male are explained only by an explicit mention
    return False


@lru_cache(maxsize=65536)
def _canon_col_cached(name: str) -> str:
    return _NON_ALNUM.sub("", name.casefold())


def canon_col(name: str | None) -> str:
    return _canon_col_cached(name) if name else ""


def pinned_columns(sql: Spec) -> set[str]:
    """Columns (canonical) a WHERE or a join's ON holds equal to one value: a GROUP BY on one
    splits nothing, and hidden it repeats no label.

    >>> pinned_columns(Spec(filters=[Filter("tag_name", "=", ("android",), clause="where")]))
    {'tagname'}
    """
    return {
        canon_col(f.column)
        for f in sql.filters
        if f.column and f.op == "=" and len(f.values) == 1 and f.clause in ("where", "join")
    }


#: A year of the 20th or 21st century, written in full.
CENTURY_YEAR = re.compile(r"(?:19|20)\d\d")

#: A plain number, perhaps negative: compared by value, never as a word of another.
SIGNED_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


#: How a run-time parameter starts, as the SQL spec writes it (``@tag``, ``:tag``, ``$1``, ``?``).
_PARAMETER_MARKS = ("@", ":", "$", "?")


def is_parameter(value: str) -> bool:
    """Is the SQL value a run-time parameter, bound when the query runs?

    >>> is_parameter(":category"), is_parameter("$1"), is_parameter("?"), is_parameter("toys")
    (True, True, True, False)
    """
    return value.startswith(_PARAMETER_MARKS)


def values_match(nv: str, sv: str) -> bool:
    """Does an NL value match a SQL literal? Exact, LIKE-pattern, year-of-date, or word-contained.

    >>> values_match("alameda county", "alameda"), values_match("2023", "2023-01-01")
    (True, True)
    >>> values_match("north", "south"), values_match("13", "agent 13")
    (False, True)
    >>> values_match("2013-04", "201304"), values_match("2010-02-22%", "2010-02-22 00:00:00")
    (True, True)
    >>> values_match("mathematica", "%<mathematica>%"), values_match("nice try", "%ice tr%")
    (True, True)
    >>> values_match("5", "-5"), values_match("-5", "-5.0"), values_match("c++", "%<c++>%")
    (False, True, True)
    >>> values_match("germany", "de"), values_match("germany", "fr")
    (True, False)
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
    if core == nv or core.strip(_TAG_MARKS) == nv:
        return True  # 'c#' of '%c#%' and '%<c++>%': too short for the word tests below
    if _FOUR_DIGITS.fullmatch(nv) and sv.startswith(nv) and _year_end(sv[4:], "-%"):
        return True
    if _FOUR_DIGITS.fullmatch(core) and nv.startswith(core) and _year_end(nv[4:], "-"):
        return True
    if SIGNED_NUMBER.fullmatch(nv) and SIGNED_NUMBER.fullmatch(core):
        return float(nv) == float(core)  # '5' is not '-5'
    if nv.isdigit() and occurs(nv, core, _word_or_dot, _word_or_dot):
        return True  # '13' of 'Agent 13'
    if len(core) >= 4 and len(nv) >= 4 and nv.rstrip("s") == core.rstrip("s"):
        return True  # 'Poster' for 'Posters'
    if len(core) >= 3 and len(nv) >= 3:
        a, b = f" {nv} ".replace("-", " "), f" {core} ".replace("-", " ")
        if a in b or b in a:
            return True  # 'Italian' in "Italian-language"
        wa, wb = _plain_words(nv), _plain_words(core)
        if len(wa) >= 3 and len(wb) >= 3 and (f" {wa} " in f" {wb} " or f" {wb} " in f" {wa} "):
            return True  # 'mathematica' in '%<mathematica>%', 'imgur' of 'imgur.com'
        if sv.startswith("%") and sv.endswith("%") and len(wb) >= 4 and wb in wa:
            return True  # '%ice try, robo%' holds every text that holds 'nice try, robot.'
        if _same_words(wa, wb):
            return True  # 'Haynes, Summer' for "Professor Summer Haynes"
        if acronym(nv) == wb:
            return True  # 'EECS' for "Electrical Engineering and Computer Science"
    if place_code(nv, core):
        return True  # 'DE' for "Germany", 'TX' for "Texas": an ISO 3166 code of the place
    return word_variant(nv, core)


def _same_words(value: str, literal: str) -> bool:
    """Does the literal hold two words or more of the value, in any order, with at most one
    word of the value left over (a title, a middle name)? A name stored last name first.

    >>> _same_words("professor summer haynes", "haynes summer"), _same_words("a b c", "a d")
    (True, False)
    >>> _same_words("2024 04 01", "2024 01")
    False
    """
    lw = set(literal.split())
    vw = set(value.split())
    if any(w.isdigit() for w in lw):
        return False  # the parts of a date or a code ('2024 01 01' is no '2024 04 01')
    return len(lw) >= 2 and lw <= vw and len(vw - lw) <= 1


def word_variant(a: str, b: str) -> bool:
    """Two spellings of one word: a demonym or an abbreviation of it (``america`` and
    ``american``, ``euro`` and ``eur``), or a typo of one letter in a long word
    (``europearn`` for ``european``).

    >>> word_variant("america", "american"), word_variant("euro", "eur")
    (True, True)
    >>> word_variant("eastern", "east"), word_variant("western europe", "west europe")
    (True, True)
    >>> word_variant("europearn grand prix", "european grand prix")
    True
    >>> word_variant("male", "female"), word_variant("iran", "iraq")
    (False, False)
    """
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb) or a == b:
        return False
    for x, y in zip(wa, wb, strict=True):
        if x == y:
            continue
        short, long_ = sorted((x, y), key=len)
        if not (short.isalpha() and long_.isalpha() and len(short) >= 3):
            return False
        if long_.startswith(short) and (len(long_) - len(short) <= 2 or long_ == short + "ern"):
            continue  # 'african' of 'africa', 'eastern' of 'east'
        if len(short) >= 6 and _one_edit(x, y):
            continue
        return False
    return True


def _one_edit(x: str, y: str) -> bool:
    """Do ``x`` and ``y`` differ by one inserted, deleted or replaced letter?"""
    if abs(len(x) - len(y)) > 1:
        return False
    if len(x) == len(y):
        return sum(p != q for p, q in zip(x, y, strict=True)) == 1
    short, long_ = sorted((x, y), key=len)
    i = next((k for k, (p, q) in enumerate(zip(short, long_, strict=False)) if p != q), len(short))
    return short[i:] == long_[i + 1 :]


_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def _plain_words(v: str) -> str:
    """``v``'s letters and digits, one space between runs (``'<c++>'`` → ``'c'``)."""
    return " ".join(_NON_WORD.sub(" ", v).split())


#: Brackets that mark a tag or a list item inside a stored text (``<c++>``, ``[sql]``).
_TAG_MARKS = "<>[](){}|"
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


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def name_words(name: str) -> list[str]:
    """The words of an identifier: split at separators, camel case and digits runs kept.

    >>> name_words("GreaterManchesterCrime"), name_words("boston_crimes_2019")
    (['greater', 'manchester', 'crime'], ['boston', 'crimes', '2019'])
    """
    spaced = name if name.islower() else _CAMEL.sub(" ", name)  # each match needs [A-Z]
    return word_tokens(spaced.casefold())


#: Words an acronym skips ("Center for International Studies" is CIS).
_ACRONYM_SKIPS = frozenset({"of", "for", "and", "the", "in", "on", "at", "to", "de", "&"})


@lru_cache(maxsize=16384)
def acronym(value: str) -> str | None:
    """The initials of a name of three words or more, the small words skipped, or None.

    >>> acronym("Center for International Studies"), acronym("New York")
    ('cis', None)
    """
    words = [w for w in _NON_WORD.sub(" ", value.casefold()).split() if w not in _ACRONYM_SKIPS]
    if len(words) < 3 or not all(w[0].isalpha() for w in words):
        return None
    return "".join(w[0] for w in words)


def column_part(name: str | None) -> str:
    """The column part of a qualified name, case-folded (``lso.NUM_X`` → ``num_x``).

    >>> column_part("T2.Amount"), column_part(None)
    ('amount', '')
    """
    return (name or "").rsplit(".", 1)[-1].casefold()


def value_in_names(value: str, names: Sequence[str]) -> str | None:
    """The first identifier whose words hold every word of ``value`` (a stated value the
    SQL answers by naming a table, a dataset or a column after it), or None.

    >>> value_in_names("manchester", ["GreaterManchesterCrime"])
    'GreaterManchesterCrime'
    >>> value_in_names("manchester", ["greatermanchestercrime"])
    'greatermanchestercrime'
    >>> value_in_names("new york", ["ny_sales"]) is None
    True
    >>> value_in_names("center for international studies", ["cis_course_catalog"])
    'cis_course_catalog'
    >>> value_in_names("bet365", ["B365D"]), value_in_names("bet365", ["b366d"])
    ('B365D', None)
    >>> value_in_names("math", ["avgscrmath"]), value_in_names("reading", ["AvgScrRead"])
    ('avgscrmath', 'AvgScrRead')
    """
    words = [w for w in NAME_SPLIT.split(value.casefold()) if w]
    if not words or sum(len(w) for w in words) < 3:
        return None
    joined = "".join(words)
    short = acronym(value)
    coded = _LETTERS_DIGITS.fullmatch(joined)  # "bet365": its initials and digits, B365D
    for name in names:
        c = _LETTERS_DIGITS.match(canon_col(name)) if coded else None
        if coded and c and c.group(2) == coded.group(2) and letters_in_order(c[1], coded[1]):
            return name
        have = name_words(name)
        if short and short in have:
            return name  # the initials: cis_course_catalog for the Center for International Studies
        if all(
            any(h == w or (len(w) >= 4 and h.rstrip("s") == w.rstrip("s")) for h in have)
            for w in words
        ):
            return name
        if len(joined) >= 5 and joined in canon_col(name):
            return name  # a canonical (lower-cased, joined) name: greatermanchestercrime
    ends = (joined, _verb_stem(joined))
    if len(joined) >= 4:  # a measure named last: avgscrmath for Math, avgscrread for Reading
        return next((name for name in names if canon_col(name).endswith(ends)), None)
    return None


def _verb_stem(word: str) -> str:
    """``word`` without an "-ing" that leaves four letters or more (reading: read), else
    ``word``.

    >>> _verb_stem("reading"), _verb_stem("sing"), _verb_stem("math")
    ('read', 'sing', 'math')
    """
    return word[:-3] if word.endswith("ing") and len(word) >= 7 else word


_LETTERS_DIGITS = re.compile(r"([a-z]+)(\d+)")

BOUNDS = frozenset({"<", ">", "<=", ">="})


def letters_in_order(short: str, word: str, lead: int = 1) -> bool:
    """Does ``word`` begin with ``short``'s first ``lead`` letters and hold the rest of its
    letters in order, as an abbreviation does (``dept`` in department with ``lead=2``,
    ``ap`` in airport)? The callers bound the abbreviation's length.

    >>> letters_in_order("dept", "department", 2), letters_in_order("ap", "airport")
    (True, True)
    >>> letters_in_order("date", "department", 2), letters_in_order("r", "airport")
    (False, False)
    """
    if short[:lead] != word[:lead]:
        return False
    rest = iter(word[lead:])
    return all(ch in rest for ch in short[lead:])


def float_value(v: str) -> float | None:
    """A number as written, or None (``"2.5"`` → 2.5, ``"north"`` → None)."""
    try:
        return float(v)
    except ValueError:
        return None


def int_value(v: str) -> int | None:
    f = float_value(v)
    return int(f) if f is not None and f.is_integer() else None


NAME_SPLIT = re.compile(r"[^0-9a-z]+")


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def text_stems(text: str) -> frozenset[str]:
    """Five-letter stems of the words of a :func:`searchable` text (memoised).

    Four-letter prefixes are kept too, so a short column word (``name``) matches its
    plural or longer form (``names``).

    >>> sorted(text_stems(" list the names "))
    ['list', 'name', 'names', 'the']
    """
    words = [t for t in word_tokens(text) if len(t) >= 3]
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
        words = _checkable_words(candidate)
        if not words:
            return True
        for w in words:
            if w[:5] in stems:
                return True
            if len(w) >= 7 and any(len(st) >= 4 and st in w for st in stems):
                return True
    return False


@lru_cache(maxsize=16384)
def _checkable_words(name: str) -> tuple[str, ...]:
    """The words of a name that :func:`name_mentioned` can check: three letters or more,
    not all digits (memoised: names come back with every record).

    >>> _checkable_words("Boston_Crimes_2019_id")
    ('boston', 'crimes')
    """
    return tuple(w for w in NAME_SPLIT.split(name.casefold()) if len(w) >= 3 and not w.isdigit())


#: What separates the clauses of the hints (the enriched question).
HINT_CLAUSE = re.compile(r"[;\n]+")
_HINT_WORD = re.compile(r"\w+")


def hinted_column(
    hints: str | None, columns: Sequence[str], holds: Callable[[str, list[str]], bool]
) -> str | None:
    """The first of ``columns`` that a clause of the hints (the enriched question, split at
    ``;`` and new lines) names as a word, among the clauses for which ``holds(clause,
    words)`` is true (``clause`` lower-cased, ``words`` its words); None when none does.

    >>> hinted_column("A3 is region; A16 stands for crimes in 1996", ["a16", "a3"],
    ...               lambda clause, words: "1996" in words)
    'a16'
    """
    for clause in HINT_CLAUSE.split(hints or ""):
        low = clause.casefold()
        words = _HINT_WORD.findall(low)
        if holds(low, words):
            tied = next((c for c in columns if c.casefold() in words), None)
            if tied is not None:
                return tied
    return None


#: A spread the question asks for, in :func:`searchable` text ("the standard deviation of …",
#: "variance"), which :func:`stef.align.measures.check_spread` reads.
ASKED_SPREAD = re.compile(r" (?:standard deviations?|std devs?|stdevs?|stddevs?|variances?) ")
#: A spread or a median the question asks for: a cue the measure checks read.
_ASKED_STATISTIC = re.compile(rf"{ASKED_SPREAD.pattern}| medians? ")


def checked_cues(
    nl: Spec,
    required: Sequence[Filter],
    matched: Sequence[tuple[Filter, Filter]],
    question: str,
    grouped: bool = False,
) -> int:
    """How many of the question's cues the alignment could check: its required filters,
    aggregates, top-k, order, grouping, DISTINCT, columns and formulas, and each SQL filter
    matched to no required one whose value the question itself states (``filter_implied``:
    it lined up too); a series over periods ("Voters in moderator elections per year")
    where the SQL is ``grouped``, since the grouping and series checks read it; a ratio
    or a percentage the question asks for ("fraction of … per tag"), which the division
    checks read, unless a formula of the enrichment already counts it; a superlative taken
    per group ("the most expensive product in each category"), which the top-k checks read.

    >>> sql_f = Filter("city", "=", ("paris",), "city = 'Paris'", "where")
    >>> implied = Filter("city", "=", ("paris",), "", "question")
    >>> checked_cues(Spec(), [], [(implied, sql_f)], "Users in Paris")
    1
    >>> checked_cues(Spec(limit=5), [], [(implied, sql_f)], "Top 5 users")
    1
    """
    asked = searchable(question)
    implied = sum(
        1
        for a, _ in matched
        if a not in required
        and any(v not in NEUTRAL_LITERALS and text_mentions(v, asked) for v in a.values)
    )
    return (
        len(required)
        + implied
        + len(nl.aggregations)
        + (1 if nl.limit is not None else 0)
        + (1 if nl.order_by else 0)
        + (1 if nl.group_by or (grouped and nl.flags.get("period_series")) else 0)
        + (1 if nl.distinct else 0)
        + len(nl.columns)
        + len(nl.formulas)
        + (1 if nl.flags.get("ratio") and not nl.formulas else 0)
        + (1 if nl.flags.get("one_per_group") and not nl.group_by else 0)  # the per-group checks
        + (1 if _ASKED_STATISTIC.search(asked) else 0)
        + (1 if nl.flags.get("negation") else 0)  # the negation checks read it
        + (1 if state_words(question) else 0)  # "cancelled orders": the state checks read it
    )


#: Words of a column that holds when something began (a hire date, a founding year): the
#: longest-serving, the longest-running has the earliest.
START_WORDS = frozenset(
    {"hire", "hired", "founded", "founding", "established", "start", "started", "since"}
    | {"joined", "opened", "inception"}
)
_DURATIONS = re.compile(r"\b(?:longest|shortest)\b")


def ranks_by_start(text: str, key: str) -> bool:
    """Does a superlative of duration ("the longest-running", "the shortest-serving") rank by
    a sort key that holds when something began, so that the longest has the earliest start?

    >>> ranks_by_start("longest running open incident", "opened_at")
    True
    >>> ranks_by_start("longest flight", "duration"), ranks_by_start("latest hire", "hire_date")
    (False, False)
    """
    if _DURATIONS.search(text.casefold()) is None:
        return False
    return not START_WORDS.isdisjoint(re.findall(r"[a-z]+", key.casefold()))


_TIMES = frozenset({"date", "time", "timestamp", "datetime", "dt", "at", "on"})


def dated_name(arg: str | None, measure: tuple[str, ...]) -> bool:
    """Is the column ``arg`` a date or time named for a modifier of a measure that holds no
    time (``order_date`` for "order value": the date of the order, no value of it)?

    >>> dated_name("o.order_date", ("order", "value")), dated_name("order_total", ("order",))
    (True, False)
    """
    words = name_words((arg or "").rsplit(".", 1)[-1])
    return bool(words) and words[-1] in _TIMES and _TIMES.isdisjoint(measure)


#: SQL operators that keep the rows where something does not hold.
SQL_NEGATING_OPS = frozenset({"!=", "not in", "not like", "not between", "is null", "not exists"})


def none_left(f: Filter) -> bool:
    """A count compared with nothing: ``= 0``, ``< 1``, ``<= 0``.

    >>> none_left(Filter("n", "<", ("1",))), none_left(Filter("n", ">", ("0",)))
    (True, False)
    """
    value = f.values[0] if len(f.values) == 1 else ""
    return (f.op in ("=", "<=") and value == "0") or (f.op == "<" and value == "1")

"""Patterns rewritten for speed keep their original's matches (docs/performance.md, sessions
16 and 17): each rewritten pattern of stef is held to the form it replaced, on tricky texts
and on random strings of the characters its assertions test.

A pattern that opens with a lookbehind is tried at every position of a text; the same test
made after its first character (``'(?<![\\w']')`` for ``(?<![\\w'])'``) lets the regex engine
scan for that character instead, with the same matches."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from stef.align import answers, formats
from stef.nl import enrichment, values, words
from stef.nl import hint_patterns as hp
from stef.nl import lexicon as lx

_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_YEAR = r"(?:1[89]\d\d|20\d\d)"

#: (the rewritten pattern, the form it replaced)
FORMS = [
    (lx.BARE_NUMBER, rf"(?<![\w.$/:-]){_DIGITS}(?![\w/%:-]|\.\d)"),
    (lx.SQ, r"(?<![\w'])'((?:''|[^'\n]){1,150}?)'(?!['\w])"),
    (lx.YEAR_ALONE, rf"(?<![\w/.$,-]){_YEAR}(?![\w%/-]|\.\d|,\d)"),
    (enrichment._NUMBER, r"(?<![\w.])\d+(?:[.,]\d+)*(?!\w)"),
    (lx.FOUR_DIGITS, r"\d{4}"),
    (
        values._CODE_NAME,
        r"(?<![\w.#+@/$'-])([A-Za-z][A-Za-z0-9]*(?:(?:\.[A-Za-z0-9]+)+|#|\+\+)"
        r"|[A-Za-z]{2,}[0-9]+[A-Za-z0-9]*)(?![\w#+@/'-]|\.\w)",
    ),
]

TEXTS = [
    "the 'a' and x'a' and ''a'' or 'it''s' but d'a'b, 'x'y' and '\n'",
    "1,000.5 a1,000 .5 $5 x 1,23 1,234,567.89k 12 ,345 1.2.3 1,2,3 -7 /8 20:29:39 8:00-9:00",
    "in 1999, a1999 21999 1999.5 1999,5 -2005 /2005 2005- 2020s the 1800s $1999",
    "٣٤ x٣1999 ٣1999 and 'é' or é'1'",
    "c# and node.js, .net x.c++ a-b2 html5 ab2.c3 #c# @x1 'vb.net' e.g. db2/x",
]


def _random_texts(n: int) -> list[str]:
    rnd = random.Random(16)
    alphabet = "0129 ,.'$/-a%\n_x٣éc#+:"
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 14))) for _ in range(n)]


def _matches(rx: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[Any, ...]]]:
    return [(m.span(), m.groups()) for m in rx.finditer(text)]


@pytest.mark.parametrize("rx, original", FORMS, ids=lambda x: getattr(x, "pattern", x)[:20])
def test_a_rewritten_pattern_matches_where_its_original_does(rx, original):
    before = re.compile(original, rx.flags)
    for text in TEXTS + _random_texts(3000):
        assert _matches(rx, text) == _matches(before, text), text
        m, b = rx.search(text, 2), before.search(text, 2)  # a start past the lookbehind
        assert (m and (m.span(), m.groups())) == (b and (b.span(), b.groups())), text


def test_plain_ascii_is_the_class_it_replaced() -> None:
    """``words.plain_ascii`` tests four characters with ``in`` where it searched a class."""
    before = re.compile(r"[\x1c-\x1f]")
    rnd = random.Random(17)
    alphabet = "a \t\n\x1b\x1c\x1d\x1e\x1f\x20é"
    texts = ["", "plain", "a\x1cb", "x\x1f", "\x1d", "é\x1e"]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 9))) for _ in range(5000)]
    for text in texts:
        assert words.plain_ascii(text) == (text.isascii() and not before.search(text)), text


def test_the_unnamed_aggregate_gate_passes_every_match() -> None:
    """``parse._may_name_aggregates`` skips the search only where it cannot match."""
    from stef.sql import parse

    rx = parse._UNNAMED_AGGREGATE_TEXT
    rnd = random.Random(17)
    alphabet = ["var", "VaR", "p", "stdev", "count_", "big", "(", " ", "x", "ſ", "ı", "İ", "_"]
    texts = ["SELECT VARP (x)", "select count_big(*)", "stdevp(", "xvar(", "vaſ(", "count_bıg("]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 6))) for _ in range(20000)]
    for text in texts:
        script = f"DECLARE @n int = 1; {text}"
        for upper in (text.upper(), script.upper()):
            assert parse._may_name_aggregates(text, upper) or not rx.search(text), text


def test_word_runs_are_the_substitution_they_replaced() -> None:
    """``matching._word_runs`` translates ASCII text where it substituted a class."""
    from stef.align import matching

    rnd = random.Random(17)
    alphabet = [chr(c) for c in range(128)] + ["é", "ſ", "\u00a0", "\u2003", "٣", "_"]
    texts = [" Users in 'New  York'? ", "a%b.c-d/e:f_g", "x\x1cy\x1fz", "é-1 ٣"]
    texts += ["".join(rnd.choices(alphabet, k=rnd.randint(0, 12))) for _ in range(20000)]
    for text in texts:
        assert matching._word_runs(text) == matching._WORD_CHARS.sub(" ", text).split(), text


def test_the_aggregate_finder_matches_where_the_twin_does() -> None:
    """``cues.AGG_FINDER`` (branches by first character) has the spans of ``AGG_RE``'s
    lower-case twin on plain ASCII text, from any start."""
    from stef.nl.cues import AGG_FINDER

    twin = lx.folded(lx.AGG_RE)
    rnd = random.Random(17)
    parts = ["how", " many", "total", "number", "no.", "no", " of", "#", "count", "sum"]
    parts += ["summed", "sumed", " up", "the", "in", "average", "avg", "mean", "max", "maximum"]
    parts += ["min", "minimum", "-", "_", "x", "1", " ", "\n", "a", "##", "of", "  "]
    texts = ["how many users", "the total number of x", "# of cars", "x#y", "a-mean", "sum-of"]
    texts += ["".join(rnd.choices(parts, k=rnd.randint(1, 8))) for _ in range(20000)]
    for text in texts:
        assert _matches(AGG_FINDER, text) == [(s, ()) for s, _ in _matches(twin, text)], text
        for pos in (1, 3):
            m, b = AGG_FINDER.search(text, pos), twin.search(text, pos)
            assert (m and m.span()) == (b and b.span()), text


def test_word_tokens_and_name_words_are_the_forms_they_replaced() -> None:
    """``words.word_tokens`` translates ASCII text where it split at a class or found the
    runs of one (``NAME_SPLIT``, ``WORD_TOKEN``), and ``name_words`` skips the camel-case
    split of a lower-case name."""
    from stef.align import matching

    rnd = random.Random(17)
    alphabet = [chr(c) for c in range(128)] + ["é", "ſ", "İ", "\u00a0", "٣", "K"]
    texts = ["GreaterManchesterCrime", "boston_crimes_2019", "ABCDef", "x\x1cy", "é-1 ٣"]
    texts += ["".join(rnd.choices(alphabet, k=rnd.randint(0, 12))) for _ in range(20000)]
    ascii_only = alphabet[:128] + list("abcxyz019") * 8
    texts += ["".join(rnd.choices(ascii_only, k=rnd.randint(70, 200))) for _ in range(5000)]
    for text in texts:
        assert words.word_tokens(text) == [t for t in matching.NAME_SPLIT.split(text) if t]
        assert words.word_tokens(text) == hp.WORD_TOKEN.findall(text)
        spaced = matching._CAMEL.sub(" ", text).casefold()
        assert matching.name_words(text) == [w for w in matching.NAME_SPLIT.split(spaced) if w]


def test_the_between_finder_matches_where_the_twin_does() -> None:
    """``values.between_finder()`` (branches by first character) has the spans of
    ``BETWEEN_RE``'s lower-case twin on plain ASCII text, from any start."""
    finder = values.between_finder()
    twin = lx.folded(lx.BETWEEN_RE)
    rnd = random.Random(17)
    parts = ["between", "from", "ranging", "in", "within", "the", "range", "of", "and", "to"]
    parts += ["-", "through", "us$", "uss$", "usd", "$", "1", "12", "1,000", "1,00", ".5", "k"]
    parts += ["five", "percent", "%", " ", "  ", "x", "?", ".", "/", "\n", "2020", "million"]
    texts = ["between 5 and 10", "from $1,000 to $2,000", "ages 18-25 only", "x1 - 2 y"]
    texts += ["in the range of 3 to 4", "within the range 1 - 2", "usd 5 through 7 x"]
    texts += ["".join(rnd.choices(parts, k=rnd.randint(1, 9))) for _ in range(20000)]
    for text in texts:
        assert [m.span() for m in finder.finditer(text)] == [
            m.span() for m in twin.finditer(text)
        ], text
        for pos in (1, 3):
            m, b = finder.search(text, pos), twin.search(text, pos)
            assert (m and m.span()) == (b and b.span()), text


def test_question_words_are_the_words_they_replaced() -> None:
    """``terms.question_words`` translates ASCII text where it found ``QUESTION_WORD``."""
    from stef.align import terms

    rnd = random.Random(17)
    alphabet = [chr(c) for c in range(128)] + ["é", "ſ", "İ", "\u00a0", "K"] + list("abz") * 20
    texts = ["how many x's?", "a b cd", "don't", "é-ab", "ab\x1ccd"]
    texts += ["".join(rnd.choices(alphabet, k=rnd.randint(0, 12))) for _ in range(20000)]
    for text in texts:
        assert terms.question_words(text) == terms.QUESTION_WORD.findall(text), text


def test_the_hint_functions_of_plain_ascii_text_are_the_pattern_s() -> None:
    """``hints._HINT_FUNCTION_LOW`` on lower-case plain ASCII text finds the names
    ``_HINT_FUNCTION`` finds (lower-cased), at the same places."""
    from stef.align import hints

    rnd = random.Random(17)
    parts = ["count", "COUNT", "sum", "Sum", "avg", "min", "max", "year", "subtract", "divide"]
    parts += ["substr", "cast", "sub", "(", " (", "\t(", "x", "_", "1", " ", "mary", "\n", "-"]
    texts = ["SUM(x) / COUNT (y)", "xsum(1)", "DIVIDE(a, b)", "substr(a)", "cast (x as int)"]
    texts += ["".join(rnd.choices(parts, k=rnd.randint(1, 8))) for _ in range(20000)]
    for text in texts:
        found = hints._HINT_FUNCTION_LOW.finditer(text.lower())
        low = [(m.span(), m.group(0)[:-1].rstrip()) for m in found]
        assert low == [(m.span(), m.group(1).lower()) for m in hints._HINT_FUNCTION.finditer(text)]


def test_the_relative_period_gate_passes_every_match() -> None:
    """``dates.relative_period`` is ``lx.RELATIVE.search``, skipped only where it cannot
    match."""
    from stef.align import dates

    rnd = random.Random(17)
    parts = ["last", "LAST", "this", "current", "previous", "past", "next", "prior", "recent"]
    parts += ["today", "Yesterday", "in", "the", " ", "30", "three", "days", "year", "month"]
    parts += ["weeks", "x", "ſ", "ı", "-", "\n"]
    texts = ["in the last 30 days", "this year", "TODAY", "past three months", "laſt year"]
    texts += ["".join(rnd.choices(parts, k=rnd.randint(1, 7))) for _ in range(20000)]
    for text in texts:
        m, b = dates.relative_period(text), lx.RELATIVE.search(text)
        assert (m and (m.span(), m.groups())) == (b and (b.span(), b.groups())), text


def test_verb_forms_are_the_pattern_s_on_words() -> None:
    """``terms._verb_form`` is ``_VERB_FORM.search`` on the words it is given (letters)."""
    from stef.align import terms

    rnd = random.Random(17)
    words = ["reported", "need", "bed", "placed", "seed", "ed", "aed", "xxed", "opened"]
    words += ["".join(rnd.choices("abdexz", k=rnd.randint(1, 8))) for _ in range(20000)]
    for word in words:
        assert terms._verb_form(word) == bool(terms._VERB_FORM.search(word)), word


def test_number_tests_of_the_alignment_are_the_patterns_they_replaced() -> None:
    """``answers._tagged``, ``answers.bounded_in`` and ``formats._unquoted`` test numbers by
    string operations where a pattern was compiled for each number (session 18)."""
    rng = random.Random(18)
    numbers = ["1", "16", "2023", "1.5", "0", "12", "٣", "1e3"]
    alphabet = "0123456789.az'\"Z _-٣"
    for _ in range(20_000):
        n = rng.choice(numbers)
        parts = [rng.choice([n, *alphabet, "fy", "abcde"]) for _ in range(rng.randint(0, 6))]
        text = "".join(parts)
        tag = re.fullmatch(rf"[a-z]{{1,4}}{re.escape(n)}|{re.escape(n)}[a-z]{{1,4}}", text)
        assert answers._tagged(text, n) == bool(tag), (text, n)
        bounded = re.search(rf"(?<![\d.]){re.escape(n)}(?!\d|\.\d)", text)
        assert answers.bounded_in(n, text) == bool(bounded), (text, n)
        quoted = re.search(rf"['\"]{re.escape(n)}['\"]", text)
        assert formats._unquoted(n, text) == (quoted is None), (text, n)

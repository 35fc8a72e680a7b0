"""stef.nl.spec: golden cases from tests/fixtures/nl_spec/cases.txt, one test per title,
plus properties every extraction must keep (determinism, no wall clock, no crash)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stef.nl.spec import analyze_text, analyze_texts, extract_nl_spec, extract_text_spec
from stef.rules import Rules
from stef.spec import Spec

FIXTURES = Path(__file__).parent / "fixtures" / "nl_spec"
sys.path.insert(0, str(FIXTURES))
from blocks import load_blocks  # noqa: E402

CASES = load_blocks(FIXTURES / "cases.txt")


def _spec_of(case: dict[str, str]) -> Spec:
    rules = Rules.model_validate(json.loads(case["rules"])) if case.get("rules") else None
    now = datetime.fromisoformat(case["now"]) if case.get("now") else None
    if case.get("enriched"):
        return extract_nl_spec(case["question"], case["enriched"], rules, now)
    return extract_text_spec(case["question"], "question", rules, now)


def _project(items: list[dict[str, Any]], keys: list[str]) -> Counter[str]:
    return Counter(json.dumps({k: item.get(k) for k in keys}, sort_keys=True) for item in items)


def _check_objects(key: str, got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """Multiset equality of ``got`` and ``want`` on the sub-keys each wanted object names."""
    assert len(got) == len(want), f"{key}: got {got}, want {want}"
    remaining = list(got)
    for w in want:
        hit = next((g for g in remaining if all(g.get(k) == v for k, v in w.items())), None)
        assert hit is not None, f"{key}: no match for {w} in {remaining}"
        remaining.remove(hit)


def check_spec(spec: Spec, expect: dict[str, Any]) -> None:
    """Compare a spec with the keys an expectation names (see cases.txt)."""
    got = spec.to_dict()
    for key, want in expect.items():
        if key in ("filters", "aggregations"):
            _check_objects(key, got[key], want)
        elif key == "order_by":
            assert len(got[key]) == len(want), f"order_by: got {got[key]}, want {want}"
            for g, w in zip(got[key], want, strict=True):
                assert {k: g[k] for k in w} == w, f"order_by: got {got[key]}, want {want}"
        elif key == "flags":
            assert {k: got["flags"].get(k) for k in want} == want
        elif key.endswith("_include"):
            field = key.removesuffix("_include")
            missing = [v for v in want if v not in got[field]]
            assert not missing, f"{field}: {missing} not in {got[field]}"
        else:
            assert got[key] == want, f"{key}: got {got[key]!r}, want {want!r}"


@pytest.mark.parametrize("case", CASES, ids=[c["title"] for c in CASES])
def test_golden_case(case: dict[str, str]) -> None:
    check_spec(_spec_of(case), json.loads(case["expect"]))


def test_titles_are_unique_and_plenty() -> None:
    titles = [c["title"] for c in CASES]
    assert len(titles) == len(set(titles))
    assert len(titles) >= 45


def test_every_filter_carries_its_source_clause() -> None:
    q = "List the top 5 customers in Germany with more than 10 orders in 2023."
    assert {f.clause for f in extract_text_spec(q).filters} == {"question"}
    e = "Customers where country = 'Germany' and orders > 10"
    assert {f.clause for f in extract_text_spec(e, "enriched").filters} == {"enriched"}


def test_aggregation_and_order_texts_quote_the_question() -> None:
    spec = extract_text_spec("Which 3 wineries produce the most wines?")
    assert spec.order_by[0].text.startswith("which 3")
    spec = extract_text_spec("What is the average salary per department?")
    assert [a.text for a in spec.aggregations] == ["average salary"]


def test_enrichment_style() -> None:
    assert analyze_text("women refers to SEX = 'F'", "enriched").style == "hints"
    assert analyze_text("How many women are there?", "enriched").style == "restatement"
    assert analyze_text("Usually, administrators manage schools.", "enriched").style == "hints"
    assert analyze_text("How many women are there?").style == "question"


def test_empty_enrichment_is_the_question_alone() -> None:
    q = "How many orders were placed in 2023?"
    assert extract_nl_spec(q, None) == extract_nl_spec(q, "  ") == extract_text_spec(q)


def test_relative_dates_never_read_the_clock() -> None:
    q = "How many orders were placed this year?"
    assert extract_text_spec(q).filters[0].values == ()
    assert extract_text_spec(q, now=datetime(2021, 6, 1)).filters[0].values == ("2021",)


def test_every_spec_carries_every_flag() -> None:
    flags = extract_text_spec("").flags
    assert set(flags) >= {
        "superlative",
        "ratio",
        "division",
        "percent",
        "yes_no",
        "list",
        "count_question",
        "negation",
    }
    assert not any(flags.values())


_TEXT = st.lists(
    st.sampled_from(
        [*"abcXYZ019 '\"`%$=<>();,.?-/_:", "refers to ", "top ", "in 2023 ", "How many ", "SUM("]
    ),
    max_size=40,
).map("".join)


@pytest.mark.parametrize("enriched", [" =a", "= 5", ";  = x;"])
def test_a_definition_with_nothing_before_its_equals_sign_defines_nothing(enriched: str) -> None:
    # found by the property test below: an empty left-hand side raised IndexError
    spec = extract_nl_spec("How many users are there?", enriched)
    assert spec.filters == []


@settings(max_examples=150, deadline=None)
@given(question=_TEXT, enriched=_TEXT)
def test_any_text_extracts_deterministically(question: str, enriched: str) -> None:
    first = extract_nl_spec(question, enriched).to_dict()
    assert first == extract_nl_spec(question, enriched).to_dict()
    for f in first["filters"]:
        assert f["clause"] in ("question", "enriched")


_HINTED_CASES = [
    ("List the birth date of women", "birth date refers to Birth_Date"),
    ("The average birth date of women", "birth date refers to Birth_Date"),
    ("Patients whose age is 30", "age refers to Age; women refers to SEX = 'F'"),
    ("Sort the schools by free meal count", "free meal count refers to `Free Meal Count (K-12)`"),
    ("How many users have reputation above 100?", "reputation refers to Reputation"),
]


@pytest.mark.parametrize(("question", "enriched"), _HINTED_CASES)
def test_analyze_texts_merges_as_a_full_hinted_reading(question: str, enriched: str) -> None:
    # analyze_texts reads Q_u again with Q_e's columns only when its first reading looked
    # up a spelling they add (stef.nl.spec._probed); extract_nl_spec always reads it again
    assert analyze_texts(question, enriched).merged() == extract_nl_spec(question, enriched)


@settings(max_examples=150, deadline=None)
@given(question=_TEXT, enriched=_TEXT)
def test_any_texts_merge_as_a_full_hinted_reading(question: str, enriched: str) -> None:
    assert analyze_texts(question, enriched).merged() == extract_nl_spec(question, enriched)


_CUE_TEXT = st.lists(
    st.sampled_from(
        [
            *"abc 0123456789,.-+#'",
            "how many ",
            "no. of ",
            "# of",
            "the sum ",
            "summed up ",
            "in total ",
            "average",
            "max",
            "more than ",
            "at least ",
            "no fewer than ",
            "in excess of ",
            "up to ",
            " or more",
            " and younger",
            "top 5 ",
            "top-3",
            "first 2 ",
            "3 largest ",
            "most recent 4 ",
            "the latest ",
            "+ ",
            "_",
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_CUE_TEXT)
def test_word_gates_hold_whenever_their_cue_pattern_matches(text: str) -> None:
    # the aggregation and comparative steps skip a cue pattern when none of its words (nor
    # its one symbol) is in the text: that must never skip a match
    from stef.nl import hint_patterns as hp
    from stef.nl import lexicon as lx
    from stef.nl.cues import _AGG_WORDS
    from stef.nl.spec import _normalized
    from stef.nl.values import _CMP_WORDS, _POSTFIX_WORDS

    low = _normalized(text)[1]
    words = frozenset(hp.WORD_TOKEN.findall(low))
    if lx.folded(lx.AGG_RE).search(low):
        assert not words.isdisjoint(_AGG_WORDS) or "#" in low
    if lx.folded(lx.CMP_RE).search(low):
        assert not words.isdisjoint(_CMP_WORDS)
    if lx.folded(lx.POSTFIX_RE).search(low):
        assert not words.isdisjoint(_POSTFIX_WORDS) or "+" in low
    if lx.folded(lx.TOPK_RE).search(low) or lx.folded(lx.SUP_RE).search(low):
        assert not words.isdisjoint(lx.SUPERLATIVE_WORDS)


_WORDS = st.text(alphabet="abcdeinrst", min_size=1, max_size=9)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, max_size=12), st.lists(_WORDS, min_size=1, max_size=6))
def test_word_pool_finds_what_same_word_finds(pool_words: list[str], asked: list[str]) -> None:
    """WordPool.has (set look-ups of stems and their starts) agrees with same_word."""
    from stef.nl.words import WordPool, same_word

    pool = WordPool(pool_words)
    for w in asked:
        assert pool.has(w) == any(same_word(w, x) for x in pool_words), (w, pool_words)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="hHtTpPsS\u017f:/wW. xK\u212a", max_size=16))
def test_url_gate_never_skips_a_link(text: str) -> None:
    """_step_answer_format runs _URL only on texts holding "://" or, case-folded, "www."."""
    from stef.nl.spec import _normalized
    from stef.nl.values import _URL

    norm, low = _normalized(text)
    if _URL.search(norm):
        assert "://" in norm or "www." in low


@pytest.mark.parametrize(
    "phrase",
    [
        "in the format YYYY-MM",
        "formatted as MM/DD",
        "in the form of dd-mm",
        "using the format mm.yy",
        "rounded to two decimals",
        "round to the nearest integer",
        "rounding off to 2 digits",
        "with two decimal places",
        "in millions",
        "as a percentage",
        "in USD",
        "in hours",
        "as YYYY",
        "shown as 'Yes'",
        'best viewed in "table"',
    ],
)
def test_every_form_of_answer_format_is_read_past_its_word_gate(phrase: str) -> None:
    """One phrase per form of ANSWER_FORMAT: each is taken as a cue, never a filter, so the
    cheap test of _step_answer_format (_FORMAT_WORDS, _DATE_MASKS) lets every form through.
    "The revenue of each store" is also read as a grouping by store, after the format."""
    spec = analyze_text(f"List the revenue of each store {phrase}.").spec
    assert [c.rstrip(".") for c in spec.cues] == [phrase, "of each store"]
    assert spec.filters == []


#: One phrase per form of the date patterns that _absolute_dates and _periods run only
#: behind a cheap test (_RANGE_WORDS, _YEAR_RANGE_JOINS, _YEAR_OP_WORDS, _MONTH_STARTS,
#: "q", "day", "0s", "/"), with the filter each reads.
DATE_FORMS = [
    *[
        (f"{k} 2019", (op, ("2019",), "year"))
        for k, op in [
            ("after", ">"), ("later than", ">"), ("since", ">="), ("from", ">="),
            ("starting", ">="), ("starting from", ">="), ("starting in", ">="),
            ("on or after", ">="), ("in or after", ">="), ("before", "<"), ("prior to", "<"),
            ("earlier than", "<"), ("until", "<="), ("till", "<="), ("up to", "<="),
            ("through", "<="), ("on or before", "<="), ("in or before", "<="), ("by", "<="),
        ]
    ],
    ("2019 or later", (">=", ("2019",), "year")),
    ("2019 and after", (">=", ("2019",), "year")),
    ("2019 onwards", (">=", ("2019",), "year")),
    ("2019 or beyond", (">=", ("2019",), "year")),
    ("2019 or earlier", ("<=", ("2019",), "year")),
    ("2019 and before", ("<=", ("2019",), "year")),
    ("between 2017 and 2019", ("between", ("2017", "2019"), "year")),
    ("from 2017 to 2019", ("between", ("2017", "2019"), "year")),
    ("2017-2019", ("between", ("2017", "2019"), "year")),
    ("2017 to 2019", ("between", ("2017", "2019"), "year")),
    ("2017 through 2019", ("between", ("2017", "2019"), "year")),
    ("2017 until 2019", ("between", ("2017", "2019"), "year")),
    ("in the 1990s", ("between", ("1990", "1999"), "year")),
    ("in 2019/20", ("=", ("2019/20",), None)),
    ("in Q1 2019", ("between", ("2019-01-01", "2019-03-31"), None)),
    ("in the second quarter of 2019", ("between", ("2019-04-01", "2019-06-30"), None)),
    ("between January and March 2017", ("between", ("2017-01", "2017-03"), "month")),
    ("from May to June 2021", ("between", ("2021-05", "2021-06"), "month")),
    ("in the 7-day period ending on 2017-07-31", ("between", ("2017-07-25", "2017-07-31"), None)),
    ("between 2017-01-01 and 2017-03-31", ("between", ("2017-01-01", "2017-03-31"), None)),
    ("from 1 May 2017 until 3 June 2017", ("between", ("2017-05-01", "2017-06-03"), None)),
]


@pytest.mark.parametrize(("phrase", "want"), DATE_FORMS, ids=[p for p, _ in DATE_FORMS])
def test_every_date_form_is_read_past_its_cheap_test(
    phrase: str, want: tuple[str, tuple[str, ...], str | None]
) -> None:
    spec = analyze_text(f"List the orders placed {phrase}.").spec
    assert [(f.op, f.values, f.func) for f in spec.filters] == [want]

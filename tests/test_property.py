"""Issue 13: property-based tests (hypothesis). Random records, rules files and SQL built
from fragments go through the reader, the rules loader and the evaluator: no exception
escapes, every status is a known one, and every input line gets exactly one evaluation."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stef.batch import evaluate_stream
from stef.errors import STATUSES, RulesError, StefError
from stef.evaluator import Evaluator
from stef.record import parse_line
from stef.rules import load_rules_dict

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EV = Evaluator()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = ["id", "question", "enriched_question", "sql", "dialect", "agent", "agent_version",
          "timestamp", "app", "metadata"]  # fmt: skip
FRAGMENTS = [
    "SELECT", "*", "a", "b", "COUNT(*)", "FROM", "t", "u", "WHERE", "=", "1", "'x'", "AND", "OR",
    "NOT", "(", ")", ",", "GROUP BY", "ORDER BY", "DESC", "LIMIT", "10", "JOIN", "ON", "IN",
    "CASE", "WHEN", "THEN", "ELSE", "END", "WITH", "AS", "UNION", "SUM(a)", "BETWEEN", "NULL",
    "IS", "LIKE", "'%y%'", ";", "--", "OVER", "PARTITION BY", "DELETE", "INTO", "$1", "?",
]  # fmt: skip
sql_text = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=25).map(" ".join)
records = st.fixed_dictionaries(
    {},
    optional={
        "id": st.text(max_size=10) | st.integers(),
        "question": st.text(max_size=60) | st.just("How many users are there?"),
        "sql": sql_text | st.text(max_size=40),
        "dialect": st.sampled_from(["postgres", "tsql", "sqlite", "nosuch", ""]) | st.integers(),
        "timestamp": st.text(max_size=25) | st.just("2026-01-01T00:00:00Z") | st.integers(),
        "metadata": json_values,
        "agent": json_values,
    },
)
lines = st.one_of(
    records.map(json.dumps),
    st.text(max_size=80),
    st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6).map(json.dumps),
)


@SETTINGS
@given(st.lists(lines, min_size=1, max_size=6))
def test_every_line_gets_one_evaluation_with_a_known_status(batch):
    for line in batch:
        try:
            parse_line(line)
        except StefError as e:
            assert e.status in STATUSES
    batch = [line.replace("\n", " ").replace("\r", " ") for line in batch]
    out = list(evaluate_stream(EV, batch))
    assert len(out) == len(batch)
    for e in out:
        assert e["status"] in STATUSES, e
        assert isinstance(e["id"], str) and e["id"]
        json.dumps(e)  # plain JSON


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(
            ["column_synonyms", "value_synonyms", "benign_filters", "benign_group_by",
             "safety_limit", "term_functions", "judge_instructions", "scoring", "colum_synonyms"]
        ),
        json_values | st.lists(sql_text, max_size=3)
        | st.dictionaries(st.text(max_size=10), st.lists(st.text(max_size=12), max_size=3)),
        max_size=4,
    )
)  # fmt: skip
def test_a_rules_object_is_valid_or_a_rules_error_and_never_breaks_eval(data):
    try:
        rules = load_rules_dict(data)
    except RulesError as e:
        assert e.problems and all(path.startswith("$") for path, _ in e.problems)
        return
    ev = Evaluator(rules=rules)
    e = ev.evaluate(question="How many users in the sales  area?", sql="SELECT COUNT(*) FROM t")
    assert e["status"] in STATUSES


@SETTINGS
@given(sql_text, st.sampled_from([None, "postgres", "tsql", "snowflake"]))
def test_sql_from_random_fragments_gets_a_status(sql, dialect):
    e = EV.evaluate(question="How many users are there?", sql=sql, dialect=dialect)
    assert e["status"] in STATUSES
    assert e["status"] != "internal_error", e["error"]


# -- item 5: str.find with a boundary test says what the regular expressions said -------

digits_text = st.text(alphabet="0123456789.-%_ aZ\n٣", max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789٣²", min_size=1, max_size=5), digits_text)
def test_number_boundaries_match_the_old_regexes(nv, core):
    import re

    from stef.align.hints import _digit_or_dot, _dot_digit, _word
    from stef.align.matching import _word_or_dot, _year_end, occurs

    old = re.search(rf"(?<![\w.]){re.escape(nv)}(?![\w.])", core) is not None
    assert occurs(nv, core, _word_or_dot, _word_or_dot) == old
    old = re.search(rf"(?<![\d.]){re.escape(nv)}(?![\d]|\.\d)", core) is not None
    assert occurs(nv, core, _digit_or_dot, str.isdecimal, _dot_digit) == old
    old = re.search(rf"(?<!\w){re.escape(nv)}(?!\w)", core) is not None
    assert occurs(nv, core, _word, _word) == old
    if len(nv) == 4:
        sv = nv + core
        assert (re.match(rf"{re.escape(nv)}(-|$|%)", sv) is not None) == _year_end(sv[4:], "-%")
        assert (re.match(rf"{re.escape(nv)}(-|$)", sv) is not None) == _year_end(sv[4:], "-")

"""Intent checks (stef.align.intent) through the whole evaluator, from readable cases.

Each case in ``fixtures/intent/cases.sql`` gives a question (and enrichment), the SQL and
every finding of the intent family the evaluation must hold — no more, no fewer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from case_files import load_sql_cases
from stef.align.join_keys import join_keys_related, keys_related
from stef.align.terms import question_terms_unexplained
from stef.evaluator import Evaluator
from stef.nl.request import requested_items
from stef.rules import Rules, load_rules
from stef.spec import Spec

ROOT = Path(__file__).parent.parent
CASES = Path(__file__).parent / "fixtures" / "intent" / "cases.sql"
REQUESTS = Path(__file__).parent / "fixtures" / "intent" / "requests.txt"

#: The finding kinds the intent checks produce.
INTENT_KINDS = {
    "projection_request_missing",
    "projection_request_partial",
    "projection_id_only",
    "negation_missing",
    "key_pair_mismatch",
    "join_on_own_ids",
    "tables_unexplained",
    "order_column_unexplained",
    "group_column_unexplained",
    "filter_duplicate",
    "question_term_unexplained",
    "question_term_via_hint",
    "date_compared_to_year",
    "name_compared_to_number",
    "date_part_of_non_date",
    "empty_range",
    "order_by_constant",
}


CASE_LIST = load_sql_cases(CASES, ("kinds", "terms"))


def test_cases_cover_every_intent_kind() -> None:
    seen = {k for c in CASE_LIST for k in c["kinds"]}
    assert seen == INTENT_KINDS
    assert any(not c["kinds"] for c in CASE_LIST)  # and cases where nothing fires


@pytest.mark.parametrize("case", CASE_LIST, ids=[c["title"] for c in CASE_LIST])
def test_case(case: dict[str, Any]) -> None:
    rules = load_rules(ROOT / case["rules"]) if case.get("rules") else None
    e = Evaluator(rules=rules).evaluate(
        question=case["question"],
        sql=case["sql"],
        enriched_question=case.get("enriched"),
        dialect=case.get("dialect"),
    )
    assert e["status"] == "ok", e["error"]
    kinds = sorted(f["kind"] for f in e["findings"] if f["kind"] in INTENT_KINDS)
    assert kinds == case["kinds"]
    terms = [f["nl"] for f in e["findings"] if f["kind"].startswith("question_term")]
    assert terms == case.get("terms", [])
    for f in e["findings"]:
        if f["kind"] in INTENT_KINDS:
            assert f["rule"] and f["message"]


def load_requests(path: Path) -> list[tuple[str, list[str]]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        question, _, items = line.partition(" => ")
        out.append((question, json.loads(items)))
    return out


@pytest.mark.parametrize("question, expected", load_requests(REQUESTS))
def test_requested_items(question: str, expected: list[str]) -> None:
    got = [i.text + (" *" if i.aggregate else "") for i in requested_items(question)]
    assert got == expected


@pytest.mark.parametrize(
    "a, b, related",
    [
        ("name", "musical_id", False),
        ("cust_name", "cust_id", False),
        ("title", "film_id", False),
        ("stuid", "stu_id", True),
        ("link_to_major", "major_id", True),
        ("city", "city_name", True),
        ("owner", "breed_code", False),
        ("cdscode", "cds", True),
    ],
)
def test_keys_related(a: str, b: str, related: bool) -> None:
    assert keys_related(a, b) is related
    assert keys_related(b, a) is related


def test_join_keys_related_needs_an_own_key_or_a_shared_word_between_ids() -> None:
    assert not join_keys_related("cardkingdomid", "mcmid", ["cards", "sets"])
    assert join_keys_related("id", "team_api_id", ["team", "match"])
    assert join_keys_related("player_api_id", "player_fifa_api_id", ["player", "attrs"])
    assert join_keys_related("event_id", "link_to_event", ["event", "budget"])
    assert join_keys_related("id", "hero_id", ["superhero", "hero_power"])
    assert join_keys_related("owneruserid", "id", ["posts", "users"])


def test_a_key_without_id_or_named_by_an_initial_links_to_its_references() -> None:
    assert join_keys_related("manufacturer", "code", ["products", "manufacturers"])
    assert join_keys_related("ssn", "patient", ["patient", "prescribes"])
    assert join_keys_related("office_location", "fac_room_key", ["staff", "fac_rooms"])
    assert join_keys_related("s_id", "id", ["advisor", "student"])
    assert join_keys_related("aid", "albumid", ["albums", "tracklists"])
    assert not join_keys_related("type", "link_to_event", ["event", "budget"])
    assert not join_keys_related("school code", "sname", ["frpm", "satscores"])
    assert not join_keys_related("uuid", "id", ["cards", "sets"])


def test_an_own_key_links_only_to_a_key_that_names_its_table() -> None:
    assert not join_keys_related("client_id", "account_id", ["client", "loan"])
    assert not join_keys_related("account_id", "client_id", ["loan", "client"])
    assert not join_keys_related("client_id", "loan_id", ["client", "loan"])
    assert not join_keys_related("id", "userid", ["posts", "badges"])


def test_question_terms_skip_function_words_numbers_and_verbs() -> None:
    sql = Spec(columns=["amount"], tables=["orders"], literals=["north"])
    assert question_terms_unexplained("How many orders were placed in the North?", sql) == []
    assert question_terms_unexplained("Show the highest amount of 2023 orders", sql) == []
    assert question_terms_unexplained("Which suppliers shipped orders?", sql) == ["suppliers"]


def test_question_terms_skip_request_verbs_connectives_and_irregular_participles() -> None:
    sql = Spec(columns=["amount"], tables=["orders"])
    question = "State the amount of orders but indicate those taught, paid or held."
    assert question_terms_unexplained(question, sql) == []


def test_the_rules_context_terms_are_never_values_nor_unexplained_question_terms() -> None:
    sql = Spec(columns=["reputation"], tables=["users"])
    question = "Top Stack Overflow users with reputation over 200"
    assert question_terms_unexplained(question, sql) == ["stack", "overflow"]
    ordered = "SELECT id FROM users WHERE reputation > 200 ORDER BY reputation DESC"
    e = Evaluator().evaluate(question, ordered)
    assert [(f["kind"], f["nl"]) for f in e["findings"] if f["kind"].startswith("value_")] == [
        ("value_unmatched", "Stack Overflow")
    ]
    assert [f["nl"] for f in e["findings"] if f["kind"] == "question_term_unexplained"] == [
        "stack",
        "overflow",
    ]
    rules = Rules(context_terms=["Stack Overflow"])
    e = Evaluator(rules=rules).evaluate(question, ordered)
    assert [(f["kind"], f["nl"]) for f in e["findings"] if f["kind"].startswith("value_")] == []
    assert [f for f in e["findings"] if f["severity"] != "info"] == []
    assert not [f for f in e["findings"] if f["kind"] == "question_term_unexplained"]


def test_two_question_words_run_together_may_name_one_column() -> None:
    sql = Spec(columns=["gasstationid"], tables=["stations"])
    assert question_terms_unexplained("Which gas station is it?", sql) == []
    assert question_terms_unexplained("Which gas pump is it?", sql) == ["gas", "pump"]


def _unexplained_outputs(question: str, sql: str) -> list[str]:
    e = Evaluator().evaluate(question=question, sql=sql, dialect="postgres")
    return [f["sql"] for f in e["findings"] if f["kind"] == "projection_unexplained"]


def test_a_name_labels_the_rows_of_a_question_that_asks_for_no_item() -> None:
    sql = "SELECT c.name, c.email FROM customers c WHERE c.churned"
    # "inactive customers" asks for the customers: their name labels them, the email does not
    assert _unexplained_outputs("inactive customers", sql) == ["c.email"]
    # an attribute asked for ("where …") is no row label: the name stays unexplained
    assert _unexplained_outputs("where do inactive customers live", sql) == ["c.name", "c.email"]

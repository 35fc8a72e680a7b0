"""End-to-end cases: a record in, an evaluation out, checked against readable fixtures.

Each case in ``fixtures/e2e/cases.sql`` states the question (and enrichment, and the
record's timestamp where a relative period needs one), the SQL,
and the expected filter class, verdict, base, multiplier, exact score, band, every
non-info finding kind and the normalisation rules that excused something.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from case_files import load_sql_cases
from stef.evaluator import Evaluator
from stef.rules import load_rules
from stef.score import band, compute_score

ROOT = Path(__file__).parent.parent
CASES = Path(__file__).parent / "fixtures" / "e2e" / "cases.sql"
EXCUSING = {
    "required_group_by",
    "benign_group_by",
    "order_by_tolerance",
    "limit_tolerance",
    "benign_filter",
}


CASE_LIST = load_sql_cases(CASES, ("expect",))
_EVALUATORS: dict[str | None, Evaluator] = {}


def _evaluator(rules: str | None) -> Evaluator:
    if rules not in _EVALUATORS:
        _EVALUATORS[rules] = Evaluator(rules=load_rules(ROOT / rules) if rules else None)
    return _EVALUATORS[rules]


def test_fixture_covers_every_filter_class_and_normalisation_rule() -> None:
    statuses = {c["expect"].get("filter_status") for c in CASE_LIST}
    assert statuses >= {
        "fully_applied",
        "fully_applied_with_extras",
        "partially_applied",
        "not_applied",
    }
    excused = {r for c in CASE_LIST for r in c["expect"].get("rules", [])}
    assert excused >= EXCUSING


@pytest.mark.parametrize("case", CASE_LIST, ids=[c["title"] for c in CASE_LIST])
def test_case(case: dict[str, Any]) -> None:
    e = _evaluator(case.get("rules")).evaluate(
        question=case["question"],
        sql=case["sql"],
        enriched_question=case.get("enriched"),
        dialect=case.get("dialect"),
        timestamp=case.get("timestamp"),  # the record's time: "last 30 days" resolves
    )
    want = case["expect"]
    assert e["status"] == want["status"], e["error"]
    if want["status"] != "ok":
        assert e["error"] == want["error"]
        assert e["score"] is None
        return
    b = e["breakdown"]
    got = {
        "filter_status": b["filter_status"],
        "verdict": b["verdict"],
        "base": b["base"],
        "confidence_multiplier": b["confidence_multiplier"],
        "score": e["score"],
        "band": e["band"],
        "kinds": sorted(f["kind"] for f in e["findings"] if f["severity"] != "info"),
        "rules": sorted({f["rule"] for f in e["findings"] if f["severity"] == "info"} & EXCUSING),
    }
    assert got == {k: v for k, v in want.items() if k != "status"}
    # the score is exactly the formula applied to the breakdown
    again = compute_score(
        b["filter_status"], b["verdict"], b["confidence"], benign_extras=b["leniency_boost"] > 0
    )
    assert again.score == e["score"] and band(again.score) == e["band"]


def test_a_replaced_value_names_the_column_the_sql_compares() -> None:
    """The question names a value but no column: the message names the SQL's column."""
    e = _evaluator(None).evaluate(
        question="What is the average price of products in the Toys category?",
        sql="SELECT AVG(price) FROM products WHERE category = 'Books';",
        dialect="snowflake",
    )
    messages = [f["message"] for f in e["findings"] if f["kind"] == "filter_wrong_value"]
    assert messages == ["question asks category = toys, the SQL compares it with books"]

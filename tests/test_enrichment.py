"""stef.nl.enrichment: cases from tests/fixtures/enrichment/cases.txt, one test per title."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import pytest

from stef.nl.enrichment import EnrichmentResult, check_enrichment
from stef.rules import Rules

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "nl_spec"))
from blocks import load_blocks

CASES = load_blocks(Path(__file__).parent / "fixtures" / "enrichment" / "cases.txt")


@pytest.mark.parametrize("case", CASES, ids=[c["title"] for c in CASES])
def test_enrichment_case(case: dict[str, str]) -> None:
    rules = Rules.model_validate(json.loads(case["rules"])) if case.get("rules") else None
    now = datetime.fromisoformat(case["now"]) if case.get("now") else None
    result = check_enrichment(case["question"], case.get("enriched"), rules, now)
    want = json.loads(case["expect"])
    got = result.to_dict()
    assert got["consistent"] == want["consistent"], got["findings"]
    assert len(got["findings"]) == len(want["findings"]), got["findings"]
    for g, w in zip(got["findings"], want["findings"], strict=True):
        assert {k: g[k] for k in w} == w, g
        assert (g["severity"], g["rule"]) == ("warning", "enrichment_check")


def test_cases_cover_both_verdicts() -> None:
    verdicts = [json.loads(c["expect"])["consistent"] for c in CASES]
    assert len(CASES) >= 15 and verdicts.count(True) >= 5 and verdicts.count(False) >= 5


def test_result_serialises() -> None:
    result = check_enrichment("List the top 5 products.", "List the top 10 products.")
    assert isinstance(result, EnrichmentResult)
    assert result.to_dict() == {
        "consistent": False,
        "findings": [
            {
                "kind": "enrichment_topk_changed",
                "severity": "warning",
                "message": "the question asks for 5 rows; the enrichment for 10",
                "nl": "top 5 products",
                "sql": None,
                "rule": "enrichment_check",
            }
        ],
    }


def test_consistent_means_no_findings() -> None:
    assert check_enrichment("How many orders?", None).to_dict() == {
        "consistent": True,
        "findings": [],
    }

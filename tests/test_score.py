"""The score formula of DESIGN.md, case by case from a readable table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stef.rules import Scoring
from stef.score import band, compute_score, confidence_multiplier

CASES = Path(__file__).parent / "fixtures" / "score" / "cases.tsv"


def _cases() -> list[list[str]]:
    rows = []
    for line in CASES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            rows.append(line.split("\t"))
    return rows


@pytest.mark.parametrize("row", _cases(), ids=lambda r: "-".join(r[:4]))
def test_score_table(row: list[str]) -> None:
    status, verdict, conf, benign, override, base, gamma, score, band_name = row
    scoring = Scoring.model_validate(json.loads(override))
    b = compute_score(status, verdict, float(conf), benign_extras=benign == "yes", scoring=scoring)
    assert b.base == float(base)
    assert b.confidence_multiplier == float(gamma)
    assert b.score == float(score)
    assert band(b.score) == band_name


def test_breakdown_has_every_term_of_the_contract() -> None:
    b = compute_score("fully_applied_with_extras", "likely_correct", 0.7, benign_extras=True)
    assert b.to_dict() == {
        "filter_status": "fully_applied_with_extras",
        "filter_points": 4.0,
        "verdict": "likely_correct",
        "verdict_points": 4.0,
        "leniency_boost": 1.0,
        "confidence": 0.7,
        "confidence_multiplier": 0.8,
        "base": 9.0,
    }


@pytest.mark.parametrize(
    ("score", "name"),
    [
        (100.0, "excellent"),
        (90.0, "excellent"),
        (89.9, "good"),
        (75.0, "good"),
        (74.99, "marginal"),
        (50.0, "marginal"),
        (49.9, "poor"),
        (0.0, "poor"),
    ],
)
def test_band_edges(score: float, name: str) -> None:
    assert band(score) == name


def test_confidence_tiers_edges() -> None:
    assert [confidence_multiplier(g) for g in (1.0, 0.85, 0.8499, 0.65, 0.6499, 0.0)] == [
        1.0,
        1.0,
        0.8,
        0.8,
        0.5,
        0.5,
    ]

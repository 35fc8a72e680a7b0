"""The precision gate: finding kinds that have not earned their weight stay visible as info."""

from __future__ import annotations

import json

from stef.align.precision import MIN_FIRES, Fires, PrecisionGate, default_gate, gate_from_counts
from stef.evaluator import Evaluator

QUESTION = "How many orders were placed in 2025?"
SQL = "SELECT COUNT(*) FROM orders WHERE EXTRACT(YEAR FROM order_date) = 2025 AND channel = 'web'"


def test_a_kind_no_more_frequent_on_wrong_sql_is_demoted_on_every_corpus() -> None:
    counts = {
        "bench": {"x": Fires(40, 10, 50, 50), "y": Fires(30, 20, 50, 50)},
        "gold": {"x": Fires(10, 10, 100, 100), "y": Fires(9, 1, 100, 100)},
    }
    gate = gate_from_counts(counts)
    assert gate.demoted == {"x": "lift 1.00 on gold (fires 20 times)"}


def test_a_kind_firing_too_rarely_is_not_judged_there() -> None:
    rare = Fires(0, MIN_FIRES - 1, 50, 50)
    assert gate_from_counts({"a": {"x": rare}}).demoted == {}


def test_with_and_without_an_enriched_question_are_judged_apart() -> None:
    gate = PrecisionGate({"filter_extra": "lift 0.99 on gold (fires 142 times)"})
    assert gate.reason("filter_extra", enriched=False) is not None
    assert gate.reason("filter_extra", enriched=True) is None


def test_the_evaluator_shows_a_demoted_finding_as_info_with_the_precision_rule() -> None:
    gate = PrecisionGate({"filter_extra": "lift 0.99 on gold (fires 142 times)"})
    gated = Evaluator(precision=gate).evaluate(question=QUESTION, sql=SQL, dialect="postgres")
    raw = Evaluator(precision=PrecisionGate()).evaluate(
        question=QUESTION, sql=SQL, dialect="postgres"
    )
    [before] = [f for f in raw["findings"] if f["kind"] == "filter_extra"]
    [after] = [f for f in gated["findings"] if f["kind"] == "filter_extra"]
    assert (before["severity"], before["rule"]) == ("warning", "filter_alignment")
    assert (after["severity"], after["rule"]) == ("info", "precision")
    assert after["message"] == before["message"]


def test_the_packaged_table_round_trips(tmp_path) -> None:  # type: ignore[no-untyped-def]
    gate = default_gate()
    assert gate.demoted, "stef/data/finding_precision.json is packaged"
    path = tmp_path / "gate.json"
    gate.save(path)
    assert PrecisionGate.load(path).demoted == gate.demoted
    assert json.loads(path.read_text())["format"] == "stef-finding-precision/1"

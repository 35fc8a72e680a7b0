"""Fitting the offline judge: the vectorised score, the sign constraint on findings, the
inner choice of regularisation and the `stef fit-judge` command."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from stef.accuracy.calibrate import LabelledRow
from stef.accuracy.judge_fit import (
    C_GRID,
    Aligned,
    PhiTable,
    _phi_from_p,
    choose_c,
    fit,
    pick_thresholds,
)
from stef.align.filters import Alignment
from stef.cli import main
from stef.findings import Finding
from stef.judges.weights import JudgeWeights, default_weights, features_of, fit_weights
from stef.spec import Filter

# the first 240 rows of ../shared/data/nl2sql_bugs.jsonl (NL2SQL-Bugs, CC BY-SA 4.0), kept here
# so the suite runs in a clone with nothing beside it
DATA = Path(__file__).parent / "fixtures" / "fit" / "nl2sql_bugs_240.jsonl"


def _alignments() -> list[Alignment]:
    out = []
    for status, evidence, error, benign in itertools.product(
        ("fully_applied", "fully_applied_with_extras", "partially_applied", "not_applied"),
        (0, 2),
        (False, True),
        (False, True),
    ):
        findings = [Finding("filter_wrong_operator", "error", "m")] if error else []
        benign_filters = [Filter("tenant_id", "=", ("42",))] if benign else []
        out.append(
            Alignment(
                status, 0.0, evidence=evidence, findings=findings, benign_filters=benign_filters
            )
        )
    return out


def test_phi_table_gives_exactly_the_score_formula() -> None:
    alignments = _alignments()
    table = PhiTable(alignments)
    w = JudgeWeights(thresholds={"correct": 0.7, "likely": 0.5, "potential": 0.3})
    for p in [i / 100 for i in range(101)]:
        got = table.scores(np.full(len(alignments), p), w).tolist()
        want = [_phi_from_p(p, a, w) for a in alignments]
        assert got == want, p
    sub = table.take([3, 1])
    assert sub.scores(np.array([0.9, 0.2]), w).tolist() == [
        _phi_from_p(0.9, alignments[3], w),
        _phi_from_p(0.2, alignments[1], w),
    ]


def test_a_finding_that_goes_with_correct_sql_gets_no_weight_and_the_rest_is_refitted() -> None:
    rng = random.Random(0)
    rows, labels = [], []
    for _ in range(400):
        correct = rng.random() < 0.5
        row = {"evidence:1": 1.0}
        if (correct and rng.random() < 0.6) or (not correct and rng.random() < 0.1):
            row["odd_finding"] = 1.0  # more often on correct rows
        if not correct and rng.random() < 0.7:
            row["filter_missing"] = 1.0
        rows.append(row)
        labels.append(correct)
    w = fit_weights(rows, labels, c=1.0)
    assert w.weights["odd_finding"] == 0.0
    assert w.weights["filter_missing"] < -1.0
    assert w.p_correct({"filter_missing": 1.0, "evidence:1": 1.0}) < w.p_correct(
        {"evidence:1": 1.0}
    )


def _items(n: int, seed: int) -> list[Aligned]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        correct = rng.random() < 0.5
        findings = []
        if not correct and rng.random() < 0.6:
            findings.append(Finding("filter_missing", "warning", "m"))
        if rng.random() < 0.3:
            findings.append(Finding("projection_unexplained", "warning", "m"))
        row = LabelledRow(f"r{i}", f"question {i}", "SELECT 1", correct)
        al = Alignment("fully_applied", 5.0, evidence=1 + i % 3, findings=findings)
        out.append(Aligned(row, "synthetic", al, i % 4))
    return out


def test_choose_c_picks_from_the_grid_on_inner_folds_and_is_deterministic() -> None:
    items = _items(240, 1)
    aligned = [a.alignment for a in items if a.alignment is not None]
    feats = [features_of(a) for a in aligned]
    table = PhiTable(aligned)
    c1 = choose_c(items, feats, table)
    assert c1 in C_GRID
    assert choose_c(items, feats, table) == c1
    w = fit(items)
    assert w.meta["c"] == c1
    assert fit(items, c=0.5).meta["c"] == 0.5
    assert set(w.thresholds) == {"correct", "likely", "potential"}


def test_fit_judge_command_writes_weights_with_held_out_figures(tmp_path: Path) -> None:
    lines = DATA.read_text(encoding="utf-8").splitlines()[:240]
    data = tmp_path / "sample.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "w.json"
    result = CliRunner().invoke(
        main, ["fit-judge", str(data), "--output", str(out), "--folds", "3", "--json"]
    )
    assert result.exit_code == 0, result.output
    held = json.loads(result.output)
    assert [h["dataset"] for h in held] == ["sample"]
    assert held[0]["rows"] == 240 and held[0]["evaluated"] == 240
    assert len(held[0]["c"]) == 3 and set(held[0]["c"]) <= set(C_GRID)
    saved = JudgeWeights.load(out)
    assert saved.meta["c"] in C_GRID
    assert saved.meta["name"] == "w" and saved.meta["rows"] == 240
    assert all(v <= 0 for k, v in saved.weights.items() if k.startswith("filter_missing"))


def test_fit_judge_leaves_out_the_questions_of_a_calibrate_sample(tmp_path: Path) -> None:
    from stef.accuracy.calibrate import question_key

    lines = DATA.read_text(encoding="utf-8").splitlines()[:240]
    data = tmp_path / "sample.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [json.loads(x) for x in lines]
    unseen = {question_key(r["question"]) for r in rows[:30]}
    calib = tmp_path / "calib"
    calib.mkdir()
    (calib / "rows.jsonl").write_text(
        "".join(json.dumps({"id": r["id"], "question": r["question"]}) + "\n" for r in rows[:30])
    )
    kept = sum(1 for r in rows if question_key(r["question"]) not in unseen)
    out = tmp_path / "w.json"
    args = ["fit-judge", str(data), "-o", str(out), "--folds", "3", "--c", "0.1"]
    result = CliRunner().invoke(main, [*args, "--exclude-questions", str(calib), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["rows"] == kept < 210  # a question's rows go together
    meta = JudgeWeights.load(out).meta
    assert meta["rows"] == kept
    assert meta["excluded"] == {"questions_of": str(calib), "rows": 240 - kept}

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1"}\n')
    refused = CliRunner().invoke(main, [*args, "--exclude-questions", str(bad)])
    assert refused.exit_code == 1
    assert f"{bad}: row 1: no 'question' to leave out" in refused.output


def test_near_equal_rankings_go_to_the_thresholds_with_fewer_false_alarms() -> None:
    """A threshold that ranks 0.0005 better but scores 5 points fewer correct rows good+
    loses; one that ranks 0.01 worse does not win however lenient it is."""
    tried = [
        (0.8000, 0.90, (0.85, 0.5, 0.45)),
        (0.7995, 0.95, (0.75, 0.5, 0.45)),
        (0.7995, 0.95, (0.75, 0.45, 0.3)),
        (0.7900, 0.99, (0.6, 0.5, 0.45)),
    ]
    assert pick_thresholds(tried) == (0.75, 0.5, 0.45)
    assert pick_thresholds(tried[:1] + tried[3:]) == (0.85, 0.5, 0.45)


def test_contributions_of_some_features_are_those_of_the_full_list() -> None:
    """The symbolic judge asks only for the kinds it found (docs/performance.md, session
    18): the same pushes, in the same order, as the full list keeps of them."""
    rng = random.Random(18)
    w = default_weights()
    assert w is not None
    names = sorted(w.weights)
    for _ in range(300):
        feats = {k: rng.choice([0.0, 1.0, 2.0, 0.5]) for k in rng.sample(names, 40)}
        feats["not_weighted"] = 1.0
        only = set(rng.sample([*feats, "absent"], rng.randint(0, 10)))
        full = [x for x in w.contributions(feats) if x[0] in only]
        assert w.contributions(feats, only) == full

"""`stef calibrate`: labelled rows in, held-out agreement figures and a calibration file out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from stef.accuracy import calibrate as C
from stef.accuracy.calibration import Calibration
from stef.cli.calibrate import calibrate

FIXTURE = Path(__file__).parent / "fixtures" / "calibrate" / "labelled.jsonl"
LABEL_KEYS = {"correct", "error_types", "db_id", "source"}


@pytest.fixture(scope="module")
def rows() -> list[C.LabelledRow]:
    return C.load_labelled(FIXTURE)


# ------------------------------------------------------------------ loading and records


def test_load_labelled_reads_every_row(rows: list[C.LabelledRow]) -> None:
    assert len(rows) == 24
    assert sum(r.correct for r in rows) == 11
    assert rows[8].evidence is None
    assert rows[17].error_types == (
        "Value-Related Errors / Value Mismatch",
        "Condition-Related Errors / Explicit Condition Mismatch",
    )


def test_load_labelled_names_the_bad_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"question": "q", "sql": "SELECT 1", "correct": true}\n'
        '{"question": "q", "sql": "SELECT 1", "correct": "yes"}\n'
    )
    with pytest.raises(C.CalibrateError, match=r"bad\.jsonl:2: field 'correct' is required"):
        C.load_labelled(bad)


def test_record_carries_no_label(rows: list[C.LabelledRow]) -> None:
    record = C.to_record(rows[0], "sqlite")
    assert record == {
        "id": "t/1",
        "question": "How many students are enrolled in the Physics department?",
        "sql": "SELECT COUNT(*) FROM student WHERE dept_name = 'Physics'",
        "dialect": "sqlite",
        "enriched_question": "Physics refers to dept_name = 'Physics'",
    }
    assert "enriched_question" not in C.to_record(rows[8], "sqlite")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "select count(*) from student where dept_name = 'Physics'",
            "SELECT  COUNT( * )\nFROM Student WHERE DEPT_NAME='Physics'",
        ),
        (
            "SELECT T1.name FROM singer AS T1 WHERE T1.age > 30",
            "select t1.NAME from SINGER as t1 where t1.Age>30",
        ),
        (
            "SELECT `Free Meal Count (K-12)` FROM frpm",
            'SELECT "free meal count (k-12)" FROM frpm',
        ),
    ],
)
def test_style_normalise_erases_case_quoting_and_spacing(a: str, b: str) -> None:
    assert C.style_normalise(a, "sqlite") == C.style_normalise(b, "sqlite")


def test_style_normalise_keeps_string_literals_and_quotes() -> None:
    assert C.style_normalise("select a from t where b = 'New York'", "sqlite") == (
        "SELECT a FROM t WHERE b = 'New York'"
    )
    # a double-quoted token may be a string in SQLite (sex = "M"): it stays quoted
    assert C.style_normalise('SELECT a FROM t WHERE sex = "M"', "sqlite") == (
        'SELECT a FROM t WHERE sex = "m"'
    )


def test_unparseable_sql_is_kept_as_written(rows: list[C.LabelledRow]) -> None:
    prepared = C.prepare(rows, folds=3)
    assert prepared.style == {"normalised": True, "rerendered": 23, "kept_as_is": 1}
    assert prepared.records[19]["sql"] == "SELECT SUM(revenue FROM sales"
    assert prepared.records[1]["sql"] == "SELECT COUNT(*) FROM student"
    raw = C.prepare(rows, folds=3, normalise_style=False)
    assert raw.records[1]["sql"] == "select count(*) from student"


# ------------------------------------------------------------------ sampling and folds


def test_questions_differing_in_case_and_punctuation_share_a_group(
    rows: list[C.LabelledRow],
) -> None:
    assert C.question_key(rows[0].question) == C.question_key(rows[2].question)


def test_folds_never_split_a_question(rows: list[C.LabelledRow]) -> None:
    for seed in range(5):
        folds = C.assign_folds(rows, 3, seed)
        assert set(folds) == {0, 1, 2}
        assert C.question_overlap(rows, folds) == 0


def test_folds_need_enough_questions(rows: list[C.LabelledRow]) -> None:
    with pytest.raises(C.CalibrateError, match="20 folds need at least 20 distinct questions"):
        C.assign_folds(rows, 20, 0)


def test_limit_samples_whole_questions(rows: list[C.LabelledRow]) -> None:
    sample = C.sample_groups(rows, 7, seed=3)
    assert len(sample) <= 7
    keys = {C.question_key(r.question) for r in sample}
    # every row of a sampled question is in, in file order
    assert sample == [r for r in rows if C.question_key(r.question) in keys]
    assert C.sample_groups(rows, 7, seed=3) == sample
    assert any(C.sample_groups(rows, 7, seed=s) != sample for s in range(4, 10))


# ------------------------------------------------------------------ measurement


def _synthetic(rows: list[C.LabelledRow]) -> list[dict[str, Any]]:
    """Scores that separate perfectly; t/20's SQL unparseable; one finding kind."""
    out = []
    for r in rows:
        if r.id == "t/20":
            out.append({"id": r.id, "status": "sql_unparseable", "score": None, "findings": []})
            continue
        findings = (
            [{"kind": "limit_mismatch", "severity": "error"}] if r.id in ("t/6", "t/4") else []
        )
        out.append(
            {
                "id": r.id,
                "status": "ok",
                "score": 90.0 if r.correct else 40.0,
                "band": "excellent" if r.correct else "poor",
                "findings": findings,
            }
        )
    return out


def test_measure_on_perfectly_separating_scores(rows: list[C.LabelledRow]) -> None:
    folds = C.assign_folds(rows, 3, 0)
    m = C.measure(rows, _synthetic(rows), folds, min_type_support=1)
    cov = m.metrics["coverage"]
    assert (cov["received"], cov["evaluated"]) == (24, 23)
    assert cov["statuses"] == {"ok": 23, "sql_unparseable": 1}
    assert (cov["not_covered_correct"], cov["not_covered_incorrect"]) == (0, 1)
    o = m.metrics["overall"]
    assert (o["n"], o["n_correct"], o["n_incorrect"]) == (23, 11, 12)
    assert o["auroc"] == 1.0
    assert o["at_default"]["accuracy"] == 1.0
    assert o["at_fitted"]["thresholds"] == [90.0, 90.0, 90.0]
    assert o["at_fitted"]["kappa"] == 1.0
    assert o["probability"]["isotonic_held_out"]["brier"] == 0.0
    assert m.calibration is not None
    assert m.calibration.p_correct(40) == 0.0
    assert m.calibration.p_correct(90) == 1.0
    assert m.metrics["bands"] == {
        "excellent": {"correct": 11, "incorrect": 0},
        "poor": {"correct": 0, "incorrect": 12},
    }


def test_per_error_type_lines(rows: list[C.LabelledRow]) -> None:
    m = C.measure(rows, _synthetic(rows), C.assign_folds(rows, 3, 0), min_type_support=1)
    per = m.metrics["per_error_type"]
    assert per["free_text_types_skipped"] is True  # t/22's feedback is free text
    by = {t["type"]: t for t in per["types"]}
    value = by["Value-Related Errors"]
    assert (value["level"], value["received"], value["evaluated"]) == ("category", 3, 3)
    assert (value["n_correct"], value["n_incorrect"]) == (11, 3)
    assert by["Value-Related Errors / Value Mismatch"]["level"] == "subtype"
    # the only "Other Errors / Syntax" row was not evaluated: no line for it
    assert "Other Errors / Syntax" not in by
    assert not any(t.startswith("feedback") for t in by)


def test_finding_kind_as_a_signal(rows: list[C.LabelledRow]) -> None:
    m = C.measure(rows, _synthetic(rows), C.assign_folds(rows, 3, 0))
    (kind,) = m.metrics["finding_kinds"]
    # fired on t/4 (correct) and t/6 (incorrect): precision 1/2, recall 1/12
    assert kind["kind"] == "limit_mismatch"
    assert kind["support"] == 2
    assert kind["precision"] == 0.5
    assert kind["recall"] == pytest.approx(1 / 12)
    assert kind["severities"] == {"error": 2}


# ------------------------------------------------------------------ the command


@pytest.fixture
def seen_records(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every record the evaluator is given during the test."""
    from stef.evaluator import Evaluator

    seen: list[dict[str, Any]] = []
    original = Evaluator.evaluate_many

    def spy(self: Evaluator, records: Any, workers: int = 1) -> Any:
        records = list(records)
        seen.extend(records)
        return original(self, records, workers=workers)

    monkeypatch.setattr(Evaluator, "evaluate_many", spy)
    return seen


def test_calibrate_command_end_to_end(tmp_path: Path, seen_records: list[dict[str, Any]]) -> None:
    out = tmp_path / "calib"
    result = CliRunner().invoke(
        calibrate, [str(FIXTURE), "--output", str(out), "--folds", "3"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "AUROC" in result.output and "negative recall" in result.output
    for name in (
        "report.md",
        "metrics.json",
        "rows.jsonl",
        "roc.svg",
        "reliability.svg",
        "calibration.json",
    ):
        assert (out / name).is_file(), name

    # the evaluator saw every row, and never a label
    assert len(seen_records) == 24
    assert all(not (LABEL_KEYS & set(r)) for r in seen_records)

    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) == {
        "run",
        "coverage",
        "overall",
        "per_error_type",
        "finding_kinds",
        "bands",
    }
    assert metrics["run"]["question_overlap_between_folds"] == 0
    assert metrics["run"]["command"] == f"stef calibrate {FIXTURE} --output {out} --folds 3"
    assert metrics["run"]["reference"] == "NL2SQL-Bugs"
    assert metrics["coverage"]["received"] == 24
    assert metrics["coverage"]["statuses"].get("sql_unparseable") == 1
    overall = metrics["overall"]
    for key in ("auroc", "at_default", "at_fitted", "folds", "probability"):
        assert key in overall
    for key in (
        "accuracy",
        "balanced_accuracy",
        "kappa",
        "negative_precision",
        "negative_recall",
        "positive_precision",
        "positive_recall",
    ):
        assert key in overall["at_default"] and key in overall["at_fitted"]

    cal = Calibration.load(out / "calibration.json")
    ps = [cal.p_correct(s) for s in range(0, 101, 5)]
    assert ps == sorted(ps)
    assert cal.meta["rows"] == metrics["coverage"]["evaluated"]

    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    labelled = C.load_labelled(FIXTURE)
    assert [r["id"] for r in rows] == [x.id for x in labelled]  # every row, in file order
    assert [r["correct"] for r in rows] == [x.correct for x in labelled]
    unparseable = [r for r in rows if r["status"] == "sql_unparseable"]
    assert len(unparseable) == 1 and unparseable[0]["score"] is None
    assert "predicted_correct" not in unparseable[0]
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == metrics["coverage"]["evaluated"]
    folds_of = {r["fold"] for r in rows}
    assert folds_of == {0, 1, 2}
    cuts = overall["at_fitted"]["thresholds"]  # each row judged by its own fold's threshold
    assert all(r["predicted_correct"] == (r["score"] >= cuts[r["fold"]]) for r in ok)
    assert all(0.0 <= r["p_correct_held_out"] <= 1.0 for r in ok)

    report = (out / "report.md").read_text()
    assert report.startswith("# STEF calibration report")
    assert f"stef calibrate {FIXTURE} --output {out} --folds 3" in report
    assert "GPT-4o-mini | yes | 71.56%" in report


def test_no_isotonic_writes_no_calibration(tmp_path: Path) -> None:
    out = tmp_path / "calib"
    result = CliRunner().invoke(
        calibrate, [str(FIXTURE), "-o", str(out), "--folds", "2", "--no-isotonic"]
    )
    assert result.exit_code == 0, result.output
    assert not (out / "calibration.json").exists()
    metrics = json.loads((out / "metrics.json").read_text())
    assert "isotonic_held_out" not in metrics["overall"]["probability"]
    assert "--no-isotonic" in metrics["run"]["command"]


def test_limit_and_raw_style(tmp_path: Path, seen_records: list[dict[str, Any]]) -> None:
    out = tmp_path / "calib"
    args = [str(FIXTURE), "-o", str(out), "--folds", "2", "--limit", "10", "--no-style-normalise"]
    result = CliRunner().invoke(calibrate, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["run"]["rows_used"] == len(seen_records) <= 10
    assert metrics["run"]["style"]["normalised"] is False
    as_written = {r.id: r.sql for r in C.load_labelled(FIXTURE)}
    assert {r["id"]: r["sql"] for r in seen_records} == {
        r["id"]: as_written[r["id"]] for r in seen_records
    }


def test_bad_data_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "sql": "SELECT 1"}\n')
    result = CliRunner().invoke(calibrate, [str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "bad.jsonl:1: field 'correct' is required and must be a bool" in result.output


def test_a_run_where_nothing_was_evaluated_still_reports(
    rows: list[C.LabelledRow], tmp_path: Path
) -> None:
    from stef.accuracy.calibrate_report import write_outputs

    failed = [{"id": r.id, "status": "judge_failed", "score": None} for r in rows]
    m = C.measure(rows, failed, C.assign_folds(rows, 3, 0))
    assert m.metrics["coverage"]["evaluated"] == 0
    assert m.metrics["overall"]["auroc"] is None
    assert m.metrics["overall"]["at_fitted"]["accuracy"] is None
    assert m.calibration is None
    m.metrics = {"run": _RUN, **m.metrics}
    paths = write_outputs(m, tmp_path)
    assert sorted(paths) == ["metrics", "reliability", "report", "roc", "rows"]
    listed = [json.loads(x) for x in paths["rows"].read_text().splitlines()]
    assert [(r["status"], r["score"]) for r in listed] == [("judge_failed", None)] * 24
    report = (tmp_path / "report.md").read_text()
    assert "| coverage | 0.0% (0/24) |  |" in report
    assert "| `judge_failed` | 24 |" in report


_RUN = {
    "command": "stef calibrate data.jsonl --output out",
    "data": "data.jsonl",
    "rows_in_file": 24,
    "rows_used": 24,
    "limit": None,
    "seed": 0,
    "folds": 3,
    "judge": "openai",
    "rules": None,
    "dialect": "sqlite",
    "stef_version": "0",
    "style": {"normalised": True, "rerendered": 23, "kept_as_is": 1},
    "reference": None,
}


def test_calibrate_diff_compares_two_runs_row_by_row(tmp_path: Path) -> None:
    from stef.cli.calibrate import calibrate_diff

    runs = {}
    for name, extra in (("a", ["--judge-weights", "none"]), ("b", [])):
        out = tmp_path / name
        args = [str(FIXTURE), "-o", str(out), "--folds", "3", *extra]
        assert CliRunner().invoke(calibrate, args).exit_code == 0
        runs[name] = json.loads((out / "metrics.json").read_text())
    result = CliRunner().invoke(
        calibrate_diff, [str(tmp_path / "a"), str(tmp_path / "b"), "--boot", "200", "--json"]
    )
    assert result.exit_code == 0, result.output
    d = json.loads(result.output)
    assert (d["rows_a"], d["shared"]) == (24, runs["a"]["coverage"]["evaluated"])
    auroc = d["figures"]["auroc"]
    assert auroc["a"] == round(runs["a"]["overall"]["auroc"], 4)
    assert auroc["b"] == round(runs["b"]["overall"]["auroc"], 4)
    assert auroc["difference"] == pytest.approx(auroc["b"] - auroc["a"], abs=1e-4)
    brier = d["figures"]["brier_isotonic"]
    held = runs["b"]["overall"]["probability"]["isotonic_held_out"]["brier"]
    assert brier["b"] == round(held, 4) and brier["lower_is_better"] is True
    accuracy = d["figures"]["accuracy"]
    assert accuracy["a"] == round(runs["a"]["overall"]["at_fitted"]["accuracy"], 4)
    lo, hi = auroc["interval"]
    assert lo <= hi and 0.0 <= auroc["share_of_draws_b_better"] <= 1.0

    table = CliRunner().invoke(calibrate_diff, [str(tmp_path / "a"), str(tmp_path / "b")])
    assert table.exit_code == 0 and "│ AUROC " in table.output


def test_calibrate_diff_refuses_runs_on_different_labels(tmp_path: Path) -> None:
    from stef.cli.calibrate import calibrate_diff

    row = {"id": "1", "question": "q", "status": "ok", "score": 50.0}
    (tmp_path / "a.jsonl").write_text(json.dumps({**row, "correct": True}) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps({**row, "correct": False}) + "\n")
    result = CliRunner().invoke(
        calibrate_diff, [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    )
    assert result.exit_code == 1
    assert "cannot compare the runs: row '1' has another label in the second run" in result.output

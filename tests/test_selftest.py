"""``stef selftest`` and ``stef precision``: mutation operators, report figures, the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.case_files import load_sql_cases

from stef.accuracy import precision as P
from stef.accuracy import selftest as S
from stef.accuracy.mutants import KINDS, mutate, parse_sql, read_cues
from stef.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "selftest"
CASES = load_sql_cases(FIXTURES / "mutations.sql", json_keys=("seed",))
RECORDS = FIXTURES / "records.jsonl"
SCORES = json.loads((FIXTURES / "scores.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["title"] for c in CASES])
def test_mutation_operator(case: dict[str, Any]) -> None:
    trees = parse_sql(case["sql"], case.get("dialect"))
    assert trees is not None
    cues = read_cues(case["question"], case.get("enriched"))
    m = mutate(trees, case.get("dialect"), case["kind"], cues, seed=case.get("seed", 0))
    if case["mutant"] == "none":
        assert m is None
        return
    assert m is not None and m.kind == case["kind"]
    assert m.sql == case["mutant"]
    if "detail" in case:
        assert m.detail == case["detail"]


def test_every_kind_has_fixture_cases_with_and_without_a_mutant() -> None:
    for kind in KINDS:
        outcomes = {c["mutant"] == "none" for c in CASES if c["kind"] == kind}
        assert outcomes == {True, False}, kind


def test_original_and_mutant_share_one_printer() -> None:
    """Spider's gold style and parser style render alike: style cannot tell them apart."""
    gold = S.build_case(
        S.Row(
            "a",
            "the 3 largest cities",
            "select T1.name from city as T1 order by T1.pop  desc limit 3",
            dialect="sqlite",
        ),
        None,
        seed=0,
    )
    parser = S.build_case(
        S.Row(
            "a",
            "the 3 largest cities",
            "SELECT T1.name FROM city AS T1 ORDER BY T1.pop DESC LIMIT 3",
            dialect="sqlite",
        ),
        None,
        seed=0,
    )
    assert gold.sql == parser.sql == "SELECT T1.name FROM city AS T1 ORDER BY T1.pop DESC LIMIT 3"
    assert [m.sql for m in gold.mutants] == [m.sql for m in parser.mutants]
    assert [m.kind for m in gold.mutants] == ["sort_flipped", "limit_changed"]


def test_mutants_are_deterministic_for_a_seed() -> None:
    row = S.Row(
        "x", "Show the top 5 products", "SELECT a FROM p ORDER BY r DESC LIMIT 5", dialect="sqlite"
    )
    runs = {S.build_case(row, ["limit_changed"], seed=7).mutants[0].sql for _ in range(3)}
    assert len(runs) == 1


class FakeEvaluator:
    """Scores each record by its id from scores.json; unlisted ids score 80, no finding."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def evaluate_many(
        self, records: Iterable[dict[str, Any]], workers: int = 1
    ) -> Iterator[dict[str, Any]]:
        for r in records:
            self.seen.append(r)
            entry = SCORES.get(r["id"], {"score": 80, "findings": []})
            yield {
                "id": r["id"],
                "score": entry["score"],
                "status": entry.get("status", "ok"),
                "findings": [{"kind": k, "severity": "warning"} for k in entry["findings"]],
            }


def _results(evaluator: FakeEvaluator) -> list[S.Result]:
    rows, problems = S.load_rows(RECORDS)
    assert problems == ["records.jsonl:5: not JSON (Expecting value)"]
    cases = [S.build_case(r, None, seed=0) for r in rows]
    return S.evaluate_cases(evaluator, cases)


def test_report_figures_on_the_fixture_file() -> None:
    ev = FakeEvaluator()
    report = S.summarise(_results(ev))
    assert report["originals"] == {
        "records": 5,
        "scored": 4,
        "coverage": 0.8,
        "mean_score": 71.25,
        "share_below_75": 0.5,
        "share_below_50": 0.25,
        "unscored_statuses": {"sql_unparseable": 1},
    }
    made = {k: b["mutants"] for k, b in report["kinds"].items()}
    assert made == {
        "filter_dropped": 2,
        "sort_flipped": 1,
        "limit_changed": 1,
        "aggregate_swapped": 1,
        "distinct_dropped": 0,
        "group_removed": 1,
        "comparison_changed": 0,
        "date_shifted": 1,
        "projection_removed": 1,
    }
    k = report["kinds"]
    assert k["filter_dropped"]["detection"] == 0.75  # r1: 40 < 80; r4: a tie at 70
    assert k["filter_dropped"]["caught_by"] == {"filter_missing": 1, "number_missing": 1}
    assert k["filter_dropped"]["ties_seen"] == 1  # r4: number_missing fired, the score stayed
    assert k["sort_flipped"]["ties_seen"] == 0  # the same findings as its original
    assert k["sort_flipped"]["detection"] == 0.5 and k["sort_flipped"]["ties"] == 1
    assert k["limit_changed"]["flagged"] == 1 and k["limit_changed"]["flag_rate"] == 1.0
    assert k["group_removed"]["detection"] == 0.0 and k["group_removed"]["mean_drop"] == -5.0
    assert k["group_removed"]["flag_base"] == 0 and k["group_removed"]["flag_rate"] is None
    assert k["distinct_dropped"]["detection"] is None
    o = report["overall"]
    # wins: filter 1 + 0.5, sort 0.5, limit 1, aggregate 1, group 0, date 1, projection 0.5
    assert (o["mutants"], o["detection"], o["ties"], o["ties_seen"]) == (8, round(5.5 / 8, 4), 3, 1)
    assert (o["flagged"], o["flag_base"]) == (2, 3)
    assert o["records_with_a_mutant"] == 3
    md = S.markdown(report)
    assert "| filter_dropped | 2 | 75.0% | 1 (1) | 1/1 (100.0%) | 20.0 |" in md
    assert "| sort_flipped | 1 | 50.0% | 1 (0) |" in md


def test_the_evaluator_never_sees_the_label_and_reads_evidence_as_enriched() -> None:
    ev = FakeEvaluator()
    _results(ev)
    r4 = next(r for r in ev.seen if r["id"] == "r4")
    assert r4 == {
        "id": "r4",
        "question": "How many users joined in 2020?",
        "enriched_question": "joined refers to created",
        "dialect": None,
        "sql": "SELECT COUNT(*) FROM users WHERE created LIKE '2020%'",
    }
    assert all("correct" not in r for r in ev.seen)


def test_precision_table_lift_and_flags() -> None:
    results = _results(FakeEvaluator())
    t = P.table([P.FileResults("fixture", results)])
    cell = t["per_file"]["fixture"]["filter_missing"]
    # labelled: negatives are the incorrect rows (r4); unscored r6 is left out; mutants are
    # planted into correct rows only (r1, r2: 6), so r4#date_shifted does not count
    assert (cell["fires_correct"], cell["fires_incorrect"], cell["fires_mutants"]) == (0, 0, 1)
    assert (cell["n_correct"], cell["n_incorrect"], cell["n_mutants"]) == (3, 1, 6)
    assert cell["lift"] is None
    assert cell["lift_mutants"] == 1.5  # (1 / 1) / (6 / 9)
    assert t["files"]["fixture"] == {"labelled": True, "rows": 5, "correct": 4, "mutants": 6}


def test_precision_flags_a_kind_that_fires_no_more_on_negatives() -> None:
    def res(i: int, correct: bool, kinds: list[str]) -> S.Result:
        row = S.Row(str(i), "q", "SELECT 1", correct=correct)
        return S.Result(
            S.Case(row, "SELECT 1"), S.Scored(50.0, "ok", {k: ("warning",) for k in kinds}), []
        )

    # 10 correct rows, 10 incorrect: "noisy" fires on every odd row of both, "sharp" on the
    # even incorrect rows only
    rows = [
        res(i, i < 10, (["noisy"] if i % 2 else []) + (["sharp"] if i >= 10 and i % 2 == 0 else []))
        for i in range(20)
    ]
    t = P.table([P.FileResults("f", rows)])
    assert t["per_file"]["f"]["noisy"]["lift"] == 1.0 and t["per_file"]["f"]["noisy"]["flag"]
    assert t["per_file"]["f"]["sharp"]["lift"] == 2.0 and not t["per_file"]["f"]["sharp"]["flag"]
    assert t["flagged"] == ["noisy"] and t["flagged_weighted"] == ["noisy"]
    assert "| noisy | warning | **1.00 (10)** | f |" in P.markdown(t)
    gate = P.gate([P.FileResults("f", rows)], meta={"command": "x"})
    assert dict(gate.demoted) == {"noisy": "lift 1.00 on f (fires 10 times)"}
    assert gate.to_dict()["meta"] == {"command": "x"}


def test_gate_counts_split_by_enriched_question() -> None:
    results = _results(FakeEvaluator())
    counts = P.gate_counts(P.FileResults("fixture", results))
    # r1, r2, r3 have no enriched question (r6 is unscored); r4, the incorrect row, has one
    assert counts == {
        "question_term_unexplained": P.Fires(0, 1, 0, 3),
        "tables_unexplained": P.Fires(0, 1, 0, 3),
    }


# ------------------------------------------------------------------ CLI


def test_cli_selftest_json_output_and_pairs(tmp_path: Path) -> None:
    out, pairs = tmp_path / "report.md", tmp_path / "pairs.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "selftest",
            str(RECORDS),
            "--json",
            "--output",
            str(out),
            "--pairs",
            str(pairs),
            "--seed",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["run"]["records_used"] == 5 and report["run"]["skipped_lines"] == 1
    assert report["run"]["seed"] == 3
    assert report["run"]["command"] == f"stef selftest {RECORDS} --seed 3"  # no output paths
    assert report["originals"]["records"] == 5 and report["originals"]["scored"] == 4
    assert report["overall"]["mutants"] == 8
    md = out.read_text()
    assert "| kind | mutants | detection | ties (seen) | flagged | mean drop |" in md
    lines = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert [(p["id"], p["kind"]) for p in lines][:3] == [
        ("r1", "filter_dropped"),
        ("r1", "sort_flipped"),
        ("r1", "limit_changed"),
    ]
    assert lines[0]["mutant_sql"] == "SELECT name FROM city ORDER BY population DESC LIMIT 3"


def test_cli_selftest_kinds_limit_and_correct_only() -> None:
    result = CliRunner().invoke(
        main, ["selftest", str(RECORDS), "--kinds", "date_shifted", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert list(report["kinds"]) == ["date_shifted"] and report["overall"]["mutants"] == 1
    result = CliRunner().invoke(main, ["selftest", str(RECORDS), "--correct-only", "--json"])
    report = json.loads(result.stdout)
    assert report["run"]["records_used"] == 1 and report["overall"]["mutants"] == 0
    result = CliRunner().invoke(main, ["selftest", str(RECORDS), "--limit", "2", "--json"])
    assert json.loads(result.stdout)["run"]["records_used"] == 2


def test_cli_selftest_errors() -> None:
    runner = CliRunner()
    bad = runner.invoke(main, ["selftest", str(RECORDS), "--kinds", "sort_flipped,typo"])
    assert bad.exit_code == 2 and "unknown kind(s) typo" in bad.output
    missing = runner.invoke(main, ["selftest", "no/such/file.jsonl"])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_cli_selftest_file_without_usable_records(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"question": "q"}\n[1]\n')
    result = CliRunner().invoke(main, ["selftest", str(f)])
    assert result.exit_code == 1
    assert f"Error: {f} holds no usable records (2 unusable)" in result.output


def test_cli_precision_writes_markdown_and_json(tmp_path: Path) -> None:
    md, js = tmp_path / "p.md", tmp_path / "p.json"
    result = CliRunner().invoke(
        main, ["precision", str(RECORDS), "--output", str(md), "--json", str(js)]
    )
    assert result.exit_code == 0, result.output
    t = json.loads(js.read_text())
    assert t["files"]["records"] == {"labelled": True, "rows": 5, "correct": 4, "mutants": 6}
    assert set(t["selftest"]["records"]) == {"originals", "kinds", "overall"}
    text = md.read_text()
    assert text.startswith("### Selftest across files")
    assert "| `records` | 4 | 75.0% |" in text  # the rows not marked incorrect
    assert "| file | labelled | rows | correct rows | mutants |" in text


def test_cli_precision_writes_the_gate(tmp_path: Path) -> None:
    gate = tmp_path / "finding_precision.json"
    result = CliRunner().invoke(main, ["precision", str(RECORDS), "--write-gate", str(gate)])
    assert result.exit_code == 0, result.output
    g = json.loads(gate.read_text())
    assert g["format"] == "stef-finding-precision/1" and g["min_fires"] == 5
    assert g["demoted"] == {}  # nothing fires 5 times in five rows
    assert g["meta"]["files"] == [str(RECORDS)]


def test_unusable_lines_are_named_and_the_rest_is_read(tmp_path: Path) -> None:
    f = tmp_path / "mixed.jsonl"
    f.write_text(
        '{"question": "q", "sql": "SELECT 1"}\n'
        '{"question": "q"}\n'
        '{"question": "q", "sql": "SELECT 1", "evidence": 3}\n'
        "\n"
        '{"question": "q", "sql": "SELECT 1", "dialect": "tsql", "correct": true}\n'
    )
    rows, problems = S.load_rows(f, default_dialect="postgres")
    assert [(r.id, r.dialect, r.correct) for r in rows] == [
        ("line-1", "postgres", None),
        ("line-5", "tsql", True),
    ]
    assert problems == [
        "mixed.jsonl:2: field 'sql' is required and must be a non-empty string",
        "mixed.jsonl:3: field 'enriched_question' (or 'evidence') must be a string or null",
    ]


def test_planting_into_a_tsql_script_logs_no_fallback_notice_and_leaves_the_logger_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    script = "DECLARE @n int = 5\nSELECT TOP 5 Id FROM Users ORDER BY Reputation DESC"
    log = logging.getLogger("sqlglot")
    level = log.level
    with caplog.at_level(logging.WARNING, logger="sqlglot"):
        trees = parse_sql(script, "tsql")
    assert trees is not None and trees.root.sql("tsql").startswith("SELECT TOP 5")
    assert not [r for r in caplog.records if r.name.startswith("sqlglot")]
    assert log.level == level


def test_a_planting_error_costs_its_record_the_mutants_not_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug in planting (here: the cue reader raising) leaves that record with no mutant,
    evaluates its original all the same, and says so in the report."""
    real = S.read_cues

    def flaky(question: str, enriched: str | None = None) -> Any:
        if "France" in question:
            raise KeyError("higher than or equal to")
        return real(question, enriched)

    monkeypatch.setattr(S, "read_cues", flaky)
    rows, _ = S.load_rows(RECORDS)
    cases = [S.build_case(r, None, seed=0) for r in rows]
    failed = [c for c in cases if c.plant_error]
    assert [c.plant_error for c in failed] == ["KeyError: 'higher than or equal to'"] * len(failed)
    assert failed and all(not c.mutants for c in failed)
    report = S.summarise(S.evaluate_cases(FakeEvaluator(), cases))
    assert report["originals"]["records"] == len(rows)
    assert report["overall"]["planting_errors"] == len(failed)
    assert "planting failed" in S.markdown(report)

"""Issue 13: the hostile-input corpus (tests/hostile.py) through ``stef eval`` as a
subprocess: every input line gets exactly one evaluation with the exact status and error,
the batch finishes, and time and memory stay bounded (a per-record deadline, a memory
budget per worker). Crashing workers and the deadline are tested with and without workers.
"""

from __future__ import annotations

import ctypes
import json
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hostile import Case, cases, flat_case, record, run_stef
from stef.batch import Summary, evaluate_encoded
from stef.evaluator import Evaluator

#: Bounds for one run of the whole corpus (generous: CI has 2 shared cores). They bound,
#: they do not measure: benchmarks/hostile.py measures.
WALL_S, PEAK_MIB = 240.0, 1500.0


def _corpus(tmp_path: Path) -> tuple[Path, list[Case]]:
    # the byte-order mark only means something at the start of the file
    ordered = sorted(cases(), key=lambda c: c.name != "utf8_bom_first_line")
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"".join(c.data() for c in ordered))
    return path, ordered


def _check(out: Path, corpus: list[Case]) -> list[dict]:
    evaluations = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = [e for c in corpus for e in c.expect]
    assert len(evaluations) == len(expected) == sum(len(c.lines) for c in corpus)
    k = 0
    for case in corpus:
        for status, error in case.expect:
            got = evaluations[k]
            assert got["status"] == status, (case.name, k, got["error"])
            if error is None:
                assert got["error"] is None
            else:
                assert got["error"].startswith(error), (case.name, got["error"])
            # no output line echoes a hostile payload: bounded whatever the input
            assert len(json.dumps(got)) < 8_000_000, case.name
            k += 1
    return evaluations


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_hostile_corpus_gets_one_exact_evaluation_per_line(tmp_path, workers):
    path, corpus = _corpus(tmp_path)
    run = run_stef(
        [
            "eval",
            str(path),
            "-o",
            "out.jsonl",
            "--store",
            "s.db",
            "--no-progress",
            "-w",
            workers,
            "--record-timeout",
            "120",
        ],  # the deadline has its own test; CI cores are shared
        tmp_path,
    )
    assert run.code == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    evaluations = _check(tmp_path / "out.jsonl", corpus)
    assert run.seconds < WALL_S and run.peak_mib < PEAK_MIB, (run.seconds, run.peak_mib)
    # every evaluation stored, the bad timestamps' too (decided before any write)
    with sqlite3.connect(tmp_path / "s.db") as c:
        stored = dict(c.execute("SELECT id, status FROM evaluations"))
    assert len(stored) == len(evaluations)
    assert stored["ts-word"] == "invalid_record" and stored["ts-good"] == "ok"
    # a second run skips every line (the invalid-JSON ones too) and says the same figures
    again = run_stef(
        ["eval", str(path), "-o", "again.jsonl", "--store", "s.db", "--no-progress"], tmp_path
    )
    assert again.code == 0, again.stderr[-2000:]
    assert f"skipped {len(evaluations)} record(s) already in the store" in again.stderr
    assert (tmp_path / "again.jsonl").read_text() == ""


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_record_past_its_deadline_is_a_timeout_and_the_batch_goes_on(tmp_path, workers):
    src = tmp_path / "slow.jsonl"
    slow = record("slow", flat_case(5000), "What label has each x?")
    src.write_bytes(b"\n".join([record("before"), slow, record("after")]) + b"\n")
    run = run_stef(
        ["eval", str(src), "-o", "o.jsonl", "--record-timeout", "0.5", "-w", workers,
         "--no-progress"],
        tmp_path,
    )  # fmt: skip
    assert run.code == 0, run.stderr[-2000:]
    got = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [(e["id"], e["status"]) for e in got] == [
        ("before", "ok"),
        ("slow", "timeout"),
        ("after", "ok"),
    ]
    assert got[1]["error"] == (
        "evaluating this record took longer than 0.5 s (--record-timeout); it was stopped"
    )
    assert got[1]["question"] == "What label has each x?"
    assert "status timeout" in run.stderr


class Segfaulting(Evaluator):
    """Dies in compiled code (a real SIGSEGV) on one record, as sqlglot's parser did."""

    def evaluate_line(self, line: str) -> dict:
        if '"crash"' in line:
            ctypes.string_at(0)
        return super().evaluate_line(line)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_that_dies_costs_only_its_record(workers):
    lines = [record(f"r{i}").decode() for i in range(40)]
    lines[7] = record("crash").decode()
    lines[30] = record("crash").decode().replace('"crash"', '"crash" ')
    summary = Summary()
    got = []
    for e in evaluate_encoded(Segfaulting(), lines, workers=workers, deadline=30):
        summary.add(e.brief)
        got.append(e.decoded())
    assert len(got) == 40
    assert [e["id"] for e in got] == [json.loads(line)["id"] for line in lines]
    dead = [e for e in got if e["status"] != "ok"]
    assert [e["status"] for e in dead] == ["internal_error", "internal_error"]
    assert dead[0]["error"] == (
        "the worker process evaluating this record died (killed by SIGSEGV); please report it"
    )
    assert summary.to_dict()["statuses"] == {"ok": 38, "internal_error": 2}


def test_an_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path):
    src = tmp_path / "f.jsonl"
    src.write_bytes(b"\n".join(record(f"r{i}") for i in range(50)) + b"\n")
    before = src.read_bytes()
    run = run_stef(["eval", str(src), "-o", str(src)], tmp_path)
    assert run.code == 2
    assert f"--output {src} is the input file; it would be overwritten" in run.stderr
    assert src.read_bytes() == before


def test_a_timestamp_evaluation_never_stops_the_store(tmp_path):
    lines = [record(f"r{i}", timestamp="2026-01-01T00:00:00Z") for i in range(600)]
    lines[300] = record("r300", timestamp="yesterday")
    src = tmp_path / "ts.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    run = run_stef(["eval", str(src), "--store", "ts.db", "-o", "o.jsonl"], tmp_path)
    assert run.code == 0, run.stderr[-2000:]
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 600
    with sqlite3.connect(tmp_path / "ts.db") as c:
        rows = dict(c.execute("SELECT status, count(*) FROM evaluations GROUP BY status"))
    assert rows == {"ok": 599, "invalid_record": 1}


def _hog(item: str) -> str:
    if item == "hog":
        return str(len(bytearray(1 << 30)))  # 1 GiB, over the budget
    return item


def test_a_record_over_its_memory_budget_costs_only_itself():
    from stef.pool import SupervisedPool

    def fallback(item: str, status: str, message: str) -> str:
        return f"{status}: {message}"

    with SupervisedPool(_hog, fallback, workers=1, deadline=60, memory_mb=256) as pool:
        got = list(pool.map(["a", "hog", "b"]))
    assert got == [
        "a",
        "internal_error: evaluating this record needed more than 256 MiB",
        "b",
    ]

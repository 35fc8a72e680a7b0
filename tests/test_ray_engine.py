"""`stef eval --engine ray`: the same evaluations as the local engine, on Ray Data.

One local Ray runtime (2 CPUs, no dashboard, workers' logs kept off the terminal) serves
the whole module; the CLI finds it started and joins it. Each test evaluates a few dozen
records.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from stef.cli import main
from stef.engines.frames import COLUMNS, SPARK_SCHEMA, evaluate_batches
from stef.engines.ray import RayJob, run
from stef.evaluator import Evaluator
from stef.monitor.store import open_store

ROOT = Path(__file__).parent.parent
LOGS = ROOT / "examples" / "logs.jsonl"
RULES = ROOT / "examples" / "rules.json"


@pytest.fixture(scope="module")
def ray_runtime() -> Iterator[str]:
    """A local Ray runtime for this module; its address, for a second driver to join."""
    import logging

    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def canonical(line: str) -> str:
    """An evaluation without the fields that differ on every run (as
    benchmarks/evaluations_digest.py compares them)."""
    e = json.loads(line)
    e.pop("evaluated_at")
    e["provenance"].pop("latency_ms")
    return json.dumps(e, sort_keys=True)


def _eval(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["eval", *args, "--no-progress"])
    return res.exit_code, res.output


def _both(records: Path, tmp_path: Path, *extra: str) -> tuple[list[str], list[str], dict, dict]:
    """Evaluations and summaries of ``records`` through the local engine and through Ray."""
    out = {}
    for engine in ("local", "ray"):
        dest, summary = tmp_path / f"{engine}.jsonl", tmp_path / f"{engine}.json"
        code, output = _eval(str(records), "--engine", engine, "-o", str(dest),
                             "--summary-json", str(summary), *extra)
        assert code == 0, output
        out[engine] = (dest.read_text().splitlines(), json.loads(summary.read_text()))
    return out["local"][0], out["ray"][0], out["local"][1], out["ray"][1]


def test_same_records_give_the_same_evaluations_in_the_same_order(
    ray_runtime: str, tmp_path: Path
) -> None:
    local, ray, local_summary, ray_summary = _both(
        LOGS, tmp_path, "--rules", str(RULES), "--workers", "2"
    )
    assert len(ray) == len(local) == 42
    assert [canonical(x) for x in ray] == [canonical(x) for x in local]
    assert ray_summary == local_summary
    assert ray_summary["coverage"] == 0.8571  # the example's six bad records


def test_bad_records_get_their_error_evaluation_and_the_batch_finishes(
    ray_runtime: str, tmp_path: Path
) -> None:
    good = '{"id": "g1", "question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}'
    data = b"".join([
        b"\xef\xbb\xbf" + good.encode() + b"\r\n",  # a byte-order mark, a CRLF line end
        b"\n   \n",  # blank lines are not records
        b'{"id": "b1", "question": "caf\xe9?", "sql": "SELECT 1"}\n',  # not UTF-8
        b'{"id": "b2", "question": "How many?"}\n',  # no sql
        b'{"id": "b3", "question": "How many?", "sql": "SELEC nothing FROM"}\n',
        b"{not json\n",
        b'["a list"]\n',
        b'{"id": "b4", "question": "Q?", "sql": "SELECT 1", "timestamp": 5}\n',
    ])
    records = tmp_path / "bad.jsonl"
    records.write_bytes(data)
    local, ray, _, summary = _both(records, tmp_path)
    assert [canonical(x) for x in ray] == [canonical(x) for x in local]
    assert [(e["id"], e["status"]) for e in map(json.loads, ray)] == [
        ("g1", "ok"),
        ("b1", "ok"),
        ("b2", "invalid_record"),
        ("b3", "sql_unparseable"),
        ("line-92072df399cb7470", "invalid_json"),
        ("line-943d57c5c2f9b9f4", "invalid_record"),
        ("b4", "invalid_record"),
    ]
    assert json.loads(ray[1])["question"] == "caf\ufffd?"
    assert (summary["records"], summary["evaluated"], summary["coverage"]) == (7, 2, 0.2857)
    code, output = _eval(str(records), "--engine", "ray", "-o", str(tmp_path / "x.jsonl"),
                         "--min-coverage", "0.5")
    assert code == 1 and "coverage 28.6% is below 50.0%" in output


def test_parquet_in_and_parquet_out(ray_runtime: str, tmp_path: Path) -> None:
    lines = [ln for ln in LOGS.read_text().splitlines() if ln.strip()][:30]
    rows = [json.loads(ln) for ln in lines]
    keep = ("id", "question", "enriched_question", "sql", "dialect", "agent", "timestamp")
    records = [{k: r.get(k) for k in keep} for r in rows if isinstance(r.get("sql"), str)]
    jsonl = tmp_path / "records.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    parquet = tmp_path / "records.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet)
    code, output = _eval(str(jsonl), "-o", str(tmp_path / "local.jsonl"))
    assert code == 0, output
    code, output = _eval(str(parquet), "--engine", "ray", "-o", str(tmp_path / "out.parquet"))
    assert code == 0, output
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column_names == [name for name, _ in COLUMNS]
    local = (tmp_path / "local.jsonl").read_text().splitlines()
    assert [canonical(x) for x in table.column("evaluation").to_pylist()] == [
        canonical(x) for x in local
    ]
    first = json.loads(local[0])
    assert table.slice(0, 1).select(["id", "status", "score", "band"]).to_pylist() == [
        {k: first[k] for k in ("id", "status", "score", "band")}
    ]


def test_store_keeps_every_evaluation(
    ray_runtime: str, tmp_path: Path, store_target: str
) -> None:
    code, output = _eval(str(LOGS), "--engine", "ray", "-o", str(tmp_path / "out.jsonl"),
                         "--store", store_target)
    assert code == 0, output
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    store = open_store(store_target)
    try:
        assert store.count() == 42
        stored = {e["id"]: e for e in store.query()}
    finally:
        store.close()
    for line in lines:
        e = json.loads(line)
        assert stored[e["id"]]["status"] == e["status"]
        assert stored[e["id"]]["score"] == e["score"]


def test_address_joins_a_running_cluster(ray_runtime: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "stef"), "eval", str(LOGS), "--engine", "ray",
         "--address", ray_runtime, "-o", str(out), "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "STEF summary" in proc.stderr
    assert len(out.read_text().splitlines()) == 42


def test_without_ray_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    code, output = _eval(str(LOGS), "--engine", "ray", "-o", str(tmp_path / "out.jsonl"))
    assert code == 1
    assert output.strip() == (
        "Error: --engine ray needs Ray Data, which is not installed: pip install 'stef[ray]'"
    )


def test_usage_errors() -> None:
    code, output = _eval("--engine", "ray", "--question", "q", "--sql", "SELECT 1")
    assert code == 2 and "--engine ray evaluates a FILE of records, not one pair" in output
    code, output = _eval(str(LOGS), "--address", "ray://h:10001")
    assert code == 2 and "--address goes with --engine ray" in output


def test_the_command_line_does_not_import_ray() -> None:
    code = ("import sys, stef.cli.main; "
            "print(sorted({'ray', 'pyarrow', 'pandas'} & set(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "[]", proc.stderr


def test_the_spark_function_gives_the_local_evaluations(tmp_path: Path) -> None:
    import pandas as pd

    lines = [ln for ln in LOGS.read_text().splitlines() if ln.strip()]
    code, output = _eval(str(LOGS), "-o", str(tmp_path / "local.jsonl"))
    assert code == 0, output
    local = (tmp_path / "local.jsonl").read_text().splitlines()
    frames = [pd.DataFrame({"line": lines[:20]}), pd.DataFrame({"line": lines[20:]})]
    out = pd.concat(list(evaluate_batches(frames)))
    assert [canonical(x) for x in out["evaluation"]] == [canonical(x) for x in local]
    assert list(out.columns) == [name for name, _ in COLUMNS]
    assert SPARK_SCHEMA.startswith("id string, status string, error string, score double,")
    # records as columns (a Spark table): missing values are NaN/None in pandas
    records = pd.DataFrame([
        {"id": "a", "question": "How many users?", "sql": "SELECT COUNT(*) FROM users",
         "timestamp": pd.Timestamp("2026-01-31T09:30:00Z")},
        {"id": "b", "question": "How many orders?", "sql": "SELECT COUNT(*) FROM orders",
         "timestamp": None},
    ])
    [got] = evaluate_batches([records])
    assert list(got["status"]) == ["ok", "ok"]
    first = json.loads(got["evaluation"][0])
    assert first["timestamp"] == "2026-01-31T09:30:00+00:00"
    assert json.loads(got["evaluation"][1])["timestamp"] is None


def test_a_record_past_its_deadline_is_a_timeout_and_the_batch_goes_on(
    ray_runtime: str, tmp_path: Path
) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from hostile import flat_case, record

    src = tmp_path / "slow.jsonl"
    slow = record("slow", flat_case(5000), "What label has each x?")
    src.write_bytes(b"\n".join([record("before"), slow, record("after")]) + b"\n")
    out = tmp_path / "o.jsonl"
    code, output = _eval(str(src), "--engine", "ray", "-o", str(out), "--record-timeout", "0.5")
    assert code == 0, output
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["id"], e["status"]) for e in got] == [
        ("before", "ok"), ("slow", "timeout"), ("after", "ok"),
    ]
    assert got[1]["error"] == (
        "evaluating this record took longer than 0.5 s (--record-timeout); it was stopped"
    )


def _segfaulting() -> type[Evaluator]:
    """An evaluator that dies in compiled code (a real SIGSEGV) on one record; made in a
    function, so that Ray's workers, which cannot import the tests, get it by value."""

    class Segfaulting(Evaluator):
        def evaluate_line(self, line: str) -> dict:
            if '"crash"' in line:
                ctypes.string_at(0)
            return super().evaluate_line(line)

    return Segfaulting


def test_a_record_that_kills_its_process_costs_only_itself(
    ray_runtime: str, tmp_path: Path
) -> None:
    lines = [json.dumps({"id": f"r{i}", "question": "How many users?",
                         "sql": "SELECT COUNT(*) FROM users"}) for i in range(30)]
    lines[7] = lines[7].replace('"r7"', '"crash"')
    src = tmp_path / "crash.jsonl"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o.jsonl"
    summary = run(RayJob(str(src), str(out), _segfaulting(), workers=2))
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["id"] for e in got] == [json.loads(x)["id"] for x in lines]
    assert got[7]["status"] == "internal_error"
    assert got[7]["error"] == (
        "the worker process evaluating this record died (killed by SIGSEGV); please report it"
    )
    assert summary["statuses"] == {"ok": 29, "internal_error": 1}

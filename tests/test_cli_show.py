"""``stef show ID`` and ``stef list`` over a real store (SQLite file and PostgreSQL), and
the store's ``get(id)`` they read through."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from stef.cli.main import main
from stef.monitor.store import open_store
from stef.monitor.store.common import record_time

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "examples" / "logs.jsonl"
RULES = ROOT / "examples" / "rules.json"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _filled(target: str, tmp_path: Path) -> list[dict]:
    """The example logs evaluated into ``target``; the evaluations written."""
    out = tmp_path / "out.jsonl"
    code, _, err = _run(
        "eval", str(LOGS), "--rules", str(RULES), "--store", target, "-o", str(out),
        "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_get_returns_the_stored_evaluation_or_none(store_target: str) -> None:
    evaluations = [
        {"id": "a", "status": "ok", "score": 80.0, "band": "good", "agent": "bot"},
        {"id": "b\x00c", "status": "sql_unparseable", "score": None, "error": "x"},
    ]
    store = open_store(store_target)
    try:
        store.write(evaluations)
        assert store.get("a") == evaluations[0]
        assert store.get("b\x00c")["status"] == "sql_unparseable"
        assert store.get("missing") is None
    finally:
        store.close()


def test_show_prints_the_report_eval_prints_for_the_pair(store_target: str, tmp_path: Path) -> None:
    written = _filled(store_target, tmp_path)
    record = json.loads(LOGS.read_text(encoding="utf-8").splitlines()[2])
    code, shown, _ = _run("show", record["id"], "--store", store_target)
    assert code == 0
    code, direct, _ = _run(
        "eval", "--question", record["question"], "--sql", record["sql"],
        "--dialect", record["dialect"], "--rules", str(RULES),
    )  # fmt: skip
    assert code == 0
    # the same report, but for the id in the title (the pair alone has a derived id)
    assert shown.splitlines()[0].startswith(f"╭─ STEF evaluation {record['id']} ")
    assert shown.splitlines()[1:] == direct.splitlines()[1:]
    assert "limit_mismatch" in shown

    code, as_json, _ = _run("show", record["id"], "--store", store_target, "--json")
    assert code == 0
    assert json.loads(as_json) == next(e for e in written if e["id"] == record["id"])


def test_show_refuses_an_unknown_id_and_a_missing_store(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    _filled(db, tmp_path)
    code, _, err = _run("show", "nope", "--store", db)
    assert code == 2
    assert f"no evaluation with id 'nope' in {db}" in err
    code, _, err = _run("show", "x", "--store", str(tmp_path / "typo.db"))
    assert code == 2
    assert "does not exist" in err and not (tmp_path / "typo.db").exists()


def test_show_survives_an_ingested_evaluation_without_breakdown(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    store = open_store(db)
    store.write([{"id": "x", "status": "ok", "score": 55.0, "band": "marginal", "breakdown": {}}])
    store.close()
    code, out, _ = _run("show", "x", "--store", db)
    assert code == 0
    assert "Score: 55.0  (marginal)" in out


def test_list_worst_lists_the_lowest_scores_lowest_first(store_target: str, tmp_path: Path) -> None:
    written = _filled(store_target, tmp_path)
    code, out, _ = _run(
        "list", "--store", store_target, "--where", "agent=sql-bot", "--worst", "4", "--json"
    )
    assert code == 0
    rows = json.loads(out)
    scored = sorted(
        (e for e in written if e["status"] == "ok" and e.get("agent") == "sql-bot"),
        key=lambda e: e["score"],
    )
    assert [r["score"] for r in rows] == [e["score"] for e in scored[:4]]
    assert {r["agent"] for r in rows} == {"sql-bot"}
    worst = next(e for e in written if e["id"] == rows[0]["id"])
    assert rows[0] == {
        "id": worst["id"],
        "time": worst["timestamp"],
        "agent": "sql-bot",
        "agent_version": worst["agent_version"],
        "app": "retail-analytics",
        "status": "ok",
        "score": worst["score"],
        "band": worst["band"],
        "findings": [f["kind"] for f in worst["findings"]],
    }

    code, table, _ = _run(
        "list", "--store", store_target, "--where", "agent=sql-bot", "--worst", "4"
    )
    assert code == 0
    lines = table.splitlines()
    assert lines[0].strip() == "worst 4 of agent=sql-bot,status=ok"
    assert [line.split("│")[1].strip() for line in lines if line.startswith("│ sql-bot")] == [
        r["id"] for r in rows
    ]


def test_list_without_worst_gives_the_newest_and_refuses_a_selection_matching_nothing(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "s.db")
    written = _filled(db, tmp_path)
    code, out, _ = _run("list", "--store", db, "--limit", "3", "--json")
    assert code == 0
    newest = sorted(written, key=record_time, reverse=True)[:3]  # timestamp, else evaluated_at
    assert [r["id"] for r in json.loads(out)] == [e["id"] for e in newest]
    code, _, err = _run("list", "--store", db, "--where", "agent=sqlbot")
    assert code == 2
    assert "agent='sqlbot' is not stored; did you mean 'sql-bot'?" in err
    code, _, err = _run("list", "--store", db, "--where", "status=invalid_json", "--worst", "3")
    assert code == 2
    assert "--worst ranks scores, and status=invalid_json records have none" in err

"""The store against real SQLite files and a real PostgreSQL server: idempotent writes,
selections, figures (each test over both backends, ``store_target``), and SQLite migrations."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import orjson
import pytest

from stef.monitor.stats import tally_evaluations
from stef.monitor.store import Selection, SQLiteStore, StoreError, open_store
from stef.monitor.store.migrations import MIGRATIONS, migrate

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import figures_of, make_evaluations

ALL_MIGRATIONS = [name for name, _ in MIGRATIONS]


@pytest.fixture
def evaluations():
    return (
        make_evaluations(300, seed=1, error_rate=0.05, metadata={"team": "ops"})
        + make_evaluations(200, seed=2, agent_version="1.4", quality=-0.2, step_s=400.0)
        + make_evaluations(100, seed=3, agent="other-bot", app="hr", metadata={"team": "hr"})
    )


def test_migrations_from_empty_create_every_table_once(tmp_path):
    store = SQLiteStore(tmp_path / "stef.db")
    names = [r[0] for r in store.conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    tables = {
        r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    store.close()
    assert names == ALL_MIGRATIONS
    assert {"evaluations", "evaluation_docs", "findings", "rollups", "watch_files"} <= tables
    conn = sqlite3.connect(tmp_path / "stef.db", isolation_level=None)
    assert migrate(conn) == []
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_migration_from_v1_backfills_findings_and_rollups(tmp_path, evaluations):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, upto="0001_evaluations") == ["0001_evaluations"]
    # A store written by the first schema: columns and documents, no findings, no rollups.
    from stef.monitor.store.migrations import record_time

    conn.execute("BEGIN")
    for seq, ev in enumerate(evaluations, start=1):
        conn.execute(
            "INSERT INTO evaluations (seq, id, agent, agent_version, app, t, status, score) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                seq,
                ev["id"],
                ev["agent"],
                ev["agent_version"],
                ev["app"],
                record_time(ev),
                ev["status"],
                ev["score"],
            ),
        )
        conn.execute("INSERT INTO evaluation_docs VALUES (?, ?)", (seq, orjson.dumps(ev).decode()))
    conn.execute("COMMIT")
    conn.close()

    store = SQLiteStore(path)
    names = [r[0] for r in store.conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == ALL_MIGRATIONS
    kinds = store.conn.execute(
        "SELECT kind, severity, count(*) FROM findings GROUP BY 1, 2 ORDER BY 1, 2"
    ).fetchall()
    expected: dict[tuple[str, str], int] = {}
    for ev in evaluations:
        seen: dict[str, str] = {}
        for f in ev["findings"]:
            seen[f["kind"]] = f["severity"]
        for kind, sev in seen.items():
            expected[(kind, sev)] = expected.get((kind, sev), 0) + 1
    assert kinds == [(k, s, n) for (k, s), n in sorted(expected.items())]
    got = figures_of(store.tallies(by=["agent", "agent_version"], window=86400.0))
    want = figures_of(tally_evaluations(evaluations, by=["agent", "agent_version"], window=86400.0))
    assert got == want
    store.close()


def test_writing_twice_stores_nothing_twice(store_target, evaluations):
    store = open_store(store_target)
    assert store.write(evaluations) == 600
    assert store.write(evaluations) == 0
    assert store.write(evaluations[:10] + evaluations[:10]) == 0
    assert store.count() == 600
    assert store.existing_ids(["sql-bot-1.3-0", "nope"]) == {"sql-bot-1.3-0"}
    # Rollups were not doubled either.
    got = figures_of(store.tallies(by=["agent"]))
    assert got == figures_of(tally_evaluations(evaluations, by=["agent"]))
    store.close()


def test_an_id_repeated_in_one_batch_counts_once(store_target, evaluations):
    store = open_store(store_target)
    assert store.write([evaluations[0], evaluations[0], evaluations[1]]) == 2
    assert store.count() == 2
    store.close()


def test_replace_overwrites_the_evaluation_its_findings_and_its_figures(store_target, evaluations):
    store = open_store(store_target)
    store.write(evaluations)
    first = evaluations[0]
    changed = {
        **first,
        "score": 0.0,
        "band": "poor",
        "findings": [
            {"kind": "limit_mismatch", "severity": "error", "message": "top 5 asked, LIMIT 10"}
        ],
    }
    changed["status"] = "ok"
    assert store.write([changed], replace=True) == 0
    assert store.count() == 600
    stored = next(store.query(**{"metadata.team": "ops"}, order_by="score", limit=1))
    assert (stored["id"], stored["score"]) == (first["id"], 0.0)
    assert [e["id"] for e in store.query(finding="limit_mismatch")] == [first["id"]]
    updated = [changed if e["id"] == first["id"] else e for e in evaluations]
    for path in (store.tallies, store._tallies_from_rows):
        got = figures_of(path(Selection(), ["agent_version"], None))
        assert got == figures_of(tally_evaluations(updated, by=["agent_version"]))
    store.close()


@pytest.mark.parametrize(
    ("by", "window", "selection"),
    [
        ((), None, {}),
        (("agent", "agent_version"), 86400.0, {}),
        (("app",), 3600.0, {"agent": "sql-bot"}),
        (("agent_version",), 86400.0, {"since": "2024-05-01T02:00:00Z", "until": "2024-05-02"}),
        (("metadata.team",), None, {}),
        (("agent",), 1800.0, {}),
        (("agent_version",), None, {"status": "ok"}),
        (("agent",), None, {"metadata.team": "ops"}),
        (("agent",), 86400.0, {"since": "2024-05-01T00:30:00Z"}),
    ],
)
def test_figures_from_the_store_equal_figures_from_the_evaluations(
    store_target, evaluations, by, window, selection
):
    store = open_store(store_target)
    store.write(evaluations)
    sel = Selection.from_kwargs(**selection)
    kept = [e["id"] for e in store.query(selection=sel)]
    subset = [e for e in evaluations if e["id"] in set(kept)]
    assert subset, "the selection should keep something"
    want = figures_of(tally_evaluations(subset, by=by, window=window))
    assert figures_of(store.tallies(sel, by=by, window=window)) == want
    assert figures_of(store._tallies_from_rows(sel, by, window)) == want
    store.close()


def test_query_selects_by_metadata_status_and_time_and_orders(store_target, evaluations):
    store = open_store(store_target)
    store.write(evaluations)
    assert store.count({"metadata.team": "hr"}) == 100
    errors = list(store.query(status="sql_unparseable"))
    assert errors and all(e["score"] is None for e in errors)
    assert len(errors) == sum(e["status"] != "ok" for e in evaluations)
    worst = list(store.query(agent_version="1.4", order_by="score", limit=3))
    assert [e["score"] for e in worst] == sorted(
        e["score"] for e in evaluations if e["agent_version"] == "1.4"
    )[:3]
    window = list(
        store.query(since="2024-05-01T01:00:00Z", until="2024-05-01T02:00:00Z", agent="other-bot")
    )
    assert [e["timestamp"] for e in window][:2] == ["2024-05-01T01:00:00Z", "2024-05-01T01:01:00Z"]
    assert len(window) == 40  # records 60..99 of 100, one a minute
    assert store.latest_time({"agent": "other-bot"}) == 1714521600.0 + 99 * 60
    with pytest.raises(StoreError, match="order_by must be one of"):
        list(store.query(order_by="agent"))
    store.close()


def test_an_invalid_evaluation_is_refused_with_its_id(store_target):
    store = open_store(store_target)
    with pytest.raises(StoreError, match="evaluation 'x': score must be a number within"):
        store.write([{"id": "x", "status": "ok", "score": "high"}])
    with pytest.raises(StoreError, match="field 'id' must be a non-empty string"):
        store.write([{"status": "ok", "score": 3}])
    assert store.count() == 0
    store.close()


def test_open_store_understands_urls(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/x.db")
    store.close()
    assert (tmp_path / "x.db").exists()
    with pytest.raises(StoreError, match="unknown store 'mysql://h/db'"):
        open_store("mysql://h/db")


def test_an_unreachable_postgres_is_named_without_its_password():
    with pytest.raises(StoreError) as info:
        open_store("postgres://stef:s3cret@127.0.0.1:1/evals")
    assert info.value.message.startswith(
        "cannot open store postgresql://stef@127.0.0.1:1/evals: connection failed:"
    )
    assert "s3cret" not in info.value.message


def test_watch_offsets_and_alert_state_survive_a_reopen(store_target, evaluations):
    store = open_store(store_target)
    store.write(evaluations[:5], offsets={"/logs/a.jsonl": 1234})
    store.save_offsets({"/logs/b.jsonl": 10})
    store.save_alert_state("mean-low", {"breached": True, "value": 41.5})
    store.close()
    store = open_store(store_target)
    assert store.offsets() == {"/logs/a.jsonl": 1234, "/logs/b.jsonl": 10}
    assert store.alert_states() == {"mean-low": {"breached": True, "value": 41.5}}
    store.close()


def test_stef_ingest_is_idempotent_and_lists_invalid_lines(tmp_path, store_target, evaluations):
    from click.testing import CliRunner

    from stef.cli import main

    path = tmp_path / "results.jsonl"
    lines = [orjson.dumps(e).decode() for e in evaluations[:50]]
    lines[3] = "{not json"
    lines[7] = orjson.dumps({**evaluations[7], "timestamp": "yesterday"}).decode()
    path.write_text("\n".join(lines) + "\n\n")
    db = store_target
    first = CliRunner().invoke(main, ["ingest", str(path), "--store", db])
    assert first.exit_code == 1
    assert first.stdout.startswith(
        "stored 48 new evaluation(s) of 48 valid line(s), 0 already stored"
    )
    assert f"invalid: {path}:4: not JSON" in first.stderr
    assert (
        f"invalid: {path}:8: field 'timestamp' is not an ISO 8601 time: 'yesterday'" in first.stderr
    )
    second = CliRunner().invoke(main, ["ingest", str(path), "--store", db])
    assert second.stdout.startswith(
        "stored 0 new evaluation(s) of 48 valid line(s), 48 already stored"
    )
    store = open_store(db)
    assert store.count() == 48
    store.close()


def test_stef_ingest_names_an_unknown_store(tmp_path):
    from click.testing import CliRunner

    from stef.cli import main

    (tmp_path / "x.jsonl").write_text("")
    result = CliRunner().invoke(
        main, ["ingest", str(tmp_path / "x.jsonl"), "--store", "mysql://h/db"]
    )
    assert result.exit_code == 2
    assert (
        "unknown store 'mysql://h/db'; use a file path, sqlite:///path or postgresql://…"
        in result.output
    )

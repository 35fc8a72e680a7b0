"""`stef store migrate|copy|prune`, concurrent writers and PostgreSQL specifics, both backends."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from stef.cli import main
from stef.monitor.stats import tally_evaluations, to_epoch
from stef.monitor.store import Selection, StoreError, open_store

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import figures_of, make_evaluations

MIGRATIONS = [
    "0001_evaluations",
    "0002_findings",
    "0003_rollups",
    "0004_watch_state",
    "0005_compressed_docs",
    "0006_row_finding_kinds",
    "0007_fine_rollups",
    "0008_row_cells",
    "0009_pg_row_cells",
]


@pytest.fixture
def evaluations():
    return make_evaluations(
        300, seed=4, error_rate=0.05, metadata={"team": "ops"}
    ) + make_evaluations(300, seed=5, agent_version="1.4", app="hr", step_s=90.0)


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_migrate_applies_each_migration_once_and_check_lists_pending(store_target):
    check = run("store", "migrate", "--store", store_target, "--check")
    assert check.exit_code == 1
    assert check.stdout.splitlines()[:9] == [f"pending {m}" for m in MIGRATIONS]
    assert check.stdout.splitlines()[9].endswith(": 9 migration(s) pending")

    first = run("store", "migrate", "--store", store_target)
    assert first.exit_code == 0, first.output
    lines = first.stdout.splitlines()
    assert lines[:9] == [f"applied {m}" for m in MIGRATIONS]
    assert lines[9].endswith(": 9 migration(s) applied; schema current (9 migrations)")

    again = run("store", "migrate", "--store", store_target)
    assert again.stdout.endswith(": nothing to apply; schema current (9 migrations)\n")
    assert run("store", "migrate", "--store", store_target, "--check").exit_code == 0


def test_copy_sqlite_to_postgres_and_back_keeps_everything(tmp_path, pg_url, evaluations):
    src = open_store(tmp_path / "a.db")
    src.write(evaluations, offsets={"/logs/a.jsonl": 4321})
    src.save_alert_state("mean-low", {"breached": True, "value": 40.0})
    src.close()

    there = run("store", "copy", str(tmp_path / "a.db"), pg_url, "--batch", "250")
    assert there.exit_code == 0, there.output
    assert there.stdout.startswith(f"copied 600 new evaluation(s) of 600 read from {tmp_path}/a.db")
    assert "(0 already there); 1 watch offset(s), 1 alert state(s)" in there.stdout
    again = run("store", "copy", str(tmp_path / "a.db"), pg_url)
    assert "copied 0 new evaluation(s) of 600 read" in again.stdout
    assert "(600 already there); 0 watch offset(s), 0 alert state(s)" in again.stdout

    back = run("store", "copy", pg_url, str(tmp_path / "b.db"))
    assert back.exit_code == 0, back.output
    assert back.stdout.startswith("copied 600 new evaluation(s) of 600 read from postgresql://")

    a, pg, b = open_store(tmp_path / "a.db"), open_store(pg_url), open_store(tmp_path / "b.db")
    docs = [list(s.query()) for s in (a, pg, b)]
    assert docs[0] == evaluations and docs[1] == evaluations and docs[2] == evaluations
    by = ["agent", "agent_version", "app"]
    want = figures_of(tally_evaluations(evaluations, by=by, window=3600.0))
    for s in (pg, b):
        assert figures_of(s.tallies(by=by, window=3600.0)) == want
        assert s.offsets() == {"/logs/a.jsonl": 4321}
        assert s.alert_states() == {"mean-low": {"breached": True, "value": 40.0}}
        s.close()
    a.close()


def test_copy_refuses_a_store_onto_itself_and_names_an_unknown_one(tmp_path):
    same = run("store", "copy", str(tmp_path / "a.db"), f"sqlite:///{tmp_path}/a.db")
    assert (same.exit_code, same.stderr.strip()) == (2, "Error: SRC and DST are the same store")
    bad = run("store", "copy", str(tmp_path / "a.db"), "mysql://h/db")
    assert bad.exit_code == 2
    assert "unknown store 'mysql://h/db'" in bad.stderr


@pytest.mark.parametrize("cutoff", ["2024-05-01T03:00:00Z", "2024-05-01T03:20:30Z"])
def test_prune_deletes_old_records_and_keeps_rollups_exact(store_target, evaluations, cutoff):
    store = open_store(store_target)
    store.write(evaluations)
    store.close()
    before = to_epoch(cutoff)
    kept = [e for e in evaluations if to_epoch(e["timestamp"]) >= before]
    gone = len(evaluations) - len(kept)
    assert 0 < gone < len(evaluations)

    dry = run("store", "prune", "--store", store_target, "--before", cutoff, "--dry-run")
    assert dry.stdout == f"would prune {gone} evaluation(s) recorded before {cutoff}\n"
    result = run("store", "prune", "--store", store_target, "--before", cutoff)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"pruned {gone} evaluation(s) recorded before {cutoff}; {len(kept)} remain\n"
    )

    store = open_store(store_target)
    assert [e["id"] for e in store.query()] == [e["id"] for e in kept]
    for by, window in ((("agent_version",), 3600.0), (("app",), None), ((), 86400.0)):
        want = figures_of(tally_evaluations(kept, by=by, window=window))
        assert figures_of(store.tallies(by=by, window=window)) == want
        assert figures_of(store._tallies_from_rows(Selection(), by, window)) == want
    assert store.count({"finding": "filter_missing"}) == sum(
        any(f["kind"] == "filter_missing" for f in e["findings"]) for e in kept
    )
    store.close()
    assert run("store", "prune", "--store", store_target, "--before", cutoff).stdout.startswith(
        "pruned 0 evaluation(s)"
    )


def test_prune_names_a_bad_time(tmp_path):
    result = run("store", "prune", "--store", str(tmp_path / "s.db"), "--before", "last week")
    assert result.exit_code == 2
    assert "--before: not an ISO 8601 time: 'last week'" in result.stderr


def test_two_concurrent_writers_store_each_id_once(store_target, evaluations):
    open_store(store_target).close()  # migrated before the race
    first, second = evaluations[:400], list(reversed(evaluations[200:]))
    new: list[int] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer(evs):
        store = open_store(store_target)
        store.chunk = 50
        try:
            new.append(store.write(evs))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            store.close()

    def reader():
        store = open_store(store_target)
        try:
            while not stop.is_set():
                store.tallies(by=["agent_version"], window=3600.0)
                store.count({"status": "ok"})
        except BaseException as exc:
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=writer, args=(evs,)) for evs in (first, second)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    stop.set()
    watcher.join(timeout=60)
    assert errors == []
    assert sum(new) == 600
    store = open_store(store_target)
    assert store.count() == 600
    assert sorted(e["id"] for e in store.query()) == sorted(e["id"] for e in evaluations)
    by = ["agent_version"]
    want = figures_of(tally_evaluations(evaluations, by=by, window=3600.0))
    assert figures_of(store.tallies(by=by, window=3600.0)) == want
    store.close()


def test_postgres_migrations_race_applies_each_once(pg_url):
    stores: list = []

    def opener():
        stores.append(open_store(pg_url))

    threads = [threading.Thread(target=opener) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(m for s in stores for m in s.migrated) == MIGRATIONS
    assert stores[0].pending_migrations() == []
    rows = stores[0]._fetch("SELECT name FROM schema_migrations ORDER BY name", ())
    assert [r[0] for r in rows] == MIGRATIONS
    for s in stores:
        s.close()


def test_postgres_keeps_a_nul_character_in_the_document(pg_url):
    ev = {
        "id": "nul\x00id",
        "status": "ok",
        "score": 50.0,
        "agent": "bot\x00",
        "metadata": {"note": "a\x00b", "big": 2**70},
        "findings": [{"kind": "odd\x00kind", "severity": "error"}],
    }
    store = open_store(pg_url)
    assert store.write([ev]) == 1
    assert store.write([ev]) == 0
    assert store.existing_ids(["nul\x00id"]) == {"nul\x00id"}
    # The document keeps the NUL; the big integer comes back as JSON readers read it.
    assert list(store.query()) == [{**ev, "metadata": {"note": "a\x00b", "big": float(2**70)}}]
    assert store.count({"agent": "bot\ufffd"}) == 1
    assert store.count({"metadata.note": "a\ufffdb"}) == 1
    assert store.count({"finding": "odd\ufffdkind"}) == 1
    store.close()


def test_an_unreachable_postgres_skips_here_and_fails_in_ci(monkeypatch):
    from conftest import postgres_unreachable

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="is not reachable: refused"):
        postgres_unreachable("refused")
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI is set, so the PostgreSQL tests must run"):
        postgres_unreachable("refused")


def test_a_store_error_names_the_postgres_store(pg_url):
    store = open_store(pg_url)
    with pytest.raises(StoreError, match="evaluation 'x': score must be a number"):
        store.write([{"id": "x", "status": "ok", "score": 500}])
    store.close()

"""Issue 13, monitoring side: ``stef watch`` under rotation, truncation, oversized lines,
restarts and hostile paths (real files); the SQLite store read-only, damaged and written
concurrently (real processes); ingest, rules check, selections, webhooks and reports as a
careless user meets them (exact messages)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

import pytest
from click.testing import CliRunner

from stef.cli import main
from stef.monitor import watch as watch_mod
from stef.monitor.alerts import WebhookSink, check_webhook_url
from stef.monitor.store import StoreError, open_store
from stef.monitor.watch import Watcher


def ev(rid: str, score: float = 80.0, **extra: object) -> dict:
    return {"id": rid, "status": "ok", "score": score, "band": "good", "agent": "bot", **extra}


def lines(prefix: str, n: int) -> str:
    return "".join(json.dumps(ev(f"{prefix}{i}")) + "\n" for i in range(n))


def replay(line: str) -> dict:
    return json.loads(line)


def stored_ids(store) -> set[str]:
    return {e["id"] for e in store.query()}


# -- watch -------------------------------------------------------------------------------


def test_rename_and_create_reads_the_new_file_from_the_start(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "app.jsonl").write_text(lines("old", 100))
    store = open_store(tmp_path / "s.db")
    w = Watcher(logs, store, replay)
    assert w.poll().stored == 100
    (logs / "app.jsonl").rename(tmp_path / "app.jsonl.1")  # rotated out of the pattern
    (logs / "app.jsonl").write_text(lines("new", 400))
    result = w.poll()
    assert result.notes == ["app.jsonl is a new file (rotated); reading it from the start"]
    assert (result.lines, result.stored) == (400, 400)
    assert len(stored_ids(store)) == 500
    store.close()


def test_copytruncate_and_refill_is_read_from_the_start(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    path = logs / "app.jsonl"
    path.write_text(lines("a", 300))
    store = open_store(tmp_path / "s.db")
    w = Watcher(logs, store, replay)
    assert w.poll().stored == 300
    with path.open("r+") as fh:  # copytruncate: same inode, emptied, then refilled
        fh.truncate(0)
    path.write_text(lines("b", 350))
    result = w.poll()
    assert result.notes == [
        "app.jsonl was rewritten (truncated and refilled); reading it from the start"
    ]
    assert (result.lines, result.stored) == (350, 350)
    store.close()


def test_a_renamed_followed_file_goes_on_where_it_was(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_text(lines("a", 20))
    store = open_store(tmp_path / "s.db")
    w = Watcher(logs, store, replay)
    assert w.poll().stored == 20
    (logs / "a.jsonl").rename(logs / "a-1.jsonl")
    with (logs / "a-1.jsonl").open("a") as fh:
        fh.write(lines("late", 5))
    result = w.poll()
    assert (result.lines, result.stored) == (5, 5)
    store.close()


def test_an_oversized_line_is_one_error_and_reading_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(watch_mod, "READ_LIMIT", 4096)  # a real file, a small limit
    logs = tmp_path / "logs"
    logs.mkdir()
    big = json.dumps(ev("big", note="x" * 20_000))
    (logs / "a.jsonl").write_text(lines("a", 2) + big + "\n" + lines("b", 3))
    store = open_store(tmp_path / "s.db")
    w = Watcher(logs, store, replay)
    for _ in range(5):
        w.poll()
    errors = list(store.query(status="invalid_json"))
    assert [e["error"] for e in errors] == [
        f"line is too long ({len(big):,} bytes > 4,096); skipped"
    ]
    assert {"a0", "a1", "b0", "b1", "b2"} <= stored_ids(store)
    store.close()
    # a restart reads nothing twice
    store = open_store(tmp_path / "s.db")
    assert Watcher(logs, store, replay).poll().lines == 0
    store.close()


def test_a_raw_cr_and_a_bom_do_not_split_or_spoil_lines(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes(
        b"\xef\xbb\xbf" + json.dumps(ev("first")).encode() + b"\n"
        b'{"id": "cr",\r "status": "ok", "score": 70}\n'
    )
    store = open_store(tmp_path / "s.db")
    result = Watcher(logs, store, replay).poll()
    assert (result.lines, result.stored) == (2, 2)
    assert stored_ids(store) == {"first", "cr"}
    store.close()


def test_symlinks_and_paths_outside_the_directory_are_not_followed(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "secret.jsonl").write_text(lines("secret", 3))
    (logs / "link.jsonl").symlink_to(tmp_path / "secret.jsonl")
    (logs / "a.jsonl").write_text(lines("a", 2))
    store = open_store(tmp_path / "s.db")
    result = Watcher(logs, store, replay, pattern="*.jsonl").poll()
    assert result.notes == ["link.jsonl is a symbolic link; not followed"]
    assert stored_ids(store) == {"a0", "a1"}
    outside = Watcher(logs, store, replay, pattern="../*.jsonl").poll()
    assert outside.stored == 0
    store.close()
    run = CliRunner().invoke(
        main, ["watch", str(logs), "--store", str(tmp_path / "s.db"), "--pattern", "../*.jsonl",
               "--once"],
    )  # fmt: skip
    assert run.exit_code == 2
    assert "--pattern '../*.jsonl' must name files inside DIRECTORY (no '..', no '/')" in run.output


def test_stef_watch_survives_a_nested_query_and_a_bad_timestamp_on_restart(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    deep = "SELECT * FROM " + "(SELECT * FROM " * 7500 + "users" + ") t" * 7500
    recs = [
        {"id": "deep", "question": "How many users?", "sql": deep},
        {"id": "ts", "question": "How many users?", "sql": "SELECT 1", "timestamp": "yesterday"},
        {"id": "fine", "question": "How many users?", "sql": "SELECT COUNT(*) FROM users"},
    ]
    (logs / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    db = tmp_path / "s.db"
    for _ in range(2):  # the second run is a restart: nothing again, no crash
        run = CliRunner().invoke(main, ["watch", str(logs), "--store", str(db), "--once"])
        assert run.exit_code == 0, run.output
    store = open_store(db)
    assert {e["id"]: e["status"] for e in store.query()} == {
        "deep": "sql_too_complex",
        "ts": "invalid_record",
        "fine": "ok",
    }
    store.close()


# -- store -------------------------------------------------------------------------------


def _make_read_only(path: Path) -> None:
    path.chmod(0o444)
    if os.geteuid() == 0:  # root ignores file modes; an immutable file is read-only to it
        subprocess.run(["chattr", "+i", str(path)], check=True)


def _undo_read_only(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], check=False)
    path.chmod(0o644)


def test_a_read_only_store_fails_before_the_first_record(tmp_path):
    db = tmp_path / "ro.db"
    store = open_store(db)
    store.write([ev("seed")])
    store.close()
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    src = tmp_path / "in.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "question": "How many users?", "sql": "SELECT 1"}) + "\n"
            for i in range(2000)
        )
    )
    _make_read_only(db)
    try:
        run = CliRunner().invoke(
            main, ["eval", str(src), "--store", str(db), "-o", str(tmp_path / "o.jsonl")]
        )
        assert run.exit_code == 1, run.output
        assert f"store {db} is read-only" in run.output
        assert "Traceback" not in run.output
        assert not (tmp_path / "o.jsonl").exists()  # refused before the first record
        ingest = CliRunner().invoke(main, ["ingest", str(src), "--store", str(db)])
        assert ingest.exit_code == 2 and f"store {db} is read-only" in ingest.output
    finally:
        _undo_read_only(db)


def _damaged_store(tmp_path: Path) -> Path:
    db = tmp_path / "big.db"
    store = open_store(db)
    store.write([ev(f"e{i}", question=f"question number {i} " * 8) for i in range(6000)])
    store.close()
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    size = db.stat().st_size
    with db.open("r+b") as fh:
        fh.seek(size // 2)
        fh.write(os.urandom(min(200_000, size // 3)))
    return db


def test_a_damaged_store_is_named_damaged_by_every_command(tmp_path):
    db = _damaged_store(tmp_path)
    with pytest.raises(StoreError) as err:
        open_store(db)
    assert f"store {db} is damaged" in err.value.message
    assert ".recover" in err.value.message
    (tmp_path / "e.jsonl").write_text(json.dumps(ev("new")) + "\n")
    for args in (
        ["stats"],
        ["report", "-o", str(tmp_path / "r.html")],
        ["ingest", str(tmp_path / "e.jsonl")],
    ):
        run = CliRunner().invoke(main, [*args, "--store", str(db)])
        assert run.exit_code == 2, (args, run.output)
        assert f"store {db} is damaged" in run.output, args
        assert "Traceback" not in run.output


def _writer(db: str, start: int) -> None:
    store = open_store(db)
    for k in range(0, 400, 100):  # overlapping ids: each must be stored once
        store.write([ev(f"e{(start + k + i) % 600}") for i in range(100)])
    store.close()


def test_concurrent_writers_store_each_evaluation_once(tmp_path):
    db = str(tmp_path / "c.db")
    open_store(db).close()
    code = "import sys; sys.path.insert(0, sys.argv[1]); from test_robust_monitor import _writer; "
    code += "_writer(sys.argv[2], int(sys.argv[3]))"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(Path(__file__).parent), db, str(s)])
        for s in (0, 200, 400)
    ]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*), count(DISTINCT id) FROM evaluations").fetchone() == (
            600,
            600,
        )
        tally = c.execute("SELECT tally FROM rollups").fetchall()
    assert sum(json.loads(t)["records"] for (t,) in tally) == 600


def test_reading_commands_refuse_a_missing_store_and_an_empty_selection(tmp_path):
    missing = tmp_path / "nothere.db"
    for args in (["stats"], ["report", "-o", str(tmp_path / "r.html")]):
        run = CliRunner().invoke(main, [*args, "--store", str(missing)])
        assert run.exit_code == 2
        assert f"store {missing} does not exist" in run.output
    assert not missing.exists() and not (tmp_path / "r.html").exists()
    db = tmp_path / "s.db"
    store = open_store(db)
    store.write([ev("a", agent="sql-bot", agent_version="1.3")])
    store.close()
    run = CliRunner().invoke(
        main, ["compare", "--store", str(db), "--baseline", "agent=sqlbot",
               "--candidate", "agent=sql-bot"],
    )  # fmt: skip
    assert run.exit_code == 2
    assert (
        "--baseline agent=sqlbot matches no stored evaluation. agent='sqlbot' is not stored; "
        "did you mean 'sql-bot'?. Stored agent/version/app: sql-bot/1.3/-"
    ) in " ".join(run.output.split())
    run = CliRunner().invoke(main, ["stats", "--store", str(db), "--where", "agnet=x"])
    assert run.exit_code == 2
    assert "unknown selection key 'agnet'; did you mean 'agent'?" in run.output


def test_ingest_stores_the_valid_lines_and_names_the_bad_ones(tmp_path):
    rows = [ev(f"e{i}") for i in range(18)]
    rows[4]["breakdown"] = "str"
    src = tmp_path / "e.jsonl"
    src.write_text(
        "".join(json.dumps(r) + "\n" for r in rows)
        + json.dumps({"question": "How many users?", "sql": "SELECT 1"})
        + "\n"
    )
    run = CliRunner().invoke(main, ["ingest", str(src), "--store", str(tmp_path / "s.db")])
    assert run.exit_code == 1
    assert "stored 17 new evaluation(s) of 17 valid line(s)" in run.output
    assert f"invalid: {src}:5: field 'breakdown' must be an object or null, got str" in run.output
    assert (
        f"invalid: {src}:19: this is a record (question and sql), not an evaluation: "
        "evaluate it with `stef eval FILE --store DB`"
    ) in run.output


def test_compare_with_an_empty_side_and_no_minimum_is_undecided(tmp_path):
    from stef.monitor.compare import compare
    from stef.monitor.stats import Tally

    full = Tally()
    for i in range(20):
        full.add(ev(f"e{i}", score=60.0 + i))
    result = compare(Tally(), full, [], [], min_records=0)
    assert result.verdict == "undecided"
    assert result.reason.startswith("too few evaluated records (baseline 0, candidate 20")


def test_report_labels_are_plain_text(tmp_path):
    db = tmp_path / "s.db"
    store = open_store(db)
    store.write(
        [ev(f"e{i}", agent="$\\frac{$", timestamp="2026-01-01T00:00:00Z") for i in range(5)]
    )
    store.close()
    run = CliRunner().invoke(main, ["report", "--store", str(db), "-o", str(tmp_path / "r.html")])
    assert run.exit_code == 0, run.output
    assert "$\\frac{$" in (tmp_path / "r.html").read_text()


# -- rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"benign_filters": ["tenant_id = ? ORDER BY b"]}',
         "$.benign_filters: item 0 ('tenant_id = ? ORDER BY b'): not a single predicate: "
         "it goes on with ORDER"),
        (b'{"benign_filters": ["' + b"(" * 3000 + b"a = 1" + b")" * 3000 + b'"]}',
         "nested 3000 parentheses deep (at most 100)"),
        (b"\xff\xfe{}", "$: not UTF-8 text (byte 0: b'\\xff')"),
        (b"[" * 100_000 + b"]" * 100_000, "$: malformed JSON: nested too deeply"),
    ],
)  # fmt: skip
def test_rules_check_refuses_what_would_break_eval(tmp_path, content, message):
    path = tmp_path / "rules.json"
    path.write_bytes(content)
    run = CliRunner().invoke(main, ["rules", "check", str(path)])
    assert run.exit_code == 2
    assert message in run.output
    assert "Traceback" not in run.output


def test_synonyms_with_odd_spaces_match_instead_of_failing(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('{"column_synonyms": {"region": ["sales  area", "terri\\ttory"]}}')
    run = CliRunner().invoke(
        main, ["eval", "--rules", str(path), "--json", "--question",
               "Total by sales  area?", "--sql", "SELECT region, SUM(x) FROM t GROUP BY region"],
    )  # fmt: skip
    assert run.exit_code == 0
    assert json.loads(run.output)["status"] == "ok"


# -- webhook -----------------------------------------------------------------------------


class Hook:
    """A real HTTP receiver answering ``status`` (and counting POSTs)."""

    def __init__(self, status: int) -> None:
        posts = self.posts = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(status)
                self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


EVENT = {"event": "alert", "rule": "m", "condition": "mean below 70", "value": 41.2,
         "records": 50, "window": "1h", "where": "all"}  # fmt: skip


def test_a_redirect_is_not_a_delivery_and_payload_formats(capsys):
    hook = Hook(302)
    try:
        assert WebhookSink(hook.url, attempts=1)(EVENT) is False
        assert "failed: HTTP 302 (a redirect to http://127.0.0.1:9/elsewhere" in (
            capsys.readouterr().err
        )
    finally:
        hook.close()
    hook = Hook(200)
    try:
        assert WebhookSink(hook.url, fmt="slack")(EVENT) is True
        assert WebhookSink(hook.url, fmt="teams")(EVENT) is True
        assert hook.posts[0] == {
            "text": "ALERT m: mean below 70 — mean is 41.2 over the last 1h (50 records, all)"
        }
        assert hook.posts[1]["@type"] == "MessageCard"
    finally:
        hook.close()
    with pytest.raises(ValueError, match="webhook URL 'not a url' is not an http"):
        check_webhook_url("not a url")


def test_an_undelivered_alert_is_sent_again(tmp_path):
    from stef.monitor.alerts import AlertConfig, AlertMonitor

    store = open_store(tmp_path / "s.db")
    store.write([ev(f"e{i}", score=10.0, timestamp="2030-01-01T00:00:00Z") for i in range(30)])
    config = AlertConfig.model_validate(
        {"min_records": 5, "rules": [{"name": "low", "metric": "mean", "below": 70,
                                      "window": "100000d"}]}
    )  # fmt: skip
    failing = [False]
    monitor = AlertMonitor(store, config, [lambda e: not failing[0]])
    failing[0] = True
    assert len(monitor.check()) == 1
    assert len(monitor.check()) == 1  # not delivered: again
    failing[0] = False
    assert len(monitor.check()) == 1
    assert monitor.check() == []  # delivered: once per breach
    store.close()


def test_summary_json_min_mean_and_version(tmp_path):
    logs = Path(__file__).resolve().parents[1] / "examples" / "logs.jsonl"
    out = tmp_path / "summary.json"
    run = CliRunner().invoke(
        main, ["eval", str(logs), "-o", str(tmp_path / "o.jsonl"), "--no-progress",
               "--min-mean", "99", "--min-coverage", "0.5", "--summary-json", str(out)],
    )  # fmt: skip
    assert run.exit_code == 1
    data = json.loads(out.read_text())
    assert data["records"] == 42 and data["evaluated"] == 36
    assert data["gates_failed"] == [f"mean score {data['mean']:.2f} is below 99"]
    assert CliRunner().invoke(main, ["-V"]).output == "stef, version 0.1.0\n"

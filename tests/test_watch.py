"""``stef watch``: real files appended while it runs, a real webhook receiver on 127.0.0.1."""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from stef.monitor.alerts import (
    AlertConfig,
    AlertConfigError,
    AlertMonitor,
    WebhookSink,
    evaluate_rule,
)
from stef.monitor.store import open_store
from stef.monitor.watch import Watcher, evaluator_function

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import T0, make_evaluations


class Receiver:
    """An HTTP server on 127.0.0.1 that keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


class Replay:
    """Stands in for the evaluator: each line already holds its evaluation; counts calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, line: str) -> dict:
        self.calls.append(json.loads(line)["id"])
        return json.loads(line)


def append(path: Path, evaluations: list[dict]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in evaluations)


def wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


MEAN_RULE = {"min_records": 20, "rules": [{"name": "mean low", "metric": "mean", "below": 60}]}


def batch(n: int, start_minute: int, quality: float, seed: int, prefix: str) -> list[dict]:
    start = T0 + timedelta(minutes=start_minute)
    return make_evaluations(n, seed=seed, quality=quality, start=start, id_prefix=prefix)


def test_watch_follows_appended_files_and_alerts_once_per_breach(tmp_path, receiver):
    logs = tmp_path / "logs"
    logs.mkdir()
    db = tmp_path / "stef.db"
    replay = Replay()
    printed: list[dict] = []
    stop = threading.Event()

    def run() -> None:
        store = open_store(db)
        monitor = AlertMonitor(
            store,
            AlertConfig.model_validate(MEAN_RULE),
            [printed.append, WebhookSink(receiver.url)],
        )
        Watcher(logs, store, replay, monitor, batch_size=25).run(interval=0.02, stop=stop)
        store.close()

    thread = threading.Thread(target=run)
    thread.start()
    reader = open_store(db)
    try:
        append(logs / "a.jsonl", batch(60, 0, 0.5, 1, "good"))
        wait_for(lambda: reader.count() == 60)
        with (logs / "b.jsonl").open("w") as fh:  # a new file, its last line still unfinished
            line = json.dumps(batch(1, 60, -0.7, 2, "bad-first")[0])
            fh.write(line[:20])
            fh.flush()
            time.sleep(0.2)
            assert reader.count() == 60
            fh.write(line[20:] + "\n")
        append(logs / "b.jsonl", batch(80, 61, -0.7, 3, "bad"))
        wait_for(lambda: reader.count() == 141)
        wait_for(lambda: len(receiver.received) == 1)
        append(logs / "a.jsonl", batch(30, 141, -0.7, 4, "worse"))  # still in breach
        wait_for(lambda: reader.count() == 171)
        append(logs / "a.jsonl", batch(70, 171, 0.5, 5, "fixed"))
        wait_for(lambda: reader.count() == 241)
        wait_for(lambda: len(receiver.received) == 2)
    finally:
        stop.set()
        thread.join(timeout=30)
        reader.close()

    assert [e["event"] for e in receiver.received] == ["alert", "recovery"]
    alert, recovery = receiver.received
    assert (alert["rule"], alert["metric"], alert["threshold"], alert["window"]) == (
        "mean low",
        "mean",
        60,
        "1h",
    )
    assert alert["value"] < 60 <= recovery["value"]
    assert alert["records"] >= 20
    assert printed == receiver.received
    assert len(replay.calls) == len(set(replay.calls)) == 241  # each record evaluated once


def test_a_restart_reads_nothing_twice_and_a_truncated_file_is_reread(tmp_path, store_target):
    logs = tmp_path / "logs"
    logs.mkdir()
    append(logs / "a.jsonl", batch(30, 0, 0.0, 1, "r"))
    (logs / "notes.txt").write_text("not followed\n")
    replay = Replay()
    store = open_store(store_target)
    first = Watcher(logs, store, replay).poll()
    assert (first.lines, first.stored) == (30, 30)
    store.close()

    store = open_store(store_target)
    again = Watcher(logs, store, replay)
    assert again.poll().lines == 0
    assert len(replay.calls) == 30
    (logs / "a.jsonl").write_text("\n" + json.dumps(batch(1, 0, 0.0, 1, "r")[0]) + "\n")
    result = again.poll()
    assert result.notes == ["a.jsonl shrank; reading it again from the start"]
    assert (result.lines, result.stored) == (1, 0)  # same id: stored once
    store.close()


def test_invalid_lines_go_to_evaluate_line_and_valid_ones_to_evaluate_record():
    class FakeEvaluator:
        def evaluate_record(self, record: dict) -> dict:
            return {"id": record["id"], "status": "ok", "score": 90.0}

        def evaluate_line(self, line: str) -> dict:
            return {"id": "bad", "status": "invalid_json", "score": None, "error": line}

    run = evaluator_function(FakeEvaluator())
    assert run('{"id": "r1", "question": "q", "sql": "select 1"}')["status"] == "ok"
    assert run("{oops")["status"] == "invalid_json"
    assert run("[1, 2]")["status"] == "invalid_json"


def test_a_crashing_evaluator_stores_an_internal_error_and_goes_on(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_text('{"id": "x"}\n' + json.dumps(batch(1, 0, 0.0, 1, "ok")[0]) + "\n")

    def flaky(line: str) -> dict:
        if '"x"' in line:
            raise RuntimeError("boom")
        return json.loads(line)

    store = open_store(tmp_path / "stef.db")
    assert Watcher(logs, store, flaky).poll().stored == 2
    errors = list(store.query(status="internal_error"))
    assert [e["error"] for e in errors] == ["RuntimeError: boom"]
    store.close()


def test_the_real_evaluator_is_called_through_its_public_methods(tmp_path):
    from stef.evaluator import Evaluator

    logs = tmp_path / "logs"
    logs.mkdir()
    record = {
        "id": "r1",
        "question": "How many users are there?",
        "sql": "SELECT COUNT(*) FROM users",
    }
    (logs / "a.jsonl").write_text(json.dumps(record) + "\nnot json\n")
    store = open_store(tmp_path / "stef.db")
    assert Watcher(logs, store, evaluator_function(Evaluator())).poll().stored == 2
    statuses = sorted(e["status"] for e in store.query())
    assert statuses == ["invalid_json", "ok"]
    assert next(store.query(status="ok"))["id"] == "r1"
    store.close()


def drop_store(tmp_path, before: float, after: float, n_after: int = 60, gap: int = 0):
    store = open_store(tmp_path / "stef.db")
    store.write(batch(300, 0, before, 1, "before"))  # five hours, one a minute
    store.write(batch(n_after, 300 + gap, after, 2, "after"))
    return store


DROP = {"name": "drop", "metric": "mean", "drop": 5, "baseline": "4h", "window": "1h"}


def test_a_significant_drop_breaches_and_a_small_one_does_not(tmp_path):
    store = drop_store(tmp_path, 0.3, -0.4)
    config = AlertConfig.model_validate({"rules": [DROP]})
    info = evaluate_rule(store, config.rules[0], config.min_records)
    assert info is not None and info["breached"] is True
    assert info["diff"] < -5 and info["ci"][1] < 0
    # The window is [latest - 1h, latest]: minutes 299..359; the baseline 59..298.
    assert info["records"] == 61 and info["baseline_records"] == 240
    store.close()
    (tmp_path / "stef.db").unlink()
    store = drop_store(tmp_path, 0.3, 0.3)
    info = evaluate_rule(store, config.rules[0], config.min_records)
    assert info is not None and info["breached"] is False
    store.close()


def test_a_drop_on_too_few_records_changes_nothing(tmp_path):
    store = drop_store(tmp_path, 0.3, -0.6, n_after=5, gap=120)  # the last hour holds 5
    config = AlertConfig.model_validate({"rules": [DROP]})
    info = evaluate_rule(store, config.rules[0], config.min_records)
    assert info is not None and info["breached"] is None
    assert AlertMonitor(store, config).check() == []
    store.close()


def test_coverage_and_finding_share_rules(tmp_path):
    store = open_store(tmp_path / "stef.db")
    store.write(make_evaluations(100, seed=1, error_rate=0.3, quality=-0.3))
    config = AlertConfig.model_validate(
        {
            "window": "2h",
            "rules": [
                {"name": "coverage", "metric": "coverage", "below": 0.9},
                {
                    "name": "filters",
                    "metric": "finding_share",
                    "kind": "filter_missing",
                    "above": 0.2,
                },
                {"name": "other app", "metric": "mean", "below": 99, "where": {"app": "hr"}},
            ],
        }
    )
    events = AlertMonitor(store, config).check()
    assert [(e["rule"], e["event"]) for e in events] == [
        ("coverage", "alert"),
        ("filters", "alert"),
    ]
    assert events[0]["value"] < 0.9 and events[0]["window"] == "2h"
    assert events[1]["kind"] == "filter_missing" and events[1]["value"] > 0.2
    assert AlertMonitor(store, config).check() == []  # still breached: no second alert
    store.close()


def test_an_invalid_rules_file_names_the_bad_key(tmp_path):
    path = tmp_path / "alerts.json"
    path.write_text(json.dumps({"rules": [{"name": "x", "metric": "p95", "below": 3}]}))
    with pytest.raises(AlertConfigError, match=r"rules\.0\.metric: Input should be 'mean'"):
        AlertConfig.load(path)
    path.write_text(json.dumps({"rules": [{"name": "x", "metric": "p90", "drop": 3}]}))
    with pytest.raises(AlertConfigError, match="drop is only defined for metric mean"):
        AlertConfig.load(path)
    path.write_text(
        json.dumps({"rules": [{"name": "x", "metric": "mean", "below": 3, "window": "1 hour"}]})
    )
    with pytest.raises(AlertConfigError, match=r"not a duration: '1 hour'"):
        AlertConfig.load(path)


def test_stef_watch_once_evaluates_stores_and_alerts_on_coverage(tmp_path):
    from click.testing import CliRunner

    from stef.cli import main

    logs = tmp_path / "logs"
    logs.mkdir()
    good = {
        "id": "r1",
        "question": "How many users are there?",
        "sql": "SELECT COUNT(*) FROM users",
    }
    bad = "".join(f"not json {i}\n" for i in range(3))  # distinct lines: distinct ids
    (logs / "app.jsonl").write_text(json.dumps(good) + "\n" + bad)
    alerts = tmp_path / "alerts.json"
    alerts.write_text(
        json.dumps(
            {
                "min_records": 2,
                "rules": [{"name": "coverage", "metric": "coverage", "below": 0.9, "window": "1d"}],
            }
        )
    )
    db = str(tmp_path / "stef.db")
    args = ["watch", str(logs), "--store", db, "--alerts", str(alerts), "--once"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines() == [
        "ALERT coverage: coverage below 0.9 — coverage is 0.25 over the last 1d (4 records, all)"
    ]
    assert "4 new line(s), 4 new evaluation(s) stored" in first.stderr
    again = CliRunner().invoke(main, args)
    assert (again.exit_code, again.stdout, again.stderr) == (0, "", "")


def test_stef_watch_needs_rules_for_a_webhook(tmp_path):
    from click.testing import CliRunner

    from stef.cli import main

    result = CliRunner().invoke(
        main,
        [
            "watch",
            str(tmp_path),
            "--store",
            str(tmp_path / "s.db"),
            "--alert-webhook",
            "http://127.0.0.1:9/x",
            "--once",
        ],
    )
    assert result.exit_code == 2
    assert "--alert-webhook needs --alerts" in result.output

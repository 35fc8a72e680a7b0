"""``stef.capture``: records reach a file or a service; a slow or dead receiver never slows the
agent past the bound, and nothing raises into the agent."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import stef
from interop_servers import Receiver, Reply, dead_url


def test_capture_appends_records_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "calls.jsonl"
    with stef.capture(agent="sql-bot", version="1.4", path=out, app="shop") as c:
        assert c.record(
            "How many users?",
            "SELECT COUNT(*) FROM users",
            enriched_question="Count rows of users",
            metadata={"user": "u1"},
        )
    [r] = [json.loads(x) for x in out.read_text().splitlines()]
    assert {
        k: r[k]
        for k in (
            "question",
            "sql",
            "enriched_question",
            "agent",
            "agent_version",
            "app",
            "metadata",
        )
    } == {
        "question": "How many users?",
        "sql": "SELECT COUNT(*) FROM users",
        "enriched_question": "Count rows of users",
        "agent": "sql-bot",
        "agent_version": "1.4",
        "app": "shop",
        "metadata": {"user": "u1"},
    }
    assert r["id"].startswith("cap-") and r["timestamp"].endswith("+00:00")


def test_records_of_a_capture_evaluate(tmp_path: Path) -> None:
    from stef.evaluator import Evaluator

    out = tmp_path / "calls.jsonl"
    with stef.capture(agent="a", version="1", path=out) as c:
        c.record("How many users?", "SELECT COUNT(*) FROM users")
    ev = Evaluator().evaluate_line(out.read_text().strip())
    assert (ev["status"], ev["agent"], ev["agent_version"]) == ("ok", "a", "1")


def test_capture_posts_batches_to_the_service() -> None:
    with (
        Receiver() as rx,
        stef.capture(agent="sql-bot", version="1.4", url=rx.url, token="tok-secret") as c,
    ):
        for i in range(5):
            c.record(f"question {i}?", "SELECT 1")
    assert {s.path for s in rx.seen} == {"/v1/evaluate"}
    assert rx.seen[0].headers["authorization"] == "Bearer tok-secret"
    records = [r for s in rx.seen for r in json.loads(s.body)["records"]]
    assert [r["question"] for r in records] == [f"question {i}?" for i in range(5)]


def test_decorator_records_the_functions_sql(tmp_path: Path) -> None:
    out = tmp_path / "calls.jsonl"
    cap = stef.capture(agent="sql-bot", version="2", path=out)

    @cap
    def answer(question: str) -> dict[str, str]:
        return {"sql": "SELECT name FROM users", "enriched_question": question + " (names)"}

    @cap
    def broken(question: str) -> str:
        raise ValueError("the agent's own error")

    assert answer("Who are the users?")["sql"] == "SELECT name FROM users"
    with pytest.raises(ValueError, match="the agent's own error"):
        broken("q")  # the agent's exception is its own; capture adds none
    cap.close()
    [r] = [json.loads(x) for x in out.read_text().splitlines()]
    assert (r["question"], r["enriched_question"]) == (
        "Who are the users?",
        "Who are the users? (names)",
    )


def test_a_slow_receiver_does_not_hold_the_agent() -> None:
    with Receiver(default=Reply(200, delay=5.0)) as rx:
        t0 = time.monotonic()
        with stef.capture(agent="a", url=rx.url, timeout=0.5, close_timeout=1.0) as c:
            recorded = [c.record("q?", "SELECT 1") for _ in range(200)]
        elapsed = time.monotonic() - t0
        stats = c.stats()
    assert all(recorded)
    assert elapsed < 1.0 + 0.75  # record() never waits; leaving waits at most close_timeout
    assert stats["sent"] == 0


def test_a_dead_receiver_raises_nothing() -> None:
    t0 = time.monotonic()
    with stef.capture(agent="a", url=dead_url(), close_timeout=0.5, max_attempts=2) as c:
        for _ in range(50):
            c.record("q?", "SELECT 1")
    assert time.monotonic() - t0 < 0.5 + 0.75
    s = c.stats()
    assert s["sent"] == 0 and s["failed"] + s["pending"] >= 1


def test_a_full_queue_drops_and_bad_input_does_not_raise() -> None:
    with Receiver(default=Reply(200, delay=2.0)) as rx:
        c = stef.capture(agent="a", url=rx.url, max_queue=3, close_timeout=0.2)
        results = [c.record("q?", "SELECT 1") for _ in range(20)]
        assert c.record(None, object()) in (True, False)  # type: ignore[arg-type]
        c.close()
    assert results.count(False) >= 10
    assert c.stats()["dropped"] >= 10


def test_no_destination_drops_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STEF_URL", raising=False)
    monkeypatch.delenv("STEF_CAPTURE_FILE", raising=False)
    with stef.capture(agent="a", close_timeout=0.5) as c:
        c.record("q?", "SELECT 1")
    assert c.stats()["failed"] == 1
    assert c.stats()["last_error"].startswith("could not write: OSError: no destination")


def test_import_stef_stays_cheap() -> None:
    import subprocess
    import sys

    code = (
        "import sys, stef; print(sorted(m for m in ('stef.interop.sdk', 'httpx', 'fastapi')"
        " if m in sys.modules)); stef.capture; print('stef.interop.sdk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"]  # loaded on first use of stef.capture

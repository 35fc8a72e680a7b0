"""Evaluation in worker processes, over real HTTP: ``stef serve`` with ``eval_workers=2``
stores exactly the evaluations the one-process service stores for the same OTLP requests
(apps, rules per app, a record that cannot be evaluated), answers only once they are
stored, keeps a token to its apps, and ``/v1/evaluate`` answers the same evaluations; a
record that kills its worker gets its error evaluation and the others of its chunk are
stored; a slow record gets ``timeout``."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx

from interop_servers import LiveServer as BareServer
from service_server import EXAMPLES, READ, SHOP_WRITE, TOKENS, WRITE, LiveServer, auth
from stef.evaluator import Evaluator
from stef.interop.calls import TraceMap
from stef.interop.ingest import EvalPool, IngestWorker
from stef.interop.otlp_http import standalone_app
from stef.monitor.store import open_store
from stef.rules import load_rules
from stef.service import ServiceConfig, create_app, parse_tokens

APP_ATTR = "deployment.app"
#: A question the crashing evaluator below dies on (os._exit, as a segfault would).
BOMB = "How many rows does the crash table have?"


def _records() -> list[dict[str, Any]]:
    out = []
    for line in (EXAMPLES / "logs.jsonl").read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:  # the examples hold a broken line on purpose
            continue
        if isinstance(r, dict) and isinstance(r.get("question"), str) and r.get("sql"):
            out.append(r)
    out.append({"question": "How many users?", "sql": "SELEC COUNT(* FROM"})  # unparseable
    return out


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _body(records: list[dict[str, Any]], first: int, apps: bool = True) -> dict[str, Any]:
    """One OTLP/JSON request: per record a trace of an agent root span and its tool call."""
    spans = []
    for i, r in enumerate(records, first):
        trace = f"{i + 1:032x}"
        agent = [
            _attr("gen_ai.operation.name", "invoke_agent"),
            _attr("gen_ai.agent.name", r.get("agent") or "bot"),
            _attr("gen_ai.input.messages", r["question"]),
        ]
        if apps:
            agent.append(_attr(APP_ATTR, "shop" if i % 2 else "books"))
        tool = [
            _attr("gen_ai.operation.name", "execute_tool"),
            _attr("gen_ai.tool.call.arguments", json.dumps({"sql": r["sql"]})),
        ]
        spans.append(
            {
                "traceId": trace,
                "spanId": "b" * 16,
                "parentSpanId": "a" * 16,
                "name": "execute_tool",
                "attributes": tool,
                "startTimeUnixNano": str(1_790_000_000_000_000_000 + i),
            }
        )
        spans.append(
            {"traceId": trace, "spanId": "a" * 16, "name": "invoke_agent", "attributes": agent}
        )
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def _config(db: Path, workers: int) -> ServiceConfig:
    return ServiceConfig(
        store=db,
        tokens=parse_tokens(TOKENS),
        rate_limit=None,
        app_rules={"shop": load_rules(EXAMPLES / "rules.json")},
        trace_map=TraceMap(source="otlp").with_overrides({"app": APP_ATTR}),
        traces_wait=0.3,
        eval_workers=workers,
    )


def _stored(db: Path) -> list[dict[str, Any]]:
    store = open_store(db)
    try:
        return sorted(store.query(), key=lambda e: e["id"])
    finally:
        store.close()


def _timeless(evaluations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in evaluations:
        e = {k: v for k, v in e.items() if k != "evaluated_at"}
        e["provenance"] = {k: v for k, v in e["provenance"].items() if k != "latency_ms"}
        out.append(e)
    return out


def _metric_sum(url: str, name: str) -> float:
    text = httpx.get(url + "/metrics", headers=auth(READ)).text
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{")
    )


def _serve(db: Path, workers: int) -> tuple[list[dict[str, Any]], list[Any], float]:
    """Send the records' traces in requests of 8 (stored before each answer), then one
    /v1/evaluate; the evaluations stored, the evaluate answer and the metrics' count."""
    records = _records()
    app = create_app(_config(db, workers))
    assert (app.state.engine.pool is not None) == (workers > 0)
    with LiveServer(app) as srv:
        total = 0
        for start in range(0, len(records), 8):
            body = _body(records[start : start + 8], start)
            r = httpx.post(srv.url + "/v1/traces", json=body, headers=auth(WRITE))
            assert r.status_code == 200
            total += int(r.headers["x-stef-records"])
            assert len(_stored(db)) == total  # the answer came once its calls were stored
        r = httpx.post(
            srv.url + "/v1/evaluate?store=false",
            json={"records": [{**rec, "id": f"e{i}"} for i, rec in enumerate(records[:6])]},
            headers=auth(WRITE),
        )
        assert r.status_code == 200
        answered = _timeless(r.json()["evaluations"])
        counted = _metric_sum(srv.url, "stef_evaluations_total")
    return _stored(db), answered, counted


def test_workers_store_the_evaluations_the_one_process_service_stores(tmp_path: Path) -> None:
    one, one_answer, one_count = _serve(tmp_path / "one.db", 0)
    two, two_answer, two_count = _serve(tmp_path / "two.db", 2)
    n = len(_records()) - 1  # one example's SQL is no call (not a text-to-SQL tool span)
    assert len(one) == len(two) == n
    assert _timeless(one) == _timeless(two)
    assert one_answer == two_answer and len(two_answer) == 6
    assert one_count == two_count == n + 6
    by_app = {e["app"] for e in two}
    assert by_app == {"shop", "books"}
    # the shop rules applied to shop's records only, in the workers too
    shop_hash = {e["provenance"]["rules_sha256"] for e in two if e["app"] == "shop"}
    books_hash = {e["provenance"]["rules_sha256"] for e in two if e["app"] == "books"}
    assert shop_hash.isdisjoint(books_hash)
    assert [e["status"] for e in two if e["sql"] == "SELEC COUNT(* FROM"] == ["sql_unparseable"]


def test_a_token_limited_to_an_app_writes_only_its_app_through_workers(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    records = _records()[:4]
    with LiveServer(create_app(_config(db, 2))) as srv:
        r = httpx.post(srv.url + "/v1/traces", json=_body(records, 0), headers=auth(SHOP_WRITE))
        assert (r.status_code, r.headers["x-stef-records"], r.headers["x-stef-rejected"]) == (
            200,
            "2",
            "2",
        )
    assert [e["app"] for e in _stored(db)] == ["shop", "shop"]


class CrashingEvaluator(Evaluator):
    """An evaluator whose process dies on :data:`BOMB` (as a segfault in compiled code
    would) and sleeps on a question saying "slowly"."""

    def evaluate_record(self, data: Any) -> dict[str, Any]:
        if data.get("question") == BOMB:
            os._exit(3)
        if "slowly" in str(data.get("question")):
            time.sleep(30)
        return super().evaluate_record(data)


def test_a_record_that_kills_its_worker_gets_its_error_evaluation(tmp_path: Path) -> None:
    """Over HTTP into an IngestWorker with two worker processes: the chunk of the record
    that killed its worker is retried record by record; only that record is marked."""
    db = tmp_path / "s.db"
    records = _records()[:10]
    records[3] = {"question": BOMB, "sql": "SELECT COUNT(*) FROM crash"}
    worker = IngestWorker(CrashingEvaluator(), db, workers=2)
    assert worker.pool is not None
    with BareServer(standalone_app(worker.submit)) as srv:
        r = httpx.post(srv.url + "/v1/traces", json=_body(records, 0, apps=False))
        assert r.status_code == 200
        assert worker.wait_idle(60)
    stats = worker.close()
    assert (stats["stored"], stats["errors"]) == (10, 0)
    assert worker.pool.restarts == 2  # its chunk, then the record alone
    stored = {e["question"]: e for e in _stored(db)}
    assert len(stored) == 10
    bomb = stored.pop(BOMB)
    assert bomb["status"] == "internal_error"
    assert "worker process evaluating this record died (exit code 3)" in bomb["error"]
    # the other nine, some of them retried alone, as one process evaluates them
    here = Evaluator()
    expected = {
        q: here.evaluate_record({k: e[k] for k in ("question", "sql", "timestamp")})
        for q, e in stored.items()
    }
    assert {q: (e["status"], e["score"]) for q, e in stored.items()} == {
        q: (e["status"], e["score"]) for q, e in expected.items()
    }


def test_a_record_past_the_deadline_gets_timeout_and_the_rest_are_stored(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    ev = CrashingEvaluator()
    pool = EvalPool(lambda r: ev, db, workers=2, deadline=1.0, chunk=4)
    slow = {"id": "slow", "question": "How many users, slowly?", "sql": "SELECT COUNT(*) FROM u"}
    fast = [
        {"id": f"f{i}", "question": "How many users?", "sql": "SELECT COUNT(*) FROM u"}
        for i in range(6)
    ]
    try:
        done = pool.submit([fast[0], slow, *fast[1:]]).result(timeout=60)
    finally:
        pool.close()
    assert [(b["id"], b["status"]) for b, _ in done] == [
        ("f0", "ok"),
        ("slow", "timeout"),
        *((f"f{i}", "ok") for i in range(1, 6)),
    ]
    assert {e["id"]: e["status"] for e in _stored(db)} == {b["id"]: b["status"] for b, _ in done}


def test_a_store_that_fails_in_the_workers_answers_503(tmp_path: Path) -> None:
    """The workers cannot write the store: the exporter is told to retry (503), as when the
    one-process service's store fails, and nothing is counted as evaluated."""
    db = tmp_path / "s.db"
    with LiveServer(create_app(_config(db, 2))) as srv:
        # the workers open the store on their first chunk: a directory there now
        db.rename(tmp_path / "moved.db")
        db.mkdir()
        r = httpx.post(srv.url + "/v1/traces", json=_body(_records()[:2], 0), headers=auth(WRITE))
        assert (r.status_code, r.headers["retry-after"]) == (503, "1")
        assert _metric_sum(srv.url, "stef_evaluations_total") == 0

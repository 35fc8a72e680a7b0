"""``stef serve``'s ``/v1/traces`` and ``--export``, over real HTTP: a real OpenTelemetry SDK
exports agent traces to the service on a loopback uvicorn server (and to ``stef serve`` run
as a command); evaluations land in the store with the agent, version and span; a token
limited to an app cannot write another app's evaluation through traces; evaluations flow
back out to scripted receivers, retried, never blocking evaluation, failures counted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from interop_servers import Receiver, Reply, dead_url, emit_openinference_trace
from service_server import (
    READ,
    ROOT,
    SHOP_WRITE,
    TOKENS,
    WRITE,
    LiveServer,
    auth,
)
from stef.interop.calls import TraceMap
from stef.interop.sinks import LangfuseSink, OtlpEventsSink, PhoenixSink
from stef.monitor.store import open_store
from stef.service import ServiceConfig, create_app, parse_tokens

QUESTION = "How many orders were placed in 2025?"
SQL = "SELECT COUNT(*) FROM orders WHERE EXTRACT(YEAR FROM order_date) = 2025"
MULTI_WRITE = "multi-write-secret"
#: Records of /v1/traces read their app from this span (or resource) attribute.
APP_ATTR = "deployment.app"


def _config(db: Path, **kw: Any) -> ServiceConfig:
    return ServiceConfig(
        store=db,
        tokens=parse_tokens(TOKENS + f",write@shop+books:{MULTI_WRITE}"),
        rate_limit=None,
        trace_map=TraceMap(source="otlp").with_overrides({"app": APP_ATTR}),
        **kw,
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, Path]]:
    db = tmp_path / "stef.db"
    # the wait for a trace's root: long enough that a loaded machine's next export (the
    # SDK sends each span as it ends, the root last) always arrives inside it; the test
    # of a root that never comes polls until the sweeper gives up on it
    with LiveServer(create_app(_config(db, traces_wait=3.0))) as srv:
        yield srv, db


def _provider(url: str, token: str) -> TracerProvider:
    provider = TracerProvider(
        resource=Resource.create({"service.name": "analytics-api", "service.version": "9.9"})
    )
    exporter = OTLPSpanExporter(endpoint=url + "/v1/traces", headers=auth(token))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def _messages(text: str) -> str:
    return json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])


def _genai_trace(provider: TracerProvider, **agent_attrs: Any) -> Any:
    """An invoke_agent span with a chat and an execute_tool child; returns the tool span."""
    tracer = provider.get_tracer("sql-bot")
    with tracer.start_as_current_span("invoke_agent sql-bot") as agent:
        agent.set_attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "sql-bot",
                "gen_ai.agent.version": "1.4",
                "gen_ai.input.messages": _messages(QUESTION),
                **agent_attrs,
            }
        )
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attributes(
                {"gen_ai.operation.name": "chat", "gen_ai.input.messages": _messages(QUESTION)}
            )
        with tracer.start_as_current_span("execute_tool run_sql") as tool:
            tool.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "run_sql",
                    "gen_ai.tool.call.arguments": json.dumps({"sql": SQL}),
                }
            )
    return tool


def _ids(span: Any) -> tuple[str, str]:
    ctx = span.get_span_context()
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"


def _stored(db: Path) -> list[dict[str, Any]]:
    store = open_store(db)
    try:
        return list(store.query(order_by="time"))
    finally:
        store.close()


def _metric(url: str, line_start: str) -> float | None:
    text = httpx.get(url + "/metrics", headers=auth(READ)).text
    for line in text.splitlines():
        if line.startswith(line_start + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def _until(fn: Any, want: Any, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    got = fn()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.05)
        got = fn()
    return got


def test_genai_trace_from_the_otel_sdk_is_evaluated_and_stored_by_the_service(
    served: Any,
) -> None:
    srv, db = served
    provider = _provider(srv.url, WRITE)
    tool = _genai_trace(provider)
    provider.shutdown()  # every span went out; the root's request waited for the evaluation
    trace_id, span_id = _ids(tool)
    [ev] = _stored(db)
    assert (ev["id"], ev["status"]) == (f"{trace_id}-{span_id}", "ok")
    assert (ev["agent"], ev["agent_version"], ev["app"]) == ("sql-bot", "1.4", None)
    assert (ev["question"], ev["sql"]) == (QUESTION, SQL)
    assert (ev["metadata"]["trace_id"], ev["metadata"]["span_id"]) == (trace_id, span_id)
    # the same evaluation through the API, and counted in /metrics
    r = httpx.get(f"{srv.url}/v1/evaluations/{ev['id']}", headers=auth(READ))
    assert (r.status_code, r.json()["agent"]) == (200, "sql-bot")
    assert _metric(srv.url, "stef_traces_spans_total") == 3.0
    assert _metric(srv.url, "stef_traces_records_total") == 1.0


def test_openinference_trace_from_the_otel_sdk(served: Any) -> None:
    srv, db = served
    provider = _provider(srv.url, WRITE)
    tracer = provider.get_tracer("oi")
    sql = "SELECT customer_id FROM orders GROUP BY customer_id ORDER BY SUM(amount) DESC LIMIT 5"
    llm = emit_openinference_trace(tracer, "oi-agent", "Which 5 customers spent the most?", sql)
    provider.shutdown()
    [ev] = _stored(db)
    assert (ev["agent"], ev["agent_version"]) == ("oi-agent", "9.9")  # version: the resource's
    assert (ev["question"], ev["sql"]) == ("Which 5 customers spent the most?", sql)
    assert ev["metadata"]["span_id"] == _ids(llm)[1]


def _span(trace: str, span: str, parent: str | None, attrs: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": span,
        "name": "span",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }
    if parent:
        out["parentSpanId"] = parent
    return out


def _call(trace: str, app: str | None, root: bool = True) -> list[dict[str, Any]]:
    """An agent span (the root, unless ``root`` is false) and its tool call of app ``app``."""
    agent = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "bot",
        "gen_ai.input.messages": "How many users?",
    }
    if app:
        agent[APP_ATTR] = app
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.call.arguments": json.dumps({"sql": "SELECT COUNT(*) FROM users"}),
    }
    spans = [_span(trace, "b" * 16, "a" * 16, tool)]
    if root:
        spans.append(_span(trace, "a" * 16, None, agent))
    return spans


def _post(url: str, token: str, spans: list[dict[str, Any]]) -> httpx.Response:
    body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    return httpx.post(url + "/v1/traces", json=body, headers=auth(token))


def test_a_token_limited_to_an_app_cannot_write_another_apps_evaluation(served: Any) -> None:
    srv, db = served
    shop, books, none = "1" * 32, "2" * 32, "3" * 32
    r = _post(srv.url, SHOP_WRITE, _call(shop, "shop") + _call(books, "books") + _call(none, None))
    assert r.status_code == 200
    assert (r.headers["x-stef-records"], r.headers["x-stef-rejected"]) == ("2", "1")
    assert r.json() == {
        "partialSuccess": {
            "rejectedSpans": 1,
            "errorMessage": "1 text-to-SQL span(s) refused; the first: span bbbbbbbbbbbbbbbb: "
            "this token may not write app 'books'; it may write ['shop']",
        }
    }
    # the call naming no app became shop's (the token's one app); books got nothing
    assert sorted((e["id"][:4], e["app"]) for e in _stored(db)) == [
        ("1111", "shop"),
        ("3333", "shop"),
    ]
    # a token of several apps must say which: a call naming none is refused
    r = _post(srv.url, MULTI_WRITE, _call("4" * 32, None) + _call("5" * 32, "books"))
    assert r.json()["partialSuccess"]["errorMessage"] == (
        "1 text-to-SQL span(s) refused; the first: span bbbbbbbbbbbbbbbb: no app, and this "
        "token may write ['books', 'shop']; send it in an attribute "
        "(stef serve --trace-map app=ATTRIBUTE)"
    )
    assert [e["app"] for e in _stored(db) if e["id"].startswith("5555")] == ["books"]
    assert _metric(srv.url, 'stef_traces_rejected_total{reason="app_forbidden"}') == 1.0
    assert _metric(srv.url, 'stef_traces_rejected_total{reason="app_missing"}') == 1.0
    # a read token may not send traces, nor may a request without one
    r = _post(srv.url, READ, _call("6" * 32, None))
    assert (r.status_code, r.json()["error"]["code"]) == (403, "forbidden")
    r = httpx.post(srv.url + "/v1/traces", json={"resourceSpans": []})
    assert (r.status_code, r.json()["error"]["code"]) == (401, "unauthorized")


def test_spans_of_one_token_never_complete_a_trace_sent_with_another(served: Any) -> None:
    """The shop token's tool call of app books, whose agent span an all-apps token sends:
    it is read as the shop token's (after the wait for its root) and refused."""
    srv, db = served
    trace = "7" * 32
    held = _call(trace, "books", root=False)
    held[0]["attributes"].append({"key": APP_ATTR, "value": {"stringValue": "books"}})
    r = _post(srv.url, SHOP_WRITE, held)
    assert (r.status_code, r.headers["x-stef-records"]) == (200, "0")  # held for its root
    root = [s for s in _call(trace, "books") if "parentSpanId" not in s]
    r = _post(srv.url, WRITE, root)
    assert r.headers["x-stef-records"] == "0"  # the root alone carries no call
    rejected = 'stef_traces_rejected_total{reason="app_forbidden"}'
    assert _until(lambda: _metric(srv.url, rejected), 1.0) == 1.0
    assert _stored(db) == []


def test_export_delivers_each_evaluation_against_its_span_with_retries(tmp_path: Path) -> None:
    script = [Reply(503), Reply(429, headers={"Retry-After": "0"})]
    with Receiver(script) as collector:
        config = _config(tmp_path / "s.db", exports=[OtlpEventsSink(collector.url)])
        config.export_backoff = 0.01
        with LiveServer(create_app(config)) as srv:
            provider = _provider(srv.url, WRITE)
            tool = _genai_trace(provider)
            provider.shutdown()
            sent = 'stef_export_evaluations_total{outcome="sent",target="otlp"}'
            assert _until(lambda: _metric(srv.url, sent), 1.0) == 1.0
            assert _metric(srv.url, 'stef_export_retries_total{target="otlp"}') == 2.0
    assert [s.path for s in collector.seen] == ["/v1/logs"] * 3
    [rec] = (
        ExportLogsServiceRequest.FromString(collector.seen[-1].body)
        .resource_logs[0]
        .scope_logs[0]
        .log_records
    )
    assert (rec.trace_id.hex(), rec.span_id.hex()) == _ids(tool)
    assert rec.event_name == "gen_ai.evaluation.result"
    [ev] = _stored(tmp_path / "s.db")
    attrs = {kv.key: kv.value for kv in rec.attributes}
    assert attrs["gen_ai.evaluation.score.value"].double_value == round(ev["score"] / 100, 4)


def test_a_dead_export_target_never_blocks_evaluation_and_is_counted(tmp_path: Path) -> None:
    with Receiver() as langfuse:
        sinks = [PhoenixSink(dead_url()), LangfuseSink(langfuse.url, "pk-lf-1", "sk-lf-secret")]
        config = _config(tmp_path / "s.db", exports=sinks, export_attempts=2)
        config.export_backoff = 0.01
        record = {
            "id": "r1",
            "question": "How many users?",
            "sql": "SELECT COUNT(*) FROM users",
            "metadata": {"trace_id": "ab" * 16, "span_id": "cd" * 8},
        }
        unplaced = {"id": "r2", "question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}
        with LiveServer(create_app(config)) as srv:
            r = httpx.post(
                srv.url + "/v1/evaluate", json={"records": [record, unplaced]}, headers=auth(WRITE)
            )
            assert [e["status"] for e in r.json()["evaluations"]] == ["ok", "ok"]
            failed = 'stef_export_evaluations_total{outcome="failed",target="phoenix"}'
            assert _until(lambda: _metric(srv.url, failed), 1.0) == 1.0
            skipped = 'stef_export_evaluations_total{outcome="skipped",target="phoenix"}'
            assert _metric(srv.url, skipped) == 1.0  # r2 names no span to annotate
            sent = 'stef_export_evaluations_total{outcome="sent",target="langfuse"}'
            assert _until(lambda: _metric(srv.url, sent), 1.0) == 1.0
    [req] = langfuse.seen
    score = json.loads(req.body)
    assert (score["name"], score["traceId"], score["observationId"]) == (
        "stef",
        "ab" * 16,
        "cd" * 8,
    )
    assert sorted(e["id"] for e in _stored(tmp_path / "s.db")) == ["r1", "r2"]


def test_stef_serve_command_with_export(tmp_path: Path) -> None:
    """``stef serve`` as a user runs it: OTLP traces in, the evaluation stored, its result out."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "stef.db"
    env = {**os.environ, "STEF_TOKENS": f"write:{WRITE}", "PYTHONPATH": str(ROOT / "src")}
    with Receiver() as collector:
        cmd = [sys.executable, "-m", "stef.cli.main", "serve", "--store", str(db)]
        cmd += ["--port", str(port), "--export", "otlp", collector.url, "--log-level", "warning"]
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
        url = f"http://127.0.0.1:{port}"
        try:
            up = _until(lambda: _ok(url + "/healthz"), True, 60)
            assert up, proc.stderr.read() if proc.poll() is not None else "not up"
            provider = _provider(url, WRITE)
            tool = _genai_trace(provider)
            provider.shutdown()
        finally:
            proc.terminate()
            # uvicorn shuts down gracefully (the lifespan flushes --export), then re-raises
            assert proc.wait(30) in (0, -signal.SIGTERM)
    [ev] = _stored(db)
    assert (ev["agent"], ev["agent_version"], ev["metadata"]["span_id"]) == (
        "sql-bot",
        "1.4",
        _ids(tool)[1],
    )
    # flushed at shutdown at the latest
    [req] = collector.seen
    [rec] = ExportLogsServiceRequest.FromString(req.body).resource_logs[0].scope_logs[0].log_records
    assert rec.span_id.hex() == _ids(tool)[1]


def _ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_serve_refuses_an_export_without_its_keys(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    env["STEF_TOKENS"] = f"write:{WRITE}"
    cmd = [sys.executable, "-m", "stef.cli.main", "serve", "--store", str(tmp_path / "s.db")]
    out = subprocess.run(
        [*cmd, "--export", "langfuse", "http://127.0.0.1:1"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "Error: --export langfuse: set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY" in out.stderr

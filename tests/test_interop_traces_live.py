"""A real OpenTelemetry SDK exports an agent's trace over OTLP/HTTP to a real uvicorn server
serving ``/v1/traces``; the evaluation lands in the store with the agent, version and span."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from interop_servers import LiveServer, Receiver, emit_openinference_trace
from stef.evaluator import Evaluator
from stef.interop.calls import TraceMap
from stef.interop.delivery import Delivery
from stef.interop.ingest import IngestWorker
from stef.interop.otlp_http import standalone_app
from stef.interop.sinks import OtlpEventsSink
from stef.monitor.store import open_store

FIXTURES = Path(__file__).parent / "fixtures" / "interop"
QUESTION = "How many orders were placed in 2025?"
SQL = "SELECT COUNT(*) FROM orders WHERE EXTRACT(YEAR FROM order_date) = 2025"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, IngestWorker, Path]]:
    db = tmp_path / "stef.db"
    worker = IngestWorker(Evaluator(), db)
    with LiveServer(standalone_app(worker.submit)) as srv:
        yield srv, worker, db
    worker.close()


def _tracer(url: str, compression: Compression = Compression.NoCompression) -> Any:
    provider = TracerProvider(
        resource=Resource.create({"service.name": "analytics-api", "service.version": "9.9"})
    )
    exporter = OTLPSpanExporter(endpoint=url + "/v1/traces", compression=compression)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def _messages(text: str) -> str:
    return json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])


def _stored(db: Path) -> list[dict[str, Any]]:
    with open_store(db) as store:  # type: ignore[attr-defined]
        return list(store.query(order_by="time"))


def test_genai_agent_trace_from_the_otel_sdk_is_evaluated_and_stored(served: Any) -> None:
    srv, worker, db = served
    provider = _tracer(srv.url, Compression.Gzip)
    tracer = provider.get_tracer("sql-bot")
    with tracer.start_as_current_span("invoke_agent sql-bot") as agent:
        agent.set_attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "sql-bot",
                "gen_ai.agent.version": "1.4",
                "gen_ai.input.messages": _messages(QUESTION),
            }
        )
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.input.messages": _messages("Schema: orders(...). " + QUESTION),
                }
            )
        with tracer.start_as_current_span("execute_tool run_sql") as tool:
            tool.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "run_sql",
                    "gen_ai.tool.call.arguments": json.dumps({"sql": SQL}),
                }
            )
    provider.shutdown()  # flushes: the spans went out over OTLP/HTTP (protobuf, gzip)
    assert worker.wait_idle(30)
    [ev] = _stored(db)
    ctx = tool.get_span_context()
    assert ev["status"] == "ok"
    assert (ev["agent"], ev["agent_version"]) == ("sql-bot", "1.4")
    assert (ev["question"], ev["sql"]) == (QUESTION, SQL)
    assert ev["metadata"]["span_id"] == f"{ctx.span_id:016x}"
    assert ev["metadata"]["trace_id"] == f"{ctx.trace_id:032x}"
    assert ev["metadata"]["agent_span_id"] == f"{agent.get_span_context().span_id:016x}"
    assert ev["id"] == f"{ctx.trace_id:032x}-{ctx.span_id:016x}"


def test_openinference_trace_from_the_otel_sdk(served: Any) -> None:
    srv, worker, db = served
    provider = _tracer(srv.url)
    tracer = provider.get_tracer("oi")
    sql = "SELECT customer_id FROM orders GROUP BY customer_id ORDER BY SUM(amount) DESC LIMIT 5"
    llm = emit_openinference_trace(tracer, "oi-agent", "Which 5 customers spent the most?", sql)
    provider.shutdown()
    assert worker.wait_idle(30)
    [ev] = _stored(db)
    assert ev["agent"] == "oi-agent"
    assert ev["agent_version"] == "9.9"  # OpenInference has no version: the resource's
    assert ev["sql"] == sql
    assert ev["metadata"]["span_id"] == f"{llm.get_span_context().span_id:016x}"
    assert ev["metadata"]["source"] == "otlp"


def test_otlp_json_body_and_answers(served: Any) -> None:
    srv, worker, db = served
    body = (FIXTURES / "genai_trace.json").read_bytes()
    r = httpx.post(
        srv.url + "/v1/traces",
        content=gzip.compress(body),
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert (r.status_code, r.json(), r.headers["x-stef-records"]) == (200, {}, "1")
    assert worker.wait_idle(30)
    [ev] = _stored(db)
    assert ev["metadata"]["span_id"] == "53995c3f42cd8ad8"
    assert ev["dialect"] == "postgres"
    # a span batch without any text-to-SQL call: accepted, nothing stored
    empty = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {"spans": [{"traceId": "1" * 32, "spanId": "2" * 16, "name": "GET /health"}]}
                ]
            }
        ]
    }
    r = httpx.post(srv.url + "/v1/traces", json=empty)
    assert (r.status_code, r.headers["x-stef-records"]) == (200, "0")


def test_bad_bodies_get_otlp_error_answers(served: Any) -> None:
    srv, _, _ = served
    r = httpx.post(
        srv.url + "/v1/traces",
        content=b"\xff\x00garbage",
        headers={"Content-Type": "application/x-protobuf"},
    )
    assert r.status_code == 400
    status = Status.FromString(r.content)
    assert status.code == 3 and "not an OTLP protobuf" in status.message
    r = httpx.post(
        srv.url + "/v1/traces", content=b"{", headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["message"].startswith("body is not JSON")
    r = httpx.post(srv.url + "/v1/traces", json={"spans": []})
    assert r.status_code == 400
    assert (
        r.json()["message"] == "an OTLP/JSON payload has a 'resourceSpans' list; this one has none"
    )
    r = httpx.post(srv.url + "/v1/traces", content=b"x", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415


def test_a_full_queue_answers_503_with_retry_after(tmp_path: Path) -> None:
    worker = IngestWorker(Evaluator(), tmp_path / "s.db", max_queue=0)
    with LiveServer(standalone_app(worker.submit)) as srv:
        r = httpx.post(
            srv.url + "/v1/traces",
            content=(FIXTURES / "genai_trace.json").read_bytes(),
            headers={"Content-Type": "application/json"},
        )
    worker.close()
    assert (r.status_code, r.headers["retry-after"]) == (503, "1")
    assert r.json() == {"code": 14, "message": "evaluation queue is full; retry later"}
    # refused on the request, and again when the app shut down and offered what it held
    assert worker.stats()["rejected"] == 2


def test_protobuf_success_answer_is_an_export_response(served: Any) -> None:
    srv, _, _ = served
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    r = httpx.post(
        srv.url + "/v1/traces",
        content=ExportTraceServiceRequest().SerializeToString(),
        headers={"Content-Type": "application/x-protobuf"},
    )
    assert r.status_code == 200 and r.headers["content-type"] == "application/x-protobuf"
    assert ExportTraceServiceResponse.FromString(r.content).partial_success.rejected_spans == 0


def _rootless_tool_span(span_id: str) -> dict[str, Any]:
    """A tool span whose parent lives in another service (its root never comes here)."""
    args = json.dumps({"sql": "SELECT COUNT(*) FROM users"})
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "bot"}}]
                },
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "9" * 32,
                                "spanId": span_id,
                                "parentSpanId": "8" * 16,
                                "name": "tool",
                                "attributes": [
                                    {
                                        "key": "gen_ai.operation.name",
                                        "value": {"stringValue": "execute_tool"},
                                    },
                                    {
                                        "key": "gen_ai.tool.call.arguments",
                                        "value": {"stringValue": args},
                                    },
                                    {
                                        "key": "stef.question",
                                        "value": {"stringValue": "How many users?"},
                                    },
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }


def test_a_trace_whose_root_never_comes_is_read_after_the_wait(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    worker = IngestWorker(Evaluator(), db)
    app = standalone_app(
        worker.submit, wait=0.3, trace_map=TraceMap(overrides={"question": "stef.question"})
    )
    with LiveServer(app) as srv:
        r = httpx.post(srv.url + "/v1/traces", json=_rootless_tool_span("7" * 16))
        assert r.headers["x-stef-records"] == "0"  # held, waiting for the root
        deadline = time.monotonic() + 20
        while worker.stats()["stored"] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        # held at shutdown: handed on by the app's lifespan, not lost
        httpx.post(srv.url + "/v1/traces", json=_rootless_tool_span("6" * 16))
    worker.close()
    evs = _stored(db)
    assert sorted(e["metadata"]["span_id"] for e in evs) == ["6" * 16, "7" * 16]
    assert {(e["status"], e["question"], e["agent"]) for e in evs} == {
        ("ok", "How many users?", "bot")
    }


def test_traces_in_results_out_parented_to_the_evaluated_span(tmp_path: Path) -> None:
    """OTel SDK → /v1/traces → evaluate and store → gen_ai.evaluation.result to a collector."""
    with Receiver() as collector:
        delivery = Delivery(OtlpEventsSink(collector.url), flush_interval=0.05)
        worker = IngestWorker(Evaluator(), tmp_path / "s.db", on_evaluation=delivery.submit)
        with LiveServer(standalone_app(worker.submit)) as srv:
            provider = _tracer(srv.url)
            tracer = provider.get_tracer("sql-bot")
            with tracer.start_as_current_span("invoke_agent") as agent:
                agent.set_attributes(
                    {
                        "gen_ai.operation.name": "invoke_agent",
                        "gen_ai.agent.name": "sql-bot",
                        "gen_ai.input.messages": _messages(QUESTION),
                    }
                )
                with tracer.start_as_current_span("execute_tool") as tool:
                    tool.set_attributes(
                        {
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.call.arguments": json.dumps({"query": SQL}),
                        }
                    )
            provider.shutdown()
            assert worker.wait_idle(30)
        worker.close()
        stats = delivery.close(30)
    assert stats["sent"] == 1
    [req] = collector.seen
    [rec] = ExportLogsServiceRequest.FromString(req.body).resource_logs[0].scope_logs[0].log_records
    ctx = tool.get_span_context()
    assert (rec.trace_id.hex(), rec.span_id.hex()) == (
        f"{ctx.trace_id:032x}",
        f"{ctx.span_id:016x}",
    )
    attrs = {kv.key: kv.value for kv in rec.attributes}
    [ev] = _stored(tmp_path / "s.db")
    assert attrs["gen_ai.evaluation.score.value"].double_value == round(ev["score"] / 100, 4)
    assert attrs["gen_ai.evaluation.score.label"].string_value == ev["band"]

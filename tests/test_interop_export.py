"""Results out: requests to scripted loopback receivers, checked against the documented shapes
of OTLP logs (gen_ai.evaluation.result), Langfuse's score API and Phoenix's annotation API;
retries on 429/5xx honour Retry-After; no key appears in any log line or message."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from interop_servers import Receiver, Reply, dead_url
from stef.cli import main
from stef.interop.delivery import Delivery
from stef.interop.sinks import LangfuseSink, OtlpEventsSink, PhoenixSink

TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "53995c3f42cd8ad8"
PUBLIC, SECRET = "pk-lf-public-1234", "sk-lf-very-secret-5678"


def _ev(i: int = 0, **over: Any) -> dict[str, Any]:
    ev = {
        "id": f"ev-{i}",
        "status": "ok",
        "score": 62.5,
        "band": "marginal",
        "breakdown": {"verdict": "potentially_incorrect"},
        "findings": [
            {"kind": "filter_missing", "severity": "error", "message": "no filter on region"},
            {"kind": "order_default", "severity": "info", "message": "default order accepted"},
        ],
        "metadata": {"trace_id": TRACE, "span_id": SPAN},
        "evaluated_at": "2026-12-01T10:00:00Z",
        "provenance": {"stef_version": "0.1.0"},
    }
    ev.update(over)
    return ev


def _deliver(sink: Any, evs: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    d = Delivery(sink, backoff=0.01, flush_interval=0.05, **kw)
    for ev in evs:
        d.submit(ev)
    return d.close(30)


def test_otlp_events_shape() -> None:
    with Receiver() as rx:
        stats = _deliver(
            OtlpEventsSink(rx.url, {"x-api-key": SECRET}),
            [
                _ev(0),
                _ev(1, status="sql_unparseable", score=None, band=None, error="SQL does not parse"),
            ],
        )
    assert (stats["sent"], stats["failed"]) == (2, 0)
    [req] = rx.seen
    assert req.path == "/v1/logs"
    assert req.headers["content-type"] == "application/x-protobuf"
    assert req.headers["x-api-key"] == SECRET
    body = ExportLogsServiceRequest.FromString(req.body)
    recs = body.resource_logs[0].scope_logs[0].log_records
    assert [r.event_name for r in recs] == ["gen_ai.evaluation.result"] * 2
    assert recs[0].trace_id.hex() == TRACE and recs[0].span_id.hex() == SPAN
    attrs = {kv.key: kv.value for kv in recs[0].attributes}
    assert attrs["gen_ai.evaluation.name"].string_value == "stef"
    assert attrs["gen_ai.evaluation.score.value"].double_value == 0.625
    assert attrs["gen_ai.evaluation.score.label"].string_value == "marginal"
    assert attrs["gen_ai.evaluation.explanation"].string_value == (
        "potentially_incorrect, score 62.5: no filter on region"
    )
    bad = {kv.key: kv.value for kv in recs[1].attributes}
    assert "gen_ai.evaluation.score.value" not in bad
    assert bad["gen_ai.evaluation.score.label"].string_value == "sql_unparseable"
    assert bad["error.type"].string_value == "sql_unparseable"


def test_langfuse_scores_shape_and_auth() -> None:
    with Receiver() as rx:
        stats = _deliver(LangfuseSink(rx.url, PUBLIC, SECRET), [_ev(0), _ev(1)])
    assert stats["sent"] == 2
    assert [s.path for s in rx.seen] == ["/api/public/scores"] * 2
    body = json.loads(rx.seen[0].body)
    assert set(body) == {"id", "name", "value", "dataType", "traceId", "observationId", "comment"}
    assert (body["name"], body["value"], body["dataType"]) == ("stef", 0.625, "NUMERIC")
    assert (body["traceId"], body["observationId"]) == (TRACE, SPAN)
    assert body["comment"] == "marginal: potentially_incorrect, score 62.5: no filter on region"
    assert json.loads(rx.seen[1].body)["id"] != body["id"]
    scheme, token = rx.seen[0].headers["authorization"].split()
    assert (scheme, base64.b64decode(token).decode()) == ("Basic", f"{PUBLIC}:{SECRET}")


def test_phoenix_annotations_shape() -> None:
    with Receiver() as rx:
        stats = _deliver(PhoenixSink(rx.url, SECRET), [_ev(0), _ev(1)])
    assert stats["sent"] == 2
    [req] = rx.seen  # one batch
    assert req.path == "/v1/span_annotations?sync=false"
    assert req.headers["authorization"] == f"Bearer {SECRET}"
    data = json.loads(req.body)["data"]
    assert data[0] == {
        "span_id": SPAN,
        "name": "stef",
        "annotator_kind": "CODE",
        "result": {
            "label": "marginal",
            "score": 0.625,
            "explanation": "potentially_incorrect, score 62.5: no filter on region",
        },
        "identifier": "ev-0",
        "metadata": {"stef_version": "0.1.0"},
    }


def test_retries_on_429_and_5xx_honour_retry_after(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="stef.interop")
    script = [Reply(429, headers={"Retry-After": "1"}), Reply(503), Reply(502), Reply(200)]
    with Receiver(script) as rx:
        stats = _deliver(LangfuseSink(rx.url, PUBLIC, SECRET), [_ev()])
    assert (stats["sent"], stats["failed"], stats["retries"], stats["requests"]) == (1, 0, 3, 4)
    assert rx.seen[1].at - rx.seen[0].at >= 0.95  # waited the Retry-After second
    assert "HTTP 429" in caplog.text and "HTTP 503" in caplog.text
    assert SECRET not in caplog.text and PUBLIC not in caplog.text


def test_a_4xx_fails_at_once_and_is_counted(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="stef.interop")
    with Receiver(default=Reply(401)) as rx:
        stats = _deliver(PhoenixSink(rx.url, SECRET), [_ev()])
    assert (stats["sent"], stats["failed"], stats["requests"]) == (0, 1, 1)
    assert stats["last_error"] == f"HTTP 401 from {rx.url}/v1/span_annotations"
    assert SECRET not in caplog.text


def test_a_dead_receiver_fails_after_the_attempts(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="stef.interop")
    stats = _deliver(LangfuseSink(dead_url(), PUBLIC, SECRET), [_ev()], max_attempts=3)
    assert (stats["sent"], stats["failed"], stats["requests"]) == (0, 1, 3)
    assert stats["last_error"].startswith("ConnectError from http://127.0.0.1:")
    assert SECRET not in caplog.text and SECRET not in str(stats)


def test_evaluations_without_a_span_are_skipped() -> None:
    with Receiver() as rx:
        stats = _deliver(PhoenixSink(rx.url), [_ev(0), _ev(1, metadata=None)])
    assert (stats["sent"], stats["skipped"]) == (1, 1)
    # OTLP needs hex ids: a Langfuse-born evaluation cannot be placed on an OTel span
    otlp = OtlpEventsSink("http://x")
    assert not otlp.accepts(_ev(metadata={"trace_id": "lf-trace-0001", "span_id": "lf-obs-1"}))


def test_a_full_queue_drops_instead_of_blocking() -> None:
    d = Delivery(PhoenixSink("http://127.0.0.1:9"), max_queue=2, start=False)
    assert [d.submit(_ev(i)) for i in range(4)] == [True, True, False, False]
    assert (d.stats()["queued"], d.stats()["dropped"]) == (2, 2)


def test_stef_export_cli_from_an_evaluations_file(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "ev.jsonl"
    path.write_text("".join(json.dumps(_ev(i)) + "\n" for i in range(3)))
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    with Receiver([Reply(500)]) as rx:
        res = CliRunner().invoke(
            main, ["export", "--to", "langfuse", rx.url, "--evaluations", str(path)]
        )
    assert res.exit_code == 0, res.output
    assert "langfuse: sent 3, failed 0, skipped 0 (no trace/span id), retries 1" in res.stderr
    assert SECRET not in res.output
    assert len(rx.seen) == 4


def test_stef_export_cli_exits_1_when_delivery_fails(tmp_path: Path) -> None:
    from stef.monitor.store import open_store

    db = tmp_path / "stef.db"
    store = open_store(db)
    store.write([_ev(0, timestamp="2026-12-01T10:00:00Z")])
    store.close()
    res = CliRunner().invoke(
        main, ["export", "--to", "phoenix", dead_url(), "--store", str(db), "--max-attempts", "2"]
    )
    assert res.exit_code == 1
    assert "phoenix: sent 0, failed 1" in res.stderr
    assert "last error: ConnectError" in res.stderr

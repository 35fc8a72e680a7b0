"""Where evaluation results go: OpenTelemetry events, Langfuse scores, Phoenix annotations.

A sink turns a batch of evaluations into HTTP requests (:class:`Outgoing`); delivery,
batching and retries live in :mod:`stef.interop.delivery`. Every evaluation is sent against
the span it evaluated: ``metadata.trace_id`` and ``metadata.span_id`` (set by the trace
readers); one without them cannot be placed and is skipped (:meth:`Sink.accepts`).

- :class:`OtlpEventsSink`: a ``gen_ai.evaluation.result`` event per evaluation, sent as an
  OTLP/HTTP logs request (``/v1/logs``, protobuf) whose log records carry the evaluated
  span's ``trace_id``/``span_id`` and the attributes ``gen_ai.evaluation.name`` = ``stef``,
  ``gen_ai.evaluation.score.value`` = Φ/100, ``gen_ai.evaluation.score.label`` = the band
  (or the error status), ``gen_ai.evaluation.explanation`` = the findings.
- :class:`LangfuseSink`: ``POST /api/public/scores`` per evaluation (``name``, ``value``,
  ``traceId``, ``observationId``, ``comment``, ``dataType`` NUMERIC, a deterministic ``id`` so
  a retried request updates instead of duplicating), basic auth with the public and secret
  key.
- :class:`PhoenixSink`: ``POST /v1/span_annotations`` with ``{"data": [{span_id, name,
  annotator_kind: CODE, result: {label, score, explanation}, identifier}]}``.

>>> ev = {"id": "r1", "status": "ok", "score": 82.0, "band": "good", "findings": [],
...       "breakdown": {"verdict": "likely_correct"}, "metadata": {"trace_id": "ab" * 16,
...       "span_id": "cd" * 8}}
>>> label_and_explanation(ev)
('good', 'likely_correct, score 82.0: no findings')
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stef.errors import StefError

EVALUATION_NAME = "stef"
EVENT_NAME = "gen_ai.evaluation.result"
MAX_EXPLANATION = 1000


@dataclass
class Outgoing:
    """One HTTP request a sink wants sent (``POST`` to ``url``)."""

    url: str
    body: bytes
    content_type: str
    #: How many evaluations this request carries (for the counts).
    items: int = 1
    headers: dict[str, str] = field(default_factory=dict)


def label_and_explanation(ev: Mapping[str, Any]) -> tuple[str, str]:
    """The label (band, or the error status) and a short text of the findings."""
    if ev.get("status") != "ok" or ev.get("score") is None:
        return str(ev.get("status") or "error"), str(ev.get("error") or "not evaluated")[
            :MAX_EXPLANATION
        ]
    verdict = (ev.get("breakdown") or {}).get("verdict") or "scored"
    shown = [
        f.get("message", "")
        for f in ev.get("findings") or []
        if isinstance(f, Mapping) and f.get("severity") in ("warning", "error")
    ]
    text = f"{verdict}, score {float(ev['score']):.1f}: " + ("; ".join(shown) or "no findings")
    return str(ev.get("band") or verdict), text[:MAX_EXPLANATION]


def ids(ev: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The evaluated trace and span (``metadata.trace_id``, ``metadata.span_id``)."""
    meta = ev.get("metadata")
    if not isinstance(meta, Mapping):
        return None, None
    t, s = meta.get("trace_id"), meta.get("span_id")
    return (t if isinstance(t, str) and t else None), (s if isinstance(s, str) and s else None)


def score_value(ev: Mapping[str, Any]) -> float | None:
    s = ev.get("score")
    return round(float(s) / 100.0, 4) if isinstance(s, (int, float)) else None


class Sink:
    """A destination for evaluation results."""

    name = "sink"
    max_batch = 100

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def accepts(self, ev: Mapping[str, Any]) -> bool:
        trace_id, span_id = ids(ev)
        return bool(trace_id and span_id)

    def build(self, batch: Sequence[Mapping[str, Any]]) -> list[Outgoing]:  # pragma: no cover
        raise NotImplementedError

    def auth_headers(self) -> dict[str, str]:
        """Credentials, added at send time only (never logged, never stored in a request)."""
        return {}


class LocalSink(Sink):
    """A sink that writes in the delivery thread itself (a file) instead of sending HTTP."""

    def accepts(self, ev: Mapping[str, Any]) -> bool:
        return True

    def write(self, batch: Sequence[Mapping[str, Any]]) -> None:  # pragma: no cover
        raise NotImplementedError


class OtlpEventsSink(Sink):
    """``gen_ai.evaluation.result`` events as OTLP/HTTP logs (protobuf) to ``URL/v1/logs``."""

    name = "otlp"
    max_batch = 512

    def __init__(self, url: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(
            url if url.rstrip("/").endswith("/v1/logs") else url.rstrip("/") + "/v1/logs"
        )
        self._headers = dict(headers or {})

    def accepts(self, ev: Mapping[str, Any]) -> bool:
        trace_id, span_id = ids(ev)
        return _is_hex(trace_id, 32) and _is_hex(span_id, 16)

    def auth_headers(self) -> dict[str, str]:
        return dict(self._headers)

    def build(self, batch: Sequence[Mapping[str, Any]]) -> list[Outgoing]:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
        from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
        from opentelemetry.proto.logs.v1.logs_pb2 import SEVERITY_NUMBER_INFO

        from stef._version import __version__

        req = ExportLogsServiceRequest()
        rl = req.resource_logs.add()
        rl.resource.attributes.append(
            KeyValue(key="service.name", value=AnyValue(string_value="stef"))
        )
        sl = rl.scope_logs.add()
        sl.scope.name, sl.scope.version = "stef", __version__
        for ev in batch:
            trace_id, span_id = ids(ev)
            assert trace_id and span_id
            label, explanation = label_and_explanation(ev)
            rec = sl.log_records.add()
            rec.event_name = EVENT_NAME
            rec.severity_number = SEVERITY_NUMBER_INFO
            rec.trace_id, rec.span_id = bytes.fromhex(trace_id), bytes.fromhex(span_id)
            rec.time_unix_nano = rec.observed_time_unix_nano = _event_time(ev)
            attrs: list[tuple[str, Any]] = [
                ("gen_ai.evaluation.name", EVALUATION_NAME),
                ("gen_ai.evaluation.score.label", label),
                ("gen_ai.evaluation.explanation", explanation),
            ]
            value = score_value(ev)
            if value is not None:
                attrs.insert(1, ("gen_ai.evaluation.score.value", value))
            if ev.get("status") != "ok":
                attrs.append(("error.type", str(ev.get("status"))))
            for k, v in attrs:
                av = AnyValue(double_value=v) if isinstance(v, float) else AnyValue(string_value=v)
                rec.attributes.append(KeyValue(key=k, value=av))
        body = req.SerializeToString()
        return [Outgoing(self.url, body, "application/x-protobuf", items=len(batch))]


def _event_time(ev: Mapping[str, Any]) -> int:
    from stef.record import parse_time

    at = ev.get("evaluated_at")
    try:
        return int(parse_time(at).timestamp() * 1e9) if isinstance(at, str) else 0
    except ValueError:
        return 0


def _is_hex(value: str | None, n: int) -> bool:
    return (
        bool(value) and len(value or "") == n and all(c in "0123456789abcdef" for c in value or "")
    )


class LangfuseSink(Sink):
    """Langfuse scores, ``POST URL/api/public/scores`` one per evaluation, basic auth."""

    name = "langfuse"
    max_batch = 50

    def __init__(self, url: str, public_key: str, secret_key: str) -> None:
        super().__init__(url)
        self._auth = "Basic " + base64.b64encode(f"{public_key}:{secret_key}".encode()).decode()

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": self._auth}

    def build(self, batch: Sequence[Mapping[str, Any]]) -> list[Outgoing]:
        out = []
        for ev in batch:
            trace_id, span_id = ids(ev)
            label, explanation = label_and_explanation(ev)
            value = score_value(ev)
            body: dict[str, Any] = {
                "id": _score_id(ev),
                "name": EVALUATION_NAME,
                "traceId": trace_id,
                "observationId": span_id,
                "comment": f"{label}: {explanation}",
            }
            if value is not None:
                body.update(value=value, dataType="NUMERIC")
            else:
                body.update(value=label, dataType="CATEGORICAL")
            out.append(Outgoing(f"{self.url}/api/public/scores", _json(body), "application/json"))
        return out


def _score_id(ev: Mapping[str, Any]) -> str:
    """The same evaluation always gets the same score id (a retry updates, never duplicates)."""
    return "stef-" + hashlib.sha256(str(ev.get("id")).encode()).hexdigest()[:24]


def _json(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


class PhoenixSink(Sink):
    """Phoenix span annotations, ``POST URL/v1/span_annotations`` in batches."""

    name = "phoenix"
    max_batch = 100

    def __init__(self, url: str, api_key: str | None = None) -> None:
        super().__init__(url)
        self._key = api_key

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def build(self, batch: Sequence[Mapping[str, Any]]) -> list[Outgoing]:
        data = []
        for ev in batch:
            _, span_id = ids(ev)
            label, explanation = label_and_explanation(ev)
            data.append(
                {
                    "span_id": span_id,
                    "name": EVALUATION_NAME,
                    "annotator_kind": "CODE",
                    "result": {
                        "label": label,
                        "score": score_value(ev),
                        "explanation": explanation,
                    },
                    "identifier": str(ev.get("id")),
                    "metadata": {"stef_version": (ev.get("provenance") or {}).get("stef_version")},
                }
            )
        url = f"{self.url}/v1/span_annotations?sync=false"
        return [Outgoing(url, _json({"data": data}), "application/json", items=len(batch))]


class SinkConfigError(StefError):
    """A sink that cannot be built (a missing key, an unknown kind)."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_export", message)


SINKS = ("otlp", "langfuse", "phoenix")


def sink_from_env(kind: str, url: str, environ: Mapping[str, str] | None = None) -> Sink:
    """The sink ``kind`` sending to ``url``, its keys read from the environment.

    ``LANGFUSE_PUBLIC_KEY`` and ``LANGFUSE_SECRET_KEY`` (langfuse), ``PHOENIX_API_KEY``
    (phoenix, optional), ``OTEL_EXPORTER_OTLP_HEADERS`` (otlp: ``k=v,k2=v2``, optional).

    >>> sink_from_env("langfuse", "http://lf", {})
    Traceback (most recent call last):
    ...
    stef.interop.sinks.SinkConfigError: set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY
    >>> sink_from_env("otlp", "http://col:4318", {}).url
    'http://col:4318/v1/logs'
    """
    env = os.environ if environ is None else environ
    if kind == "langfuse":
        public, secret = env.get("LANGFUSE_PUBLIC_KEY"), env.get("LANGFUSE_SECRET_KEY")
        if not public or not secret:
            raise SinkConfigError("set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY")
        return LangfuseSink(url, public, secret)
    if kind == "phoenix":
        return PhoenixSink(url, env.get("PHOENIX_API_KEY"))
    if kind == "otlp":
        headers = {}
        for pair in (env.get("OTEL_EXPORTER_OTLP_HEADERS") or "").split(","):
            k, sep, v = pair.partition("=")
            if sep and k.strip():
                headers[k.strip()] = v.strip()
        return OtlpEventsSink(url, headers)
    raise SinkConfigError(f"unknown export target {kind!r}; one of {', '.join(SINKS)}")

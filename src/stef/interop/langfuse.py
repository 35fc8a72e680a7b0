"""Langfuse exports (traces with their observations) read as spans.

Langfuse keeps a trace (``id``, ``name``, ``input``, ``output``, ``version``/``release``,
``metadata``) and its observations (``id``, ``traceId``, ``type`` GENERATION / SPAN / TOOL /
AGENT …, ``parentObservationId``, ``input``, ``output``, ``startTime``). An export file is a
JSON list (or JSONL, or an API page ``{"data": [...]}``) of traces carrying their
``observations``, or of observations alone. Each becomes a
:class:`~stef.interop.spans.Span` with OpenInference attributes — the trace an ``AGENT`` span
(question from its input, agent from its name, version from ``version`` or ``release``), a
GENERATION an ``LLM`` span, a TOOL (or a SPAN whose input has a ``sql``/``query`` argument) a
``TOOL`` span — so :func:`stef.interop.calls.records_from_spans` finds the calls.
``metadata.trace_id`` is the Langfuse trace id and ``metadata.span_id`` the observation id,
which is what a Langfuse score needs (``traceId``, ``observationId``).

>>> trace = {"id": "tr-1", "name": "sql-bot", "version": "2.0",
...   "input": {"question": "How many users?"},
...   "observations": [{"id": "ob-1", "traceId": "tr-1", "type": "TOOL", "name": "run_sql",
...                     "input": {"sql": "SELECT COUNT(*) FROM users"}}]}
>>> spans = spans_from_langfuse([trace])
>>> [(s.span_id, s.attrs["openinference.span.kind"]) for s in spans]
[('tr-1', 'AGENT'), ('ob-1', 'TOOL')]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stef.interop.calls import TraceMap
from stef.interop.spans import PayloadError, Span
from stef.record import parse_time

LANGFUSE_MAP = TraceMap(source="langfuse")
_KINDS = {"GENERATION": "LLM", "TOOL": "TOOL", "AGENT": "AGENT", "RETRIEVER": "RETRIEVER"}
_SQL_KEYS = ("sql", "query")


def _ns(value: Any) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return int(parse_time(value).timestamp() * 1e9)
    except ValueError:
        return 0


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _items(payload: Any) -> list[Any]:
    if isinstance(payload, Mapping) and isinstance(payload.get("data"), list):
        return list(payload["data"])
    if isinstance(payload, list):
        return payload
    if isinstance(payload, Mapping):
        return [payload]
    raise PayloadError(f"a Langfuse export is a list of traces, got {type(payload).__name__}")


def spans_from_langfuse(payload: Any) -> list[Span]:
    """Spans of a Langfuse export: traces (with ``observations``) and/or bare observations."""
    traces: dict[str, Mapping[str, Any]] = {}
    observations: list[Mapping[str, Any]] = []
    for item in _items(payload):
        if not isinstance(item, Mapping):
            continue
        if "traceId" in item and "type" in item:
            observations.append(item)
            continue
        if isinstance(item.get("id"), str):
            traces[item["id"]] = item
            observations.extend(o for o in item.get("observations") or [] if isinstance(o, Mapping))
    out = [_trace_span(t) for t in traces.values()]
    out.extend(_observation_span(o, o.get("traceId") in traces) for o in observations)
    return out


def _trace_span(t: Mapping[str, Any]) -> Span:
    meta = t.get("metadata") if isinstance(t.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    attrs = {
        "openinference.span.kind": "AGENT",
        "input.value": _json(t.get("input")),
        "output.value": _json(t.get("output")),
        "agent.name": meta.get("agent") or t.get("name"),
        "agent.version": meta.get("agent_version") or t.get("version") or t.get("release"),
    }
    return Span(
        trace_id=str(t["id"]),
        span_id=str(t["id"]),
        name=str(t.get("name") or ""),
        start_ns=_ns(t.get("timestamp")),
        attrs={k: v for k, v in attrs.items() if v is not None},
    )


def _observation_span(o: Mapping[str, Any], under_trace: bool) -> Span:
    kind = _KINDS.get(str(o.get("type") or "").upper(), "CHAIN")
    inp = o.get("input")
    if kind == "CHAIN" and isinstance(inp, Mapping) and any(k in inp for k in _SQL_KEYS):
        kind = "TOOL"
    attrs: dict[str, Any] = {
        "openinference.span.kind": kind,
        "input.value": _json(inp),
        "output.value": _json(o.get("output")),
    }
    if kind == "TOOL":
        attrs["tool.name"] = o.get("name")
        attrs["tool.parameters"] = _json(inp)
    if kind == "AGENT":
        attrs["agent.name"] = o.get("name")
        attrs["agent.version"] = o.get("version")
    trace_id = str(o.get("traceId") or "")
    parent = o.get("parentObservationId") or (trace_id if under_trace else None)
    return Span(
        trace_id=trace_id,
        span_id=str(o.get("id") or ""),
        parent_id=str(parent) if parent else None,
        name=str(o.get("name") or ""),
        start_ns=_ns(o.get("startTime")),
        attrs={k: v for k, v in attrs.items() if v is not None},
    )

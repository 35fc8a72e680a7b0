"""Spans from OTLP trace payloads: one neutral :class:`Span` shape for JSON and protobuf.

OTLP/JSON (``application/json``, the file an OpenTelemetry collector's file exporter writes)
and OTLP/protobuf (``application/x-protobuf``, decoded with ``opentelemetry-proto``) both
become a list of :class:`Span`: hex trace/span ids, the span's attributes and its resource's
attributes as plain Python values.

>>> payload = {"resourceSpans": [{"resource": {"attributes": [
...     {"key": "service.name", "value": {"stringValue": "sql-bot"}}]},
...   "scopeSpans": [{"spans": [{"traceId": "0af7651916cd43dd8448eb211c80319c",
...     "spanId": "b7ad6b7169203331", "name": "execute_tool run_sql",
...     "startTimeUnixNano": "1700000000000000000",
...     "attributes": [{"key": "gen_ai.operation.name",
...                     "value": {"stringValue": "execute_tool"}}]}]}]}]}
>>> [s] = spans_from_otlp_json(payload)
>>> s.span_id, s.attrs["gen_ai.operation.name"], s.resource["service.name"]
('b7ad6b7169203331', 'execute_tool', 'sql-bot')
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from stef.errors import StefError

_HEX = set("0123456789abcdefABCDEF")


class PayloadError(StefError):
    """A trace payload that cannot be decoded at all (the whole request is bad)."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_payload", message)


@dataclass(slots=True)
class Span:
    """One span, in the shape every reader of this package shares."""

    trace_id: str
    span_id: str
    name: str = ""
    parent_id: str | None = None
    start_ns: int = 0
    attrs: dict[str, Any] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)

    def timestamp(self) -> str | None:
        """The start time as ISO 8601 UTC, or ``None`` when the span has none.

        >>> Span("t", "s", start_ns=1_700_000_000_500_000_000).timestamp()
        '2023-11-14T22:13:20.500000Z'
        """
        if not self.start_ns:
            return None
        t = datetime.fromtimestamp(self.start_ns / 1e9, tz=timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --- OTLP/JSON ---------------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP/JSON ``AnyValue`` object as a Python value.

    >>> any_value({"intValue": "42"}), any_value({"arrayValue": {"values": [{"boolValue": True}]}})
    (42, [True])
    """
    if not isinstance(value, Mapping):
        return value
    for key, conv in (
        ("stringValue", str),
        ("boolValue", bool),
        ("intValue", int),
        ("doubleValue", float),
        ("string_value", str),
        ("bool_value", bool),
        ("int_value", int),
        ("double_value", float),
    ):
        if key in value:
            try:
                return conv(value[key])
            except (TypeError, ValueError):
                return value[key]
    array = value.get("arrayValue", value.get("array_value"))
    if isinstance(array, Mapping):
        return [any_value(v) for v in array.get("values") or []]
    kvlist = value.get("kvlistValue", value.get("kvlist_value"))
    if isinstance(kvlist, Mapping):
        return attributes(kvlist.get("values") or [])
    raw = value.get("bytesValue", value.get("bytes_value"))
    if isinstance(raw, str):
        return raw
    return None


def attributes(items: Any) -> dict[str, Any]:
    """An OTLP/JSON attribute list (``[{"key", "value"}]``) as a dict."""
    out: dict[str, Any] = {}
    if not isinstance(items, list):
        return out
    for kv in items:
        if isinstance(kv, Mapping) and isinstance(kv.get("key"), str):
            out[kv["key"]] = any_value(kv.get("value"))
    return out


def _hex_id(value: Any) -> str:
    """A trace or span id as lower-case hex (OTLP/JSON uses hex; protobuf-JSON uses base64)."""
    if not isinstance(value, str) or not value:
        return ""
    if set(value) <= _HEX and len(value) in (16, 32):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        return value


def _get(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    return obj.get(camel, obj.get(snake))


def spans_from_otlp_json(payload: Any) -> list[Span]:
    """Every span of an OTLP/JSON ``ExportTraceServiceRequest`` (or a collector file line)."""
    if not isinstance(payload, Mapping):
        raise PayloadError(f"an OTLP/JSON payload is an object, got {type(payload).__name__}")
    resource_spans = _get(payload, "resourceSpans", "resource_spans")
    if resource_spans is None:
        raise PayloadError("an OTLP/JSON payload has a 'resourceSpans' list; this one has none")
    if not isinstance(resource_spans, list):
        raise PayloadError("'resourceSpans' must be a list")
    out: list[Span] = []
    for rs in resource_spans:
        if not isinstance(rs, Mapping):
            continue
        res = rs.get("resource") or {}
        resource = attributes(res.get("attributes") if isinstance(res, Mapping) else None)
        scopes = _get(rs, "scopeSpans", "scope_spans") or rs.get("instrumentationLibrarySpans")
        for ss in scopes or []:
            for sp in (ss.get("spans") if isinstance(ss, Mapping) else None) or []:
                if isinstance(sp, Mapping):
                    out.append(_json_span(sp, resource))
    return out


def _json_span(sp: Mapping[str, Any], resource: dict[str, Any]) -> Span:
    start = _get(sp, "startTimeUnixNano", "start_time_unix_nano")
    try:
        start_ns = int(start) if start is not None else 0
    except (TypeError, ValueError):
        start_ns = 0
    return Span(
        trace_id=_hex_id(_get(sp, "traceId", "trace_id")),
        span_id=_hex_id(_get(sp, "spanId", "span_id")),
        parent_id=_hex_id(_get(sp, "parentSpanId", "parent_span_id")) or None,
        name=str(sp.get("name") or ""),
        start_ns=start_ns,
        attrs=attributes(sp.get("attributes")),
        resource=resource,
    )


# --- OTLP/protobuf -----------------------------------------------------------------------


def _pb_value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_pb_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind)


def _pb_attrs(items: Iterable[Any]) -> dict[str, Any]:
    return {kv.key: _pb_value(kv.value) for kv in items}


def spans_from_otlp_proto(body: bytes) -> list[Span]:
    """Every span of a binary OTLP ``ExportTraceServiceRequest``."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    try:
        request = ExportTraceServiceRequest.FromString(body)
    except DecodeError as e:
        raise PayloadError(f"not an OTLP protobuf ExportTraceServiceRequest: {e}") from None
    out: list[Span] = []
    for rs in request.resource_spans:
        resource = _pb_attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            for sp in ss.spans:
                out.append(
                    Span(
                        trace_id=sp.trace_id.hex(),
                        span_id=sp.span_id.hex(),
                        parent_id=sp.parent_span_id.hex() or None,
                        name=sp.name,
                        start_ns=sp.start_time_unix_nano,
                        attrs=_pb_attrs(sp.attributes),
                        resource=resource,
                    )
                )
    return out

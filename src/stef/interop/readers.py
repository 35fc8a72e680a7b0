"""Read a trace or log file in one of the supported formats into STEF records.

``otlp-json`` (an OTLP/JSON ``ExportTraceServiceRequest``, or JSONL of them as a collector's
file exporter writes), ``otlp-proto`` (one binary ``ExportTraceServiceRequest``),
``openinference`` (OTLP/JSON of OpenInference spans, or Phoenix span JSON: a list or JSONL of
``{"name", "context": {"trace_id", "span_id"}, "parent_id", "start_time", "attributes"}``),
``langfuse`` (see :mod:`stef.interop.langfuse`) and ``jsonl`` (any JSON log, one object a
line, through a field map). Each yields :class:`Item` s: a record, or an error naming where.

>>> items = list(read_text('{"q": "How many?", "query": "SELECT 1"}', "jsonl",
...                        {"question": "q", "sql": "query"}))
>>> items[0].record["sql"], items[0].where
('SELECT 1', 'line 1')
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stef.interop.calls import TraceMap, records_from_spans
from stef.interop.fieldmap import map_record
from stef.interop.langfuse import LANGFUSE_MAP, spans_from_langfuse
from stef.interop.spans import PayloadError, Span, spans_from_otlp_json, spans_from_otlp_proto
from stef.record import parse_time

FORMATS = ("otlp-json", "otlp-proto", "openinference", "langfuse", "jsonl")


@dataclass
class Item:
    """One record read (``record``), or why a part of the input gave none (``error``)."""

    where: str
    record: dict[str, Any] | None = None
    error: str | None = None
    #: Mapped paths this log line lacked (``jsonl`` only); the record is still written.
    missing: list[str] = field(default_factory=list)
    #: The unreadable line itself (``jsonl`` only), so an evaluation can report it.
    raw: str | None = None


def read_file(path: str | Path, fmt: str, fmap: Mapping[str, str] | None = None) -> Iterator[Item]:
    """Records of the file at ``path`` in format ``fmt``."""
    p = Path(path)
    if fmt == "otlp-proto":
        yield from _from_spans(
            lambda: spans_from_otlp_proto(p.read_bytes()), str(p), dict(fmap or {}), "otlp"
        )
        return
    yield from read_text(p.read_text(encoding="utf-8", errors="replace"), fmt, fmap)


def read_text(text: str, fmt: str, fmap: Mapping[str, str] | None = None) -> Iterator[Item]:
    """Records of ``text`` in format ``fmt`` (any but ``otlp-proto``)."""
    fmap = dict(fmap or {})
    if fmt == "jsonl":
        yield from _jsonl(text, fmap)
    elif fmt in ("langfuse", "otlp-json", "openinference"):
        decode = spans_from_langfuse if fmt == "langfuse" else _trace_spans
        spans: list[Span] = []
        where = "file"
        for where, payload in _documents(text):
            if isinstance(payload, _Bad):
                yield Item(where, error=payload.message)
                continue
            try:
                spans.extend(decode(payload))
            except PayloadError as e:
                yield Item(where, error=e.message)
        # spans of one trace may sit on several lines: calls are found once all are read
        yield from _from_spans(lambda: spans, "file" if where == "file" else "jsonl", fmap, fmt)
    else:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def _documents(text: str) -> Iterator[tuple[str, Any]]:
    """The file as one JSON document, else as JSONL (one document a line)."""
    try:
        yield "file", json.loads(text)
        return
    except (ValueError, RecursionError):
        pass
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield f"line {n}", json.loads(line)
            except (ValueError, RecursionError) as e:
                yield f"line {n}", _Bad(f"malformed JSON: {e}")


class _Bad:
    """A line that is not JSON: every decoder refuses it with this message."""

    def __init__(self, message: str) -> None:
        self.message = message


def _trace_spans(payload: Any) -> list[Span]:
    if isinstance(payload, Mapping) and ("resourceSpans" in payload or "resource_spans" in payload):
        return spans_from_otlp_json(payload)
    items = payload if isinstance(payload, list) else [payload]
    if all(isinstance(i, Mapping) and isinstance(i.get("context"), Mapping) for i in items):
        return [_phoenix_span(i) for i in items]
    raise PayloadError("neither OTLP/JSON (resourceSpans) nor Phoenix span JSON (context)")


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(v, f"{prefix}{k}.", out)
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}{i}.", out)
    else:
        out[prefix[:-1]] = value


def _phoenix_span(item: Mapping[str, Any]) -> Span:
    ctx = item["context"]
    attrs: dict[str, Any] = {}
    _flatten(item.get("attributes") or {}, "", attrs)
    kind = item.get("span_kind")
    if isinstance(kind, str) and "openinference.span.kind" not in attrs:
        attrs["openinference.span.kind"] = kind
    start = item.get("start_time")
    try:
        start_ns = int(parse_time(start).timestamp() * 1e9) if isinstance(start, str) else 0
    except ValueError:
        start_ns = 0
    return Span(
        trace_id=str(ctx.get("trace_id") or ""),
        span_id=str(ctx.get("span_id") or ""),
        parent_id=item.get("parent_id") or None,
        name=str(item.get("name") or ""),
        start_ns=start_ns,
        attrs=attrs,
    )


def _from_spans(get: Any, where: str, fmap: Mapping[str, str], source: str) -> Iterator[Item]:
    try:
        spans = get()
    except PayloadError as e:
        yield Item(where, error=e.message)
        return
    base = LANGFUSE_MAP if source == "langfuse" else TraceMap(source=source)
    for rec in records_from_spans(spans, base.with_overrides(fmap)):
        yield Item(f"{where}: span {rec['metadata']['span_id']}", record=rec)


def _jsonl(text: str, fmap: Mapping[str, str]) -> Iterator[Item]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as e:
            yield Item(f"line {n}", error=f"malformed JSON: {e}", raw=line)
            continue
        if not isinstance(obj, Mapping):
            msg = f"a log line is a JSON object, got {type(obj).__name__}"
            yield Item(f"line {n}", error=msg, raw=line)
            continue
        record, missing = map_record(obj, fmap)
        yield Item(f"line {n}", record=record, missing=missing)

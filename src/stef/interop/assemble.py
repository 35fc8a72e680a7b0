"""Put traces back together across OTLP requests before reading their calls.

An exporter sends spans as they end, children first: the ``execute_tool`` span with the SQL
often arrives in one request and its ``invoke_agent`` parent (the question, the agent) in a
later one. :class:`TraceAssembler` keeps each trace's spans until its root span (no parent)
has arrived, then yields the trace's records; a trace whose root never comes (its parent
lives in another service) is read as it is after ``wait`` seconds. Spans arriving after
their trace was read are read with the spans kept for it; a record is yielded once (its id
is remembered after :meth:`TraceAssembler.done`), so an exporter retrying a request does not
evaluate a call twice, while a request refused downstream (not marked done) is read again.

>>> from stef.interop.spans import Span
>>> asm = TraceAssembler(wait=30.0, clock=lambda: 0.0)
>>> tool = Span("t", "b", parent_id="a", attrs={"gen_ai.operation.name": "execute_tool",
...     "gen_ai.tool.call.arguments": '{"sql": "SELECT 1"}'})
>>> asm.add([tool])          # the root has not arrived: nothing yet
[]
>>> agent = Span("t", "a", attrs={"gen_ai.operation.name": "invoke_agent",
...     "gen_ai.agent.name": "bot", "gen_ai.input.messages": "How many?"})
>>> [(r["agent"], r["question"]) for r in asm.add([agent])]
[('bot', 'How many?')]
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from stef.interop.calls import TraceMap, records_from_spans
from stef.interop.spans import Span


@dataclass
class _Pending:
    first_seen: float
    spans: dict[str, Span] = field(default_factory=dict)
    complete: bool = False
    emitted: set[str] = field(default_factory=set)


class TraceAssembler:
    """Spans in (any order, any batching), records out once each trace can be read."""

    def __init__(
        self,
        trace_map: TraceMap | None = None,
        *,
        wait: float = 10.0,
        keep: float = 120.0,
        max_traces: int = 50_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tmap = trace_map or TraceMap()
        self.wait = wait
        self.keep = keep
        self.max_traces = max_traces
        self.clock = clock
        self._traces: OrderedDict[str, _Pending] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, spans: Iterable[Span]) -> list[dict[str, Any]]:
        """Take spans; the records now readable (not yet marked :meth:`done`)."""
        now = self.clock()
        touched: list[str] = []
        with self._lock:
            for s in spans:
                p = self._traces.get(s.trace_id)
                if p is None:
                    p = self._traces[s.trace_id] = _Pending(now)
                    touched.append(s.trace_id)
                elif s.trace_id not in touched:
                    touched.append(s.trace_id)
                p.spans[s.span_id] = s
                if not s.parent_id:
                    p.complete = True
            out = [r for t in touched if self._traces[t].complete for r in self._read(t)]
            out.extend(self._expired(now))
        return out

    def expire(self) -> list[dict[str, Any]]:
        """Records of traces that waited ``wait`` seconds for a root that did not come."""
        with self._lock:
            return self._expired(self.clock())

    def flush(self) -> list[dict[str, Any]]:
        """Every readable record now, complete or not (at shutdown)."""
        with self._lock:
            return [r for t in list(self._traces) for r in self._read(t)]

    def done(self, records: Iterable[dict[str, Any]]) -> None:
        """Mark records as handed on: they are not yielded again."""
        with self._lock:
            for r in records:
                meta = r.get("metadata") or {}
                p = self._traces.get(str(meta.get("trace_id")))
                if p is not None:
                    p.emitted.add(r["id"])

    def pending(self) -> int:
        """Traces held (waiting for a root, or kept for late spans)."""
        with self._lock:
            return len(self._traces)

    def _read(self, trace_id: str) -> list[dict[str, Any]]:
        p = self._traces[trace_id]
        return [
            r for r in records_from_spans(p.spans.values(), self.tmap) if r["id"] not in p.emitted
        ]

    def _expired(self, now: float) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for trace_id in list(self._traces):
            p = self._traces[trace_id]
            age = now - p.first_seen
            if not p.complete and (age >= self.wait or len(self._traces) > self.max_traces):
                p.complete = True
                out.extend(self._read(trace_id))
            elif p.complete and (age >= self.keep or len(self._traces) > self.max_traces):
                del self._traces[trace_id]
            elif age < self.wait:
                break  # insertion order is arrival order: the rest are younger
        return out

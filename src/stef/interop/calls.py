"""Text-to-SQL calls found in traces, as STEF records.

A call is a span that carries SQL: an ``execute_tool`` (or OpenInference ``TOOL``) span whose
arguments hold ``sql`` or ``query``; where an agent made no such tool call, an LLM span whose
output has a SQL code block (or requests a tool call with SQL). For each call:

- question: the last user message of the nearest agent span's input, else of the LLM span's;
- enriched question: the tool call's ``enriched_question`` / ``rewritten_question`` argument;
- agent / version: ``gen_ai.agent.name`` / ``gen_ai.agent.version`` (OpenInference
  ``agent.name``) of the agent span or the call span, else the resource's ``service.name`` /
  ``service.version``;
- ``metadata``: ``trace_id``, ``span_id`` (the call span), ``agent_span_id``, ``source``.

Every default is an attribute name in :class:`TraceMap`, and ``--map question=my.attr``
points a field at another attribute (looked up on the call span, its agent, its LLM span,
then the resource).

>>> from stef.interop.spans import Span
>>> agent = Span("t1", "a1", attrs={"gen_ai.operation.name": "invoke_agent",
...     "gen_ai.agent.name": "sql-bot", "gen_ai.agent.version": "1.4",
...     "gen_ai.input.messages": '[{"role": "user", "parts": '
...                              '[{"type": "text", "content": "How many users?"}]}]'})
>>> tool = Span("t1", "b2", parent_id="a1", attrs={"gen_ai.operation.name": "execute_tool",
...     "gen_ai.tool.call.arguments": '{"sql": "SELECT COUNT(*) FROM users"}'})
>>> [r] = records_from_spans([agent, tool])
>>> r["question"], r["sql"], r["agent"], r["agent_version"], r["metadata"]["span_id"]
('How many users?', 'SELECT COUNT(*) FROM users', 'sql-bot', '1.4', 'b2')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from stef.interop import conventions as cv
from stef.interop.spans import Span

#: Database systems (``db.system.name``) whose sqlglot dialect has another name.
_DIALECTS = {"postgresql": "postgres", "mssql": "tsql", "microsoft.sql_server": "tsql"}


@dataclass(frozen=True)
class TraceMap:
    """Which span attribute holds which record field. Defaults follow the conventions."""

    sql_keys: tuple[str, ...] = ("sql", "query")
    enriched_keys: tuple[str, ...] = ("enriched_question", "rewritten_question")
    agent_attrs: tuple[str, ...] = ("gen_ai.agent.name", "agent.name")
    version_attrs: tuple[str, ...] = ("gen_ai.agent.version", "agent.version")
    agent_resource: str = "service.name"
    version_resource: str = "service.version"
    dialect_attrs: tuple[str, ...] = ("db.system.name", "db.system")
    #: ``--map`` overrides: record field → attribute name (checked before the defaults).
    overrides: dict[str, str] = field(default_factory=dict)
    #: What ``metadata.source`` says (``otlp``, ``langfuse`` …).
    source: str = "otlp"

    def with_overrides(self, pairs: Mapping[str, str]) -> TraceMap:
        """A copy whose fields in ``pairs`` are read from the named attributes."""
        return replace(self, overrides={**self.overrides, **pairs})


@dataclass
class _Trace:
    spans: dict[str, Span]
    roles: dict[str, str | None] = field(default_factory=dict)
    args: dict[str, dict[str, Any]] = field(default_factory=dict)

    def role(self, span: Span) -> str | None:
        r = self.roles.get(span.span_id, "")
        if r == "":
            r = self.roles[span.span_id] = cv.role(span)
        return r

    def tool_args(self, span: Span) -> dict[str, Any]:
        if span.span_id not in self.args:
            self.args[span.span_id] = cv.tool_arguments(span) if self.role(span) == "tool" else {}
        return self.args[span.span_id]

    def ancestors(self, span: Span) -> Iterator[Span]:
        seen = {span.span_id}
        pid = span.parent_id
        while pid and pid in self.spans and pid not in seen:
            seen.add(pid)
            parent = self.spans[pid]
            yield parent
            pid = parent.parent_id

    def nearest(self, span: Span, want: str) -> Span | None:
        if self.role(span) == want:
            return span
        return next((a for a in self.ancestors(span) if self.role(a) == want), None)


def _group(spans: Iterable[Span]) -> dict[str, _Trace]:
    traces: dict[str, _Trace] = {}
    for s in spans:
        t = traces.get(s.trace_id)
        if t is None:
            t = traces[s.trace_id] = _Trace({})
        t.spans[s.span_id] = s
    return traces


def records_from_spans(spans: Iterable[Span], tmap: TraceMap | None = None) -> list[dict[str, Any]]:
    """One record per text-to-SQL call in ``spans`` (spans of several traces may mix)."""
    tmap = tmap or TraceMap()
    out: list[dict[str, Any]] = []
    for trace in _group(spans).values():
        out.extend(_trace_records(trace, tmap))
    return out


def _trace_records(trace: _Trace, tmap: TraceMap) -> list[dict[str, Any]]:
    ordered = sorted(trace.spans.values(), key=lambda s: (s.start_ns, s.span_id))
    agent_of = {s.span_id: trace.nearest(s, "agent") for s in ordered}
    calls: list[tuple[Span, str, Span | None]] = []
    with_tool_sql: set[str | None] = set()
    sql_attr = tmap.overrides.get("sql")
    for s in ordered:
        sql = _attr(s, sql_attr) if sql_attr else None
        if sql is None and trace.role(s) == "tool":
            sql = cv.pick(trace.tool_args(s), tmap.sql_keys)
        if sql:
            calls.append((s, sql, None))
            agent = agent_of[s.span_id]
            with_tool_sql.add(agent.span_id if agent else None)
    for s in ordered:
        agent = agent_of[s.span_id]
        if trace.role(s) == "llm" and (agent.span_id if agent else None) not in with_tool_sql:
            sql = cv.output_sql(s, tmap.sql_keys)
            if sql:
                calls.append((s, sql, s))
    calls.sort(key=lambda c: (c[0].start_ns, c[0].span_id))
    return [
        _record(trace, ordered, span, sql, llm, agent_of[span.span_id], tmap)
        for span, sql, llm in calls
    ]


def _llm_for(trace: _Trace, ordered: list[Span], call: Span, agent: Span | None) -> Span | None:
    """The LLM span that produced a tool call: an LLM ancestor, else the last LLM span of the
    same agent that started before the call."""
    up = trace.nearest(call, "llm")
    if up is not None:
        return up
    best = None
    for s in ordered:
        if s.start_ns > call.start_ns:
            break
        if trace.role(s) == "llm" and (
            agent is None or any(a.span_id == agent.span_id for a in trace.ancestors(s))
        ):
            best = s
    return best


def _attr(span: Span | None, name: str | None) -> Any:
    if span is None or not name:
        return None
    v = span.attrs.get(name)
    return v if v not in (None, "") else None


def _first(spans: list[Span | None], names: tuple[str, ...]) -> Any:
    for s in spans:
        for n in names:
            v = _attr(s, n)
            if v is not None:
                return v
    return None


def _question(agent: Span | None, llm: Span | None) -> str | None:
    for s in (agent, llm):
        if s is not None:
            q = cv.last_user_text(cv.input_messages(s))
            if q and q.strip():
                return q
    return None


def _record(
    trace: _Trace,
    ordered: list[Span],
    call: Span,
    sql: str,
    llm: Span | None,
    agent: Span | None,
    tmap: TraceMap,
) -> dict[str, Any]:
    ov = tmap.overrides
    question = cv.last_user_text(cv.input_messages(agent)) if agent is not None else None
    if llm is None and (ov or not (question and question.strip())):
        llm = _llm_for(trace, ordered, call, agent)
    chain = [call, agent, llm]
    if "question" in ov:
        question = _first(chain, (ov["question"],)) or question
    args = trace.tool_args(call)
    enriched = _first(chain, (ov["enriched_question"],)) if "enriched_question" in ov else None
    agent_name = _first(chain, (ov["agent"],)) if "agent" in ov else None
    version = _first(chain, (ov["agent_version"],)) if "agent_version" in ov else None
    dialect = _first(chain, (ov["dialect"],)) if "dialect" in ov else None
    dialect = dialect or _first(chain, tmap.dialect_attrs)
    record: dict[str, Any] = {
        "id": f"{call.trace_id}-{call.span_id}",
        "question": question if question and question.strip() else _question(None, llm),
        "enriched_question": enriched or cv.pick(args, tmap.enriched_keys),
        "sql": sql,
        "agent": agent_name
        or _first([agent, call], tmap.agent_attrs)
        or call.resource.get(tmap.agent_resource),
        "agent_version": version
        or _first([agent, call], tmap.version_attrs)
        or call.resource.get(tmap.version_resource),
        "timestamp": call.timestamp(),
        "metadata": {
            "source": tmap.source,
            "trace_id": call.trace_id,
            "span_id": call.span_id,
            "span_name": call.name,
        },
    }
    if agent is not None and agent is not call:
        record["metadata"]["agent_span_id"] = agent.span_id
    if isinstance(dialect, str):
        record["dialect"] = _DIALECTS.get(dialect.lower(), dialect.lower())
    if "app" in ov:
        record["app"] = _first(chain, (ov["app"],)) or call.resource.get(ov["app"])
    return {k: v for k, v in record.items() if v is not None}

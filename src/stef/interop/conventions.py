"""What a span says, read through the OpenTelemetry GenAI conventions or OpenInference.

Each reader takes one :class:`~stef.interop.spans.Span` and answers one question: is it an
agent, an LLM call or a tool call; the tool call's arguments; the LLM's output texts; the
last user message of its input. A span carrying ``openinference.span.kind`` is read the
OpenInference way (``input.value``, ``llm.input_messages.N.message.*``, ``tool.parameters``),
any other the GenAI way (``gen_ai.operation.name``, ``gen_ai.input.messages``,
``gen_ai.tool.call.arguments``).

>>> from stef.interop.spans import Span
>>> s = Span("t", "s", attrs={"gen_ai.operation.name": "execute_tool",
...     "gen_ai.tool.call.arguments": '{"sql": "SELECT 1"}'})
>>> role(s), tool_arguments(s)
('tool', {'sql': 'SELECT 1'})
>>> last_user_text([{"role": "user", "parts": [{"type": "text", "content": "How many?"}]}])
'How many?'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from stef.interop.spans import Span

OI_KIND = "openinference.span.kind"
AGENT_OPS = frozenset({"invoke_agent", "create_agent"})
LLM_OPS = frozenset({"chat", "text_completion", "generate_content"})
TOOL_OPS = frozenset({"execute_tool"})

#: A fenced code block in model output; the language tag, when present, must say SQL.
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
_SQL_TAGS = frozenset({"", "sql", "postgresql", "postgres", "mysql", "sqlite", "tsql", "plsql"})
#: Keys under which a free-form input value holds the user's question.
_QUESTION_KEYS = ("question", "query", "input", "prompt", "text", "content", "message")


def role(span: Span) -> str | None:
    """``'agent'``, ``'llm'``, ``'tool'`` or ``None`` for any other span."""
    kind = span.attrs.get(OI_KIND)
    if isinstance(kind, str):
        return {"AGENT": "agent", "LLM": "llm", "TOOL": "tool"}.get(kind.upper())
    op = span.attrs.get("gen_ai.operation.name")
    if op in AGENT_OPS:
        return "agent"
    if op in LLM_OPS:
        return "llm"
    if op in TOOL_OPS:
        return "tool"
    return None


def is_openinference(span: Span) -> bool:
    return OI_KIND in span.attrs


def loads(value: Any) -> Any:
    """A JSON string decoded (anything else, or bad JSON, returned as it is)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except (orjson.JSONDecodeError, RecursionError):
            return value
    return value


def tool_arguments(span: Span) -> dict[str, Any]:
    """The arguments of a tool-call span, as a dict (``{}`` when unreadable)."""
    a = span.attrs
    for key in ("gen_ai.tool.call.arguments", "tool.parameters", "input.value"):
        value = loads(a.get(key))
        if isinstance(value, Mapping):
            return dict(value)
    return {}


def _indexed(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenInference's flattened lists: ``prefix.0.message.role`` … as a list of dicts."""
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        head, _, rest = key[len(prefix) :].partition(".")
        if head.isdigit() and rest:
            rows.setdefault(int(head), {})[rest] = value
    return [rows[i] for i in sorted(rows)]


def _oi_messages(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for row in _indexed(attrs, prefix):
        calls = [
            {"type": "tool_call", "arguments": loads(v)}
            for k, v in sorted(row.items())
            if k.startswith("message.tool_calls.") and k.endswith("tool_call.function.arguments")
        ]
        parts: list[dict[str, Any]] = [{"type": "text", "content": row.get("message.content")}]
        out.append({"role": row.get("message.role"), "parts": parts + calls})
    return out


def input_messages(span: Span) -> Any:
    """The span's input messages (GenAI shape: ``[{role, parts}]``), or its raw input value."""
    a = span.attrs
    if is_openinference(span):
        msgs = _oi_messages(a, "llm.input_messages.")
        return msgs or loads(a.get("input.value"))
    return loads(a.get("gen_ai.input.messages"))


def output_messages(span: Span) -> Any:
    """The span's output messages (GenAI shape), or its raw output value."""
    a = span.attrs
    if is_openinference(span):
        msgs = _oi_messages(a, "llm.output_messages.")
        return msgs or loads(a.get("output.value"))
    return loads(a.get("gen_ai.output.messages"))


def _text_of(content: Any) -> str | None:
    """The text of a message's content: a string, or text parts (GenAI or OpenAI shape)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") == "text":
                t = part.get("content", part.get("text"))
                if isinstance(t, str):
                    texts.append(t)
        return "\n".join(texts) if texts else None
    return None


def _message_text(msg: Mapping[str, Any]) -> str | None:
    return _text_of(msg["parts"]) if "parts" in msg else _text_of(msg.get("content"))


def last_user_text(value: Any) -> str | None:
    """The last user message of a message list; a plain string input is itself the question.

    >>> last_user_text({"messages": [{"role": "user", "content": "first"},
    ...     {"role": "assistant", "content": "?"}, {"role": "user", "content": "second"}]})
    'second'
    >>> last_user_text('{"question": "How many orders?"}')
    'How many orders?'
    """
    value = loads(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if isinstance(value.get("messages"), list):
            return last_user_text(value["messages"])
        for key in _QUESTION_KEYS:
            if isinstance(value.get(key), (str, list, dict)):
                return last_user_text(value[key])
        return None
    if isinstance(value, list):
        for msg in reversed(value):
            if isinstance(msg, Mapping) and msg.get("role") in ("user", "human"):
                return _message_text(msg)
            if isinstance(msg, str):
                return msg
    return None


def sql_code_block(text: str) -> str | None:
    """The first SQL code block of a model's text (a fence tagged ``sql`` or untagged).

    >>> sql_code_block("Here it is:\\n```sql\\nSELECT 1\\n```")
    'SELECT 1'
    >>> sql_code_block("```python\\nprint(1)\\n```") is None
    True
    """
    for m in _FENCE.finditer(text):
        if m.group(1).lower() in _SQL_TAGS and m.group(2).strip():
            return m.group(2).strip()
    return None


def output_sql(span: Span, sql_keys: tuple[str, ...]) -> str | None:
    """SQL an LLM span produced: the SQL code block of its output text, else the SQL argument
    of a tool call it requested."""
    value = output_messages(span)
    msgs = value if isinstance(value, list) else [value]
    texts: list[str] = []
    calls: list[Any] = []
    for msg in msgs:
        if isinstance(msg, str):
            texts.append(msg)
            continue
        if not isinstance(msg, Mapping):
            continue
        parts = msg.get("parts", msg.get("content"))
        for part in parts if isinstance(parts, list) else [parts]:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type") == "tool_call":
                calls.append(loads(part.get("arguments")))
            elif isinstance(part, Mapping):
                t = part.get("content", part.get("text"))
                if isinstance(t, str):
                    texts.append(t)
    for text in texts:
        sql = sql_code_block(text)
        if sql:
            return sql
    for args in calls:
        sql = pick(args, sql_keys)
        if sql:
            return sql
    return None


def pick(args: Any, keys: tuple[str, ...]) -> str | None:
    """The first of ``keys`` in ``args`` holding a non-empty string."""
    if isinstance(args, Mapping):
        for k in keys:
            v = args.get(k)
            if isinstance(v, str) and v.strip():
                return v
    return None

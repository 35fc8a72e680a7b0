"""Input records: parse and validate one JSON object (or JSONL line) into a :class:`Record`.

Every problem becomes a :class:`~stef.errors.RecordError` naming the field, so the caller
can turn it into an error evaluation for that record alone.

>>> r = parse_record({"question": "How many users?", "sql": "SELECT COUNT(*) FROM users"})
>>> r.id == parse_record({"question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}).id
True
>>> parse_record({"question": "", "sql": "SELECT 1"})
Traceback (most recent call last):
...
stef.errors.RecordError: field 'question' is empty
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from stef.errors import RecordError

#: Longest question or enriched question accepted, in characters.
MAX_TEXT_CHARS = 20_000
#: Longest JSONL line accepted, in characters (the SQL has its own limit in ``sqlspec``).
MAX_LINE_CHARS = 2_000_000

#: Deepest nesting of objects and lists accepted in ``metadata``.
MAX_METADATA_DEPTH = 64

#: Fields copied from the record into its evaluation unchanged.
PASSTHROUGH = (
    "question",
    "enriched_question",
    "sql",
    "dialect",
    "agent",
    "agent_version",
    "timestamp",
    "app",
    "metadata",
)


@dataclass
class Record:
    """One validated input record."""

    id: str
    question: str
    sql: str
    enriched_question: str | None = None
    dialect: str | None = None
    agent: str | None = None
    agent_version: str | None = None
    timestamp: str | None = None
    app: str | None = None
    metadata: dict[str, Any] | None = None
    #: ``timestamp`` parsed (timezone-aware), or ``None`` when absent or unreadable.
    time: datetime | None = None
    #: Non-fatal problems with the record (e.g. an unreadable timestamp).
    warnings: list[str] = field(default_factory=list)

    def passthrough(self) -> dict[str, Any]:
        """The input fields an evaluation carries unchanged."""
        return {k: getattr(self, k) for k in PASSTHROUGH}


def json_depth(value: Any, stop: int = MAX_METADATA_DEPTH) -> int:
    """How deeply objects and lists nest in ``value`` (counted without recursion, and
    no further than ``stop + 1``).

    >>> json_depth({"a": [1, {"b": 2}]}), json_depth(3)
    (3, 0)
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        elif not isinstance(v, list):
            continue
        d += 1
        if d > deepest:
            deepest = d
            if d > stop:
                return d
        stack.extend((x, d) for x in v if isinstance(x, (dict, list)))
    return deepest


def _timestamp(data: dict[str, Any]) -> tuple[str | None, datetime | None]:
    """The record's ``timestamp`` as given and parsed; anything but ISO 8601 text is refused,
    so a bad time fails its own record before any store sees it."""
    value = data.get("timestamp")
    if value is None or value == "":
        return None, None
    if not isinstance(value, str):
        raise RecordError(
            "invalid_record",
            f"field 'timestamp' must be an ISO 8601 time such as '2026-01-31T09:30:00Z', "
            f"got {type(value).__name__} {str(value)[:40]}",
        )
    text = _label(data, "timestamp")
    assert text is not None
    try:
        when = parse_time(text)
        when.timestamp()  # a time the store can place (not past year 9999 in UTC)
        return text, when
    except (ValueError, OverflowError, OSError):
        raise RecordError(
            "invalid_record",
            f"field 'timestamp' is not an ISO 8601 time: {text[:60]!r} "
            "(expected e.g. '2026-01-31T09:30:00Z')",
        ) from None


def record_id(data: dict[str, Any]) -> str:
    """A deterministic id for a record that has none: a hash of its content.

    Re-evaluating the same record gives the same id, so stores stay idempotent.
    """
    blob = json.dumps(
        [
            data.get(k)
            for k in (
                "question",
                "enriched_question",
                "sql",
                "dialect",
                "agent",
                "agent_version",
                "timestamp",
                "app",
            )
        ],
        sort_keys=True,
        default=str,
    )
    return "r-" + hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _text(
    data: dict[str, Any],
    name: str,
    *,
    required: bool,
    empty_status: str | None = None,
    limit: int | None = MAX_TEXT_CHARS,
) -> str | None:
    if name not in data or data[name] is None:
        if required:
            raise RecordError("invalid_record", f"field {name!r} is required")
        return None
    value = data[name]
    if not isinstance(value, str):
        raise RecordError(
            "invalid_record", f"field {name!r} must be a string, got {type(value).__name__}"
        )
    if "\x00" in value:
        raise RecordError("invalid_record", f"field {name!r} contains a NUL byte")
    if not value.isascii():  # only a non-ASCII text can hold a lone surrogate
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise RecordError(
                "invalid_record", f"field {name!r} is not valid Unicode (a lone surrogate)"
            ) from None
    if limit is not None and len(value) > limit:
        raise RecordError(
            "invalid_record", f"field {name!r} is too long ({len(value):,} characters > {limit:,})"
        )
    if required and not value.strip():
        raise RecordError(empty_status or "invalid_record", f"field {name!r} is empty")
    return value


def _label(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise RecordError(
            "invalid_record", f"field {name!r} must be a string, got {type(value).__name__}"
        )
    text = str(value)
    if len(text) > 1000 or "\x00" in text:
        raise RecordError("invalid_record", f"field {name!r} is not a short label")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise RecordError(
                "invalid_record", f"field {name!r} is not valid Unicode (a lone surrogate)"
            ) from None
    return text


def parse_time(value: str) -> datetime:
    """Parse an ISO 8601 timestamp; naive times are taken as UTC.

    >>> parse_time("2024-03-01T10:00:00Z").isoformat()
    '2024-03-01T10:00:00+00:00'
    """
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    t = datetime.fromisoformat(text)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def parse_record(data: Any) -> Record:
    """Validate one decoded record. Raises :class:`RecordError` with the problem."""
    if not isinstance(data, dict):
        raise RecordError(
            "invalid_record", f"a record must be a JSON object, got {type(data).__name__}"
        )
    question = _text(data, "question", required=True, empty_status="empty_question")
    sql = _text(data, "sql", required=True, empty_status="empty_sql", limit=None)
    enriched = _text(data, "enriched_question", required=False)
    dialect = _label(data, "dialect")
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise RecordError(
            "invalid_record", f"field 'metadata' must be an object, got {type(metadata).__name__}"
        )
    if metadata is not None and json_depth(metadata) > MAX_METADATA_DEPTH:
        raise RecordError(
            "invalid_record",
            f"field 'metadata' nests objects or lists more than {MAX_METADATA_DEPTH} levels deep",
        )
    if metadata is not None:
        try:
            json.dumps(metadata, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
            raise RecordError(
                "invalid_record",
                "field 'metadata' is not plain JSON text (invalid Unicode or too deep)",
            ) from None
    raw_id = data.get("id")
    rid = _label(data, "id") if raw_id is not None else record_id(data)
    timestamp, when = _timestamp(data)
    assert question is not None and sql is not None
    rec = Record(
        id=rid or record_id(data),
        question=question,
        sql=sql,
        enriched_question=enriched,
        dialect=dialect.strip().lower() if dialect else None,
        agent=_label(data, "agent"),
        agent_version=_label(data, "agent_version"),
        timestamp=timestamp,
        app=_label(data, "app"),
        metadata=metadata,
        time=when,
    )
    return rec


def parse_line(line: str) -> Record:
    """Decode and validate one JSONL line.

    >>> parse_line('{"question": "q", "sql": ')
    Traceback (most recent call last):
    ...
    stef.errors.RecordError: malformed JSON at column 26: Expecting value
    """
    if len(line) > MAX_LINE_CHARS:
        raise RecordError(
            "invalid_json", f"line is too long ({len(line):,} characters > {MAX_LINE_CHARS:,})"
        )
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise RecordError("invalid_json", f"malformed JSON at column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise RecordError("invalid_json", "malformed JSON: nested too deeply") from None
    return parse_record(data)


#: Longest text (or metadata JSON) an error evaluation echoes; longer is an excerpt.
MAX_ECHO_CHARS = MAX_TEXT_CHARS


def bounded(passthrough: dict[str, Any]) -> dict[str, Any]:
    """Pass-through fields as an error evaluation echoes them: a text over
    :data:`MAX_ECHO_CHARS` becomes its first 200 characters and its size, metadata whose
    JSON is longer becomes a note of its size (a 10 MB line never makes a 10 MB output line).

    >>> bounded({"sql": "x" * 30_000, "app": "a"})["sql"][-30:]
    'xxxxxxxxx… [30,000 characters]'
    """
    out = dict(passthrough)
    for k, v in passthrough.items():
        if isinstance(v, str) and len(v) > MAX_ECHO_CHARS:
            out[k] = v[:200] + f"… [{len(v):,} characters]"
        elif k == "metadata" and isinstance(v, dict):
            size = len(json.dumps(v, ensure_ascii=False, default=str))
            if size > MAX_ECHO_CHARS:
                out[k] = {"_left_out": f"metadata of {size:,} characters"}
    return out


def salvage(data: Any) -> dict[str, Any]:
    """Best-effort pass-through fields of a record that failed validation."""
    if not isinstance(data, dict):
        return {}
    rid = data.get("id")
    out: dict[str, Any] = {"id": rid if isinstance(rid, (str, int)) else None}
    if isinstance(rid, str):
        out["id"] = rid[:200].encode("utf-8", "replace").decode("utf-8")
    for k in PASSTHROUGH:
        v = data.get(k)
        if (
            v is None
            or isinstance(v, (str, int, float, bool))
            or (k == "metadata" and isinstance(v, dict) and json_depth(v) <= MAX_METADATA_DEPTH)
        ):
            if isinstance(v, str):
                if len(v) > MAX_TEXT_CHARS:
                    v = v[:200] + f"… [{len(v):,} characters]"
                v = v.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
            out[k] = v
    if out.get("timestamp") is not None:  # the error names a bad time; stores need a good one
        try:
            _timestamp({"timestamp": out["timestamp"]})
        except RecordError:
            out["timestamp"] = None
    return out

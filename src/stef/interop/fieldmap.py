"""Any JSON log as STEF records, through a field map of dotted paths.

``--map question=q,sql=query,agent=service.name`` reads the record's ``question`` from the
log's ``q``, its ``sql`` from ``query`` and its ``agent`` from ``service.name`` — a nested
``{"service": {"name": …}}`` or a flat key ``"service.name"``, whichever the log has. Fields
not named in the map are read under their own names; a number in a path indexes a list
(``messages.-1.content`` is the last message's content).

>>> fmap = parse_map("question=q,sql=query,agent=service.name")
>>> record, missing = map_record({"q": "How many?", "query": "SELECT 1",
...     "service": {"name": "bot"}, "agent_version": "3"}, fmap)
>>> record["question"], record["sql"], record["agent"], record["agent_version"], missing
('How many?', 'SELECT 1', 'bot', '3', [])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stef.errors import StefError
from stef.record import PASSTHROUGH

#: The record fields a map may target.
FIELDS = ("id", *PASSTHROUGH)
#: Short names accepted on the left of ``=``.
ALIASES = {"version": "agent_version", "enriched": "enriched_question", "q": "question"}
_MISSING = object()


class MapError(StefError):
    """A ``--map`` option that cannot be read."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_map", message)


def parse_map(text: str | None) -> dict[str, str]:
    """``field=path,field=path`` as a dict; unknown fields are an error naming them.

    >>> parse_map("qn=question")
    Traceback (most recent call last):
    ...
    stef.interop.fieldmap.MapError: --map: unknown record field 'qn' (one of id, question, \
enriched_question, sql, dialect, agent, agent_version, timestamp, app, metadata)
    """
    out: dict[str, str] = {}
    if not text:
        return out
    for pair in text.split(","):
        if not pair.strip():
            continue
        name, sep, path = pair.partition("=")
        name, path = ALIASES.get(name.strip(), name.strip()), path.strip()
        if not sep or not path:
            raise MapError(f"--map: {pair.strip()!r} is not field=path")
        if name not in FIELDS:
            raise MapError(f"--map: unknown record field {name!r} (one of {', '.join(FIELDS)})")
        out[name] = path
    return out


def get_path(obj: Any, path: str) -> Any:
    """The value at a dotted ``path`` (``_MISSING`` sentinel hidden: ``None`` when absent).

    >>> get_path({"a": {"b.c": [1, {"d": 2}]}}, "a.b.c.-1.d")
    2
    """
    v = _walk(obj, path.split("."))
    return None if v is _MISSING else v


def _walk(obj: Any, parts: list[str]) -> Any:
    if not parts:
        return obj
    if isinstance(obj, Mapping):
        for i in range(len(parts), 0, -1):
            key = ".".join(parts[:i])
            if key in obj:
                v = _walk(obj[key], parts[i:])
                if v is not _MISSING:
                    return v
        return _MISSING
    if isinstance(obj, list):
        try:
            return _walk(obj[int(parts[0])], parts[1:])
        except (ValueError, IndexError):
            return _MISSING
    return _MISSING


def map_record(obj: Any, fmap: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The record a log object maps to, and the mapped paths it lacks."""
    if not isinstance(obj, Mapping):
        return {}, list(fmap.values())
    record = {k: obj[k] for k in FIELDS if k in obj and k not in fmap}
    missing = []
    for name, path in fmap.items():
        v = _walk(obj, path.split("."))
        if v is _MISSING:
            missing.append(path)
        else:
            record[name] = v
    return record, missing

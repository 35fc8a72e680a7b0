"""Which stored evaluations a query, a figure or a comparison looks at.

A selection is written on the command line as ``key=value`` pairs separated by commas:

>>> s = Selection.parse("agent=sql-bot,agent_version=1.3,metadata.team=ops")
>>> (s.agent, s.agent_version, s.metadata)
('sql-bot', '1.3', {'team': 'ops'})
>>> s.describe()
'agent=sql-bot,agent_version=1.3,metadata.team=ops'
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from stef.errors import StefError
from stef.monitor.stats import iso, parse_time

#: Keys a selection may use, besides ``metadata.KEY``.
SELECTION_KEYS = ("agent", "agent_version", "app", "status", "since", "until", "finding")


class SelectionError(StefError):
    """A selection names an unknown key or has a malformed value."""

    status = "invalid_selection"


@dataclass(frozen=True)
class Selection:
    """Equality on agent/agent_version/app/status/metadata keys, a time range, a finding kind.

    ``since`` is inclusive and ``until`` exclusive, both epoch seconds on the record's
    time (``timestamp``, else ``evaluated_at``). ``finding`` keeps evaluations having a
    finding of that kind.
    """

    agent: str | None = None
    agent_version: str | None = None
    app: str | None = None
    status: str | None = None
    since: float | None = None
    until: float | None = None
    finding: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None, now: float = 0.0) -> Selection:
        """Parse ``agent=x,agent_version=1.3``; ``since``/``until`` take ISO times or ``7d``."""
        pairs: dict[str, Any] = {}
        for part in (text or "").split(","):
            if not part.strip():
                continue
            key, sep, value = part.partition("=")
            if not sep:
                raise SelectionError(message=f"selection part {part.strip()!r} is not key=value")
            pairs[key.strip()] = value.strip()
        return cls.from_kwargs(now=now, **pairs)

    @classmethod
    def from_kwargs(cls, now: float = 0.0, **selection: Any) -> Selection:
        """Build from keyword arguments, as :meth:`Store.query` receives them.

        >>> Selection.from_kwargs(agent="a", **{"metadata.team": "ops"}).metadata
        {'team': 'ops'}
        """
        return cls.from_mapping(selection, now)

    @classmethod
    def from_mapping(cls, selection: Mapping[str, Any], now: float = 0.0) -> Selection:
        """Build from a mapping such as ``{"agent": "a", "since": "7d"}``."""
        values: dict[str, Any] = {}
        metadata: dict[str, str] = {}
        for key, value in selection.items():
            if value is None:
                continue
            if key == "metadata" and isinstance(value, Mapping):
                metadata.update({str(k): str(v) for k, v in value.items()})
            elif key.startswith("metadata.") and len(key) > len("metadata."):
                metadata[key[len("metadata.") :]] = str(value)
            elif key in ("since", "until"):
                values[key] = _time(key, value, now)
            elif key in SELECTION_KEYS:
                values[key] = str(value)
            else:
                allowed = ", ".join((*SELECTION_KEYS, "metadata.KEY"))
                names = [*SELECTION_KEYS, "metadata.KEY"]
                close = difflib.get_close_matches(str(key), names, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise SelectionError(message=f"unknown selection key {key!r}; {hint}use {allowed}")
        return cls(metadata=metadata, **values)

    def narrowed(self, **changes: Any) -> Selection:
        """A copy with some fields changed.

        >>> Selection(agent="a").narrowed(since=10.0).since
        10.0
        """
        return replace(self, **changes)

    def describe(self) -> str:
        """The selection written back as ``key=value`` pairs (``all`` when empty)."""
        parts = [
            f"{k}={getattr(self, k)}"
            for k in ("agent", "agent_version", "app", "status", "finding")
            if getattr(self, k) is not None
        ]
        parts += [f"metadata.{k}={v}" for k, v in sorted(self.metadata.items())]
        if self.since is not None:
            parts.append(f"since={iso(self.since)}")
        if self.until is not None:
            parts.append(f"until={iso(self.until)}")
        return ",".join(parts) or "all"


def _time(key: str, value: Any, now: float) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return parse_time(str(value), now)
    except ValueError as exc:
        raise SelectionError(message=f"{key}: {exc}") from exc

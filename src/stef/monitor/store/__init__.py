"""Where evaluations are kept: a small interface and :func:`open_store`.

``stef eval --store``, ``stef ingest`` and ``stef watch`` write through :class:`Store`;
``stef stats``, ``stef compare`` and ``stef report`` read through it. SQLite is the
default (one file); PostgreSQL will satisfy the same interface.

>>> import tempfile, pathlib
>>> store = open_store(pathlib.Path(tempfile.mkdtemp()) / "stef.db")
>>> store.write([{"id": "a", "status": "sql_unparseable", "score": None}])
1
>>> store.existing_ids(["a", "b"])
{'a'}
>>> store.close()
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from stef.monitor.stats import GroupKey, Tally
from stef.monitor.store.selection import Selection, SelectionError
from stef.monitor.store.sqlite import SQLiteStore, StoreError, check_evaluation, question_key

__all__ = [
    "SQLiteStore",
    "Selection",
    "SelectionError",
    "Store",
    "StoreError",
    "check_evaluation",
    "open_store",
    "question_key",
]


@runtime_checkable
class Store(Protocol):
    """What every store offers. Writes are idempotent by evaluation id."""

    def write(
        self,
        evaluations: Iterable[Mapping[str, Any]],
        *,
        replace: bool = False,
        offsets: Mapping[str, int] | None = None,
    ) -> int:
        """Store evaluations; return how many were new (``replace`` overwrites by id)."""

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` already stored."""

    def query(
        self, *, order_by: str | None = None, limit: int | None = None, **selection: Any
    ) -> Iterator[dict[str, Any]]:
        """Whole evaluations matching the selection keywords."""

    def count(self, selection: Selection | Mapping[str, Any] | None = None) -> int:
        """How many evaluations match."""

    def tallies(
        self,
        selection: Selection | Mapping[str, Any] | None = None,
        by: Sequence[str] = (),
        window: float | None = None,
    ) -> dict[GroupKey, Tally]:
        """Tallies per (group values, window start)."""

    def score_pairs(
        self, selection: Selection | Mapping[str, Any] | None
    ) -> list[tuple[str | None, float]]:
        """(normalised question, score) of each evaluated record."""

    def latest_time(self, selection: Selection | Mapping[str, Any] | None = None) -> float | None:
        """Latest record time (epoch seconds) in the selection."""

    def offsets(self) -> dict[str, int]:
        """Byte offsets ``stef watch`` has read up to, per file."""

    def save_offsets(self, offsets: Mapping[str, int]) -> None:
        """Save offsets alone."""

    def alert_states(self) -> dict[str, dict[str, Any]]:
        """Last known state of each alert rule."""

    def save_alert_state(self, name: str, state: Mapping[str, Any]) -> None:
        """Remember an alert rule's state."""

    def close(self) -> None:
        """Release the store."""


def open_store(target: str | Path, *, create: bool = True) -> Store:
    """Open (creating and migrating) the store at ``target``; ``create=False`` refuses
    one that does not exist yet (reading commands).

    ``stef.db`` or ``./x/stef.db`` (relative paths) and ``sqlite:///var/lib/stef/stef.db``
    (a URL: its path is absolute, as in ``file:///``; ``sqlite:////…`` too) open SQLite;
    ``postgresql://…`` is not implemented yet and says so.

    >>> open_store("postgresql://localhost/stef")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    stef.monitor.store.sqlite.StoreError: PostgreSQL stores are not implemented yet; ...
    """
    text = str(target)
    if text.startswith(("postgresql://", "postgres://")):
        raise StoreError(
            message="PostgreSQL stores are not implemented yet; use a SQLite file such as stef.db"
        )
    if text.startswith("sqlite:///"):
        text = "/" + text[len("sqlite:///") :].lstrip("/")
    elif "://" in text:
        raise StoreError(message=f"unknown store {text!r}; use a file path or sqlite:///path")
    if not text:
        raise StoreError(message="store path is empty")
    return SQLiteStore(text, create=create)

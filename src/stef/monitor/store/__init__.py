"""Where evaluations are kept: a small interface and :func:`open_store`.

``stef eval --store``, ``stef ingest`` and ``stef watch`` write through :class:`Store`;
``stef stats``, ``stef compare`` and ``stef report`` read through it. SQLite is the
default (one file); PostgreSQL (``postgresql://…``) is the shared store for a team, behind
the same interface.

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
from stef.monitor.store.common import StoreError, check_evaluation, question_key
from stef.monitor.store.selection import Selection, SelectionError
from stef.monitor.store.sqlite import SQLiteStore

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

    def get(self, evaluation_id: str) -> dict[str, Any] | None:
        """The evaluation stored under ``evaluation_id``, or ``None``."""

    def page(
        self,
        selection: Selection | Mapping[str, Any] | None = None,
        *,
        order_by: str | None = None,
        limit: int = 50,
        after: Sequence[Any] | None = None,
    ) -> tuple[list[dict[str, Any]], list[Any] | None]:
        """One page of whole evaluations and the keyset position of the next (or ``None``)."""

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

    def prune(self, before: float) -> int:
        """Delete evaluations recorded before ``before`` (epoch seconds); return how many."""

    def migrate(self) -> list[str]:
        """Apply the schema migrations not yet applied; return their names."""

    def pending_migrations(self) -> list[str]:
        """Names of the schema migrations not yet applied."""

    def close(self) -> None:
        """Release the store."""


def open_store(target: str | Path, *, migrate: bool = True, create: bool = True) -> Store:
    """Open the store at ``target``, creating it and applying its migrations unless
    ``migrate=False`` (then :meth:`Store.pending_migrations` says what is missing);
    ``create=False`` refuses a SQLite file that does not exist (reading commands).

    ``stef.db`` or ``./x/stef.db`` (paths) and ``sqlite:///var/lib/stef/stef.db`` (a URL:
    its path is absolute, as in ``file:///``) open SQLite;
    ``postgresql://user@host:5432/db`` (or ``postgres://``) opens PostgreSQL.

    >>> open_store("mysql://h/db")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    stef.monitor.store.common.StoreError: unknown store 'mysql://h/db'; use a file path, ...
    """
    text = str(target)
    if text.startswith(("postgresql://", "postgres://")):
        from stef.monitor.store.postgres import PostgresStore

        return PostgresStore(text, migrate=migrate)
    if text.startswith("sqlite:///"):
        text = "/" + text[len("sqlite:///") :].lstrip("/")
    elif "://" in text:
        raise StoreError(
            message=f"unknown store {text!r}; use a file path, sqlite:///path or postgresql://…"
        )
    if not text:
        raise StoreError(message="store path is empty")
    return SQLiteStore(text, migrate=migrate, create=create)

"""The SQLite store: one file, WAL, one writer at a time, batched idempotent writes.

Each evaluation becomes a row of light columns in ``evaluations`` (what figures and
selections need), its whole JSON in ``evaluation_docs``, its finding kinds in
``findings`` and a contribution to the hourly tally in ``rollups``, all in one
transaction. Figures for whole-hour windows grouped by agent/version/app are summed
from rollups; anything else (metadata groups, status or finding selections, odd
windows) is grouped in SQL over the light columns. The reads are shared with the
PostgreSQL store (:mod:`stef.monitor.store.common`).

>>> import tempfile, pathlib
>>> store = SQLiteStore(pathlib.Path(tempfile.mkdtemp()) / "stef.db")
>>> store.write([{"id": "e1", "status": "ok", "score": 80.0, "agent": "bot"}])
1
>>> store.write([{"id": "e1", "status": "ok", "score": 80.0, "agent": "bot"}])
0
>>> [e["id"] for e in store.query(agent="bot")]
['e1']
>>> store.close()
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

import stef.monitor.store.migrations as migrations
from stef.monitor.stats import Tally, finding_kinds, paused_gc
from stef.monitor.store.cells import Cell, CellIndex, cell_of
from stef.monitor.store.codec import compress_many, decode_doc, json_bytes
from stef.monitor.store.common import (
    COLUMNS,
    SQLITE,
    SQLReader,
    StoreError,
    build_row,
    check_evaluation,
    checked,
    question_key,
    record_time,
)
from stef.monitor.store.migrations import rollup_id, rollup_key
from stef.monitor.store.rollups import ROLLUP_TABLES, RollupDeltas, Rollups

__all__ = ["SQLiteStore", "StoreError", "check_evaluation", "question_key", "record_time"]

_INSERT = (
    f"INSERT OR REPLACE INTO evaluations (seq, {', '.join(COLUMNS)}, cell) "
    f"VALUES ({', '.join('?' * (len(COLUMNS) + 2))})"
)


def _set_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL. SQLite answers a journal-mode change with "database is locked" at
    once, without its busy handler, while another connection opens or migrates the same
    new file, so retry until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


#: Stores up to this size are checked (``PRAGMA quick_check``) every time they are opened.
CHECK_BYTES = 64 * 1024 * 1024


def _damaged(path: Path, detail: str) -> StoreError:
    return StoreError(
        message=f"store {path} is damaged ({detail}); restore it from a backup, or salvage "
        f"what is left with: sqlite3 {path} .recover | sqlite3 recovered.db"
    )


class SQLiteStore(SQLReader):
    """Evaluations in one SQLite file (created and migrated on open unless ``migrate=False``).

    ``create=False`` refuses a file that does not exist (reading commands: a typo must
    not make an empty store). ``check`` runs ``PRAGMA quick_check`` on open (default: when
    the file is at most :data:`CHECK_BYTES`); any ``DatabaseError`` later runs it too, and
    a damaged file is reported as such.
    """

    dialect = SQLITE

    def __init__(
        self,
        path: str | Path,
        *,
        timeout: float = 60.0,
        chunk: int = 5000,
        migrate: bool = True,
        create: bool = True,
        check: bool | None = None,
    ) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(
                message=f"store {self.path} does not exist (check the path, --store or "
                "STEF_STORE; `stef eval --store`, `ingest` and `watch` create one)"
            )
        #: where the store is, for messages
        self.location = str(self.path)
        self.chunk = chunk
        self._cell_index = CellIndex()
        #: names of the migrations this open applied
        self.migrated: list[str] = []
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
            _set_wal(self.conn, timeout)
            self.conn.execute("PRAGMA synchronous = NORMAL")
            # Checkpoint every ~40 MB of WAL rather than every 4 MB: batched writes
            # rewrite the same index pages, which are then copied back once, not ten times.
            self.conn.execute("PRAGMA wal_autocheckpoint = 10000")
            self.conn.execute("PRAGMA cache_size = -65536")
            self.conn.execute("PRAGMA temp_store = MEMORY")
            self.conn.execute("PRAGMA foreign_keys = OFF")
            if migrate:
                self.migrate()
        except sqlite3.DatabaseError as exc:
            if "malformed" in str(exc) or "not a database" in str(exc):
                raise _damaged(self.path, str(exc)) from None
            raise StoreError(message=f"cannot open store {self.path}: {exc}") from exc
        if check or (check is None and self._size() <= CHECK_BYTES):
            self.check_integrity()

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def check_integrity(self) -> None:
        """``PRAGMA quick_check``; a damaged file raises :class:`StoreError` saying so."""
        try:
            rows = [r[0] for r in self.conn.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            raise _damaged(self.path, str(exc)) from None
        if rows != ["ok"]:
            raise _damaged(self.path, "; ".join(str(r) for r in rows)[:300])

    def check_writable(self) -> None:
        """Fail now, before any record, when the file cannot be written (read-only)."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:  # a real write, rolled back: a read-only file refuses it here
                self.conn.execute(
                    "INSERT OR REPLACE INTO alert_state (name, state, updated_at) "
                    "VALUES ('stef-write-check', '{}', 0)"
                )
            finally:
                self.conn.execute("ROLLBACK")
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc) or "read-only" in str(exc):
                raise StoreError(
                    message=f"store {self.path} is read-only ({exc}); give write access to "
                    "the file and its directory, or choose another --store"
                ) from None
            raise StoreError(message=f"cannot write to store {self.path}: {exc}") from None

    def _failure(self, exc: sqlite3.Error) -> StoreError:
        """A ``StoreError`` for a failed call: damaged, read-only, or the message itself."""
        text = str(exc)
        if "readonly" in text:
            return StoreError(message=f"store {self.path} is read-only ({text})")
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            try:
                self.check_integrity()
            except StoreError as damaged:
                return damaged
            return _damaged(self.path, text)
        return StoreError(message=f"store {self.path}: {text}")

    def status_scores(self, ids: Sequence[str]) -> dict[str, tuple[str, float | None]]:
        """``id → (status, score)`` of those of ``ids`` stored (the summary of a rerun)."""
        out: dict[str, tuple[str, float | None]] = {}
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            marks = ", ".join("?" * len(part))
            sql = f"SELECT id, status, score FROM evaluations WHERE id IN ({marks})"
            for rid, status, score in self.conn.execute(sql, part):
                out[rid] = (status, score)
        return out

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    # -- schema ----------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the migrations not yet applied; return their names."""
        ran = migrations.migrate(self.conn)
        self.migrated += ran
        return ran

    def pending_migrations(self) -> list[str]:
        """Names of the migrations not yet applied, in the order they would run."""
        exists = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchone()
        done = set(migrations.applied(self.conn)) if exists else set()
        return [name for name, _ in migrations.MIGRATIONS if name not in done]

    # -- writing ---------------------------------------------------------------------

    def write(
        self,
        evaluations: Iterable[Mapping[str, Any]],
        *,
        replace: bool = False,
        offsets: Mapping[str, int] | None = None,
    ) -> int:
        """Store evaluations; return how many were new.

        An id already stored is skipped, or overwritten when ``replace``; an id repeated
        within ``evaluations`` counts once (the last one wins when ``replace``).
        ``offsets`` (file path → byte offset, for ``stef watch``) is saved in the same
        transaction as the last chunk, so a crash never separates the two. Raises
        :class:`StoreError` on an evaluation :func:`check_evaluation` rejects; the
        chunks before it stay stored.
        """
        it = iter(evaluations)
        new = 0
        while True:
            batch = list(islice(it, self.chunk))
            last = len(batch) < self.chunk
            if batch or offsets:
                new += self._write_chunk(batch, replace, offsets if last else None)
            if last:
                return new

    @paused_gc()  # thousands of rows, documents and tallies, no cycles
    def _write_chunk(
        self,
        batch: Sequence[Mapping[str, Any]],
        replace: bool,
        offsets: Mapping[str, int] | None,
    ) -> int:
        unique = checked(batch, replace)
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        cells = self._cell_index
        try:
            cells.load(conn)
            existing = self._seqs(list(unique))
            rollups: RollupDeltas = {}
            if replace and existing:
                self._forget(list(existing.values()), rollups)
            delta = Rollups()
            next_seq = (conn.execute("SELECT max(seq) FROM evaluations").fetchone()[0] or 0) + 1
            rows: list[tuple[Any, ...]] = []
            seqs: list[int] = []
            datas: list[bytes] = []
            kinds: list[tuple[int, str, str]] = []
            new = 0
            for ev_id, (ev, t) in unique.items():
                seq = existing.get(ev_id)
                if seq is None:
                    seq, next_seq, new = next_seq, next_seq + 1, new + 1
                elif not replace:
                    continue
                ev_kinds = finding_kinds(ev)
                row = build_row(ev, t, kinds=ev_kinds)
                rows.append((seq, *row, cells.intern(cell_of(row))))
                seqs.append(seq)
                datas.append(json_bytes(ev))
                if ev_kinds:
                    kinds.extend((seq, k, s) for k, s in ev_kinds.items())
                delta.add(row, ev_kinds)
            delta.tallies(rollups)
            conn.executemany(_INSERT, rows)
            conn.executemany(
                "INSERT OR REPLACE INTO evaluation_docs (seq, doc) VALUES (?, ?)",
                zip(seqs, compress_many(datas), strict=True),
            )
            conn.executemany("INSERT INTO findings (seq, kind, severity) VALUES (?, ?, ?)", kinds)
            cells.flush(conn)
            self._add_rollups(rollups)
            if offsets:
                now = time.time()
                conn.executemany(
                    "INSERT OR REPLACE INTO watch_files (path, offset, updated_at) "
                    "VALUES (?, ?, ?)",
                    [(str(p), int(o), now) for p, o in offsets.items()],
                )
            conn.execute("COMMIT")
        except BaseException:
            cells.forget()  # ids it handed out may not have been stored
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        return new

    def _cells(self) -> Mapping[int, Cell]:
        """Every stored cell by id (those other connections added since, read now)."""
        self._cell_index.load(self.conn)
        return self._cell_index.rows

    def _seqs(self, ids: Sequence[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ", ".join("?" * len(part))
            found.update(
                self.conn.execute(f"SELECT id, seq FROM evaluations WHERE id IN ({marks})", part)
            )
        return found

    def _forget(self, seqs: Sequence[int], rollups: RollupDeltas) -> None:
        """Take replaced evaluations out of rollups and findings (inside a transaction)."""
        for i in range(0, len(seqs), 500):
            part = list(seqs[i : i + 500])
            marks = ", ".join("?" * len(part))
            sql = f"SELECT doc FROM evaluation_docs WHERE seq IN ({marks})"
            for (doc,) in self.conn.execute(sql, part):
                old = decode_doc(doc)
                t = record_time(old)
                for table in ROLLUP_TABLES:
                    tallies = rollups.setdefault(table.name, {})
                    key = rollup_key(old, t, table.width)
                    if key not in tallies:
                        tallies[key] = Tally()
                    tallies[key].add(old, sign=-1)
            self.conn.execute(f"DELETE FROM findings WHERE seq IN ({marks})", part)

    def _add_rollups(self, rollups: RollupDeltas) -> None:
        """Merge ``rollups`` (per table) into the stored ones; a bucket left with no
        records goes."""
        for table in ROLLUP_TABLES:
            tallies = rollups.get(table.name)
            if not tallies:
                continue
            by_id = {rollup_id(k): (k, t) for k, t in tallies.items()}
            ids = list(by_id)
            stored: dict[str, str] = {}
            for i in range(0, len(ids), 500):
                part = ids[i : i + 500]
                marks = ", ".join("?" * len(part))
                sql = f"SELECT key, tally FROM {table.name} WHERE key IN ({marks})"
                stored.update(self.conn.execute(sql, part))
            changed: list[tuple[Any, ...]] = []
            empty: list[tuple[str]] = []
            for rid, (key, tally) in by_id.items():
                text = stored.get(rid)
                if text is not None:
                    tally = Tally.from_dict(orjson.loads(text)).merge(tally)
                if tally.records == 0:
                    empty.append((rid,))
                else:
                    changed.append((rid, *key, orjson.dumps(tally.to_dict()).decode()))
            self.conn.executemany(f"DELETE FROM {table.name} WHERE key = ?", empty)
            self.conn.executemany(
                f"INSERT OR REPLACE INTO {table.name} "
                f"(key, agent, agent_version, app, {table.start}, tally) VALUES (?, ?, ?, ?, ?, ?)",
                changed,
            )

    def prune(self, before: float) -> int:
        """Delete the evaluations recorded before ``before`` (epoch seconds), their findings
        and their share of the rollups, in one transaction; return how many went."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            starts, deltas = self._prune_boundary(before)
            self._add_rollups(deltas)
            for table in ROLLUP_TABLES:
                conn.execute(
                    f"DELETE FROM {table.name} WHERE {table.start} < ?", (starts[table.name],)
                )
            old = "SELECT seq FROM evaluations WHERE t < ?"
            conn.execute(f"DELETE FROM findings WHERE seq IN ({old})", (before,))
            conn.execute(f"DELETE FROM evaluation_docs WHERE seq IN ({old})", (before,))
            gone = conn.execute("DELETE FROM evaluations WHERE t < ?", (before,)).rowcount
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        return int(gone)

    # -- reading ---------------------------------------------------------------------

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def _stream(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        yield from self.conn.execute(sql, params)

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` already stored."""
        return set(self._seqs(list(dict.fromkeys(ids))))

    # -- watch and alert state -------------------------------------------------------

    def offsets(self) -> dict[str, int]:
        """Byte offset ``stef watch`` has read up to, per file path."""
        return {p: int(o) for p, o in self.conn.execute("SELECT path, offset FROM watch_files")}

    def save_offsets(self, offsets: Mapping[str, int]) -> None:
        """Save offsets without writing evaluations (a file of blank lines, a reset)."""
        self.write([], offsets=offsets)

    def alert_states(self) -> dict[str, dict[str, Any]]:
        """The last known state of each alert rule, by name."""
        rows = self.conn.execute("SELECT name, state FROM alert_state")
        return {name: orjson.loads(state) for name, state in rows}

    def save_alert_state(self, name: str, state: Mapping[str, Any]) -> None:
        """Remember an alert rule's state (``{"breached": bool, ...}``)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO alert_state (name, state, updated_at) VALUES (?, ?, ?)",
            (name, orjson.dumps(dict(state)).decode(), time.time()),
        )

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        self.conn.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _guarded(method: Any) -> Any:
    """``sqlite3`` errors of a store call become a :class:`StoreError` that says what is
    wrong (a damaged file is checked and named as such)."""
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def gen(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise self._failure(exc) from None

        return gen

    @functools.wraps(method)
    def call(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise self._failure(exc) from None

    return call


for _name in (
    "write",
    "existing_ids",
    "get",
    "status_scores",
    "count",
    "query",
    "score_pairs",
    "latest_time",
    "tallies",
    "offsets",
    "alert_states",
    "save_alert_state",
):
    setattr(SQLiteStore, _name, _guarded(getattr(SQLiteStore, _name)))

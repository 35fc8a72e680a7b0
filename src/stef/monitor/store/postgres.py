"""The PostgreSQL store: a shared store for a team, many writers and readers at once.

The same tables and figures as the SQLite store (:mod:`stef.monitor.store.sqlite`;
migrations in :mod:`stef.monitor.store.pg_migrations`), through psycopg 3 and a
connection pool. A batch is written in one transaction per chunk: its rows go by
``COPY`` into temporary tables, then ``INSERT … ON CONFLICT (id) DO NOTHING`` moves the
new ones into ``evaluations``, ``evaluation_docs`` and ``findings`` in one statement, so
an id written by two processes at once is stored once and counted once. Rollup rows are
then locked in key order and updated; a deadlock between two writers (the same ids in
different orders) is retried.

PostgreSQL text cannot hold the NUL character: in the light columns and finding kinds
it becomes U+FFFD; the stored evaluation document keeps it (escaped as ``\\u0000``).
Open one with ``open_store("postgresql://user@host:5432/db")``; tests/test_store*.py run
every store test against a real server.
"""

from __future__ import annotations

import itertools
import json
import operator
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from itertools import islice
from typing import Any

import orjson
import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Dumper
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import Format
from psycopg_pool import ConnectionPool

import stef.monitor.store.pg_migrations as pg_migrations
from stef.monitor.stats import GroupKey, Tally, finding_kinds, paused_gc
from stef.monitor.store.cell_counts import cell_tallies
from stef.monitor.store.cells import Cell, gathered_cells
from stef.monitor.store.codec import compress_many, decode_doc, json_bytes
from stef.monitor.store.common import (
    COLUMNS,
    POSTGRES,
    SQLReader,
    StoreError,
    build_row,
    checked,
    record_time,
    where,
)
from stef.monitor.store.migrations import rollup_id
from stef.monitor.store.pg_cells import PgCells
from stef.monitor.store.rollups import ROLLUP_TABLES, RollupDeltas, RollupKey, Rollups, RollupTable
from stef.monitor.store.selection import Selection

_LIGHT = ", ".join(COLUMNS)
#: Rows a range of whole windows holds, about, in figures over many windows
#: (:meth:`PostgresStore._slices`).
WINDOW_SLICE_ROWS = 20_000
_STAGE = (
    """
    CREATE TEMP TABLE IF NOT EXISTS stef_incoming (
        ord INTEGER, id TEXT, agent TEXT, agent_version TEXT, app TEXT, timestamp TEXT,
        evaluated_at TEXT, t DOUBLE PRECISION, status TEXT, score DOUBLE PRECISION, band TEXT,
        filter_status TEXT, verdict TEXT, confidence DOUBLE PRECISION, question_key TEXT,
        metadata TEXT, finding_kinds TEXT, doc BYTEA, cell INTEGER
    ) ON COMMIT DELETE ROWS
    """,
    """
    CREATE TEMP TABLE IF NOT EXISTS stef_incoming_findings (
        id TEXT, kind TEXT, severity TEXT
    ) ON COMMIT DELETE ROWS
    """,
)
_SELECT_STAGED = ", ".join(f"i.{c}::jsonb" if c == "metadata" else f"i.{c}" for c in COLUMNS)
_INSERT_NEW = f"""
    WITH new AS (
        INSERT INTO evaluations ({_LIGHT}, cell)
        SELECT {_SELECT_STAGED}, i.cell FROM stef_incoming i ORDER BY i.ord
        ON CONFLICT (id) DO NOTHING
        RETURNING seq, id
    ), docs AS (
        INSERT INTO evaluation_docs (seq, doc)
        SELECT new.seq, i.doc FROM new JOIN stef_incoming i ON i.id = new.id
    ), found AS (
        INSERT INTO findings (seq, kind, severity)
        SELECT new.seq, f.kind, f.severity FROM new JOIN stef_incoming_findings f ON f.id = new.id
    )
    SELECT id FROM new
"""
_UPDATE_OLD = (
    "DELETE FROM findings WHERE seq = ANY(%(seqs)s)",
    "UPDATE evaluations e SET "
    + ", ".join(f"{c} = i.{c}::jsonb" if c == "metadata" else f"{c} = i.{c}" for c in COLUMNS[1:])
    + ", cell = i.cell FROM stef_incoming i WHERE e.id = i.id AND e.seq = ANY(%(seqs)s)",
    "UPDATE evaluation_docs d SET doc = i.doc FROM stef_incoming i, evaluations e "
    "WHERE e.id = i.id AND d.seq = e.seq AND e.seq = ANY(%(seqs)s)",
    "INSERT INTO findings (seq, kind, severity) SELECT e.seq, f.kind, f.severity "
    "FROM stef_incoming_findings f JOIN evaluations e ON e.id = f.id WHERE e.seq = ANY(%(seqs)s)",
)
_RETRIES = 5
#: The light columns a new row is copied with (``timestamp`` and ``evaluated_at`` stay NULL).
_COPIED = tuple(c for c in COLUMNS if c not in ("timestamp", "evaluated_at"))
_COPIED_AT = tuple(COLUMNS.index(c) for c in _COPIED)
_COPY_TYPES = (
    ["bigint"]
    + [
        {"t": "float8", "score": "float8", "confidence": "float8", "metadata": "jsonb"}.get(
            c, "text"
        )
        for c in _COPIED
    ]
    + ["int4"]
)
_COPY_ROWS = f"COPY evaluations (seq, {', '.join(_COPIED)}, cell) FROM STDIN (FORMAT BINARY)"
_COPY_DOCS = "COPY evaluation_docs (seq, doc) FROM STDIN (FORMAT BINARY)"
_COPY_FINDINGS = "COPY findings (seq, kind, severity) FROM STDIN (FORMAT BINARY)"
_pick_copied = operator.itemgetter(*_COPIED_AT)
#: A chunk's rows: (light columns, compressed document, finding kinds) by stored id.
_Entries = dict[str, tuple[tuple[Any, ...], bytes, dict[str, str]]]
_cursor_names = itertools.count()


class _JsonbText(Dumper):
    """Binary COPY of JSON text (already written by :func:`_jsonb_text`) into ``jsonb``:
    the format's version byte, then the text."""

    format = Format.BINARY
    oid = psycopg.adapters.types["jsonb"].oid

    def dump(self, obj: Any) -> bytes:
        return b"\x01" + obj.encode()


def describe(url: str) -> str:
    """The URL without its password, for messages.

    >>> describe("postgresql://stef:secret@db.example:6543/evals")
    'postgresql://stef@db.example:6543/evals'
    """
    try:
        d = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise StoreError(message=f"not a PostgreSQL URL: {_first_line(exc)}") from None
    user = f"{d['user']}@" if d.get("user") else ""
    return f"postgresql://{user}{d.get('host') or 'localhost'}:{d.get('port') or 5432}/" + str(
        d.get("dbname") or ""
    )


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Settings of each pooled connection: grouping a million rows for figures sorts in
    memory (the default 4 MB of ``work_mem`` spills such a sort to disk)."""
    conn.execute("SET work_mem = '64MB'")


def _first_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _no_nul(value: Any) -> Any:
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


def _jsonb_text(obj: Any) -> str:
    """JSON text jsonb accepts: orjson (NaN becomes null), else the standard library with
    big integers and non-finite numbers written as strings; NUL escapes become U+FFFD."""
    try:
        text = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        loose = json.loads(
            json.dumps(obj, default=str),
            parse_constant=lambda c: c,
            parse_int=lambda s: int(s) if len(s) < 19 else s,
        )
        text = orjson.dumps(loose, option=orjson.OPT_NON_STR_KEYS, default=str).decode()
    return text.replace("\\u0000", "\\ufffd") if "\\u0000" in text else text


def _entry(ev: Mapping[str, Any], t: float) -> tuple[tuple[Any, ...], bytes, dict[str, str]]:
    """(light columns, JSON of the document, finding kinds) of one evaluation, as
    PostgreSQL stores them (the JSON to be compressed: :func:`compress_many`)."""
    kinds = finding_kinds(ev)
    data = json_bytes(ev)
    if b"\\u0000" in data:  # a NUL somewhere: the columns cannot hold it
        kinds = {_no_nul(k): v for k, v in kinds.items()}
        row = tuple(_no_nul(v) for v in build_row(ev, t, _jsonb_text, kinds))
    else:
        row = build_row(ev, t, _jsonb_text, kinds)
    return row, data, kinds


class PostgresStore(SQLReader):
    """Evaluations in a PostgreSQL database (migrated on open unless ``migrate=False``).

    ``url`` is a libpq URL (``postgresql://user@host:5432/db``; ``?options=-csearch_path%3Dx``
    picks a schema). The pool holds ``min_size`` to ``max_size`` connections.
    """

    dialect = POSTGRES

    def __init__(
        self,
        url: str,
        *,
        chunk: int = 5000,
        min_size: int = 1,
        max_size: int = 8,
        connect_timeout: float = 10.0,
        migrate: bool = True,
    ) -> None:
        self.url = url
        #: where the store is, for messages (the URL without its password)
        self.location = describe(url)
        self.chunk = chunk
        self._seq_oid: int | None = None
        self._cell_ids = PgCells()
        #: names of the migrations this open applied
        self.migrated: list[str] = []
        self._local = threading.local()
        kwargs: dict[str, Any] = {"autocommit": True, "application_name": "stef"}
        try:
            with psycopg.connect(
                url, autocommit=True, application_name="stef", connect_timeout=int(connect_timeout)
            ) as conn:
                if migrate:
                    self.migrated = pg_migrations.migrate(conn)
        except psycopg.Error as exc:
            raise StoreError(
                message=f"cannot open store {self.location}: {_first_line(exc)}"
            ) from exc
        self.pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={**kwargs, "connect_timeout": int(connect_timeout)},
            open=True,
            name="stef",
            configure=_configure,
        )

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection of the transaction this thread is in, else one from the pool."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self.pool.connection() as conn:
            yield conn

    def _failed(self, exc: psycopg.Error) -> StoreError:
        return StoreError(message=f"store {self.location}: {_first_line(exc)}")

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection in a transaction; reads in this thread use it meanwhile."""
        with self._connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None

    # -- schema ----------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the migrations not yet applied; return their names."""
        try:
            with self._connection() as conn:
                ran = pg_migrations.migrate(conn)
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        self.migrated += ran
        return ran

    def pending_migrations(self) -> list[str]:
        """Names of the migrations not yet applied, in the order they would run."""
        try:
            with self._connection() as conn:
                return pg_migrations.pending(conn)
        except psycopg.Error as exc:
            raise self._failed(exc) from exc

    # -- writing ---------------------------------------------------------------------

    def write(
        self,
        evaluations: Iterable[Mapping[str, Any]],
        *,
        replace: bool = False,
        offsets: Mapping[str, int] | None = None,
    ) -> int:
        """Store evaluations; return how many were new.

        As :meth:`stef.monitor.store.sqlite.SQLiteStore.write`: idempotent by id (or
        overwriting with ``replace``), one transaction per chunk, ``offsets`` saved with
        the last chunk, :class:`StoreError` on an invalid evaluation.
        """
        it = iter(evaluations)
        batch = list(islice(it, self.chunk))
        if len(batch) < self.chunk:  # one chunk: no thread
            if not batch and not offsets:
                return 0
            return self._write_chunk(self._entries(batch, replace)[0], replace, offsets)
        # Several chunks: the next one is checked and built here while a worker thread
        # has the server store the previous one. A chunk that fails stops the write
        # after the chunks before it are stored, as in SQLite. Once a chunk held no id
        # already stored, the next ones are not looked up first: they are copied
        # straight in, and a chunk that meets a stored id after all goes through the
        # insert's ON CONFLICT (and the look-ups resume).
        new = 0
        probe = True
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="stef-pg-write") as worker:
            pending: Future[int] | None = None
            pending_size = 0
            while True:
                last = len(batch) < self.chunk
                entries, known = self._entries(batch, replace, probe)
                conflicted = False
                if pending is not None:
                    stored = pending.result()
                    new += stored
                    conflicted = stored < pending_size
                probe = known > 0 or conflicted
                if batch or (last and offsets):
                    chunk_offsets = offsets if last else None
                    pending = worker.submit(self._write_chunk, entries, replace, chunk_offsets)
                    pending_size = len(entries)
                else:
                    pending = None
                if last:
                    break
                batch = list(islice(it, self.chunk))
            if pending is not None:
                new += pending.result()
        return new

    @paused_gc()  # thousands of rows and documents, no cycles
    def _entries(
        self, batch: Sequence[Mapping[str, Any]], replace: bool, probe: bool = True
    ) -> tuple[_Entries, int]:
        """The chunk's rows by (stored) id, checked, and how many of its ids were found
        stored already: those are left out unless ``replace`` (one another writer stores
        meanwhile is still skipped, by the insert's ON CONFLICT). ``probe=False`` does not
        look them up (the write then finds them)."""
        entries: _Entries = {}
        unique = checked(batch, replace)
        known = set() if replace or not unique or not probe else self.existing_ids(unique)
        for ev_id, (ev, t) in unique.items():
            if ev_id in known:
                continue
            entry = _entry(ev, t)
            if replace or entry[0][0] not in entries:
                entries[entry[0][0]] = entry
        docs = compress_many([data for _, data, _ in entries.values()])
        for (ev_id, (row, _, kinds)), doc in zip(list(entries.items()), docs, strict=True):
            entries[ev_id] = (row, doc, kinds)
        return entries, len(known)

    @paused_gc()
    def _write_chunk(
        self, entries: _Entries, replace: bool, offsets: Mapping[str, int] | None
    ) -> int:
        """Store one chunk in one transaction (again after a deadlock)."""
        for attempt in range(_RETRIES):
            try:
                with self._transaction() as conn:
                    return self._write_in(conn, entries, replace, offsets)
            except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure):
                if attempt == _RETRIES - 1:
                    raise
                time.sleep(0.02 * (attempt + 1))
            except psycopg.Error as exc:
                raise self._failed(exc) from exc
        raise AssertionError("unreachable")

    def _write_in(
        self,
        conn: psycopg.Connection[Any],
        entries: _Entries,
        replace: bool,
        offsets: Mapping[str, int] | None,
    ) -> int:
        new_ids: set[str] = set()
        rollups: RollupDeltas = {}
        if entries:
            old: dict[str, int] = {}
            cells = self._cell_ids.ids_for(conn, [row for row, _, _ in entries.values()])
            if not replace and self._copy_new(conn, entries, cells):
                new_ids = set(entries)
            else:
                conn.execute("SET LOCAL work_mem = '64MB'")  # the chunk's joins sort in memory
                self._stage(conn, entries, cells)
                ids = list(entries)
                old = self._lock_existing(conn, ids) if replace else {}
                new_ids = {r[0] for r in conn.execute(_INSERT_NEW)}
            if replace:
                late = [i for i in entries if i not in new_ids and i not in old]
                if late:  # stored meanwhile by another writer, which has committed now
                    old.update(self._lock_existing(conn, late))
                rollups = self._replace_old(conn, old)
            delta = Rollups()
            for ev_id, (row, _, kinds) in entries.items():
                if ev_id in new_ids or ev_id in old:
                    delta.add(row, kinds)
            delta.tallies(rollups)
            self._add_rollups(conn, rollups)
        if offsets:
            now = time.time()
            with conn.cursor() as cur:
                cur.executemany(
                    'INSERT INTO watch_files (path, "offset", updated_at) VALUES (%s, %s, %s) '
                    'ON CONFLICT (path) DO UPDATE SET "offset" = EXCLUDED."offset", '
                    "updated_at = EXCLUDED.updated_at",
                    [(str(p), int(o), now) for p, o in offsets.items()],
                )
        return len(new_ids)

    def _copy_new(
        self, conn: psycopg.Connection[Any], entries: _Entries, cells: Sequence[int]
    ) -> bool:
        """COPY a chunk of ids not stored yet straight into ``evaluations``,
        ``evaluation_docs`` and ``findings`` (binary format, ``seq`` drawn from the
        table's sequence beforehand; ``cells`` the rows' cell ids); ``False``, with
        nothing written, when one of the ids is stored already (the chunk then goes
        through the staged ``INSERT … ON CONFLICT``)."""
        if self._seq_oid is None:  # the sequence by OID: no name look-up per value drawn
            row = conn.execute(
                "SELECT pg_get_serial_sequence('evaluations', 'seq')::regclass::oid"
            ).fetchone()
            assert row is not None
            self._seq_oid = int(row[0])
        seqs = [
            r[0]
            for r in conn.execute(
                "SELECT nextval(%s::oid) FROM generate_series(1, %s) ORDER BY 1",
                (self._seq_oid, len(entries)),
            )
        ]
        pick = _pick_copied
        try:
            with conn.transaction(), conn.cursor() as cur:
                cur.adapters.register_dumper(None, _JsonbText)
                with cur.copy(_COPY_ROWS) as copy:
                    copy.set_types(_COPY_TYPES)
                    for seq, (row, _, _), cell in zip(seqs, entries.values(), cells, strict=True):
                        copy.write_row((seq, *pick(row), cell))
                with cur.copy(_COPY_DOCS) as copy:
                    copy.set_types(["bigint", "bytea"])
                    for seq, (_, doc, _) in zip(seqs, entries.values(), strict=True):
                        copy.write_row((seq, doc))
                with cur.copy(_COPY_FINDINGS) as copy:
                    copy.set_types(["bigint", "text", "text"])
                    for seq, (_, _, kinds) in zip(seqs, entries.values(), strict=True):
                        for kind, severity in kinds.items():
                            copy.write_row((seq, kind, severity))
        except pg_errors.UniqueViolation:
            return False
        return True

    @staticmethod
    def _stage(conn: psycopg.Connection[Any], entries: _Entries, cells: Sequence[int]) -> None:
        """COPY the chunk (its rows' cell ids ``cells``) into this session's temporary
        tables."""
        for statement in _STAGE:
            conn.execute(statement)
        with conn.cursor() as cur:
            with cur.copy(f"COPY stef_incoming (ord, {_LIGHT}, doc, cell) FROM STDIN") as copy:
                staged = zip(entries.values(), cells, strict=True)
                for i, ((row, doc, _), cell) in enumerate(staged):
                    copy.write_row((i, *row, doc, cell))
            with cur.copy("COPY stef_incoming_findings (id, kind, severity) FROM STDIN") as copy:
                for ev_id, (_, _, kinds) in entries.items():
                    for kind, severity in kinds.items():
                        copy.write_row((ev_id, kind, severity))

    @staticmethod
    def _lock_existing(conn: psycopg.Connection[Any], ids: Sequence[str]) -> dict[str, int]:
        """Seq of each of ``ids`` stored, its row locked until the transaction ends."""
        rows = conn.execute(
            "SELECT id, seq FROM evaluations WHERE id = ANY(%s) ORDER BY seq FOR UPDATE",
            (list(ids),),
        )
        return {ev_id: seq for ev_id, seq in rows}

    @staticmethod
    def _replace_old(conn: psycopg.Connection[Any], old: Mapping[str, int]) -> RollupDeltas:
        """Overwrite the stored rows of ``old`` from the staged ones; return what the old
        versions take away from the rollups."""
        if not old:
            return {}
        seqs = list(old.values())
        delta = Rollups()
        docs = conn.execute("SELECT doc FROM evaluation_docs WHERE seq = ANY(%s)", (seqs,))
        for (doc,) in docs.fetchall():
            ev = decode_doc(doc)
            row, _, kinds = _entry(ev, record_time(ev))
            delta.add(row, kinds, sign=-1)
        for statement in _UPDATE_OLD:
            conn.execute(statement, {"seqs": seqs})
        return delta.tallies()

    @staticmethod
    def _add_rollups(conn: psycopg.Connection[Any], rollups: RollupDeltas) -> None:
        """Merge ``rollups`` (per table) into the stored ones, locking their rows in key
        order, table after table."""
        for table in ROLLUP_TABLES:
            if rollups.get(table.name):
                PostgresStore._add_to(conn, table, rollups[table.name])

    @staticmethod
    def _add_to(
        conn: psycopg.Connection[Any], table: RollupTable, rollups: Mapping[RollupKey, Tally]
    ) -> None:
        name = table.name
        by_id = {rollup_id(k): (k, t) for k, t in rollups.items()}
        keys = sorted(by_id)
        columns = list(zip(*(by_id[k][0] for k in keys), strict=True))
        conn.execute(
            f"INSERT INTO {name} (key, agent, agent_version, app, {table.start}, tally) "
            "SELECT k, a, v, p, h, '{}' FROM unnest(%b::text[], %b::text[], %b::text[], "
            "%b::text[], %b::bigint[]) AS u(k, a, v, p, h) ORDER BY k "
            "ON CONFLICT (key) DO NOTHING",
            (keys, *(list(c) for c in columns)),
        )
        stored = conn.execute(
            f"SELECT key, tally FROM {name} WHERE key = ANY(%b) ORDER BY key FOR UPDATE", (keys,)
        ).fetchall()
        changed: list[tuple[str, str]] = []
        empty: list[str] = []
        for key, text in stored:
            tally = by_id[key][1]
            if text != "{}":  # a bucket stored before (else one just made, empty)
                tally = Tally.from_dict(orjson.loads(text)).merge(tally)
            if tally.records == 0:
                empty.append(key)
            else:
                changed.append((key, orjson.dumps(tally.to_dict()).decode()))
        if changed:
            conn.execute(
                f"UPDATE {name} r SET tally = u.tally FROM unnest(%b::text[], %b::text[]) "
                "AS u(key, tally) WHERE r.key = u.key",
                ([k for k, _ in changed], [t for _, t in changed]),
            )
        if empty:
            conn.execute(f"DELETE FROM {name} WHERE key = ANY(%s)", (empty,))

    def prune(self, before: float) -> int:
        """Delete the evaluations recorded before ``before`` (epoch seconds), their findings
        and their share of the rollups, in one transaction; return how many went.

        Writers wait meanwhile (the table is locked against writes); readers do not.
        """
        try:
            with self._transaction() as conn:
                conn.execute("LOCK TABLE evaluations IN SHARE ROW EXCLUSIVE MODE")
                starts, deltas = self._prune_boundary(before)
                self._add_rollups(conn, deltas)
                for table in ROLLUP_TABLES:
                    conn.execute(
                        f"DELETE FROM {table.name} WHERE {table.start} < %s",
                        (starts[table.name],),
                    )
                old = "SELECT seq FROM evaluations WHERE t < %s"
                conn.execute(f"DELETE FROM findings WHERE seq IN ({old})", (before,))
                conn.execute(f"DELETE FROM evaluation_docs WHERE seq IN ({old})", (before,))
                gone = conn.execute("DELETE FROM evaluations WHERE t < %s", (before,)).rowcount
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        return int(gone)

    # -- reading ---------------------------------------------------------------------

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        try:
            with self._connection() as conn:
                return conn.execute(sql, params).fetchall()
        except psycopg.Error as exc:
            raise self._failed(exc) from exc

    def _fetch_grouped(
        self, sql: str, params: Sequence[Any], ordered: bool = False, ranged: bool = False
    ) -> list[tuple[Any, ...]]:
        """A many-column GROUP BY, hashed: the planner guesses one group per row for it,
        and would sort a million rows on disk and JIT-compile the plan instead. Fetched
        in binary (arrays of cell ids come as lists of ints without text to parse).
        ``ordered``: no parallel plan, so each group's sums add its rows in the table's
        order, run after run; ``ranged`` (a range of :meth:`_slices`): no index scan
        either (a bitmap scan of the index on ``t`` reads the range in the table's order,
        as the whole table's scan does, where an index scan would read it by time)."""
        try:
            with self._connection() as conn, conn.transaction():
                conn.execute("SET LOCAL enable_sort = off")
                conn.execute("SET LOCAL jit = off")
                if ordered:
                    conn.execute("SET LOCAL max_parallel_workers_per_gather = 0")
                if ranged:
                    conn.execute("SET LOCAL enable_indexscan = off")
                return conn.cursor(binary=True).execute(sql, params).fetchall()
        except psycopg.Error as exc:
            raise self._failed(exc) from exc

    def _slices(self, sel: Selection, window: float | None) -> list[tuple[float, float]]:
        """Ranges of whole windows, ~20,000 rows each, for figures over many windows of a
        selection the old single scan read in the table's order (no time bounds, agent or
        finding, which an index or a join could read in another order); else one range.
        Each window's groups come whole from one range, their rows in the table's order
        (:meth:`_fetch_grouped`), so their sums are those of the single scan, bit for bit;
        and a range's hash aggregate holds a few hundred groups, in memory, where the
        single scan's, sized by the planner for a group per row, spills to disk.

        >>> PostgresStore.__new__(PostgresStore)._slices(Selection(agent="a"), 600.0)
        [(-inf, inf)]
        """
        ranges = self._window_ranges(sel, window)
        return ranges or super()._slices(sel, window)  # one range, or of slice_rows (tests)

    def _window_ranges(
        self, sel: Selection, window: float | None
    ) -> list[tuple[float, float]] | None:
        """The ranges of whole windows of :meth:`_slices`, or ``None`` where it reads the
        selection otherwise."""
        table_order = sel.since is None and sel.until is None and sel.agent is None
        unsliced = self.dialect.slice_rows is None and sel.finding is None
        if unsliced and window is not None and table_order:
            return self._ranges(sel, window, WINDOW_SLICE_ROWS, split=False)
        return None

    def _tallies_from_cells(
        self,
        sel: Selection,
        window: float | None,
        lead: str,
        keys: Sequence[str],
        nby: int,
        conf: str,
    ) -> dict[GroupKey, Tally] | None:
        """Figures over many windows read in ranges of whole windows (:meth:`_slices`),
        each range's groups counted (:func:`~stef.monitor.store.cell_counts.cell_tallies`)
        while a worker thread has the server group the next ranges: every group comes
        whole from one range, so its tally is the one counted over all ranges at once.
        Elsewhere (one range, or inside this thread's transaction) as
        :meth:`SQLReader._tallies_from_cells`."""
        ranges = self._window_ranges(sel, window)
        if not ranges or len(ranges) < 2 or getattr(self._local, "conn", None) is not None:
            return super()._tallies_from_cells(sel, window, lead, keys, nby, conf)
        clause, params = where(sel, self.dialect, "e.t >= %s", "e.t < %s", sliced="t")
        parts = f"count(*), {self.dialect.cells}, {conf}"
        sql = f"SELECT {lead}{parts} FROM evaluations e{clause} GROUP BY {', '.join(keys)}"
        n = len(keys)
        out: dict[GroupKey, Tally] = {}
        worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stef-pg-read")
        try:
            fetched = [
                worker.submit(self._fetch_grouped, sql, [lo, hi, *params], True, True)
                for lo, hi in ranges
            ]
            for future in fetched:
                rows = (row for row in future.result() if row[n])
                sums = gathered_cells(rows, n, nby, True)
                if sums is None:  # a row without a cell id: the JSON arrays instead
                    return None
                out.update(cell_tallies(sums, self._cells()))
        finally:  # returned or failed early: the ranges not yet read are not read
            worker.shutdown(wait=True, cancel_futures=True)
        return out

    def _cells(self) -> Mapping[int, Cell]:
        """Every stored cell by id (those added since the last read, read now)."""
        try:
            with self._connection() as conn:
                return self._cell_ids.load(conn)
        except psycopg.Error as exc:
            raise self._failed(exc) from exc

    def _stream(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        """Rows through a server-side cursor, a few thousand at a time."""
        held = getattr(self._local, "conn", None)
        try:
            with self._connection() as conn, conn.transaction():
                name = f"stef_{next(_cursor_names)}"
                with conn.cursor(name=name) as cur:
                    cur.itersize = 2000
                    cur.execute(sql, params)
                    if held is None:
                        yield from cur
                    else:  # inside this thread's transaction: read it all before yielding
                        yield from cur.fetchall()
        except psycopg.Error as exc:
            raise self._failed(exc) from exc

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` already stored."""
        wanted = {_no_nul(i): i for i in dict.fromkeys(ids)}
        keys = list(wanted)
        found: set[str] = set()
        for i in range(0, len(keys), 10000):
            rows = self._fetch(
                "SELECT id FROM evaluations WHERE id = ANY(%s)", (keys[i : i + 10000],)
            )
            found.update(wanted[r[0]] for r in rows)
        return found

    # -- watch and alert state -------------------------------------------------------

    def offsets(self) -> dict[str, int]:
        """Byte offset ``stef watch`` has read up to, per file path."""
        rows = self._fetch('SELECT path, "offset" FROM watch_files', ())
        return {p: int(o) for p, o in rows}

    def save_offsets(self, offsets: Mapping[str, int]) -> None:
        """Save offsets without writing evaluations (a file of blank lines, a reset)."""
        self.write([], offsets=offsets)

    def alert_states(self) -> dict[str, dict[str, Any]]:
        """The last known state of each alert rule, by name."""
        rows = self._fetch("SELECT name, state FROM alert_state", ())
        return {name: orjson.loads(state) for name, state in rows}

    def save_alert_state(self, name: str, state: Mapping[str, Any]) -> None:
        """Remember an alert rule's state (``{"breached": bool, ...}``)."""
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO alert_state (name, state, updated_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET state = EXCLUDED.state, "
                "updated_at = EXCLUDED.updated_at",
                (name, orjson.dumps(dict(state)).decode(), time.time()),
            )

    def close(self) -> None:
        """Close the pool (safe to call twice)."""
        self.pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

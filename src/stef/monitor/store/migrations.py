"""Append-only, named schema migrations for the SQLite store.

Each migration runs once, in order, inside a transaction; its name is then recorded in
``schema_migrations``. Never edit or reorder a migration that has shipped: add a new one.

>>> import sqlite3
>>> conn = sqlite3.connect(":memory:", isolation_level=None)
>>> migrate(conn)[-3:]
['0007_fine_rollups', '0008_row_cells', '0009_pg_row_cells']
>>> migrate(conn)
[]
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson

from stef.monitor.stats import Tally, to_epoch
from stef.monitor.store.cells import backfill_cells
from stef.monitor.store.rollups import (
    FINE_SECONDS,
    ROLLUP_SECONDS,
    RollupDelta,
)


def m0001_evaluations(conn: sqlite3.Connection) -> None:
    """Light, indexed columns in ``evaluations``; the whole JSON in ``evaluation_docs``.

    ``t`` is the record's time in epoch seconds (``timestamp``, else ``evaluated_at``);
    ``seq`` is the stable row number other tables refer to.
    """
    _script(
        conn,
        """
        CREATE TABLE evaluations (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            agent TEXT,
            agent_version TEXT,
            app TEXT,
            timestamp TEXT,
            evaluated_at TEXT,
            t REAL NOT NULL,
            status TEXT NOT NULL,
            score REAL,
            band TEXT,
            filter_status TEXT,
            verdict TEXT,
            confidence REAL,
            question_key TEXT,
            metadata TEXT
        );
        CREATE INDEX evaluations_agent ON evaluations (agent, agent_version, t);
        CREATE INDEX evaluations_t ON evaluations (t);
        CREATE TABLE evaluation_docs (
            seq INTEGER PRIMARY KEY REFERENCES evaluations (seq),
            doc TEXT NOT NULL
        );
        """,
    )


def m0002_findings(conn: sqlite3.Connection) -> None:
    """Side table of finding kinds per evaluation (most severe severity), backfilled."""
    _script(
        conn,
        """
        CREATE TABLE findings (
            seq INTEGER NOT NULL REFERENCES evaluations (seq),
            kind TEXT NOT NULL,
            severity TEXT NOT NULL,
            PRIMARY KEY (seq, kind)
        ) WITHOUT ROWID;
        CREATE INDEX findings_kind ON findings (kind);
        INSERT INTO findings (seq, kind, severity)
        SELECT d.seq, json_extract(f.value, '$.kind'),
               CASE max(CASE json_extract(f.value, '$.severity')
                        WHEN 'info' THEN 0 WHEN 'error' THEN 2 ELSE 1 END)
               WHEN 0 THEN 'info' WHEN 2 THEN 'error' ELSE 'warning' END
        FROM evaluation_docs AS d, json_each(d.doc, '$.findings') AS f
        WHERE json_type(f.value) = 'object'
          AND coalesce(json_extract(f.value, '$.kind'), '') != ''
        GROUP BY d.seq, json_extract(f.value, '$.kind');
        """,
    )


def m0003_rollups(conn: sqlite3.Connection) -> None:
    """Hourly tallies per agent/version/app, so figures need not scan every evaluation."""
    conn.execute(
        """
        CREATE TABLE rollups (
            key TEXT PRIMARY KEY,
            agent TEXT,
            agent_version TEXT,
            app TEXT,
            hour INTEGER NOT NULL,
            tally TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX rollups_hour ON rollups (hour)")
    tallies: dict[tuple[str | None, str | None, str | None, int], Tally] = {}
    for (doc,) in conn.execute("SELECT doc FROM evaluation_docs ORDER BY seq"):
        ev = orjson.loads(doc)
        key = rollup_key(ev)
        tallies.setdefault(key, Tally()).add(ev)
    conn.executemany(
        "INSERT INTO rollups (key, agent, agent_version, app, hour, tally) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(rollup_id(k), *k, orjson.dumps(t.to_dict()).decode()) for k, t in tallies.items()],
    )


def m0004_watch_state(conn: sqlite3.Connection) -> None:
    """Where ``stef watch`` stopped in each file, and which alerts are in breach."""
    _script(
        conn,
        """
        CREATE TABLE watch_files (
            path TEXT PRIMARY KEY,
            offset INTEGER NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE alert_state (
            name TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
        """,
    )


def m0005_compressed_docs(conn: sqlite3.Connection) -> None:
    """Whole evaluations as zstd-compressed JSON (a BLOB) instead of JSON text.

    Each stored document is compressed as it is (its JSON bytes unchanged) into a new
    ``evaluation_docs`` table, 5,000 at a time; the old table is dropped. The file keeps
    its size until ``VACUUM`` (or ``stef store copy``); new writes reuse the freed pages.
    """
    from stef.monitor.store.codec import compress_json  # common, which codec needs, imports us

    conn.execute("CREATE TABLE evaluation_docs_z (seq INTEGER PRIMARY KEY, doc BLOB NOT NULL)")
    last = -1
    while True:
        rows = conn.execute(
            "SELECT seq, doc FROM evaluation_docs WHERE seq > ? ORDER BY seq LIMIT 5000", (last,)
        ).fetchall()
        if not rows:
            break
        conn.executemany(
            "INSERT INTO evaluation_docs_z (seq, doc) VALUES (?, ?)",
            [(seq, _compressed(doc, compress_json)) for seq, doc in rows],
        )
        last = rows[-1][0]
    conn.execute("DROP TABLE evaluation_docs")
    conn.execute("ALTER TABLE evaluation_docs_z RENAME TO evaluation_docs")


def _compressed(doc: str | bytes, compress: Callable[[bytes], bytes]) -> bytes:
    """A stored document compressed, unless it already is (a zstd frame)."""
    data = doc.encode() if isinstance(doc, str) else bytes(doc)
    return data if data[:4] == b"\x28\xb5\x2f\xfd" else compress(data)


def m0006_row_finding_kinds(conn: sqlite3.Connection) -> None:
    """Each evaluation's finding kinds in its own row too (``finding_kinds``, JSON by kind),
    so figures grouped over the rows read one table instead of joining ``findings``."""
    conn.execute("ALTER TABLE evaluations ADD COLUMN finding_kinds TEXT")
    conn.execute(
        """
        UPDATE evaluations SET finding_kinds = (
            SELECT json_group_object(kind, severity) FROM (
                SELECT kind, severity FROM findings f WHERE f.seq = evaluations.seq ORDER BY kind
            )
        )
        WHERE seq IN (SELECT seq FROM findings)
        """
    )


def m0007_fine_rollups(conn: sqlite3.Connection) -> None:
    """Tallies per agent/version/app and 10 minutes (``rollups_10m``), backfilled from the
    rows' light columns (what figures over the rows read), so sub-hour windows of whole
    10 minutes need not scan every evaluation."""
    conn.execute(
        """
        CREATE TABLE rollups_10m (
            key TEXT PRIMARY KEY,
            agent TEXT,
            agent_version TEXT,
            app TEXT,
            start INTEGER NOT NULL,
            tally TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX rollups_10m_start ON rollups_10m (start)")
    rows = conn.execute(f"SELECT {', '.join(BACKFILL_COLUMNS)} FROM evaluations")
    conn.executemany(
        "INSERT INTO rollups_10m (key, agent, agent_version, app, start, tally) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        backfilled(rows, FINE_SECONDS),
    )


def m0008_row_cells(conn: sqlite3.Connection) -> None:
    """Each row's cell id (``evaluations.cell``, the row's status, score, band, filter
    class, verdict and finding kinds, kept once in ``cells``): figures SQLite groups over
    the rows count one small integer per row (see :mod:`stef.monitor.store.cells`)."""
    backfill_cells(conn)


def m0009_pg_row_cells(conn: sqlite3.Connection) -> None:
    """Nothing in SQLite (which has cell ids since 0008): PostgreSQL's cell ids, recorded
    here too so both backends share one schema version."""


#: The light columns :func:`backfilled` reads, in its order.
BACKFILL_COLUMNS = (
    "agent",
    "agent_version",
    "app",
    "t",
    "status",
    "score",
    "band",
    "filter_status",
    "verdict",
    "confidence",
    "finding_kinds",
)


def backfilled(rows: Iterable[Sequence[Any]], width: int) -> list[tuple[Any, ...]]:
    """Rollup rows ``(key, agent, agent_version, app, start, tally JSON)`` of buckets of
    ``width`` seconds, counted from evaluation rows of :data:`BACKFILL_COLUMNS` as figures
    over the rows count them."""

    delta = RollupDelta(width)
    kinds_of: dict[str, dict[str, str]] = {}
    for agent, version, app, t, status, score, band, filt, verdict, conf, kinds in rows:
        row = (None, agent, version, app, None, None, float(t), status, score, band, filt)
        found = kinds_of.get(kinds) if kinds else {}
        if found is None:
            found = kinds_of[kinds] = orjson.loads(kinds)
        delta.add((*row, verdict, conf), found or {})
    return [
        (rollup_id(k), *k, orjson.dumps(tally.to_dict()).decode())
        for k, tally in delta.tallies().items()
        if tally.records
    ]


#: Every migration, in the order it runs.
MIGRATIONS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
    ("0001_evaluations", m0001_evaluations),
    ("0002_findings", m0002_findings),
    ("0003_rollups", m0003_rollups),
    ("0004_watch_state", m0004_watch_state),
    ("0005_compressed_docs", m0005_compressed_docs),
    ("0006_row_finding_kinds", m0006_row_finding_kinds),
    ("0007_fine_rollups", m0007_fine_rollups),
    ("0008_row_cells", m0008_row_cells),
    ("0009_pg_row_cells", m0009_pg_row_cells),
]


def _script(conn: sqlite3.Connection, script: str) -> None:
    """Run several statements inside the current transaction (``executescript`` would commit)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def record_time(evaluation: Mapping[str, Any]) -> float:
    """The record's time in epoch seconds: ``timestamp``, else ``evaluated_at``, else 0.

    Lenient (an unreadable time falls through to the next), for backfilling old rows.
    """
    for key in ("timestamp", "evaluated_at"):
        try:
            t = to_epoch(evaluation.get(key))
        except ValueError:
            t = None
        if t is not None:
            return t
    return 0.0


def rollup_key(
    evaluation: Mapping[str, Any], t: float | None = None, width: int = ROLLUP_SECONDS
) -> tuple[str | None, str | None, str | None, int]:
    """(agent, agent_version, app, bucket start) an evaluation is counted under, in
    buckets of ``width`` seconds (default: hours)."""
    t = record_time(evaluation) if t is None else t
    hour = int(t // width) * width

    def text(key: str) -> str | None:
        v = evaluation.get(key)
        return None if v is None else str(v)

    return (text("agent"), text("agent_version"), text("app"), hour)


def rollup_id(key: tuple[str | None, str | None, str | None, int]) -> str:
    """Primary key text of a rollup row (NULL-safe, unlike a composite key)."""
    return orjson.dumps(list(key)).decode()


def applied(conn: sqlite3.Connection) -> list[str]:
    """Names of the migrations already applied, in order."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    return [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]


def migrate(conn: sqlite3.Connection, upto: str | None = None) -> list[str]:
    """Apply the migrations not yet applied (up to and including ``upto``); return their names.

    ``conn`` must be in autocommit mode (``isolation_level=None``).
    """
    done = set(applied(conn))
    ran: list[str] = []
    for name, fn in MIGRATIONS:
        if name in done:
            if name == upto:
                break
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone():
                conn.execute("COMMIT")  # another process applied it meanwhile
            else:
                fn(conn)
                conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, datetime('now'))",
                    (name,),
                )
                conn.execute("COMMIT")
                ran.append(name)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if name == upto:
            break
    return ran

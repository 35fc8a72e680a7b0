"""The SQLite store: one file, WAL, one writer at a time, batched idempotent writes.

Each evaluation becomes a row of light columns in ``evaluations`` (what figures and
selections need), its whole JSON in ``evaluation_docs``, its finding kinds in
``findings`` and a contribution to the hourly tally in ``rollups``, all in one
transaction. Figures for whole-hour windows grouped by agent/version/app are summed
from rollups; anything else (metadata groups, status or finding selections, odd
windows) is grouped in SQL over the light columns.

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
import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from stef.errors import StefError
from stef.monitor.stats import (
    GROUP_KEYS,
    GroupKey,
    Tally,
    check_group_keys,
    finding_kinds,
    to_epoch,
    window_start,
)
from stef.monitor.store.migrations import ROLLUP_SECONDS, migrate, rollup_id, rollup_key
from stef.monitor.store.selection import Selection

_COLUMNS = (
    "seq, id, agent, agent_version, app, timestamp, evaluated_at, t, status, score, band, "
    "filter_status, verdict, confidence, question_key, metadata"
)
_ORDERS = {
    None: "e.seq",
    "-stored": "e.seq DESC",
    "time": "e.t, e.seq",
    "-time": "e.t DESC, e.seq DESC",
    "score": "e.score IS NULL, e.score, e.seq",
    "-score": "e.score IS NULL, e.score DESC, e.seq",
}


class StoreError(StefError):
    """The store cannot be opened, or an evaluation cannot be stored."""

    status = "store_error"


def check_evaluation(evaluation: Any) -> str | None:
    """Why a dict is not a storable evaluation, or ``None`` when it is.

    >>> check_evaluation({"id": "x", "status": "ok", "score": 101})
    'score must be a number within [0, 100] when status is ok'
    """
    if not isinstance(evaluation, dict):
        return "an evaluation must be a JSON object"
    if evaluation.get("status") is None and "question" in evaluation and "sql" in evaluation:
        return (
            "this is a record (question and sql), not an evaluation: evaluate it with "
            "`stef eval FILE --store DB`"
        )
    ev_id = evaluation.get("id")
    if not isinstance(ev_id, str) or not ev_id:
        return "field 'id' must be a non-empty string"
    status = evaluation.get("status")
    if not isinstance(status, str) or not status:
        return "field 'status' must be a non-empty string"
    score = evaluation.get("score")
    bad_score = (
        isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 100
    )
    if status == "ok" and bad_score:
        return "score must be a number within [0, 100] when status is ok"
    meta = evaluation.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        return "field 'metadata' must be an object or null"
    for key in ("breakdown", "judgment", "provenance", "nl_spec", "sql_spec", "enrichment"):
        value = evaluation.get(key)
        if value is not None and not isinstance(value, dict):
            return f"field {key!r} must be an object or null, got {type(value).__name__}"
    findings = evaluation.get("findings")
    if findings is not None and (
        not isinstance(findings, list) or not all(isinstance(f, dict) for f in findings)
    ):
        return "field 'findings' must be a list of objects or null"
    return None


def record_time(evaluation: Mapping[str, Any]) -> float:
    """The record's time in epoch seconds: ``timestamp``, else ``evaluated_at``, else 0.

    Raises ``ValueError`` naming the field when the one used is not an ISO 8601 time.

    >>> record_time({"timestamp": None, "evaluated_at": "1970-01-01T00:01:00Z"})
    60.0
    """
    for key in ("timestamp", "evaluated_at"):
        value = evaluation.get(key)
        if value is not None and value != "":
            try:
                t = to_epoch(value)
            except ValueError:
                raise ValueError(f"field {key!r} is not an ISO 8601 time: {value!r}") from None
            assert t is not None
            return t
    return 0.0


def question_key(question: Any) -> str | None:
    """Question text normalised for pairing: lower case, single spaces, no end punctuation.

    >>> question_key("  How many  Orders? ")
    'how many orders'
    """
    if not isinstance(question, str):
        return None
    text = " ".join(question.lower().split()).rstrip("?.!;: ")
    return text or None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _row(seq: int, ev: Mapping[str, Any], t: float) -> tuple[Any, ...]:
    get = ev.get
    ok = get("status") == "ok"
    bd = (get("breakdown") or {}) if ok else {}
    meta = get("metadata")
    conf = bd.get("confidence")
    agent, version, app, ts, at, band, filt, verdict = (
        get("agent"),
        get("agent_version"),
        get("app"),
        get("timestamp"),
        get("evaluated_at"),
        get("band") if ok else None,
        bd.get("filter_status"),
        bd.get("verdict"),
    )
    return (
        seq,
        ev["id"],
        agent if agent is None or type(agent) is str else str(agent),
        version if version is None or type(version) is str else str(version),
        app if app is None or type(app) is str else str(app),
        ts if ts is None or type(ts) is str else str(ts),
        at if at is None or type(at) is str else str(at),
        t,
        ev["status"],
        float(ev["score"]) if ok else None,
        band if band is None or type(band) is str else str(band),
        filt if filt is None or type(filt) is str else str(filt),
        verdict if verdict is None or type(verdict) is str else str(verdict),
        float(conf) if isinstance(conf, (int, float)) else None,
        question_key(get("question")),
        _json_text(meta) if isinstance(meta, dict) and meta else None,
    )


def _json_text(obj: Any) -> str:
    """JSON text of ``obj``: orjson, or the standard library where orjson refuses
    (integers beyond 64 bits, NaN) — a user's metadata must never stop a batch."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(obj, ensure_ascii=False, default=str)


def _meta_expr(key: str) -> str:
    path = '$."' + key.replace('"', '""').replace("'", "''") + '"'
    return (
        f"CASE json_type(e.metadata, '{path}') WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
        f"ELSE CAST(json_extract(e.metadata, '{path}') AS TEXT) END"
    )


def _where(sel: Selection, *extra: str) -> tuple[str, list[Any]]:
    clauses: list[str] = list(extra)
    params: list[Any] = []
    for key in ("agent", "agent_version", "app", "status"):
        value = getattr(sel, key)
        if value is not None:
            clauses.append(f"e.{key} = ?")
            params.append(value)
    if sel.since is not None:
        clauses.append("e.t >= ?")
        params.append(sel.since)
    if sel.until is not None:
        clauses.append("e.t < ?")
        params.append(sel.until)
    for key, value in sorted(sel.metadata.items()):
        clauses.append(f"{_meta_expr(key)} = ?")
        params.append(value)
    if sel.finding is not None:
        clauses.append("e.seq IN (SELECT f2.seq FROM findings f2 WHERE f2.kind = ?)")
        params.append(sel.finding)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _group_expr(key: str) -> str:
    return f"e.{key}" if key in GROUP_KEYS else _meta_expr(key[len("metadata.") :])


def _selection(selection: Selection | Mapping[str, Any] | None) -> Selection:
    if selection is None:
        return Selection()
    if isinstance(selection, Selection):
        return selection
    return Selection.from_mapping(selection, now=time.time())


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


def _checked(
    batch: Sequence[Mapping[str, Any]], replace: bool
) -> dict[str, tuple[Mapping[str, Any], float]]:
    """A chunk's evaluations by id, each with its record time; the first bad one raises.

    An id repeated within the chunk counts once: the last one with ``replace``, else the first.
    """
    unique: dict[str, tuple[Mapping[str, Any], float]] = {}
    for ev in batch:
        problem = check_evaluation(ev)
        try:
            t = record_time(ev) if problem is None else 0.0
        except ValueError as exc:
            problem = str(exc)
        if problem:
            raise StoreError(message=f"evaluation {_text(ev.get('id'))!r}: {problem}")
        if replace or ev["id"] not in unique:
            unique[ev["id"]] = (ev, t)
    return unique


class _ChunkTallies:
    """A chunk's rollup contributions, per rollup key: counts of (status, score, band,
    filter, verdict) cells, confidence sums and finding kinds, turned into tallies once."""

    def __init__(self) -> None:
        self.cells: dict[Any, Counter[tuple[Any, ...]]] = {}
        self.confs: dict[Any, list[float]] = {}
        self.found: dict[Any, Counter[tuple[str, bool]]] = {}

    def add(self, row: tuple[Any, ...], t: float, ev_kinds: Mapping[str, str]) -> None:
        """Count one stored row (``_row``'s columns) with its finding kinds."""
        # Same as rollup_key(ev, t), from the row's already normalised columns.
        key = (row[2], row[3], row[4], int(t // ROLLUP_SECONDS) * ROLLUP_SECONDS)
        if key not in self.cells:
            self.cells[key], self.confs[key], self.found[key] = Counter(), [0.0, 0], Counter()
        self.cells[key][row[8:13]] += 1
        if row[13] is not None and row[8] == "ok":
            self.confs[key][0] += row[13]
            self.confs[key][1] += 1
        for kind, severity in ev_kinds.items():
            self.found[key][(kind, severity == "info")] += 1

    def merge_into(self, rollups: dict[Any, Tally]) -> None:
        """Add each key's tally to ``rollups`` (merged with one already there)."""
        for key, counter in self.cells.items():
            tally = Tally()
            for (status, score, band, filt, verdict), count in counter.items():
                tally.add_cell(status, score, band, filt, verdict, count, 0.0, 0)
            tally.confidence_sum, tally.confidence_n = self.confs[key][0], int(self.confs[key][1])
            for (kind, info), count in self.found[key].items():
                (tally.excused if info else tally.findings)[kind] += count
            if key in rollups:
                rollups[key].merge(tally)
            else:
                rollups[key] = tally


#: Stores up to this size are checked (``PRAGMA quick_check``) every time they are opened.
CHECK_BYTES = 64 * 1024 * 1024


def _damaged(path: Path, detail: str) -> StoreError:
    return StoreError(
        message=f"store {path} is damaged ({detail}); restore it from a backup, or salvage "
        f"what is left with: sqlite3 {path} .recover | sqlite3 recovered.db"
    )


class SQLiteStore:
    """Evaluations in one SQLite file (created and migrated on open).

    ``create=False`` refuses a file that does not exist (reading commands: a typo must
    not make an empty store). ``check`` runs ``PRAGMA quick_check`` on open (default: when
    the file is at most :data:`CHECK_BYTES`); any ``DatabaseError`` later runs it too, and
    a damaged file is reported as such.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        timeout: float = 60.0,
        chunk: int = 5000,
        create: bool = True,
        check: bool | None = None,
    ) -> None:
        self.path = Path(path)
        self.chunk = chunk
        if not create and not self.path.is_file():
            raise StoreError(
                message=f"store {self.path} does not exist (check the path, --store or "
                "STEF_STORE; `stef eval --store`, `ingest` and `watch` create one)"
            )
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
            migrate(self.conn)
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

    def _write_chunk(
        self,
        batch: Sequence[Mapping[str, Any]],
        replace: bool,
        offsets: Mapping[str, int] | None,
    ) -> int:
        """Store one chunk (and ``offsets``) in one transaction; return how many were new."""
        unique = _checked(batch, replace)
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            existing = self._seqs(list(unique))
            rollups: dict[tuple[str | None, str | None, str | None, int], Tally] = {}
            if replace and existing:
                self._forget(list(existing.values()), rollups)
            new = self._insert(unique, existing, replace, rollups)
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
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        return new

    def _insert(
        self,
        unique: Mapping[str, tuple[Mapping[str, Any], float]],
        existing: Mapping[str, int],
        replace: bool,
        rollups: dict[Any, Tally],
    ) -> int:
        """Insert the rows, documents and finding kinds (inside the caller's transaction),
        add the chunk's tallies to ``rollups``; return how many ids were new."""
        conn = self.conn
        tallies = _ChunkTallies()
        next_seq = (conn.execute("SELECT max(seq) FROM evaluations").fetchone()[0] or 0) + 1
        rows: list[tuple[Any, ...]] = []
        dumps = _json_text
        docs: list[tuple[int, str]] = []
        kinds: list[tuple[int, str, str]] = []
        new = 0
        for ev_id, (ev, t) in unique.items():
            seq = existing.get(ev_id)
            if seq is None:
                seq, next_seq, new = next_seq, next_seq + 1, new + 1
            elif not replace:
                continue
            row = _row(seq, ev, t)
            rows.append(row)
            docs.append((seq, dumps(ev)))
            ev_kinds = finding_kinds(ev)
            if ev_kinds:
                kinds.extend((seq, k, s) for k, s in ev_kinds.items())
            tallies.add(row, t, ev_kinds)
        tallies.merge_into(rollups)
        marks = ", ".join("?" * 16)
        conn.executemany(f"INSERT OR REPLACE INTO evaluations ({_COLUMNS}) VALUES ({marks})", rows)
        conn.executemany("INSERT OR REPLACE INTO evaluation_docs (seq, doc) VALUES (?, ?)", docs)
        conn.executemany("INSERT INTO findings (seq, kind, severity) VALUES (?, ?, ?)", kinds)
        return new

    def _seqs(self, ids: Sequence[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ", ".join("?" * len(part))
            found.update(
                self.conn.execute(f"SELECT id, seq FROM evaluations WHERE id IN ({marks})", part)
            )
        return found

    def _forget(self, seqs: Sequence[int], rollups: dict[Any, Tally]) -> None:
        """Take replaced evaluations out of rollups and findings (inside a transaction)."""
        for i in range(0, len(seqs), 500):
            part = list(seqs[i : i + 500])
            marks = ", ".join("?" * len(part))
            sql = f"SELECT doc FROM evaluation_docs WHERE seq IN ({marks})"
            for (doc,) in self.conn.execute(sql, part):
                old = orjson.loads(doc)
                key = rollup_key(old, record_time(old))
                if key not in rollups:
                    rollups[key] = Tally()
                rollups[key].add(old, sign=-1)
            self.conn.execute(f"DELETE FROM findings WHERE seq IN ({marks})", part)

    def _add_rollups(self, rollups: Mapping[Any, Tally]) -> None:
        for key, tally in rollups.items():
            rid = rollup_id(key)
            row = self.conn.execute("SELECT tally FROM rollups WHERE key = ?", (rid,)).fetchone()
            if row:
                tally = Tally.from_dict(orjson.loads(row[0])).merge(tally)
            self.conn.execute(
                "INSERT OR REPLACE INTO rollups (key, agent, agent_version, app, hour, tally) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (rid, *key, orjson.dumps(tally.to_dict()).decode()),
            )

    # -- reading ---------------------------------------------------------------------

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` already stored."""
        return set(self._seqs(list(dict.fromkeys(ids))))

    def count(self, selection: Selection | Mapping[str, Any] | None = None) -> int:
        """How many stored evaluations match ``selection``."""
        where, params = _where(_selection(selection))
        return int(
            self.conn.execute(f"SELECT count(*) FROM evaluations e{where}", params).fetchone()[0]
        )

    def query(
        self,
        *,
        order_by: str | None = None,
        limit: int | None = None,
        **selection: Any,
    ) -> Iterator[dict[str, Any]]:
        """Stored evaluations (whole dicts) matching ``selection`` keywords.

        Keywords: ``agent``, ``agent_version``, ``app``, ``status``, ``finding``, ``since``,
        ``until`` (epoch seconds or ISO/duration text), ``metadata={...}`` or
        ``**{"metadata.KEY": value}``; ``order_by`` is ``time``, ``-time``, ``score``,
        ``-score`` or ``-stored`` (newest stored first; default: storage order).
        """
        sel = selection.pop("selection", None) or Selection.from_kwargs(
            now=time.time(), **selection
        )
        if order_by not in _ORDERS:
            raise StoreError(message=f"order_by must be one of {sorted(o for o in _ORDERS if o)}")
        where, params = _where(sel)
        sql = (
            f"SELECT d.doc FROM evaluations e JOIN evaluation_docs d ON d.seq = e.seq{where} "
            f"ORDER BY {_ORDERS[order_by]}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        for (doc,) in self.conn.execute(sql, params):
            yield orjson.loads(doc)

    def score_pairs(
        self, selection: Selection | Mapping[str, Any] | None
    ) -> list[tuple[str | None, float]]:
        """(normalised question, score) of every evaluated record in ``selection``."""
        where, params = _where(_selection(selection), "e.status = 'ok'")
        sql = f"SELECT e.question_key, e.score FROM evaluations e{where}"
        return [(q, float(s)) for q, s in self.conn.execute(sql, params)]

    def latest_time(self, selection: Selection | Mapping[str, Any] | None = None) -> float | None:
        """The latest record time in ``selection`` (epoch seconds), or ``None`` when empty."""
        where, params = _where(_selection(selection))
        value = self.conn.execute(f"SELECT max(e.t) FROM evaluations e{where}", params).fetchone()[
            0
        ]
        return None if value is None else float(value)

    def tallies(
        self,
        selection: Selection | Mapping[str, Any] | None = None,
        by: Sequence[str] = (),
        window: float | None = None,
    ) -> dict[GroupKey, Tally]:
        """Tallies per (group values, window start), as
        :func:`stef.monitor.stats.tally_evaluations`.

        Summed from hourly rollups when the selection and grouping allow it, else
        grouped in SQL over the evaluation columns.
        """
        sel = _selection(selection)
        check_group_keys(by)
        if self._rollups_cover(sel, by, window):
            return self._tallies_from_rollups(sel, by, window)
        return self._tallies_from_rows(sel, by, window)

    @staticmethod
    def _rollups_cover(sel: Selection, by: Sequence[str], window: float | None) -> bool:
        def whole_hours(x: float | None) -> bool:
            return x is None or float(x) % ROLLUP_SECONDS == 0

        return (
            all(k in GROUP_KEYS for k in by)
            and sel.status is None
            and sel.finding is None
            and not sel.metadata
            and whole_hours(window)
            and whole_hours(sel.since)
            and whole_hours(sel.until)
        )

    def _tallies_from_rollups(
        self, sel: Selection, by: Sequence[str], window: float | None
    ) -> dict[GroupKey, Tally]:
        clauses, params = [], []
        for key in ("agent", "agent_version", "app"):
            if getattr(sel, key) is not None:
                clauses.append(f"{key} = ?")
                params.append(getattr(sel, key))
        if sel.since is not None:
            clauses.append("hour >= ?")
            params.append(sel.since)
        if sel.until is not None:
            clauses.append("hour < ?")
            params.append(sel.until)
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        out: dict[GroupKey, Tally] = {}
        sql = f"SELECT agent, agent_version, app, hour, tally FROM rollups{where}"
        for agent, version, app, hour, text in self.conn.execute(sql, params):
            values = {"agent": agent, "agent_version": version, "app": app}
            gkey = (tuple(values[k] for k in by), window_start(float(hour), window))
            tally = Tally.from_dict(orjson.loads(text))
            if gkey in out:
                out[gkey].merge(tally)
            else:
                out[gkey] = tally
        return {k: t for k, t in out.items() if t.records > 0}

    def _tallies_from_rows(
        self, sel: Selection, by: Sequence[str], window: float | None
    ) -> dict[GroupKey, Tally]:
        where, params = _where(sel)
        groups = [_group_expr(k) for k in by]
        if window is not None:
            groups.append(f"(CAST(e.t / {float(window)!r} AS INTEGER) * {float(window)!r})")
        lead = "".join(f"{g}, " for g in groups)
        n = len(groups)
        out: dict[GroupKey, Tally] = {}

        def key_of(row: Sequence[Any]) -> GroupKey:
            start = float(row[n - 1]) if window is not None else None
            return (tuple(row[: len(by)]), start)

        sql = (
            f"SELECT {lead}e.status, e.score, e.band, e.filter_status, e.verdict, count(*), "
            f"total(e.confidence), count(e.confidence) FROM evaluations e{where} "
            f"GROUP BY {', '.join(str(i) for i in range(1, n + 6))}"
        )
        for row in self.conn.execute(sql, params):
            key = key_of(row)
            if key not in out:
                out[key] = Tally()
            out[key].add_cell(*row[n:])
        sql = (
            f"SELECT {lead}f.kind, f.severity = 'info', count(*) FROM findings f "
            f"JOIN evaluations e ON e.seq = f.seq{where} "
            f"GROUP BY {', '.join(str(i) for i in range(1, n + 3))}"
        )
        for row in self.conn.execute(sql, params):
            kind, info, count = row[n:]
            tally = out.setdefault(key_of(row), Tally())
            (tally.excused if info else tally.findings)[kind] += count
        return out

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

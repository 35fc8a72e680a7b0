"""Cell ids: what figures over the rows count, one small integer per row (SQLite).

A *cell* is the part of an evaluation row that figures count: (status, score, band,
filter class, verdict, finding kinds). A store holds few distinct cells (a few hundred
for thousands of evaluations; the score is the column that varies). The SQLite store
keeps them once in ``cells`` and each row's cell id in ``evaluations.cell`` (migration
``0008_row_cells``), so a grouping SQLite cannot hash (a metadata key, a status
selection, odd windows) gathers one JSON array of small integers per group instead of
six arrays of values, and the counting happens in :func:`tally_of_cells`.

>>> index = CellIndex()
>>> ok, error = ("ok", 80.0, "good", None, None, None), ("error", None, None, None, None, None)
>>> index.intern(ok), index.intern(error)
(1, 2)
>>> index.intern(ok), index.new
(1, [(1, 'ok', 80.0, 'good', None, None, None), (2, 'error', None, None, None, None, None)])
>>> t = tally_of_cells(3, {1: 2, 2: 1}, index.rows, 1.5, 2, {})
>>> (t.records, dict(t.statuses), dict(t.scores), dict(t.bands), t.confidence_n)
(3, {'ok': 2, 'error': 1}, {80.0: 2}, {'good': 2}, 2)
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

import orjson

from stef.monitor.stats import GroupKey, LightCounts, Tally, count_light
from stef.monitor.store.grouped import KindsCache, parsed_kinds

#: (status, score, band, filter_status, verdict, finding_kinds) of a row.
Cell = tuple[Any, ...]


def cell_of(row: Sequence[Any]) -> Cell:
    """The cell of one :func:`~stef.monitor.store.common.build_row` row."""
    return (row[7], row[8], row[9], row[10], row[11], row[15])


class CellIndex:
    """Cell ids of one SQLite store: ``ids`` (cell → id) and ``rows`` (id → cell), as read
    from ``cells`` and added by writes; ``new`` holds the rows of ``cells`` not yet
    inserted."""

    def __init__(self) -> None:
        self.ids: dict[Cell, int] = {}
        self.rows: dict[int, Cell] = {}
        self.top = 0
        self.new: list[tuple[Any, ...]] = []

    def load(self, conn: sqlite3.Connection) -> None:
        """Read the cells other connections added since the last load."""
        sql = (
            "SELECT cell, status, score, band, filter_status, verdict, finding_kinds "
            "FROM cells WHERE cell > ? ORDER BY cell"
        )
        for cell, *values in conn.execute(sql, (self.top,)):
            key = tuple(values)
            self.rows[cell] = key
            self.ids.setdefault(key, cell)
            self.top = cell

    def intern(self, cell: Cell) -> int:
        """The id of ``cell``, a new one (queued in :attr:`new`) when it has none."""
        found = self.ids.get(cell)
        if found is None:
            found = self.top = self.top + 1
            self.ids[cell] = found
            self.rows[found] = cell
            self.new.append((found, *cell))
        return found

    def flush(self, conn: sqlite3.Connection) -> None:
        """Insert the new cells (inside the writing transaction)."""
        if self.new:
            conn.executemany(
                "INSERT INTO cells (cell, status, score, band, filter_status, verdict, "
                "finding_kinds) VALUES (?, ?, ?, ?, ?, ?, ?)",
                self.new,
            )
            self.new = []

    def forget(self) -> None:
        """Drop everything (a rolled-back write may have queued ids never stored)."""
        self.__init__()  # type: ignore[misc]


def tally_of_cells(
    records: int,
    counts: Mapping[int, int],
    cells: Mapping[int, Cell],
    conf_sum: float | None,
    conf_n: int | None,
    kinds_cache: KindsCache,
) -> Tally:
    """The tally of one group: ``records`` rows, ``counts`` of their cell ids (the cells
    by id in ``cells``), the confidence sum and count of its evaluated rows."""
    parts: LightCounts = ({}, {}, {}, {}, {})
    statuses, scores, bands, filters, verdicts = parts
    findings: dict[str, int] = {}
    excused: dict[str, int] = {}
    for cell_id, n in counts.items():
        status, score, band, filt, verdict, kinds = cells[cell_id]
        count_light(parts, status, score, band, filt, verdict, n)
        if kinds:
            for kind, info in parsed_kinds(kinds, kinds_cache):
                part = excused if info else findings
                part[kind] = part.get(kind, 0) + n
    return Tally(
        records=int(records),
        statuses=Counter(statuses),
        scores=Counter(scores),
        bands=Counter(bands),
        filters=Counter(filters),
        verdicts=Counter(verdicts),
        confidence_sum=float(conf_sum or 0.0),
        confidence_n=int(conf_n or 0),
        findings=Counter(findings),
        excused=Counter(excused),
    )


#: A group of more rows than this is counted cell by cell (:func:`tally_of_cells`), a
#: smaller one row by row in C (:meth:`CellFields.tally`).
ROW_BY_ROW = 2048


class CellFields:
    """What each cell id counts as, field by field: lists indexed by cell id (``None``
    where a row of that cell adds nothing to the field), so the rows of a small group are
    counted by ``Counter(map(…))`` in C rather than by a Python loop over its cells (what
    dominates figures over many small groups: ``--by metadata.team --window 10m``).

    >>> cells = {1: ("ok", 80.0, "good", None, None, '{"k": "info"}'), 2: ("error",) + (None,) * 5}
    >>> t = CellFields(cells, {}).tally(3, [1, 2, 1], 1.5, 2)
    >>> (dict(t.statuses), dict(t.scores), dict(t.bands), dict(t.excused), t.confidence_n)
    ({'ok': 2, 'error': 1}, {80.0: 2}, {'good': 2}, {'k': 2}, 2)
    >>> t == tally_of_cells(3, {1: 2, 2: 1}, cells, 1.5, 2, {})
    True
    """

    def __init__(self, cells: Mapping[int, Cell], kinds_cache: KindsCache) -> None:
        self.cells = cells
        self.kinds_cache = kinds_cache
        size = max(cells, default=0) + 1
        status: list[Any] = [None] * size
        score: list[Any] = [None] * size
        band: list[Any] = [None] * size
        filt: list[Any] = [None] * size
        verdict: list[Any] = [None] * size
        kinds: list[tuple[tuple[str, bool], ...]] = [()] * size
        for cell_id, (st, sc, bd, fl, vd, kd) in cells.items():
            status[cell_id] = st
            if st == "ok":
                score[cell_id] = None if sc is None else float(sc)
                band[cell_id], filt[cell_id], verdict[cell_id] = bd or None, fl or None, vd or None
            if kd:
                kinds[cell_id] = tuple(parsed_kinds(kd, kinds_cache))
        self.status, self.kinds = status, kinds
        self.ok_fields = (score, band, filt, verdict)

    def tally(
        self, records: int, ids: list[int], conf_sum: float | None, conf_n: int | None
    ) -> Tally:
        """The tally of a group of ``records`` rows whose cell ids are ``ids``, with the
        confidence sum and count of its evaluated rows (as :func:`tally_of_cells`)."""
        if len(ids) > ROW_BY_ROW:
            return tally_of_cells(
                records, Counter(ids), self.cells, conf_sum, conf_n, self.kinds_cache
            )
        statuses = Counter(map(self.status.__getitem__, ids))
        ok_counts = []
        for field in self.ok_fields:
            counted = Counter(map(field.__getitem__, ids))
            counted.pop(None, None)
            ok_counts.append(counted)
        findings: Counter[str] = Counter()
        excused: Counter[str] = Counter()
        for (kind, info), n in Counter(
            chain.from_iterable(map(self.kinds.__getitem__, ids))
        ).items():
            (excused if info else findings)[kind] += n
        scores, bands, filters, verdicts = ok_counts
        return Tally(
            records=int(records),
            statuses=statuses,
            scores=scores,
            bands=bands,
            filters=filters,
            verdicts=verdicts,
            confidence_sum=float(conf_sum or 0.0),
            confidence_n=int(conf_n or 0),
            findings=findings,
            excused=excused,
        )


def backfill_cells(conn: sqlite3.Connection) -> None:
    """Create ``cells`` and ``evaluations.cell`` and give every row its cell id
    (migration ``0008_row_cells``, inside its transaction), 50,000 rows at a time."""
    conn.execute(
        """
        CREATE TABLE cells (
            cell INTEGER PRIMARY KEY,
            status TEXT NOT NULL,
            score REAL,
            band TEXT,
            filter_status TEXT,
            verdict TEXT,
            finding_kinds TEXT
        )
        """
    )
    conn.execute("ALTER TABLE evaluations ADD COLUMN cell INTEGER")
    index = CellIndex()
    sql = (
        "SELECT seq, status, score, band, filter_status, verdict, finding_kinds "
        "FROM evaluations WHERE seq > ? ORDER BY seq LIMIT 50000"
    )
    last = -1
    while True:
        rows = conn.execute(sql, (last,)).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        conn.executemany(
            "UPDATE evaluations SET cell = ? WHERE seq = ?",
            [(index.intern(tuple(cell)), seq) for seq, *cell in rows],
        )
    index.flush(conn)


def gathered_cells(
    rows: Iterable[Sequence[Any]], n: int, nby: int, windowed: bool
) -> dict[GroupKey, list[Any]] | None:
    """``[records, cell ids, confidence sum, confidence count]`` per group, from rows of
    ``n`` group columns (the last the window start when ``windowed``, the first ``nby``
    the group values), then the count, the cell ids (a list, or a JSON array's text),
    the confidence sum and count; a group's rows (of several slices) add up. ``None`` when
    a row has no cell id (written by a STEF before the migration that gave them)."""
    sums: dict[GroupKey, list[Any]] = {}
    loads = orjson.loads
    for row in rows:
        key = (tuple(row[:nby]), float(row[n - 1]) if windowed else None)
        acc = sums.get(key)
        records, ids, conf_sum, conf_n = row[n:]
        if type(ids) is not list:
            ids = loads(ids)
        if acc is None:
            sums[key] = [records, ids, conf_sum or 0.0, conf_n or 0]
        else:
            acc[0] += records
            acc[1] += ids
            acc[2] += conf_sum or 0.0
            acc[3] += conf_n or 0
    if any(None in acc[1] for acc in sums.values()):
        return None
    return sums

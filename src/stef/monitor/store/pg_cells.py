"""Cell ids in the PostgreSQL store (migration ``0009_pg_row_cells``), as SQLite has them.

A row's *cell* is what figures count of it (:mod:`stef.monitor.store.cells`): (status,
score, band, filter class, verdict, finding kinds), kept once in ``cells`` and named by
a small integer in ``evaluations.cell``. Figures over many windows (a metadata key by
10 minutes, 7-minute windows, …) then gather one ``int[]`` of cell ids per group,
fetched in binary, instead of six JSON arrays of values, which the server builds for a
million rows at twice the cost (its hash aggregate spills them to disk) and the client
parses.

Writers share the ``cells`` table: a chunk whose cells are all known writes their ids; one
with a cell not yet stored locks ``cells`` (``EXCLUSIVE``: other writers of new cells
wait, readers do not), reads what others added meanwhile and inserts the rest, all in
the chunk's transaction. The ids a process knows (:class:`PgCells`) are only those read
back from the table, so a rolled-back chunk leaves none behind.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stef.monitor.store.cells import Cell, CellIndex, cell_of

_COLUMNS = "status, score, band, filter_status, verdict, finding_kinds"
#: What a group's cell ids are gathered by (an ``int[]``: a list of ints in psycopg).
CELL_ARRAY = "array_agg(e.cell)"


class PgCells:
    """The cells of one PostgreSQL store that this process has read, by id and by cell
    (shared by its threads)."""

    def __init__(self) -> None:
        self._index = CellIndex()
        self._lock = threading.Lock()

    def load(self, conn: Any) -> Mapping[int, Cell]:
        """Read the cells stored since the last load; return every cell by id."""
        with self._lock:
            index = self._index
            rows = conn.execute(
                f"SELECT cell, {_COLUMNS} FROM cells WHERE cell > %s ORDER BY cell",
                (index.top,),
            ).fetchall()
            for cell, *values in rows:
                key = tuple(values)
                index.rows[cell] = key
                index.ids.setdefault(key, cell)
                index.top = cell
            return dict(index.rows)

    def _known(self, cells: Iterable[Cell]) -> dict[Cell, int]:
        with self._lock:
            ids = self._index.ids
            return {c: ids[c] for c in cells if c in ids}

    def ids_for(self, conn: Any, rows: Sequence[Sequence[Any]]) -> list[int]:
        """The cell id of each of ``rows`` (light columns,
        :func:`~stef.monitor.store.common.build_row`), storing the cells not yet in
        ``cells`` (``conn`` is in the chunk's transaction)."""
        cells = [cell_of(row) for row in rows]
        distinct = set(cells)
        known = self._known(distinct)
        if len(known) < len(distinct):
            self.load(conn)  # stored by others since
            known = self._known(distinct)
        if len(known) < len(distinct):
            conn.execute("LOCK TABLE cells IN EXCLUSIVE MODE")
            self.load(conn)
            known = self._known(distinct)
            top = conn.execute("SELECT coalesce(max(cell), 0) FROM cells").fetchone()[0]
            new = []
            for cell in cells:  # in the rows' order: ids numbered as they first occur
                if cell not in known:
                    top += 1
                    known[cell] = top
                    new.append((top, *cell))
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO cells (cell, {_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    new,
                )
        return [known[c] for c in cells]

"""Tallies of many groups from their cell ids, counted for all groups at once with numpy.

Figures over the rows gather each group's cell ids (:mod:`stef.monitor.store.cells`):
thousands of groups of a few dozen rows over many windows. Counting them group by group
(:class:`~stef.monitor.store.cells.CellFields`: a ``Counter`` per field and group) costs
~60 µs a group; here every group's ids lie in one array, the (group, cell id) pairs are
counted by one ``bincount`` (one ``unique`` where groups × cells would make too large a
table), each field of a cell (status, score, band, filter class, verdict, the finding
kinds split into findings and excused) is looked up for all those pairs at once, and the
(group, value) counts summed by one more ``bincount`` a field, so Python only builds the
counters, from the pairs, a few microseconds a group. The counts are integers: the
tallies are those of the group-by-group counting, exactly (the confidence sums come from
SQL as before).

>>> cells = {1: ("ok", 80.0, "good", None, None, '{"k": "info"}'), 2: ("error",) + (None,) * 5}
>>> sums = {(("a",), None): [3, [1, 2, 1], 1.5, 2], (("b",), None): [1, [2], 0.0, 0]}
>>> a, b = cell_tallies(sums, cells).values()
>>> (dict(a.statuses), dict(a.scores), dict(a.excused), b.records, dict(b.statuses))
({'ok': 2, 'error': 1}, {80.0: 2}, {'k': 2}, 1, {'error': 1})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import chain, pairwise
from typing import Any

import numpy as np

from stef.monitor.stats import GroupKey, Tally
from stef.monitor.store.cells import ROW_BY_ROW, Cell, CellFields
from stef.monitor.store.grouped import KindsCache, parsed_kinds

#: Largest table of (group, value) counts :func:`_counters` makes by ``bincount`` (above it,
#: the pairs are sorted by ``unique`` instead).
_TABLE = 1 << 22


def _field_values(
    cells: Mapping[int, Cell], size: int, kinds_cache: KindsCache
) -> list[tuple[list[Any], np.ndarray, np.ndarray]]:
    """Per field (status; score, band, filter class, verdict of evaluated rows; finding
    kinds counted as findings, then as excused), its distinct values, and for each cell
    id the first of its values' positions in a flat index and how many it has (0: the
    cell adds nothing to the field, as :meth:`~stef.monitor.stats.Tally.add_cell` counts;
    a cell has one value in each field but the finding kinds, one per kind)."""
    out = []
    for i in range(7):
        values: dict[Any, int] = {}
        flat: list[int] = []
        first = np.zeros(size, dtype=np.int64)
        many = np.zeros(size, dtype=np.int64)
        for cell_id, cell in cells.items():
            value = cell[min(i, 5)]
            if i < 5:
                if i == 1:
                    value = None if value is None else float(value)
                if i > 0 and cell[0] != "ok":
                    value = None
                if i > 0 and not value and (i != 1 or value is None):  # None or "" (a score: None)
                    continue
                found = [value]
            else:  # finding kinds: those of warning or error (5) or info (6) severity
                found = (
                    [k for k, info in parsed_kinds(value, kinds_cache) if info == (i == 6)]
                    if value
                    else []
                )
            first[cell_id], many[cell_id] = len(flat), len(found)
            flat.extend(values.setdefault(v, len(values)) for v in found)
        out.append((list(values), np.asarray(flat, dtype=np.int64), np.stack([first, many])))
    return out


def _counters(
    group: np.ndarray, value: np.ndarray, n: np.ndarray, values: list[Any], groups: int
) -> list[Counter[Any]]:
    """Per group, the counts of its ``values`` (``value``: the index of a value, ``n`` how
    many rows of group ``group`` have it; the groups' pairs are summed by ``bincount`` or,
    past :data:`_TABLE`, sorted by ``unique`` and summed in runs)."""
    width = max(len(values), 1)
    key = group * width + value
    if groups * width <= _TABLE:
        table = np.bincount(key, weights=n, minlength=groups * width).astype(np.int64)
        found = np.flatnonzero(table)
        counts = table[found]
    else:
        found, inverse = np.unique(key, return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=n, minlength=len(found)).astype(np.int64)
    g, v = np.divmod(found, width)
    bounds = np.searchsorted(g, np.arange(groups + 1)).tolist()
    pairs = list(
        zip(np.array([*values, None], dtype=object)[v].tolist(), counts.tolist(), strict=True)
    )
    new, update = Counter.__new__, dict.update
    out: list[Counter[Any]] = []
    for lo, hi in pairwise(bounds):
        counter = new(Counter)
        update(counter, pairs[lo:hi])
        out.append(counter)
    return out


def _cell_counts(accs: list[list[Any]], size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(group, cell id, rows) for each cell id a group's rows have, from every group's ids
    at once (one ``bincount`` of group × cell id, or ``unique`` past :data:`_TABLE`)."""
    groups = len(accs)
    lengths = np.fromiter((len(a[1]) for a in accs), dtype=np.int64, count=groups)
    total = int(lengths.sum())
    ids = np.fromiter(chain.from_iterable(a[1] for a in accs), dtype=np.int64, count=total)
    if total and (int(ids.min()) < 0 or int(ids.max()) >= size):
        raise KeyError(
            f"cell ids not in cells: {sorted(set(ids[(ids < 0) | (ids >= size)].tolist()))[:5]}"
        )
    key = np.repeat(np.arange(groups, dtype=np.int64) * size, lengths) + ids
    if groups * size <= _TABLE:
        table = np.bincount(key, minlength=groups * size)
        found = np.flatnonzero(table)
        n = table[found]
    else:
        found, n = np.unique(key, return_counts=True)
    group, cell = np.divmod(found, size)
    return group, cell, n


def cell_tallies(
    sums: Mapping[GroupKey, list[Any]], cells: Mapping[int, Cell]
) -> dict[GroupKey, Tally]:
    """The tally of each group of ``sums`` (``[records, cell ids, confidence sum, confidence
    count]``, :func:`~stef.monitor.store.cells.gathered_cells`), the cells by id in
    ``cells``. A group of more than :data:`~stef.monitor.store.cells.ROW_BY_ROW` rows is
    counted on its own, cell by cell (a ``Counter`` of its ids, in C, is cheaper there).
    The rows of the other groups are counted once per (group, cell id), then per field
    from those counts."""
    big = {k: a for k, a in sums.items() if len(a[1]) > ROW_BY_ROW}
    if big:
        fields = CellFields(cells, {})
        small = cell_tallies({k: a for k, a in sums.items() if k not in big}, cells)
        return {k: fields.tally(*a) if k in big else small[k] for k, a in sums.items()}
    accs = list(sums.values())
    groups = len(accs)
    size = max(cells, default=0) + 1
    group, cell, n = _cell_counts(accs, size)
    counted: list[list[Counter[Any]]] = []
    for values, flat, (first, many) in _field_values(cells, size, {}):
        if not counted and len(cell) and int(many[cell].min()) < 1:  # every cell has a status
            raise KeyError(
                f"cell ids not in cells: {sorted(set(cell[many[cell] < 1].tolist()))[:5]}"
            )
        reps = many[cell]
        kept = reps > 0
        if int(reps.max(initial=0)) <= 1:  # one value a cell (all fields but finding kinds)
            at = first[cell[kept]]
            counted.append(_counters(group[kept], flat[at], n[kept], values, groups))
            continue
        starts = np.repeat(first[cell] - np.cumsum(reps) + reps, reps)
        at = starts + np.arange(int(reps.sum()), dtype=np.int64)
        counted.append(
            _counters(np.repeat(group, reps), flat[at], np.repeat(n, reps), values, groups)
        )
    statuses, scores, bands, filters, verdicts, findings, excused = counted
    tallies = map(
        Tally,
        [int(a[0]) for a in accs],
        statuses,
        scores,
        bands,
        filters,
        verdicts,
        [float(a[2] or 0.0) for a in accs],
        [int(a[3] or 0) for a in accs],
        findings,
        excused,
    )
    return dict(zip(sums, tallies, strict=True))

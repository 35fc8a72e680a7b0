"""Tallies of many groups from their cell ids, counted for all groups at once with numpy.

Figures over the rows gather each group's cell ids (:mod:`stef.monitor.store.cells`):
thousands of groups of a few dozen rows over many windows. Counting them group by group
(:class:`~stef.monitor.store.cells.CellFields`: a ``Counter`` per field and group) costs
~60 µs a group; here every group's ids lie in one array, each field of a row's cell
(status, score, band, filter class, verdict, finding kinds) is looked up by cell id for
all rows at once, and the (group, value) pairs are counted by one ``bincount`` (one
``unique`` where groups × values would make too large a table), so Python only builds
the counters, from the pairs, a few microseconds a group. The counts are integers: the
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


def _field_values(cells: Mapping[int, Cell], size: int) -> list[tuple[list[Any], np.ndarray]]:
    """Per field (status; score, band, filter class, verdict of evaluated rows; finding
    kinds), its distinct values and the index of each cell id's value in them (-1: the
    cell adds nothing to the field, as :meth:`~stef.monitor.stats.Tally.add_cell` counts)."""
    out = []
    for i in range(6):
        values: dict[Any, int] = {}
        index = np.full(size, -1, dtype=np.int64)
        for cell_id, cell in cells.items():
            value = cell[i]
            if i == 1:
                value = None if value is None else float(value)
            if i > 0 and i < 5 and cell[0] != "ok":
                value = None
            if i > 0 and not value and (i != 1 or value is None):  # None or "" (a score: None)
                continue
            index[cell_id] = values.setdefault(value, len(values))
        out.append((list(values), index))
    return out


def _counters(
    group: np.ndarray, value: np.ndarray, values: list[Any], groups: int
) -> list[Counter[Any]]:
    """Per group, the counts of its ``values`` (``value``: the index of each row's, the
    rows of group ``group``; the groups' pairs are sorted by ``bincount`` or, past
    :data:`_TABLE`, by ``unique``)."""
    width = max(len(values), 1)
    key = group * width + value
    if groups * width <= _TABLE:
        table = np.bincount(key, minlength=groups * width)
        found = np.flatnonzero(table)
        n = table[found]
    else:
        found, n = np.unique(key, return_counts=True)
    g, v = np.divmod(found, width)
    bounds = np.searchsorted(g, np.arange(groups + 1)).tolist()
    labels = np.array([*values, None], dtype=object)[v].tolist()
    counts = n.tolist()
    new, update = Counter.__new__, dict.update
    out: list[Counter[Any]] = []
    for lo, hi in pairwise(bounds):
        counter = new(Counter)
        update(counter, zip(labels[lo:hi], counts[lo:hi], strict=True))
        out.append(counter)
    return out


def cell_tallies(
    sums: Mapping[GroupKey, list[Any]], cells: Mapping[int, Cell]
) -> dict[GroupKey, Tally]:
    """The tally of each group of ``sums`` (``[records, cell ids, confidence sum, confidence
    count]``, :func:`~stef.monitor.store.cells.gathered_cells`), the cells by id in
    ``cells``. A group of more than :data:`~stef.monitor.store.cells.ROW_BY_ROW` rows is
    counted on its own, cell by cell (a ``Counter`` of its ids, in C, is cheaper there)."""
    big = {k: a for k, a in sums.items() if len(a[1]) > ROW_BY_ROW}
    if big:
        fields = CellFields(cells, {})
        small = cell_tallies({k: a for k, a in sums.items() if k not in big}, cells)
        return {k: fields.tally(*a) if k in big else small[k] for k, a in sums.items()}
    keys = list(sums)
    accs = list(sums.values())
    groups = len(keys)
    lengths = np.fromiter((len(a[1]) for a in accs), dtype=np.int64, count=groups)
    total = int(lengths.sum())
    ids = np.fromiter(chain.from_iterable(a[1] for a in accs), dtype=np.int64, count=total)
    group = np.repeat(np.arange(groups, dtype=np.int64), lengths)
    size = max(max(cells, default=0), int(ids.max()) if total else 0) + 1
    counted: list[list[Counter[Any]]] = []
    for values, index in _field_values(cells, size):
        value = index[ids]
        if not counted and total and int(value.min()) < 0:  # every cell has a status
            raise KeyError(f"cell ids not in cells: {sorted(set(ids[value < 0].tolist()))[:5]}")
        kept = value >= 0
        counted.append(_counters(group[kept], value[kept], values, groups))
    statuses, scores, bands, filters, verdicts, kinds = counted
    cache: KindsCache = {}
    out: dict[GroupKey, Tally] = {}
    for i, (key, acc) in enumerate(zip(keys, accs, strict=True)):
        findings: Counter[str] = Counter()
        excused: Counter[str] = Counter()
        for text, rows in kinds[i].items():
            for kind, info in parsed_kinds(text, cache):
                (excused if info else findings)[kind] += rows
        out[key] = Tally(
            records=int(acc[0]),
            statuses=statuses[i],
            scores=scores[i],
            bands=bands[i],
            filters=filters[i],
            verdicts=verdicts[i],
            confidence_sum=float(acc[2] or 0.0),
            confidence_n=int(acc[3] or 0),
            findings=findings,
            excused=excused,
        )
    return out

"""Rollup tables and the tallies a batch adds to them: per agent/version/app and time
bucket (an hour, 10 minutes), so stats over whole buckets add stored tallies instead of
scanning rows. Used by the migrations (backfill), the stores (writes, prunes) and their
readers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stef.monitor.stats import LightCounts, Tally, count_light

#: Width of a rollup bucket in seconds: stats windows that are whole hours use rollups.
ROLLUP_SECONDS = 3600
#: Width of a fine rollup bucket: windows of whole 10 minutes (10m, 20m, 30m, 90m) use them.
FINE_SECONDS = 600


@dataclass(frozen=True)
class RollupTable:
    """A table of tallies per agent/version/app and time bucket of ``width`` seconds,
    the bucket's start in column ``start``."""

    name: str
    start: str
    width: int


#: The rollup tables, coarsest first (figures read the coarsest one that fits).
ROLLUP_TABLES = (
    RollupTable("rollups", "hour", ROLLUP_SECONDS),
    RollupTable("rollups_10m", "start", FINE_SECONDS),
)


RollupKey = tuple[str | None, str | None, str | None, int]


#: Rollup tallies to merge into the stored ones, by rollup table name.
RollupDeltas = dict[str, dict[RollupKey, Tally]]


class RollupDelta:
    """What a batch of new rows adds to the rollups of buckets of ``width`` seconds
    (default: hours), counted cell by cell.

    Per rollup key: counts of (status, score, band, filter, verdict) cells, confidence sums
    and finding kinds, turned into tallies once per batch (cheaper than a Tally per row),
    in buckets of ``width`` or of any multiple of it.

    >>> d = RollupDelta(600)
    >>> for t in (1250.0, 4000.0):
    ...     d.add((None, "bot", "1", "app", None, None, t, "ok", 80.0, "good", None,
    ...            None, 0.9), {})
    >>> [(k, t.records) for k, t in d.tallies().items()]
    [(('bot', '1', 'app', 1200), 1), (('bot', '1', 'app', 3600), 1)]
    >>> [(k, t.records) for k, t in d.tallies(width=86400).items()]
    [(('bot', '1', 'app', 0), 2)]
    """

    def __init__(self, width: int = ROLLUP_SECONDS) -> None:
        self.width = width
        self.cells: dict[RollupKey, dict[tuple[Any, ...], int]] = {}
        self.confs: dict[RollupKey, list[float]] = {}
        self.found: dict[RollupKey, dict[tuple[str, bool], int]] = {}

    def add(self, row: Sequence[Any], kinds: Mapping[str, str], sign: int = 1) -> None:
        """Count one :func:`build_row` row with its :func:`finding_kinds` (``sign=-1``
        takes a row away, as a replaced or pruned evaluation)."""
        width = self.width
        key = (row[1], row[2], row[3], int(row[6] // width) * width)
        cells = self.cells.get(key)
        if cells is None:
            cells = self.cells[key] = {}
            self.confs[key], self.found[key] = [0.0, 0], {}
        cell = tuple(row[7:12])
        cells[cell] = cells.get(cell, 0) + sign
        if row[12] is not None and row[7] == "ok":
            conf = self.confs[key]
            conf[0] += sign * row[12]
            conf[1] += sign
        if kinds:
            found = self.found[key]
            for kind, severity in kinds.items():
                k = (kind, severity == "info")
                found[k] = found.get(k, 0) + sign

    def tallies(
        self, into: dict[RollupKey, Tally] | None = None, width: int | None = None
    ) -> dict[RollupKey, Tally]:
        """The tallies per rollup key of buckets of ``width`` seconds (a multiple of this
        delta's; default: its own), merged into ``into`` when given."""
        cells, confs, found = self.cells, self.confs, self.found
        if width is not None and width != self.width:
            cells, confs, found = {}, {}, {}
            for key, counted in self.cells.items():
                wide = (key[0], key[1], key[2], key[3] // width * width)
                if wide not in cells:
                    cells[wide], confs[wide], found[wide] = {}, [0.0, 0], {}
                _add_counts(cells[wide], counted)
                _add_counts(found[wide], self.found[key])
                confs[wide][0] += self.confs[key][0]
                confs[wide][1] += self.confs[key][1]
        out = {} if into is None else into
        for key, counted in cells.items():
            tally = _tally_of_cells(counted, found[key])
            tally.confidence_sum, tally.confidence_n = confs[key][0], int(confs[key][1])
            if key in out:
                out[key].merge(tally)
            else:
                out[key] = tally
        return out


def _tally_of_cells(
    counted: Mapping[tuple[Any, ...], int], found: Mapping[tuple[str, bool], int]
) -> Tally:
    """The tally of counts of (status, score, band, filter, verdict) cells and of
    (kind, is_info) findings, counted in plain dicts (what ``Tally.add_cell`` per cell
    and a Counter increment per finding give, without a call per cell)."""
    parts: LightCounts = ({}, {}, {}, {}, {})
    statuses, scores, bands, filters, verdicts = parts
    for (status, score, band, filt, verdict), count in counted.items():
        count_light(parts, status, score, band, filt, verdict, count)
    findings: dict[str, int] = {}
    excused: dict[str, int] = {}
    for (kind, info), count in found.items():
        part = excused if info else findings
        part[kind] = part.get(kind, 0) + count
    return Tally(
        records=sum(counted.values()),
        statuses=_counter(statuses),
        scores=_counter(scores),
        bands=_counter(bands),
        filters=_counter(filters),
        verdicts=_counter(verdicts),
        findings=_counter(findings),
        excused=_counter(excused),
    )


def _add_counts(into: dict[Any, int], counts: Mapping[Any, int]) -> None:
    for k, n in counts.items():
        into[k] = into.get(k, 0) + n


class Rollups:
    """What a batch adds to every rollup table (:data:`ROLLUP_TABLES`): rows are counted
    once, in the finest buckets, and summed into each table's.

    >>> r = Rollups()
    >>> r.add((None, "bot", "1", "app", None, None, 1250.0, "ok", 80.0, "good", None,
    ...        None, 0.9), {})
    >>> {name: list(t) for name, t in r.tallies().items()}
    {'rollups': [('bot', '1', 'app', 0)], 'rollups_10m': [('bot', '1', 'app', 1200)]}
    """

    def __init__(self) -> None:
        self.delta = RollupDelta(min(table.width for table in ROLLUP_TABLES))

    def add(self, row: Sequence[Any], kinds: Mapping[str, str], sign: int = 1) -> None:
        """Count one :func:`build_row` row (as :meth:`RollupDelta.add`)."""
        self.delta.add(row, kinds, sign)

    def tallies(self, into: RollupDeltas | None = None) -> RollupDeltas:
        """The tallies per table and rollup key, merged into ``into`` when given."""
        out: RollupDeltas = {} if into is None else into
        for table in ROLLUP_TABLES:
            out[table.name] = self.delta.tallies(out.get(table.name), table.width)
        return out


def negated(tally: Tally) -> Tally:
    """A tally that, merged, takes ``tally`` away again."""
    out = Tally(records=-tally.records, confidence_sum=-tally.confidence_sum)
    out.confidence_n = -tally.confidence_n
    for name in ("statuses", "scores", "bands", "filters", "verdicts", "findings", "excused"):
        mine: Counter[Any] = getattr(out, name)
        for key, n in getattr(tally, name).items():
            mine[key] = -n
    return out


_COUNTERS = ("statuses", "bands", "filters", "verdicts", "findings", "excused")


def _counter(counts: Mapping[Any, int]) -> Counter[Any]:
    """A Counter holding ``counts`` (built without Counter's Python-level update)."""
    out: Counter[Any] = Counter.__new__(Counter)
    dict.update(out, counts)
    return out


class TallySum:
    """Stored tallies (``Tally.to_dict`` form) summed as plain dicts: summing thousands of
    rollup rows this way is several times faster than a Tally and a merge per row. The
    first one is taken as it comes (a sub-hour window often sums one rollup row)."""

    def __init__(self) -> None:
        self.empty = True
        self.records = 0
        self.confidence_sum = 0.0
        self.confidence_n = 0
        self.scores: dict[float, int] = {}
        self.counters: dict[str, dict[str, int]] = {name: {} for name in _COUNTERS}

    @classmethod
    def of(cls, d: dict[str, Any]) -> TallySum:
        """A sum holding one parsed stored tally."""
        out = cls()
        out.add(d)
        return out

    def add(self, d: dict[str, Any]) -> None:
        """Add one parsed stored tally (this sum may keep its dicts: parse it afresh)."""
        if self.empty:
            self.empty = False
            self.records = d.get("records", 0)
            self.confidence_sum = 0.0 + d.get("confidence_sum", 0.0)
            self.confidence_n = d.get("confidence_n", 0)
            self.scores = {float(k): n for k, n in d.get("scores", ())}
            counters = self.counters
            for name in _COUNTERS:
                part = d.get(name)
                if part:
                    counters[name] = part
            return
        self.records += d.get("records", 0)
        self.confidence_sum += d.get("confidence_sum", 0.0)
        self.confidence_n += d.get("confidence_n", 0)
        scores = self.scores
        for k, n in d.get("scores", ()):
            k = float(k)
            scores[k] = scores.get(k, 0) + n
        for name in _COUNTERS:
            part = d.get(name)
            if part:
                mine = self.counters[name]
                for k, n in part.items():
                    mine[k] = mine.get(k, 0) + n

    def tally(self) -> Tally:
        c = self.counters
        return Tally(
            records=self.records,
            statuses=_counter(c["statuses"]),
            scores=_counter(self.scores),
            bands=_counter(c["bands"]),
            filters=_counter(c["filters"]),
            verdicts=_counter(c["verdicts"]),
            confidence_sum=self.confidence_sum,
            confidence_n=self.confidence_n,
            findings=_counter(c["findings"]),
            excused=_counter(c["excused"]),
        )


def stored_tally(d: dict[str, Any]) -> Tally:
    """The Tally of one parsed stored tally (``Tally.to_dict`` form), keeping its dicts
    (parse it afresh for each call): what ``TallySum().add(d)`` then ``tally()`` give,
    without the sum.

    >>> t = stored_tally({"records": 2, "statuses": {"ok": 2}, "scores": [[80.0, 2]]})
    >>> (t.records, dict(t.scores), dict(t.bands))
    (2, {80.0: 2}, {})
    """
    get = d.get
    pairs = get("scores", ())
    scores: Counter[float] = Counter.__new__(Counter)
    dict.update(scores, pairs)
    if not all(type(k) is float for k in scores):
        scores = _counter({float(k): n for k, n in pairs})
    return Tally(
        records=get("records", 0),
        statuses=_counter(get("statuses") or {}),
        scores=scores,
        bands=_counter(get("bands") or {}),
        filters=_counter(get("filters") or {}),
        verdicts=_counter(get("verdicts") or {}),
        confidence_sum=0.0 + get("confidence_sum", 0.0),
        confidence_n=get("confidence_n", 0),
        findings=_counter(get("findings") or {}),
        excused=_counter(get("excused") or {}),
    )

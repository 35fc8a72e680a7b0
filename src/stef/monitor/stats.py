"""Figures over evaluations: tallies that merge, and the numbers a team looks at.

A :class:`Tally` counts what a set of evaluations holds (statuses, score values, bands,
filter classes, verdicts, confidence, finding kinds). Tallies merge, so a store can keep
one per agent/version/app and hour and add them up for any window; :func:`figures`
turns a tally into records, coverage, mean, median, P10, P90 and shares. Everything here
is pure: no I/O, no clock.

>>> t = Tally()
>>> for s in (40.0, 80.0, 100.0):
...     t.add({"status": "ok", "score": s, "band": "good", "confidence": 0.9, "findings": []})
>>> t.add({"status": "sql_unparseable", "score": None, "findings": []})
>>> f = figures(t)
>>> (f.records, f.evaluated, f.coverage, f.mean, f.median)
(4, 3, 0.75, 73.33, 80.0)
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import itertools
import math
import operator
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

#: Bands, filter classes and verdicts in display order (best first).
BANDS = ("excellent", "good", "marginal", "poor")
FILTER_CLASSES = ("fully_applied", "fully_applied_with_extras", "partially_applied", "not_applied")
VERDICTS = ("correct", "likely_correct", "potentially_incorrect", "incorrect")
#: Keys a figure can be grouped by, besides ``metadata.KEY``.
GROUP_KEYS = ("agent", "agent_version", "app")

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``90s``, ``30m``, ``6h``, ``1d`` or ``2w``.

    >>> parse_duration("1d"), parse_duration("30m")
    (86400.0, 1800.0)
    """
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"not a duration: {text!r} (use e.g. 30m, 6h, 1d, 2w)")
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if seconds <= 0:
        raise ValueError(f"duration must be positive: {text!r}")
    return seconds


def to_epoch(value: Any) -> float | None:
    """Epoch seconds of an ISO 8601 time (naive times are UTC), or ``None``.

    >>> to_epoch("2024-05-01T00:00:00Z"), to_epoch("2024-05-01"), to_epoch(None)
    (1714521600.0, 1714521600.0, None)
    """
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"not a time: {value!r}")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        from dateutil import parser

        try:
            dt = parser.isoparse(value.strip())
        except (ValueError, OverflowError) as exc:
            raise ValueError(f"not an ISO 8601 time: {value!r}") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def parse_time(text: str, now: float) -> float:
    """Epoch seconds of ``--since``/``--until``: an ISO time or a duration ago.

    >>> parse_time("1d", now=86400.0 * 3), parse_time("1970-01-02", now=0.0)
    (172800.0, 86400.0)
    """
    if _DURATION.match(text):
        return now - parse_duration(text)
    epoch = to_epoch(text)
    assert epoch is not None
    return epoch


def iso(epoch: float) -> str:
    """ISO 8601 UTC text of epoch seconds.

    >>> iso(86400)
    '1970-01-02T00:00:00Z'
    """
    dt = datetime.fromtimestamp(epoch, tz=timezone.utc)
    text = dt.isoformat(timespec="microseconds" if dt.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def window_start(t: float, width: float | None) -> float | None:
    """Start of the window of ``width`` seconds holding ``t`` (aligned on the epoch, UTC).

    >>> window_start(90000.0, 86400.0), window_start(5.0, None)
    (86400.0, None)
    """
    if width is None:
        return None
    return math.floor(t / width) * width


def group_value(evaluation: Mapping[str, Any], key: str) -> str | None:
    """The value an evaluation has for a grouping key (``agent`` or ``metadata.team``).

    >>> group_value({"metadata": {"team": "ops"}}, "metadata.team")
    'ops'
    """
    if key.startswith("metadata."):
        meta = evaluation.get("metadata")
        value = meta.get(key[len("metadata.") :]) if isinstance(meta, dict) else None
    else:
        value = evaluation.get(key)
    if isinstance(value, bool):
        return "true" if value else "false"
    return None if value is None else str(value)


def check_group_keys(by: Sequence[str]) -> None:
    """Raise ``ValueError`` for a grouping key other than agent/agent_version/app/metadata.KEY."""
    for key in by:
        if key not in GROUP_KEYS and not (key.startswith("metadata.") and len(key) > 9):
            allowed = ", ".join((*GROUP_KEYS, "metadata.KEY"))
            raise ValueError(f"cannot group by {key!r}; use {allowed}")


def finding_kinds(evaluation: Mapping[str, Any]) -> dict[str, str]:
    """Each finding kind in an evaluation with its most severe severity.

    >>> fs = [{"kind": "a", "severity": "info"}, {"kind": "a", "severity": "error"}]
    >>> finding_kinds({"findings": fs})
    {'a': 'error'}
    """
    order = {"info": 0, "warning": 1, "error": 2}
    kinds: dict[str, str] = {}
    for f in evaluation.get("findings") or ():
        if not isinstance(f, dict) or not f.get("kind"):
            continue
        kind, sev = str(f["kind"]), str(f.get("severity") or "warning")
        sev = sev if sev in order else "warning"
        if kind not in kinds or order[sev] > order[kinds[kind]]:
            kinds[kind] = sev
    return kinds


@dataclass
class Tally:
    """Counts over a set of evaluations; tallies add up with :meth:`merge`.

    ``findings`` counts evaluations with a warning or error finding of each kind;
    ``excused`` counts kinds that only appeared as ``info`` (excused by a rule).
    """

    records: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    scores: Counter[float] = field(default_factory=Counter)
    bands: Counter[str] = field(default_factory=Counter)
    filters: Counter[str] = field(default_factory=Counter)
    verdicts: Counter[str] = field(default_factory=Counter)
    confidence_sum: float = 0.0
    confidence_n: int = 0
    findings: Counter[str] = field(default_factory=Counter)
    excused: Counter[str] = field(default_factory=Counter)

    def add(
        self, evaluation: Mapping[str, Any], sign: int = 1, kinds: Mapping[str, str] | None = None
    ) -> None:
        """Count one evaluation (``sign=-1`` takes it away again).

        ``kinds`` is its :func:`finding_kinds`, when the caller already has them.
        """
        self.records += sign
        status = str(evaluation.get("status") or "internal_error")
        self.statuses[status] += sign
        if status == "ok":
            score = evaluation.get("score")
            if isinstance(score, (int, float)):
                self.scores[float(score)] += sign
            if evaluation.get("band"):
                self.bands[str(evaluation["band"])] += sign
            breakdown = evaluation.get("breakdown") or {}
            if breakdown.get("filter_status"):
                self.filters[str(breakdown["filter_status"])] += sign
            if breakdown.get("verdict"):
                self.verdicts[str(breakdown["verdict"])] += sign
            conf = breakdown.get("confidence")
            if isinstance(conf, (int, float)):
                self.confidence_sum += sign * float(conf)
                self.confidence_n += sign
        if kinds is None:
            kinds = finding_kinds(evaluation)
        for kind, severity in kinds.items():
            (self.excused if severity == "info" else self.findings)[kind] += sign

    def add_cell(
        self,
        status: str,
        score: float | None,
        band: str | None,
        filter_status: str | None,
        verdict: str | None,
        count: int,
        confidence_sum: float,
        confidence_n: int,
    ) -> None:
        """Count ``count`` evaluations sharing these columns (as a store groups them)."""
        self.records += count
        self.statuses[status] += count
        if status == "ok":
            if score is not None:
                self.scores[float(score)] += count
            if band:
                self.bands[band] += count
            if filter_status:
                self.filters[filter_status] += count
            if verdict:
                self.verdicts[verdict] += count
            self.confidence_sum += confidence_sum
            self.confidence_n += confidence_n

    def merge(self, other: Tally) -> Tally:
        """Add ``other`` into this tally and return it."""
        self.records += other.records
        self.confidence_sum += other.confidence_sum
        self.confidence_n += other.confidence_n
        for name in ("statuses", "scores", "bands", "filters", "verdicts", "findings", "excused"):
            mine: Counter[Any] = getattr(self, name)
            for key, n in getattr(other, name).items():
                mine[key] += n
        return self

    @property
    def evaluated(self) -> int:
        return self.statuses.get("ok", 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; zero counts are dropped."""

        def clean(c: Counter[Any]) -> dict[str, int]:
            return {str(k): n for k, n in c.items() if n}

        return {
            "records": self.records,
            "statuses": clean(self.statuses),
            "scores": [[k, n] for k, n in self.scores.items() if n],
            "bands": clean(self.bands),
            "filters": clean(self.filters),
            "verdicts": clean(self.verdicts),
            "confidence_sum": self.confidence_sum,
            "confidence_n": self.confidence_n,
            "findings": clean(self.findings),
            "excused": clean(self.excused),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Tally:
        return cls(
            records=int(d.get("records", 0)),
            statuses=Counter(d.get("statuses", {})),
            scores=Counter({float(k): int(n) for k, n in d.get("scores", [])}),
            bands=Counter(d.get("bands", {})),
            filters=Counter(d.get("filters", {})),
            verdicts=Counter(d.get("verdicts", {})),
            confidence_sum=float(d.get("confidence_sum", 0.0)),
            confidence_n=int(d.get("confidence_n", 0)),
            findings=Counter(d.get("findings", {})),
            excused=Counter(d.get("excused", {})),
        )

    def score_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct score values (sorted) and how often each occurs."""
        items = sorted((k, n) for k, n in self.scores.items() if n > 0)
        values = np.array([k for k, _ in items], dtype=float)
        counts = np.array([n for _, n in items], dtype=np.int64)
        return values, counts


#: Plain dicts that the counts of the light columns gather in before a :class:`Tally` takes
#: them: statuses, scores, bands, filter classes, verdicts (cheaper than Counters per cell).
_Counts = dict[str, int]
LightCounts = tuple[_Counts, dict[float, int], _Counts, _Counts, _Counts]


def count_light(
    parts: LightCounts,
    status: str,
    score: float | None,
    band: str | None,
    filter_status: str | None,
    verdict: str | None,
    n: int,
) -> None:
    """Add ``n`` rows of one (status, score, band, filter class, verdict) to ``parts``, as
    :meth:`Tally.add_cell` counts them (only evaluated rows have a score, band, …).

    >>> parts: LightCounts = ({}, {}, {}, {}, {})
    >>> count_light(parts, "ok", 80, "good", None, "correct", 3)
    >>> count_light(parts, "sql_unparseable", None, None, None, None, 1)
    >>> parts
    ({'ok': 3, 'sql_unparseable': 1}, {80.0: 3}, {'good': 3}, {}, {'correct': 3})
    """
    statuses, scores, bands, filters, verdicts = parts
    statuses[status] = statuses.get(status, 0) + n
    if status != "ok":
        return
    if score is not None:
        scores[float(score)] = scores.get(float(score), 0) + n
    if band:
        bands[band] = bands.get(band, 0) + n
    if filter_status:
        filters[filter_status] = filters.get(filter_status, 0) + n
    if verdict:
        verdicts[verdict] = verdicts.get(verdict, 0) + n


def weighted_quantile(values: np.ndarray, counts: np.ndarray, q: float) -> float | None:
    """The ``q`` quantile of ``values`` repeated ``counts`` times (numpy's linear method).

    Exact: the same number ``np.quantile`` gives on the expanded sample.

    >>> weighted_quantile(np.array([1.0, 2.0, 10.0]), np.array([1, 2, 1]), 0.5)
    2.0
    """
    n = int(counts.sum())
    if n == 0:
        return None
    order = np.argsort(values, kind="stable")
    v, cum = values[order], np.cumsum(counts[order])
    h = (n - 1) * q
    lo, hi = math.floor(h), math.ceil(h)
    v_lo = float(v[np.searchsorted(cum, lo, side="right")])
    v_hi = float(v[np.searchsorted(cum, hi, side="right")])
    return v_lo + (h - lo) * (v_hi - v_lo)


def score_summary(
    scores: Mapping[float, int],
) -> tuple[float | None, float | None, float | None, float | None]:
    """Mean, median, P10 and P90 of scores given as value → count, in plain Python.

    The same numbers as numpy on :meth:`Tally.score_arrays` (the quantiles are
    :func:`weighted_quantile`'s arithmetic, the sum is numpy's pairwise summation), several
    times faster on the few dozen distinct values a group holds.

    >>> score_summary({40.0: 1, 80.0: 1, 100.0: 1})
    (73.33333333333333, 80.0, 48.0, 96.0)
    """
    values = sorted(scores)
    counts = [scores[v] for v in values]
    if set(map(type, values)) != _FLOATS or min(counts) <= 0:
        counted = {float(k): n for k, n in scores.items() if n > 0}  # ints, or counts <= 0
        values = sorted(counted)
        counts = [counted[v] for v in values]
        if not values:
            return None, None, None, None
    cum = list(itertools.accumulate(counts))
    last = cum[-1] - 1
    right = bisect.bisect_right
    quantiles = []
    for q in (0.5, 0.1, 0.9):
        h = last * q  # >= 0: int() is floor, and ceil is one more unless h is whole
        lo = int(h)
        v_lo = values[right(cum, lo)]
        v_hi = values[right(cum, lo if h == lo else lo + 1)]
        quantiles.append(v_lo + (h - lo) * (v_hi - v_lo))
    n = last + 1
    weighted = list(map(operator.mul, values, counts))
    mean = (_pairwise_sum(weighted) + 0.0) / n  # + 0.0: never -0.0
    return mean, quantiles[0], quantiles[1], quantiles[2]


def _pairwise_sum(a: Sequence[float]) -> float:
    """``numpy.sum`` of a float64 vector, bit for bit: numpy's pairwise summation (eight
    accumulators per block of up to 128 values, halves above that).

    >>> _pairwise_sum([0.1] * 10) == float(np.sum(np.full(10, 0.1)))
    True
    """
    n = len(a)
    if n < 8:
        res = 0.0
        for x in a:
            res += x
        return res
    if n <= 128:
        r = list(a[:8])
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for x in a[i:]:
            res += x
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(a[:half]) + _pairwise_sum(a[half:])


_FLOATS = {float}
#: Totals up to this get a table of their shares (:func:`_share_table`).
_TABLED = 512
_share_tables: dict[int, list[float]] = {}


def _share_table(total: int) -> list[float] | None:
    """``[round(i / total, 4) for i in 0..total]``, kept per total up to :data:`_TABLED`
    (``None`` above it, or for no records): figures of thousands of small groups look their
    shares up instead of rounding each one (``round(x, 4)`` is the dearest step of a share).

    >>> _share_table(4)
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    table = _share_tables.get(total)
    if table is None and 0 < total <= _TABLED:
        table = _share_tables[total] = [round(i / total, 4) for i in range(total + 1)]
    return table


def _share(n: int, total: int, table: list[float] | None) -> float:
    """``round(n / total, 4)``, looked up in ``table`` (:func:`_share_table` of ``total``)
    when there is one and ``n`` is within it."""
    if table is not None and 0 <= n <= total:
        return table[n]
    return round(n / total, 4)


def _shares(
    counter: Mapping[str, int],
    order: Sequence[str],
    total: int,
    table: list[float] | None = None,
) -> dict[str, float]:
    """Share of each of ``order``, then of any other key counted (sorted), in ``total``
    (``table``: :func:`_share_table` of ``total``, when there is one)."""
    if not total:
        out = dict.fromkeys(order, 0.0)
    elif table is None:
        get = counter.get
        out = {k: round(get(k, 0) / total, 4) for k in order}
    else:
        out = {}
        for k in order:
            n = counter.get(k, 0)
            out[k] = table[n] if 0 <= n <= total else round(n / total, 4)
    if counter.keys() <= out.keys():
        return out
    extra = [k for k, n in counter.items() if n and k not in out]
    for k in sorted(extra):
        out[k] = round(counter[k] / total, 4) if total else 0.0
    return out


@dataclass
class Figures:
    """What one group in one window looks like; ``to_dict`` is the JSON/CSV row."""

    records: int
    evaluated: int
    coverage: float | None
    mean: float | None
    median: float | None
    p10: float | None
    p90: float | None
    bands: dict[str, float]
    filters: dict[str, float]
    verdicts: dict[str, float]
    mean_confidence: float | None
    top_findings: list[tuple[str, int, float]]
    errors: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "evaluated": self.evaluated,
            "coverage": self.coverage,
            "mean": self.mean,
            "median": self.median,
            "p10": self.p10,
            "p90": self.p90,
            "bands": self.bands,
            "filters": self.filters,
            "verdicts": self.verdicts,
            "mean_confidence": self.mean_confidence,
            "top_findings": [
                {"kind": k, "records": n, "share": share} for k, n, share in self.top_findings
            ],
            "errors": self.errors,
        }


def figures(tally: Tally, top: int = 5) -> Figures:
    """Figures of one tally: coverage, mean/median/P10/P90, shares, top finding kinds.

    Shares of bands, filter classes and verdicts are over evaluated records; finding
    shares over all records.
    """
    mean, median, p10, p90 = score_summary(tally.scores)
    records = tally.records
    evaluated = tally.statuses.get("ok", 0)
    of_records = _share_table(records)
    of_evaluated = _share_table(evaluated)
    found = tally.findings
    ranked = sorted(((n_, k) for k, n_ in found.items() if n_ > 0), key=_by_count) if found else []
    statuses = tally.statuses
    errors = (
        {k: v for k, v in sorted(statuses.items()) if k != "ok" and v > 0}
        if len(statuses) > 1 or "ok" not in statuses
        else {}
    )
    conf_n = tally.confidence_n
    return Figures(
        records=records,
        evaluated=evaluated,
        coverage=_share(evaluated, records, of_records) if records else None,
        mean=None if mean is None else round(mean, 2),
        median=None if median is None else round(median, 2),
        p10=None if p10 is None else round(p10, 2),
        p90=None if p90 is None else round(p90, 2),
        bands=_shares(tally.bands, BANDS, evaluated, of_evaluated),
        filters=_shares(tally.filters, FILTER_CLASSES, evaluated, of_evaluated),
        verdicts=_shares(tally.verdicts, VERDICTS, evaluated, of_evaluated),
        mean_confidence=round(tally.confidence_sum / conf_n, 4) if conf_n else None,
        top_findings=[(k, n_, _share(n_, records, of_records)) for n_, k in ranked[:top]],
        errors=errors,
    )


def _by_count(item: tuple[int, str]) -> tuple[int, str]:
    """Finding kinds ranked by count (most first), then by name."""
    return -item[0], item[1]


GroupKey = tuple[tuple[str | None, ...], float | None]


def tally_evaluations(
    evaluations: Iterable[Mapping[str, Any]],
    by: Sequence[str] = (),
    window: float | None = None,
) -> dict[GroupKey, Tally]:
    """Tallies per (group values, window start) straight from evaluation dicts.

    The window is placed by the record's ``timestamp``, else ``evaluated_at``.

    >>> evs = [{"agent": "a", "status": "ok"}, {"agent": "b", "status": "ok"}]
    >>> sorted(k for k in tally_evaluations(evs, by=["agent"]))
    [(('a',), None), (('b',), None)]
    """
    check_group_keys(by)
    out: dict[GroupKey, Tally] = {}
    for ev in evaluations:
        start = None
        if window is not None:
            t = to_epoch(ev.get("timestamp")) or to_epoch(ev.get("evaluated_at")) or 0.0
            start = window_start(t, window)
        key = (tuple(group_value(ev, k) for k in by), start)
        out.setdefault(key, Tally()).add(ev)
    return out


@dataclass
class Row:
    """One line of ``stef stats``: the group, the window and its figures."""

    group: dict[str, str | None]
    window_start: float | None
    figures: Figures

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = dict(self.group)
        d["window_start"] = None if self.window_start is None else iso(self.window_start)
        d.update(self.figures.to_dict())
        return d


def rows(tallies: Mapping[GroupKey, Tally], by: Sequence[str], top: int = 5) -> list[Row]:
    """One :class:`Row` per tally, sorted by group then window."""

    keys: dict[tuple[str | None, ...], tuple[Any, ...]] = {}  # groups repeat over windows

    def sort_key(item: tuple[GroupKey, Tally]) -> tuple[Any, ...]:
        (values, start), _ = item
        key = keys.get(values)
        if key is None:
            key = keys[values] = tuple((v is None, v or "") for v in values)
        return (key, start or 0.0)

    with paused_gc():
        return [
            Row(dict(zip(by, values, strict=True)), start, figures(tally, top))
            for (values, start), tally in sorted(tallies.items(), key=sort_key)
        ]


_gc_lock = threading.Lock()
_gc_pauses = [0, False]  # how many callers are inside paused_gc; whether gc was enabled


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while tallies or figures of many groups are
    built: they hold no reference cycles, yet each few hundred new dicts start a
    collection that walks every object alive (a third of the time over 25,920 groups).
    Nested and concurrent pauses (threads of ``stef serve``) count: the collector runs
    again when the last one ends, if it ran before the first.

    >>> import gc
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    with _gc_lock:
        if _gc_pauses[0] == 0:
            _gc_pauses[1] = gc.isenabled()
            gc.disable()
        _gc_pauses[0] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses[0] -= 1
            if _gc_pauses[0] == 0 and _gc_pauses[1]:
                _skip_pending_collection()
                gc.enable()


def _skip_pending_collection() -> None:
    """Move every object the collector tracks to its oldest generation, unscanned, and
    reset the count of new ones (``gc.freeze`` then ``gc.unfreeze``): what a pause built
    (hundreds of thousands of objects over thousands of groups) would otherwise be walked
    by the first collection after it, ~0.1 s, for no cycle. The oldest generation is
    collected as before, when it has grown by a quarter; objects that a caller froze stay
    frozen.

    >>> _skip_pending_collection()
    """
    if gc.get_freeze_count():  # a caller's frozen objects: leave the generations alone
        return
    gc.freeze()
    gc.unfreeze()


def flat_row(row: Row) -> dict[str, Any]:
    """A row flattened to scalar columns, for CSV.

    >>> flat_row(Row({"agent": "a"}, None, figures(Tally())))["bands.poor"]
    0.0
    """
    d = row.to_dict()
    out: dict[str, Any] = {}
    for key, value in d.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                out[f"{key}.{sub}"] = v
        elif key == "top_findings":
            out[key] = ";".join(f"{f['kind']}:{f['records']}" for f in value)
        else:
            out[key] = value
    return out

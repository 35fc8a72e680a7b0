"""The figures of a group (``stats.figures``, ``stats.rows``), as the store's stats read
them, equal those of the straightforward reference below: the share tables, the
quantiles without ``math.floor``/``math.ceil`` and the sort keys kept per group change
no number."""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from stef.monitor import stats
from stef.monitor.stats import BANDS, FILTER_CLASSES, VERDICTS, Tally, figures, rows


def _ref_summary(scores: Mapping[float, int]) -> tuple[Any, ...]:
    counted = {float(k): n for k, n in scores.items() if n > 0}
    if not counted:
        return None, None, None, None
    values = sorted(counted)
    counts = [counted[v] for v in values]
    cum = list(itertools.accumulate(counts))
    n = cum[-1]
    quantiles = []
    for q in (0.5, 0.1, 0.9):
        h = (n - 1) * q
        lo, hi = math.floor(h), math.ceil(h)
        v_lo = values[bisect.bisect_right(cum, lo)]
        quantiles.append(v_lo + (h - lo) * (values[bisect.bisect_right(cum, hi)] - v_lo))
    weighted = np.array([v * c for v, c in zip(values, counts, strict=True)], dtype=float)
    mean = (float(np.sum(weighted)) + 0.0) / n
    return mean, quantiles[0], quantiles[1], quantiles[2]


def _ref_shares(counter: Counter[str], order: Sequence[str], total: int) -> dict[str, float]:
    get = counter.get
    out = {k: round(get(k, 0) / total, 4) for k in order} if total else dict.fromkeys(order, 0.0)
    for k in sorted(k for k, n in counter.items() if n and k not in out):
        out[k] = round(counter[k] / total, 4) if total else 0.0
    return out


def _r(x: float | None, digits: int = 2) -> float | None:
    return None if x is None else round(x, digits)


def _ref_figures(t: Tally, top: int = 5) -> dict[str, Any]:
    mean, median, p10, p90 = _ref_summary(t.scores)
    ev = t.statuses.get("ok", 0)
    ranked = sorted(((n, k) for k, n in t.findings.items() if n > 0), key=lambda x: (-x[0], x[1]))
    return stats.Figures(
        records=t.records,
        evaluated=ev,
        coverage=round(ev / t.records, 4) if t.records else None,
        mean=_r(mean),
        median=_r(median),
        p10=_r(p10),
        p90=_r(p90),
        bands=_ref_shares(t.bands, BANDS, ev),
        filters=_ref_shares(t.filters, FILTER_CLASSES, ev),
        verdicts=_ref_shares(t.verdicts, VERDICTS, ev),
        mean_confidence=_r(t.confidence_sum / t.confidence_n, 4) if t.confidence_n else None,
        top_findings=[(k, n, round(n / t.records, 4)) for n, k in ranked[:top]],
        errors={k: v for k, v in sorted(t.statuses.items()) if k != "ok" and v > 0},
    ).to_dict()


def _random_tally(rng: random.Random) -> Tally:
    records = rng.choice([0, 1, 2, 7, 38, 39, 200, 511, 512, 513, 5000, 250_000])
    ok = rng.randint(0, records)
    t = Tally(records=records)
    t.statuses["ok"] = ok
    if records > ok:
        t.statuses[rng.choice(["sql_unparseable", "internal_error"])] = records - ok
    if rng.random() < 0.1:
        t.statuses["timeout"] = 0  # a zero count is no error
    pick = rng.choice([[float(v) for v in range(0, 101, 5)], [80, 90, 100], [0.5, 33.3, 66.7]])
    for _ in range(min(ok, rng.randint(0, 140))):
        t.scores[rng.choice(pick)] += rng.randint(1, 3)
    if rng.random() < 0.1:
        t.scores[12.5] = 0  # counts of zero or below are left out
        t.scores[13.5] = -1
    for counter, names in ((t.bands, BANDS), (t.filters, FILTER_CLASSES), (t.verdicts, VERDICTS)):
        left = ok
        for name in names[: rng.randint(0, len(names))]:
            counter[name] = n = rng.randint(0, left)
            left -= n
        if rng.random() < 0.15:
            counter["unknown_class"] = rng.randint(0, 3)  # a key beyond the display order
        if rng.random() < 0.05:
            counter[names[0]] = ok + 5  # more than the total: no table, still round()
    for kind in rng.sample(
        ["a", "b", "c", "d", "e", "f", "g"], rng.randint(0, 7) if records else 0
    ):
        t.findings[kind] = rng.randint(0, records)
    t.confidence_n = ok
    t.confidence_sum = sum(rng.random() for _ in range(min(ok, 50)))
    return t


def test_figures_equal_the_reference_on_random_tallies() -> None:
    rng = random.Random(16)
    for _ in range(3000):
        t = _random_tally(rng)
        assert figures(t).to_dict() == _ref_figures(t), t


def test_figures_of_an_empty_tally_and_of_int_scores() -> None:
    assert figures(Tally()).to_dict() == _ref_figures(Tally())
    t = Tally(records=3, statuses=Counter({"ok": 3}), scores=Counter({80: 2, 90.0: 1}))
    assert figures(t).to_dict() == _ref_figures(t)
    assert figures(t).mean == 83.33


@pytest.mark.parametrize("total", [1, 3, 38, 512])
def test_share_tables_are_round(total: int) -> None:
    table = stats._share_table(total)
    assert table == [round(i / total, 4) for i in range(total + 1)]
    assert stats._share_table(513) is None and stats._share_table(0) is None


def test_rows_sorted_as_before() -> None:
    rng = random.Random(3)
    tallies = {}
    for _ in range(300):
        values = (rng.choice(["a", "b", None, ""]), rng.choice(["1", None]))
        start = rng.choice([None, 0.0, 600.0, 1200.0])
        tallies[(values, start)] = _random_tally(rng)
    got = [(r.group, r.window_start, r.figures.to_dict()) for r in rows(tallies, ["x", "y"])]

    def sort_key(item: Any) -> Any:
        (values, start), _ = item
        return (tuple((v is None, v or "") for v in values), start or 0.0)

    want = [
        (dict(zip(["x", "y"], values, strict=True)), start, _ref_figures(t))
        for (values, start), t in sorted(tallies.items(), key=sort_key)
    ]
    assert got == want

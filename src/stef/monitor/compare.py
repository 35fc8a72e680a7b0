"""Is the candidate better or worse than the baseline? Pure statistics over two samples.

Inputs are two :class:`~stef.monitor.stats.Tally` (all scores, as value counts) and, for the
paired test, each side's ``(normalised question, score)`` pairs. The bootstrap resamples
value counts with a multinomial draw, which is exactly resampling records with
replacement, at a cost that does not grow with the number of records.

The verdict comes from one test, chosen up front: the paired bootstrap of the mean
difference on questions both sides answered when there are enough of them (at least
``min_pairs`` questions, covering half of each side's records), else the unpaired
bootstrap. The candidate is ``worse`` (``better``) when the whole ``1 - alpha``
interval of that difference is below (above) zero. With fewer than ``min_records``
evaluated records on a side it is ``undecided``. The Wilcoxon signed-rank p-value on
the pairs is reported alongside.

>>> from stef.monitor.stats import Tally
>>> a, b = Tally(), Tally()
>>> for i in range(200):
...     a.add({"status": "ok", "score": 80.0 if i % 4 else 40.0})
...     b.add({"status": "ok", "score": 60.0 if i % 4 else 20.0})
>>> compare(a, b).verdict
'worse'
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import stats as sps

from stef.monitor.stats import BANDS, Tally, figures

#: Verdicts of a comparison.
VERDICTS = ("better", "worse", "no detectable difference", "undecided")
_CELLS = 4_000_000  # bootstrap draws x distinct values per chunk


@dataclass
class Estimate:
    """A difference (candidate - baseline) with its ``1 - alpha`` interval."""

    value: float | None
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: None if v is None else round(v, 4) for k, v in asdict(self).items()}


@dataclass
class Comparison:
    """Everything ``stef compare`` reports; ``to_dict`` is its JSON."""

    alpha: float
    baseline: dict[str, Any]
    candidate: dict[str, Any]
    mean_diff: Estimate
    p90_diff: Estimate
    coverage_diff: Estimate
    coverage_p: float | None
    coverage_verdict: str
    band_shift: dict[str, dict[str, float]]
    paired_n: int
    paired_mean_diff: Estimate
    wilcoxon_p: float | None
    test: str
    verdict: str
    reason: str
    min_detectable_diff: float | None
    findings_grew: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("mean_diff", "p90_diff", "coverage_diff", "paired_mean_diff"):
            d[key] = getattr(self, key).to_dict()
        return d

    @property
    def regression(self) -> bool:
        return self.verdict == "worse"


def _multinomial(
    values: np.ndarray, counts: np.ndarray, n_boot: int, rng: np.random.Generator
) -> Iterable[np.ndarray]:
    """Bootstrap draws (chunks of rows of resampled counts per distinct value)."""
    n = int(counts.sum())
    p = counts / n
    step = max(1, _CELLS // max(1, len(values)))
    for start in range(0, n_boot, step):
        yield rng.multinomial(n, p, size=min(step, n_boot - start))


def boot_means(
    values: np.ndarray, counts: np.ndarray, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Bootstrap distribution of the mean of ``values`` repeated ``counts`` times."""
    n = int(counts.sum())
    return np.concatenate([d @ values / n for d in _multinomial(values, counts, n_boot, rng)])


def boot_quantiles(
    values: np.ndarray, counts: np.ndarray, q: float, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Bootstrap distribution of the ``q`` quantile (numpy's linear method); values sorted."""
    n = int(counts.sum())
    h = (n - 1) * q
    lo, hi = math.floor(h), math.ceil(h)
    out = []
    for draws in _multinomial(values, counts, n_boot, rng):
        cum = np.cumsum(draws, axis=1)
        v_lo = values[(cum > lo).argmax(axis=1)]
        v_hi = values[(cum > hi).argmax(axis=1)]
        out.append(v_lo + (h - lo) * (v_hi - v_lo))
    return np.concatenate(out)


def _interval(dist: np.ndarray, alpha: float) -> tuple[float, float]:
    lo, hi = np.quantile(dist, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def mean_difference(
    baseline: Tally, candidate: Tally, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0
) -> tuple[Estimate, float | None]:
    """Candidate minus baseline mean score, bootstrap interval, and its standard error.

    >>> a, b = Tally(), Tally()
    >>> for s in (50.0, 60.0, 70.0) * 20:
    ...     a.add({"status": "ok", "score": s}); b.add({"status": "ok", "score": s - 10})
    >>> est, se = mean_difference(a, b)
    >>> est.value, est.high < 0
    (-10.0, True)
    """
    (va, ca), (vb, cb) = baseline.score_arrays(), candidate.score_arrays()
    if not ca.sum() or not cb.sum():
        return Estimate(None), None
    rng = np.random.default_rng(seed)
    diff = boot_means(vb, cb, n_boot, rng) - boot_means(va, ca, n_boot, rng)
    value = float(vb @ cb / cb.sum() - va @ ca / ca.sum())
    return Estimate(value, *_interval(diff, alpha)), float(diff.std(ddof=1))


def paired_differences(
    baseline: Sequence[tuple[str | None, float]], candidate: Sequence[tuple[str | None, float]]
) -> np.ndarray:
    """Candidate minus baseline score per question both answered (each side's mean per question).

    >>> paired_differences([("q1", 80.0), ("q1", 60.0), ("q2", 50.0)], [("q1", 40.0), ("q3", 1.0)])
    array([-30.])
    """

    def per_question(pairs: Sequence[tuple[str | None, float]]) -> dict[str, float]:
        sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for q, s in pairs:
            if q:
                sums[q][0] += s
                sums[q][1] += 1
        return {q: total / n for q, (total, n) in sums.items()}

    a, b = per_question(baseline), per_question(candidate)
    shared = sorted(set(a) & set(b))
    return np.array([b[q] - a[q] for q in shared], dtype=float)


def _shared_share(
    baseline: Sequence[tuple[str | None, float]], candidate: Sequence[tuple[str | None, float]]
) -> float:
    """Smallest share, over the two sides, of records whose question the other side answered."""
    qa = {q for q, _ in baseline if q}
    qb = {q for q, _ in candidate if q}
    shared = qa & qb
    if not baseline or not candidate:
        return 0.0
    return min(
        sum(q in shared for q, _ in baseline) / len(baseline),
        sum(q in shared for q, _ in candidate) / len(candidate),
    )


def _paired(
    d: np.ndarray, alpha: float, n_boot: int, seed: int
) -> tuple[Estimate, float | None, float | None]:
    if len(d) == 0:
        return Estimate(None), None, None
    values, counts = np.unique(np.round(d, 6), return_counts=True)
    dist = boot_means(values, counts, n_boot, np.random.default_rng(seed + 1))
    wilcoxon_p: float | None = None
    if np.any(d != 0) and len(d) >= 2:
        wilcoxon_p = float(sps.wilcoxon(d, zero_method="wilcox").pvalue)
    elif len(d) >= 2:
        wilcoxon_p = 1.0
    return Estimate(float(d.mean()), *_interval(dist, alpha)), wilcoxon_p, float(dist.std(ddof=1))


def _coverage(a: Tally, b: Tally, alpha: float) -> tuple[Estimate, float | None]:
    if not a.records or not b.records:
        return Estimate(None), None
    pa, pb = a.evaluated / a.records, b.evaluated / b.records
    se = math.sqrt(pa * (1 - pa) / a.records + pb * (1 - pb) / b.records)
    z = float(sps.norm.ppf(1 - alpha / 2))
    table = [[a.evaluated, a.records - a.evaluated], [b.evaluated, b.records - b.evaluated]]
    p = float(sps.fisher_exact(table).pvalue)
    return Estimate(pb - pa, pb - pa - z * se, pb - pa + z * se), p


def _summary(t: Tally) -> dict[str, Any]:
    f = figures(t)
    return {
        "records": f.records,
        "evaluated": f.evaluated,
        "coverage": f.coverage,
        "mean": f.mean,
        "median": f.median,
        "p90": f.p90,
    }


def _findings_grew(a: Tally, b: Tally, top: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for kind in set(a.findings) | set(b.findings):
        sa = a.findings.get(kind, 0) / a.records if a.records else 0.0
        sb = b.findings.get(kind, 0) / b.records if b.records else 0.0
        if sb > sa:
            rows.append(
                {
                    "kind": kind,
                    "baseline": round(sa, 4),
                    "candidate": round(sb, 4),
                    "diff": round(sb - sa, 4),
                }
            )
    rows.sort(key=lambda r: (-r["diff"], r["kind"]))
    return rows[:top]


def _p90_diff(baseline: Tally, candidate: Tally, alpha: float, n_boot: int, seed: int) -> Estimate:
    """Difference of the 90th percentiles, with its bootstrap interval."""
    (va, ca), (vb, cb) = baseline.score_arrays(), candidate.score_arrays()
    if not (ca.sum() and cb.sum()):
        return Estimate(None)
    rng = np.random.default_rng(seed + 2)
    p90 = boot_quantiles(vb, cb, 0.9, n_boot, rng) - boot_quantiles(va, ca, 0.9, n_boot, rng)
    fa, fb = figures(baseline), figures(candidate)
    assert fa.p90 is not None and fb.p90 is not None
    return Estimate(fb.p90 - fa.p90, *_interval(p90, alpha))


def _coverage_verdict(cov_est: Estimate, cov_p: float | None, alpha: float) -> str:
    if cov_p is None or cov_p >= alpha or cov_est.value is None:
        return "no detectable difference"
    return "lower" if cov_est.value < 0 else "higher"


def _verdict(
    primary: Estimate,
    n_a: int,
    n_b: int,
    *,
    alpha: float,
    min_records: int,
    where: str,
    mdd: float | None,
) -> tuple[str, str]:
    """The verdict of the primary test's interval, and the sentence that explains it."""
    if n_a < min_records or n_b < min_records:
        return "undecided", (
            f"too few evaluated records (baseline {n_a}, candidate {n_b}; "
            f"at least {min_records} each needed)"
        )
    assert primary.low is not None and primary.high is not None
    level = f"{1 - alpha:.0%} CI"
    ci = f"{primary.value:+.2f} points ({level} {primary.low:+.2f} to {primary.high:+.2f})"
    if primary.high < 0:
        return "worse", f"mean score {ci} {where}"
    if primary.low > 0:
        return "better", f"mean score {ci} {where}"
    return "no detectable difference", (
        f"mean score {ci} {where}; differences smaller than about {mdd} points "
        f"cannot be detected with these samples"
    )


def _band_shift(baseline: Tally, candidate: Tally) -> dict[str, dict[str, float]]:
    """Each band's share of evaluated records on both sides, and the change."""
    band_shift = {}
    fa, fb = figures(baseline), figures(candidate)
    for band in BANDS:
        a_share, b_share = fa.bands.get(band, 0.0), fb.bands.get(band, 0.0)
        band_shift[band] = {
            "baseline": a_share,
            "candidate": b_share,
            "diff": round(b_share - a_share, 4),
        }
    return band_shift


def compare(
    baseline: Tally,
    candidate: Tally,
    baseline_pairs: Sequence[tuple[str | None, float]] = (),
    candidate_pairs: Sequence[tuple[str | None, float]] = (),
    *,
    alpha: float = 0.05,
    n_boot: int = 2000,
    seed: int = 0,
    min_records: int = 10,
    min_pairs: int = 20,
    power: float = 0.8,
) -> Comparison:
    """Compare a candidate with a baseline; see the module docstring for the verdict rule."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be within (0, 1), got {alpha}")
    mean_est, unpaired_se = mean_difference(baseline, candidate, alpha, n_boot, seed)
    p90_est = _p90_diff(baseline, candidate, alpha, n_boot, seed)
    d = paired_differences(baseline_pairs, candidate_pairs)
    paired_est, wilcoxon_p, paired_se = _paired(d, alpha, n_boot, seed)
    cov_est, cov_p = _coverage(baseline, candidate, alpha)

    use_paired = len(d) >= min_pairs and _shared_share(baseline_pairs, candidate_pairs) >= 0.5
    primary, se = (paired_est, paired_se) if use_paired else (mean_est, unpaired_se)
    z = float(sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power))
    mdd = None if se is None else round(z * se, 2)
    verdict, reason = _verdict(
        primary,
        baseline.evaluated,
        candidate.evaluated,
        alpha=alpha,
        min_records=min_records,
        where=f"on {len(d)} shared questions" if use_paired else "over all evaluated records",
        mdd=mdd,
    )
    return Comparison(
        alpha=alpha,
        baseline=_summary(baseline),
        candidate=_summary(candidate),
        mean_diff=mean_est,
        p90_diff=p90_est,
        coverage_diff=cov_est,
        coverage_p=None if cov_p is None else round(cov_p, 6),
        coverage_verdict=_coverage_verdict(cov_est, cov_p, alpha),
        band_shift=_band_shift(baseline, candidate),
        paired_n=len(d),
        paired_mean_diff=paired_est,
        wilcoxon_p=wilcoxon_p,
        test="paired bootstrap" if use_paired else "unpaired bootstrap",
        verdict=verdict,
        reason=reason,
        min_detectable_diff=mdd,
        findings_grew=_findings_grew(baseline, candidate, top=5),
    )

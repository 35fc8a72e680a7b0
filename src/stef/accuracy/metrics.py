"""Agreement between STEF's score and labels: pure functions, no I/O.

Conventions: ``labels`` are booleans, ``True`` = the SQL is correct (the positive class);
``scores`` are STEF scores (higher = more likely correct); a prediction is ``True``
("predicted correct") when ``score >= threshold``. "Negative" follows NL2SQL-Bugs: a
*predicted incorrect* row, i.e. an error the evaluator detected. Ratios whose
denominator is zero are ``None`` (JSON ``null``), never a silent 0.

>>> labels = [True, True, False, False]
>>> auroc(labels, [90.0, 60.0, 70.0, 20.0])
0.75
>>> detection_metrics(labels, predict([90.0, 60.0, 70.0, 20.0], 65))["negative_recall"]
0.5
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import cohen_kappa_score, roc_auc_score, roc_curve

from stef.accuracy.calibration import Calibration

#: The objectives :func:`fit_threshold` can maximise.
OBJECTIVES = ("balanced_accuracy", "accuracy")


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


@dataclass(frozen=True)
class Confusion:
    """Counts with "correct" as the positive class.

    ``tp``: correct, predicted correct; ``fn``: correct, predicted incorrect (a false
    alarm); ``fp``: incorrect, predicted correct (a missed error); ``tn``: incorrect,
    predicted incorrect (a detected error).
    """

    tp: int
    fn: int
    fp: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.fp + self.tn

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def confusion(labels: Sequence[bool], predicted: Sequence[bool]) -> Confusion:
    """Confusion counts of ``predicted`` against ``labels``.

    >>> confusion([True, True, False], [True, False, False])
    Confusion(tp=1, fn=1, fp=0, tn=1)
    """
    if len(labels) != len(predicted):
        raise ValueError("labels and predictions differ in length")
    tp = fn = fp = tn = 0
    for y, p in zip(labels, predicted, strict=True):
        if y:
            tp, fn = (tp + 1, fn) if p else (tp, fn + 1)
        else:
            fp, tn = (fp + 1, tn) if p else (fp, tn + 1)
    return Confusion(tp, fn, fp, tn)


def predict(scores: Sequence[float], threshold: float) -> list[bool]:
    """Predicted correct (``True``) where ``score >= threshold``.

    >>> predict([80.0, 75.0, 74.9], 75)
    [True, True, False]
    """
    return [s >= threshold for s in scores]


def accuracy(labels: Sequence[bool], predicted: Sequence[bool]) -> float | None:
    """Share of rows where the prediction matches the label.

    >>> accuracy([True, False, False, True], [True, True, False, False])
    0.5
    """
    c = confusion(labels, predicted)
    return _ratio(c.tp + c.tn, c.n)


def balanced_accuracy(labels: Sequence[bool], predicted: Sequence[bool]) -> float | None:
    """Mean of the recall of correct rows and the recall of incorrect rows.

    ``None`` unless both classes are present.

    >>> balanced_accuracy([True, True, True, False], [True, True, False, False])
    0.8333333333333333
    """
    c = confusion(labels, predicted)
    r_pos, r_neg = _ratio(c.tp, c.tp + c.fn), _ratio(c.tn, c.tn + c.fp)
    return None if r_pos is None or r_neg is None else (r_pos + r_neg) / 2


def cohen_kappa(labels: Sequence[bool], predicted: Sequence[bool]) -> float | None:
    """Cohen's κ between the labels and the predictions (``None`` when undefined).

    >>> cohen_kappa([True, False, True, False], [True, False, True, False])
    1.0
    """
    if not labels:
        return None
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")  # 0/0 when both sides are one constant class
        k = float(cohen_kappa_score(list(labels), list(predicted), labels=[False, True]))
    return None if math.isnan(k) else k


def detection_metrics(labels: Sequence[bool], predicted: Sequence[bool]) -> dict[str, Any]:
    """Accuracy, balanced accuracy, κ and the NL2SQL-Bugs metrics, with the confusion.

    Negative precision: of the rows flagged incorrect, the share truly incorrect.
    Negative recall: of the truly incorrect rows, the share flagged (errors detected).
    Positive precision / recall: the same for rows predicted / labelled correct.

    >>> m = detection_metrics([True, False, False], [True, True, False])
    >>> m["negative_precision"], m["negative_recall"], m["positive_precision"]
    (1.0, 0.5, 0.5)
    """
    c = confusion(labels, predicted)
    return {
        "n": c.n,
        "accuracy": accuracy(labels, predicted),
        "balanced_accuracy": balanced_accuracy(labels, predicted),
        "kappa": cohen_kappa(labels, predicted),
        "negative_precision": _ratio(c.tn, c.tn + c.fn),
        "negative_recall": _ratio(c.tn, c.tn + c.fp),
        "positive_precision": _ratio(c.tp, c.tp + c.fp),
        "positive_recall": _ratio(c.tp, c.tp + c.fn),
        "confusion": c.to_dict(),
    }


def auroc(labels: Sequence[bool], scores: Sequence[float]) -> float | None:
    """Area under the ROC curve of ``scores`` for separating correct from incorrect.

    0.5 is chance, 1.0 perfect; ``None`` unless both classes are present.

    >>> auroc([True, False, True], [1.0, 1.0, 0.0])
    0.25
    """
    if len(set(labels)) < 2:
        return None
    return float(roc_auc_score(np.asarray(labels, dtype=bool), np.asarray(scores, dtype=float)))


def roc_points(
    labels: Sequence[bool], scores: Sequence[float]
) -> tuple[list[float], list[float], list[float]]:
    """False- and true-positive rates (positive = correct) and the score thresholds.

    >>> fpr, tpr, thr = roc_points([True, False], [80.0, 30.0])
    >>> fpr, tpr
    ([0.0, 0.0, 1.0], [0.0, 1.0, 1.0])
    """
    fpr, tpr, thr = roc_curve(np.asarray(labels, dtype=bool), np.asarray(scores, dtype=float))
    return [float(v) for v in fpr], [float(v) for v in tpr], [float(v) for v in thr]


def fit_threshold(
    scores: Sequence[float],
    labels: Sequence[bool],
    objective: str = "balanced_accuracy",
    default: float = 75.0,
) -> float:
    """The score threshold that maximises ``objective`` on these rows.

    Candidates are the distinct scores (``score >= t`` → correct) plus one above the
    highest (everything flagged). Ties go to the candidate nearest ``default``; with no
    rows, or only one class under balanced accuracy, ``default`` itself is returned.

    >>> fit_threshold([90, 80, 60, 40], [True, True, False, False])
    80.0
    >>> fit_threshold([95, 85, 70, 30], [True, False, True, False], objective="accuracy")
    70.0
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if not scores:
        return float(default)
    if objective == "balanced_accuracy" and len(set(labels)) < 2:
        return float(default)
    candidates = sorted({float(s) for s in scores})
    candidates.append(candidates[-1] + 1.0)
    best: tuple[float, float] | None = None  # (value, -distance to default)
    best_t = float(default)
    for t in candidates:
        pred = predict(scores, t)
        value = (
            balanced_accuracy(labels, pred)
            if objective == "balanced_accuracy"
            else accuracy(labels, pred)
        )
        key = (value if value is not None else -1.0, -abs(t - default))
        if best is None or key > best:
            best, best_t = key, t
    return best_t


def fit_isotonic(scores: Sequence[float], labels: Sequence[bool]) -> Calibration:
    """Fit a monotone score → P(correct) map (isotonic regression, clipped to [0, 1]).

    >>> cal = fit_isotonic([10, 20, 30, 40], [False, True, False, True])
    >>> [cal.p_correct(s) for s in (10, 25, 40)]
    [0.0, 0.5, 1.0]
    """
    if not scores:
        raise ValueError("cannot fit a calibration on no rows")
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    iso.fit(np.asarray(scores, dtype=float), np.asarray(labels, dtype=float))
    xs = [float(v) for v in iso.X_thresholds_]
    ys = [min(1.0, max(0.0, round(float(v), 6))) for v in iso.y_thresholds_]
    return Calibration(x=xs, y=ys, method="isotonic")


def apply_calibration(cal: Calibration, scores: Sequence[float]) -> list[float]:
    """P(correct) of each score under ``cal``.

    >>> apply_calibration(Calibration(x=[0.0, 100.0], y=[0.0, 1.0]), [25.0, 80.0])
    [0.25, 0.8]
    """
    return [cal.p_correct(float(s)) for s in scores]


def brier_score(labels: Sequence[bool], probs: Sequence[float]) -> float | None:
    """Mean squared error of P(correct) against the label (lower is better).

    >>> brier_score([True, False], [0.75, 0.5])
    0.15625
    """
    if not labels:
        return None
    return sum((p - float(y)) ** 2 for y, p in zip(labels, probs, strict=True)) / len(labels)


@dataclass(frozen=True)
class Bin:
    """One reliability-diagram bin: probabilities in ``[lo, hi)`` (the last bin closed)."""

    lo: float
    hi: float
    n: int
    mean_p: float | None
    frac_correct: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reliability_bins(labels: Sequence[bool], probs: Sequence[float], n_bins: int = 10) -> list[Bin]:
    """Equal-width bins of P(correct) with the observed share of correct rows in each.

    >>> bins = reliability_bins([True, False, True], [0.9, 0.2, 1.0], 2)
    >>> [(b.n, b.mean_p, b.frac_correct) for b in bins]
    [(1, 0.2, 0.0), (2, 0.95, 1.0)]
    """
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    members: list[list[tuple[bool, float]]] = [[] for _ in range(n_bins)]
    for y, p in zip(labels, probs, strict=True):
        i = min(n_bins - 1, max(0, int(p * n_bins)))
        members[i].append((y, p))
    bins = []
    for i, m in enumerate(members):
        n = len(m)
        bins.append(
            Bin(
                lo=i / n_bins,
                hi=(i + 1) / n_bins,
                n=n,
                mean_p=sum(p for _, p in m) / n if n else None,
                frac_correct=sum(1 for y, _ in m if y) / n if n else None,
            )
        )
    return bins


def expected_calibration_error(
    labels: Sequence[bool], probs: Sequence[float], n_bins: int = 10
) -> float | None:
    """ECE: the row-weighted mean gap between mean P(correct) and observed share per bin.

    >>> round(expected_calibration_error([True, False, True, True], [0.9, 0.1, 0.6, 0.6], 10), 6)
    0.25
    """
    if not labels:
        return None
    total = len(labels)
    ece = 0.0
    for b in reliability_bins(labels, probs, n_bins):
        if b.n and b.mean_p is not None and b.frac_correct is not None:
            ece += b.n / total * abs(b.mean_p - b.frac_correct)
    return ece


def signal_metrics(labels: Sequence[bool], present: Sequence[bool]) -> dict[str, Any]:
    """How well one binary signal ("this finding fired → incorrect") separates the rows.

    ``support``: rows where it fired; ``precision``: share of those truly incorrect;
    ``recall``: share of incorrect rows where it fired; ``auroc``: AUROC of "not fired"
    as a score for correct.

    >>> signal_metrics([True, False, False, True], [False, True, False, True])
    {'support': 2, 'precision': 0.5, 'recall': 0.5, 'auroc': 0.5}
    """
    fired_incorrect = sum(1 for y, f in zip(labels, present, strict=True) if f and not y)
    support = sum(1 for f in present if f)
    n_incorrect = sum(1 for y in labels if not y)
    return {
        "support": support,
        "precision": _ratio(fired_incorrect, support),
        "recall": _ratio(fired_incorrect, n_incorrect),
        "auroc": auroc(labels, [0.0 if f else 1.0 for f in present]),
    }

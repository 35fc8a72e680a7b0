"""Fit the symbolic judge's weights on labelled data, with held-out figures.

Findings do not depend on the judge's weights, so each labelled row is aligned once; then,
for every fold (grouped by question, so a question never sits on both sides), the weights
and the verdict thresholds are fitted on the other folds and the held-out rows are scored
with exactly the score formula. Labels are used only to fit and to measure.

>>> from stef.align.filters import Alignment
>>> a = Alignment("fully_applied", 5.0, evidence=2)
>>> phi(a, JudgeWeights(bias=3.0))
100.0
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from stef.accuracy.calibrate import LabelledRow, assign_folds, style_normalise, to_record
from stef.accuracy.metrics import accuracy, auroc, balanced_accuracy, fit_threshold, predict
from stef.align.filters import Alignment
from stef.errors import StefError
from stef.evaluator import Evaluator, Prepared
from stef.judges.symbolic import (
    HIGH_TIER_MIN,
    LINED_UP_MIN_CONFIDENCE,
    SEVERAL_WARNINGS_MAX_CONFIDENCE,
    THIN_EVIDENCE_MAX_CONFIDENCE,
    SymbolicJudge,
    verdict_from_p,
)
from stef.judges.weights import JudgeWeights, features_of, fit_weights
from stef.record import parse_record
from stef.rules import DEFAULT_EXPECTED_ACCURACY, Rules
from stef.score import compute_score

#: Regularisation strengths (inverse L2) the fit chooses from on inner folds.
C_GRID: tuple[float, ...] = (0.05, 0.1, 0.2, 0.5, 1.0)
VERDICTS = ("correct", "likely_correct", "potentially_incorrect", "incorrect")

#: Verdict thresholds on P(correct): correct, likely, potential.
Cut = tuple[float, float, float]

#: Candidate verdict thresholds (correct, likely, potential) searched on training folds.
THRESHOLD_GRID: tuple[tuple[float, float, float], ...] = tuple(
    (c, li, po)
    for c, li, po in itertools.product(
        (0.6, 0.65, 0.7, 0.75, 0.8, 0.85),
        (0.45, 0.5, 0.55, 0.6, 0.65),
        (0.25, 0.3, 0.35, 0.4, 0.45),
    )
    if c > li > po
)


@dataclass
class Aligned:
    """One labelled row taken through alignment (``alignment`` None when not evaluable)."""

    row: LabelledRow
    dataset: str
    alignment: Alignment | None
    fold: int


def align_rows(
    rows: Sequence[LabelledRow],
    dataset: str,
    *,
    dialect: str = "sqlite",
    rules: Rules | None = None,
    folds: int = 5,
    seed: int = 0,
    normalise_style: bool = True,
    on_row: Callable[[], None] | None = None,
) -> list[Aligned]:
    """Align every row (label-free records, style-normalised SQL); ``on_row`` is called
    after each (a progress bar)."""
    ev = Evaluator(rules=rules, judge=SymbolicJudge(fitted=False))
    fold_of = assign_folds(rows, folds, seed)
    out: list[Aligned] = []
    for r, fold in zip(rows, fold_of, strict=True):
        sql = style_normalise(r.sql, r.dialect or dialect) if normalise_style else None
        record = to_record(r, dialect, sql)
        alignment: Alignment | None = None
        try:
            prepared = ev.prepare(parse_record(record), time.perf_counter())
            if isinstance(prepared, Prepared):
                alignment = prepared.alignment
        except StefError:
            alignment = None
        out.append(Aligned(r, dataset, alignment, fold))
        if on_row is not None:
            on_row()
    return out


def prior_of(rules: Rules | None) -> float:
    """The prior the judge applies: the rules' ``expected_accuracy``, else the default."""
    prior = (rules or Rules()).expected_accuracy
    return DEFAULT_EXPECTED_ACCURACY if prior is None else prior


def planted_errors(rows: Sequence[LabelledRow], dialect: str, seed: int = 0) -> list[LabelledRow]:
    """The negatives of a gold-only file: every mutant ``stef selftest`` plants into its
    rows (one of each kind the question's cues allow), labelled incorrect. A mutant keeps
    its original's question, so the folds grouped by question keep them together.

    >>> [m] = planted_errors([LabelledRow("r", "Show the 3 largest cities",
    ...     "SELECT name FROM city ORDER BY pop DESC LIMIT 3", True)], "sqlite")[:1]
    >>> m.id, m.correct, m.sql
    ('r#sort_flipped', False, 'SELECT name FROM city ORDER BY pop LIMIT 3')
    """
    from stef.accuracy.selftest import Row, build_case

    out: list[LabelledRow] = []
    for r in rows:
        row = Row(r.id, r.question, r.sql, r.evidence, r.dialect or dialect, True)
        for m in build_case(row, None, seed).mutants:
            out.append(replace(r, id=f"{r.id}#{m.kind}", sql=m.sql, correct=False))
    return out


def phi(alignment: Alignment, weights: JudgeWeights, rules: Rules | None = None) -> float:
    """The score Φ a judge with ``weights`` gives this alignment (at the rules' prior, as
    :class:`~stef.judges.symbolic.SymbolicJudge` does)."""
    p = weights.p_correct(features_of(alignment), prior=prior_of(rules))
    return _phi_from_p(p, alignment, weights, rules)


def _phi_from_p(
    p: float, alignment: Alignment, weights: JudgeWeights, rules: Rules | None = None
) -> float:
    has_error = any(f.severity == "error" for f in alignment.findings)
    warnings = sum(f.severity == "warning" for f in alignment.findings)
    high = rules.scoring.confidence.high_min if rules is not None else HIGH_TIER_MIN
    verdict, confidence = verdict_from_p(
        p, alignment.evidence, weights, has_error, warnings, high
    )
    return compute_score(
        alignment.filter_status,
        verdict,
        confidence,
        benign_extras=alignment.benign_extras_only,
        scoring=(rules or Rules()).scoring,
    ).score


def _balanced(items: Sequence[Aligned]) -> list[float]:
    """Sample weights giving every dataset the same total weight."""
    sizes: dict[str, int] = {}
    for a in items:
        sizes[a.dataset] = sizes.get(a.dataset, 0) + 1
    total = len(items)
    return [total / (len(sizes) * sizes[a.dataset]) for a in items]


class PhiTable:
    """Φ of every row for every verdict and tier of Γ, so that scoring many rows under
    many verdict thresholds is a table look-up (each entry comes from
    :func:`stef.score.compute_score`); :meth:`scores` gives exactly what :func:`phi` gives.

    >>> from stef.align.filters import Alignment
    >>> t = PhiTable([Alignment("fully_applied", 5.0, evidence=2)])
    >>> w = JudgeWeights(thresholds={"correct": 0.8, "likely": 0.5, "potential": 0.3})
    >>> t.scores(np.array([0.9]), w).tolist(), t.scores(np.array([0.7]), w).tolist()
    ([100.0], [80.0])
    """

    def __init__(self, alignments: Sequence[Alignment], rules: Rules | None = None) -> None:
        scoring = (rules or Rules()).scoring
        self.tiers = scoring.confidence
        reps = (self.tiers.high_min, self.tiers.medium_min, 0.0)
        self.table = np.array(
            [
                [
                    [
                        compute_score(
                            al.filter_status,
                            v,
                            g,
                            benign_extras=al.benign_extras_only,
                            scoring=scoring,
                        ).score
                        for g in reps
                    ]
                    for v in VERDICTS
                ]
                for al in alignments
            ],
            dtype=float,
        ).reshape(len(alignments), len(VERDICTS), len(reps))
        self.has_error = np.array(
            [any(f.severity == "error" for f in al.findings) for al in alignments], dtype=bool
        )
        self.thin = np.array([al.evidence == 0 for al in alignments], dtype=bool)
        self.warnings = np.array(
            [sum(f.severity == "warning" for f in al.findings) for al in alignments], dtype=int
        )

    def take(self, idx: Sequence[int]) -> PhiTable:
        """The table of rows ``idx`` only."""
        sub = PhiTable([])
        sub.tiers = self.tiers
        rows = np.asarray(idx, dtype=int)
        sub.table, sub.has_error, sub.thin = self.table[rows], self.has_error[rows], self.thin[rows]
        sub.warnings = self.warnings[rows]
        return sub

    def scores(self, p: np.ndarray, w: JudgeWeights) -> np.ndarray:
        """Φ of every row whose P(correct) is ``p`` (as :func:`verdict_from_p` decides)."""
        t = w.thresholds
        verdict = np.where(
            p >= t["correct"],
            0,
            np.where(p >= t["likely"], 1, np.where(p >= t["potential"], 2, 3)),
        )
        verdict = np.where(self.has_error & (verdict < 2), 2, verdict)
        lined_up = ~self.has_error & ~self.thin & (self.warnings <= 1)
        verdict = np.where(lined_up, np.minimum(verdict, self.warnings), verdict)
        gamma = np.where(verdict < 2, p, np.maximum(1.0 - p, 0.5))
        gamma = np.where(lined_up, np.maximum(gamma, LINED_UP_MIN_CONFIDENCE), gamma)
        gamma = np.where(self.thin, np.minimum(gamma, THIN_EVIDENCE_MAX_CONFIDENCE), gamma)
        several = (self.warnings >= 2) & (verdict < 2)
        gamma = np.where(several, np.minimum(gamma, SEVERAL_WARNINGS_MAX_CONFIDENCE), gamma)
        warned = (self.warnings > 0) & (verdict == 0) & (gamma >= self.tiers.high_min)
        verdict = np.where(warned, 1, verdict)
        tier = np.where(
            gamma >= self.tiers.high_min, 0, np.where(gamma >= self.tiers.medium_min, 1, 2)
        )
        return self.table[np.arange(len(p)), verdict, tier]


def _dataset_groups(items: Sequence[Aligned]) -> list[list[int]]:
    """Positions of ``items`` per dataset, in order of first appearance."""
    return [
        [i for i, a in enumerate(items) if a.dataset == ds]
        for ds in dict.fromkeys(a.dataset for a in items)
    ]


def _dataset_aurocs(
    labels: Sequence[bool], scores: np.ndarray, groups: list[list[int]]
) -> list[float]:
    """The AUROC of ``scores`` in each dataset group (groups with one class left out)."""
    values = [auroc([labels[i] for i in g], scores[g].tolist()) for g in groups]
    return [v for v in values if v is not None]


#: Mean AUROCs this close are a tie between verdict thresholds: the tie goes to the cut
#: that scores the most correct rows good or better (precision first), so a near-equal
#: ranking never buys its last thousandth with false alarms on clean queries.
AUROC_TIE = 0.002


def _mean_good(labels: Sequence[bool], scores: np.ndarray, groups: list[list[int]]) -> float:
    """Mean over datasets of the share of correct rows scored ≥ 75 (good or better)."""
    shares = []
    for g in groups:
        pos = [scores[i] for i in g if labels[i]]
        if pos:
            shares.append(sum(s >= 75 for s in pos) / len(pos))
    return sum(shares) / len(shares) if shares else 0.0


def _mean_auroc(labels: Sequence[bool], scores: np.ndarray, groups: list[list[int]]) -> float:
    """Mean over datasets of the AUROC of ``scores`` (each dataset weighs the same)."""
    kept = _dataset_aurocs(labels, scores, groups)
    return sum(kept) / len(kept) if kept else 0.0


def _fit_once(
    usable: Sequence[Aligned],
    feats: Sequence[dict[str, float]],
    table: PhiTable,
    c: float,
    prior: float = DEFAULT_EXPECTED_ACCURACY,
) -> JudgeWeights:
    """Weights on these rows, then the verdict thresholds (on P(correct) at ``prior``, as
    the judge will use them) that rank the rows best."""
    labels = [a.row.correct for a in usable]
    weights = _balanced(usable)
    w = fit_weights(feats, labels, c=c, sample_weight=weights)
    w.meta["base_rate"] = round(
        sum(wt for wt, y in zip(weights, labels, strict=True) if y) / sum(weights), 4
    )
    probs = np.array([w.p_correct(f, prior=prior) for f in feats])
    groups = _dataset_groups(usable)
    tried: list[tuple[float, float, Cut]] = []
    for cut in THRESHOLD_GRID:
        w.thresholds = {"correct": cut[0], "likely": cut[1], "potential": cut[2]}
        scores = table.scores(probs, w)
        tried.append((_mean_auroc(labels, scores, groups), _mean_good(labels, scores, groups), cut))
    cut = pick_thresholds(tried)
    w.thresholds = {"correct": cut[0], "likely": cut[1], "potential": cut[2]}
    return w


def pick_thresholds(tried: Sequence[tuple[float, float, Cut]]) -> Cut:
    """The verdict thresholds to keep, of ``(mean AUROC, mean good+ share, cut)`` tried: of
    the cuts within :data:`AUROC_TIE` of the best AUROC, the one that scores the most
    correct rows good or better, then the better AUROC (then the first).

    >>> pick_thresholds([(0.800, 0.90, (0.85, 0.5, 0.45)), (0.7995, 0.95, (0.75, 0.5, 0.45)),
    ...                  (0.790, 0.99, (0.6, 0.5, 0.45))])
    (0.75, 0.5, 0.45)
    """
    top = max(value for value, _, _ in tried)
    near = [t for t in tried if t[0] >= top - AUROC_TIE]
    return max(near, key=lambda t: (t[1], t[0]))[2]


def choose_c(
    usable: Sequence[Aligned],
    feats: Sequence[dict[str, float]],
    table: PhiTable,
    grid: Sequence[float] = C_GRID,
) -> float:
    """The regularisation strength whose fits rank held-out rows best, on inner folds of
    the given (training) rows only: the mean over inner folds and datasets of the AUROC
    of Φ. The rows keep their question-grouped folds, so inner folds are grouped too."""
    folds = sorted({a.fold for a in usable})
    if len(folds) < 2:
        return grid[len(grid) // 2]
    best: tuple[float, float] | None = None
    for c in grid:
        values: list[float] = []
        for k in folds:
            tr = [i for i, a in enumerate(usable) if a.fold != k]
            te = [i for i, a in enumerate(usable) if a.fold == k]
            w = _fit_once([usable[i] for i in tr], [feats[i] for i in tr], table.take(tr), c)
            test = [usable[i] for i in te]
            probs = np.array([w.p_correct(feats[i], prior=DEFAULT_EXPECTED_ACCURACY) for i in te])
            scores = table.take(te).scores(probs, w)
            labels = [a.row.correct for a in test]
            values += _dataset_aurocs(labels, scores, _dataset_groups(test))
        mean = sum(values) / len(values) if values else 0.0
        if best is None or mean > best[0] + 1e-9:
            best = (mean, c)
    assert best is not None
    return best[1]


def fit(
    items: Sequence[Aligned], *, c: float | None = None, rules: Rules | None = None
) -> JudgeWeights:
    """Fit weights (every dataset weighing the same), then the verdict thresholds that
    rank the training rows best. With ``c`` None the regularisation strength is chosen
    from :data:`C_GRID` on inner folds of ``items`` (see :func:`choose_c`); the choice
    is recorded in the weights' ``meta["c"]``."""
    usable = [a for a in items if a.alignment is not None]
    aligned = [a.alignment for a in usable if a.alignment is not None]
    feats = [features_of(al) for al in aligned]
    table = PhiTable(aligned, rules)
    chosen = choose_c(usable, feats, table) if c is None else c
    w = _fit_once(usable, feats, table, chosen, prior_of(rules))
    w.meta = {"c": chosen, "base_rate": w.meta["base_rate"]}
    return w


@dataclass
class HeldOut:
    """Held-out figures of one dataset."""

    dataset: str
    rows: int
    evaluated: int
    auroc_score: float | None = None
    auroc_p: float | None = None
    accuracy: float | None = None
    balanced_accuracy: float | None = None
    accuracy_at_75: float | None = None
    thresholds: list[float] = field(default_factory=list)
    #: The regularisation strength each fold's fit used.
    c: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def cross_validate(
    items: Sequence[Aligned],
    folds: int,
    *,
    c: float | None = None,
    on_fold: Callable[[], None] | None = None,
) -> list[HeldOut]:
    """Fit on all folds but one, score the held-out one; figures per dataset. With ``c``
    None each fit chooses its regularisation on inner folds of its own training rows.
    ``on_fold`` is called after each fold (a progress bar)."""
    scores: dict[int, float] = {}
    chosen: list[float] = []
    probs: dict[int, float] = {}
    cut_of: dict[int, float] = {}
    for k in range(folds):
        train = [a for a in items if a.fold != k]
        test = [(i, a) for i, a in enumerate(items) if a.fold == k and a.alignment is not None]
        w = fit(train, c=c)
        chosen.append(float(w.meta["c"]))
        train_scores = [phi(a.alignment, w) for a in train if a.alignment is not None]
        train_labels = [a.row.correct for a in train if a.alignment is not None]
        cut = fit_threshold(train_scores, train_labels, objective="accuracy")
        for i, a in test:
            assert a.alignment is not None
            scores[i] = phi(a.alignment, w)
            probs[i] = w.p_correct(features_of(a.alignment), prior=DEFAULT_EXPECTED_ACCURACY)
            cut_of[i] = cut
        if on_fold is not None:
            on_fold()
    out = []
    for dataset in dict.fromkeys(a.dataset for a in items):
        idx = [i for i, a in enumerate(items) if a.dataset == dataset]
        ok = [i for i in idx if i in scores]
        labels = [items[i].row.correct for i in ok]
        s = [scores[i] for i in ok]
        pred = [scores[i] >= cut_of[i] for i in ok]
        h = HeldOut(dataset, len(idx), len(ok))
        h.auroc_score = auroc(labels, s)
        h.auroc_p = auroc(labels, [probs[i] for i in ok])
        h.accuracy = accuracy(labels, pred)
        h.balanced_accuracy = balanced_accuracy(labels, pred)
        h.accuracy_at_75 = accuracy(labels, predict(s, 75.0))
        h.thresholds = sorted({cut_of[i] for i in ok})
        h.c = chosen
        out.append(h)
    return out

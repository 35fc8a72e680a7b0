"""Weights of the symbolic judge: how much each finding kind says about correctness.

The judge turns an alignment into P(correct) with a logistic function of its findings:
``p = σ(bias + Σ weight[kind] · min(count(kind), 3) + evidence and filter-class terms)``.
Every term is a finding (or the alignment's filter class and evidence count), so a
verdict is explained by the findings that moved it. The weights are fitted on labelled
data by ``stef fit-judge`` (folds grouped by question) and shipped as a JSON file; the
thresholds map p to the four verdicts.

>>> w = JudgeWeights(bias=1.0, weights={"filter_missing": -2.0})
>>> round(w.p_correct({"filter_missing": 1.0}), 3)
0.269
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from itertools import repeat
from operator import mul
from pathlib import Path
from typing import Any

from stef.align.filters import FILTER_CLASSES, Alignment
from stef.findings import Finding

#: Counts above this add nothing more.
COUNT_CAP = 3

#: Rules whose findings excuse a difference; they are never features.
EXCUSING_RULES = frozenset(
    {
        "required_group_by",
        "benign_group_by",
        "order_by_tolerance",
        "limit_tolerance",
        "benign_filter",
        "precision",  # a kind that has not earned its weight (stef.align.precision)
    }
)


def alignment_features(
    findings: Iterable[Finding], filter_status: str, evidence: int, enriched: bool = False
) -> dict[str, float]:
    """The judge's inputs: finding-kind counts (capped), filter class, evidence bucket.

    Findings weigh differently when the agent wrote an enriched question (its hints make
    a missing column or value far stronger evidence), so with Q_e every key comes twice:
    as itself, whose weight the rows with and without Q_e share, and with a ``+qe``
    suffix, whose weight is how much more it says beside hints. A kind seldom seen with
    hints keeps what the rows without them taught (the regularised ``+qe`` part stays
    near 0) instead of starting from nothing.

    >>> f = [Finding("filter_missing", "error", "m"), Finding("filter_missing", "error", "m")]
    >>> alignment_features(f, "not_applied", 0)
    {'filter_missing': 2.0, 'filter:not_applied': 1.0, 'evidence:0': 1.0}
    >>> sorted(alignment_features(f, "fully_applied", 5, enriched=True))
    ['bias+qe', 'evidence:3', 'evidence:3+qe', 'filter_missing', 'filter_missing+qe']
    """
    out: dict[str, float] = {}
    for f in findings:
        if f.rule in EXCUSING_RULES:
            continue  # excused by a normalisation rule: never held against the SQL
        key = f"ok:{f.kind}" if f.severity == "info" else f.kind
        out[key] = min(out.get(key, 0.0) + 1.0, COUNT_CAP)
    if filter_status != FILTER_CLASSES[0]:
        out[f"filter:{filter_status}"] = 1.0
    out[f"evidence:{min(evidence, 3)}"] = 1.0
    if enriched:
        out |= {f"{k}+qe": v for k, v in out.items()}
        out["bias+qe"] = 1.0
    return out


@dataclass
class JudgeWeights:
    """A fitted weight table with its verdict thresholds on P(correct)."""

    bias: float = 0.0
    weights: dict[str, float] = field(default_factory=dict)
    #: p ≥ correct → correct; ≥ likely → likely_correct; ≥ potential → potentially_incorrect.
    thresholds: dict[str, float] = field(
        default_factory=lambda: {"correct": 0.7, "likely": 0.55, "potential": 0.35}
    )
    meta: dict[str, Any] = field(default_factory=dict)

    def logit(self, features: Mapping[str, float]) -> float:
        return self.bias + sum(self._pushes(features))

    def _pushes(self, features: Mapping[str, float]) -> Iterator[float]:
        """``weights.get(k, 0.0) * v`` for each feature, in order (computed in C)."""
        return map(mul, map(self.weights.get, features, repeat(0.0)), features.values())

    def p_correct(self, features: Mapping[str, float], prior: float | None = None) -> float:
        """P(correct); with ``prior`` the base rate of the fitting data (``meta.base_rate``,
        0.5 when unknown) is replaced by it (Bayes' rule on the odds).

        >>> w = JudgeWeights(bias=0.0)
        >>> w.p_correct({}), round(w.p_correct({}, prior=0.8), 3)
        (0.5, 0.8)
        """
        z = self.logit(features)
        if prior is not None:
            z += _prior_shift(prior, float(self.meta.get("base_rate", 0.5)))
        z = max(-30.0, min(30.0, z))
        return 1.0 / (1.0 + math.exp(-z))

    def verdict(self, p: float) -> str:
        t = self.thresholds
        if p >= t["correct"]:
            return "correct"
        if p >= t["likely"]:
            return "likely_correct"
        if p >= t["potential"]:
            return "potentially_incorrect"
        return "incorrect"

    def contributions(
        self, features: Mapping[str, float], only: Container[str] | None = None
    ) -> list[tuple[str, float]]:
        """Each feature's push on the logit, strongest first (for the rationale); with
        ``only``, those of the features in it alone: the same pushes in the same order as
        the full list's (the sort is stable), without computing and sorting the others."""
        if only is None:
            parts = list(zip(features, self._pushes(features), strict=True))
        else:
            get = self.weights.get
            parts = [(k, get(k, 0.0) * v) for k, v in features.items() if k in only]
        return sorted((x for x in parts if x[1]), key=lambda x: -abs(x[1]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "stef-judge-weights/1",
            "bias": self.bias,
            "weights": dict(sorted(self.weights.items())),
            "thresholds": dict(self.thresholds),
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> JudgeWeights:
        if d.get("format") != "stef-judge-weights/1":
            raise ValueError("not a STEF judge-weights file (format stef-judge-weights/1)")
        return cls(
            bias=float(d["bias"]),
            weights={str(k): float(v) for k, v in d["weights"].items()},
            thresholds={str(k): float(v) for k, v in d["thresholds"].items()},
            meta=dict(d.get("meta") or {}),
        )

    @classmethod
    def load(cls, path: str | Path) -> JudgeWeights:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


@functools.lru_cache(maxsize=256)
def _prior_shift(prior: float, base: float) -> float:
    """What moving the base rate ``base`` to ``prior`` adds to the logit (memoised: an
    evaluator asks with the same two rates for every record)."""
    return _logit(prior) - _logit(base)


@functools.cache
def _packaged_weights() -> dict[str, Any] | None:
    """The packaged weights file as parsed JSON, read once per process (never handed out)."""
    try:
        path = resources.files("stef").joinpath("data/judge_weights.json")
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None
    data: dict[str, Any] = json.loads(text)
    return data


def default_weights() -> JudgeWeights | None:
    """The weights shipped with STEF (``stef/data/judge_weights.json``), if present.

    The file is read once; each call builds weights of its own, so a judge that changes
    its weights (or their ``meta``) changes no other judge's.

    >>> w = default_weights()
    >>> w is not None and w == default_weights() and w.meta is not default_weights().meta
    True
    """
    d = _packaged_weights()
    if d is None:
        return None
    return JudgeWeights.from_dict({**d, "meta": copy.deepcopy(d.get("meta") or {})})


def features_of(alignment: Alignment) -> dict[str, float]:
    """Features of an alignment (its findings, filter class and evidence)."""
    status = alignment.filter_status
    if alignment.benign_extras_only:
        status = FILTER_CLASSES[0]  # extras the rules declare benign are excused
    return alignment_features(alignment.findings, status, alignment.evidence, alignment.enriched)


def _is_finding(feature: str) -> bool:
    base = feature.removesuffix("+qe")
    return not (base.startswith(("filter:", "evidence:", "ok:")) or base == "bias")


def fit_weights(
    rows: Sequence[Mapping[str, float]],
    labels: Sequence[bool],
    *,
    c: float = 0.5,
    sample_weight: Sequence[float] | None = None,
) -> JudgeWeights:
    """Fit an L2-regularised logistic regression of correctness on the features.

    A finding may only lower P(correct): a finding whose fitted weight comes out
    positive is dropped and the rest refitted without it (at most a few rounds), so the
    other weights do not lean on a term that is then zeroed.
    """
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    dropped: set[str] = set()
    y = [bool(v) for v in labels]
    for _ in range(5):
        data = [{k: v for k, v in r.items() if k not in dropped} for r in rows]
        vec = DictVectorizer(sparse=True)
        x = vec.fit_transform(data)
        model = LogisticRegression(C=c, max_iter=2000)
        model.fit(x, y, sample_weight=sample_weight)
        names = [str(n) for n in vec.get_feature_names_out()]
        coefs = [float(w) for w in model.coef_[0]]
        positive = {n for n, w in zip(names, coefs, strict=True) if _is_finding(n) and w > 0}
        if not positive:
            break
        dropped |= positive
    weights = {
        n: round(min(w, 0.0) if _is_finding(n) else w, 4) for n, w in zip(names, coefs, strict=True)
    }
    weights.update({n: 0.0 for n in dropped})
    return JudgeWeights(bias=round(float(model.intercept_[0]), 4), weights=weights)

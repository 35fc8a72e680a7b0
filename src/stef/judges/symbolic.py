"""The offline symbolic judge: deterministic, no network, the default.

It weighs the alignment's findings into a risk, maps the risk to one of the four
verdicts, and sets the confidence γ from how much the question let it check: a question
with no extractable cue never gets a confident pass.

>>> from stef.align.filters import Alignment
>>> from stef.findings import Finding
>>> a = Alignment("fully_applied", 5.0, findings=[], evidence=0)
>>> j = SymbolicJudge(fitted=False).verdict_for(a)
>>> j.verdict, j.confidence
('likely_correct', 0.5)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stef.align.filters import Alignment
from stef.findings import Finding
from stef.judges.base import VERDICTS, Judge, JudgeInput, Judgment
from stef.judges.weights import JudgeWeights, default_weights, features_of
from stef.rules import DEFAULT_EXPECTED_ACCURACY, ConfidenceTiers

#: Risk carried by one finding of each severity, unless :data:`KIND_WEIGHTS` says otherwise.
SEVERITY_WEIGHTS: Mapping[str, float] = {"info": 0.0, "warning": 0.4, "error": 1.0}

#: Per-kind risk, where a kind is stronger or weaker evidence than its severity says.
KIND_WEIGHTS: Mapping[str, float] = {
    "set_operation_identical": 1.5,
    "aggregate_in_where": 1.5,
    "filter_wrong_operator": 1.0,
    "limit_mismatch": 1.0,
    "order_direction_mismatch": 1.0,
    "aggregation_direction": 1.0,
    "literal_unexplained": 0.5,
    "hint_column_missing": 0.5,
    "number_missing": 0.5,
    "filter_extra": 0.4,
    "cartesian_join": 0.6,
    "projection_unexplained": 0.25,
    "filter_column_unexplained": 0.25,
    "table_redundant": 0.3,
    "integer_division": 0.3,
}

#: Risk thresholds: risk ≥ ``incorrect`` → incorrect; ≥ ``potential`` → potentially_incorrect;
#: ≥ ``likely`` (or fewer than two checked cues) → likely_correct; otherwise correct.
THRESHOLDS: Mapping[str, float] = {"likely": 0.3, "potential": 1.0, "incorrect": 1.5}


def finding_risk(f: Finding, weights: Mapping[str, float] = KIND_WEIGHTS) -> float:
    """Risk one finding carries (0 for info findings)."""
    if f.severity == "info":
        return 0.0
    return float(weights.get(f.kind, SEVERITY_WEIGHTS.get(f.severity, 0.0)))


#: γ never exceeds this when the question gave no checkable cue: the floor of the medium
#: tier (``scoring.confidence.medium_min``, 0.65 by default). Such a query is never a
#: confident (high-tier) pass; with nothing contradicting it, it is not pushed below the
#: medium tier either (a clean unverifiable query scores 80, "good", with medium
#: confidence and a ``thin_evidence`` finding, instead of 50).
THIN_EVIDENCE_MAX_CONFIDENCE = 0.65
#: The floor of Γ's high tier when the rules set none (``scoring.confidence.high_min``). A
#: query that a weighted warning questions is not judged ``correct`` with γ in the high
#: tier: it is ``likely_correct`` there (Φ 90, not 100), so the top score means nothing
#: questions it. Below the tier the verdict stays ``correct`` (Φ 80), which
#: ``likely_correct`` (72) would undercut.
HIGH_TIER_MIN: float = ConfidenceTiers.model_fields["high_min"].default
#: γ of a pass that two weighted warnings or more question never exceeds this: the floor of
#: the medium tier, as for a query whose question gave nothing to check. One warning keeps
#: a query off the top score (Φ 90); a second keeps it off the high tier (Φ 80, still
#: "good"): on the labelled files the share of incorrect rows grows with each warning a
#: query carries, whatever the warnings are (docs/accuracy.md, session 18).
SEVERAL_WARNINGS_MAX_CONFIDENCE = THIN_EVIDENCE_MAX_CONFIDENCE


class SymbolicJudge(Judge):
    """Rule-based judge over the alignment findings.

    With fitted weights (by default the table shipped in ``stef/data``, fitted by
    ``stef fit-judge``), P(correct) is a logistic function of the findings; the verdict
    follows from p, and γ is the probability of the verdict's side (p for a pass, 1 − p
    for a fail), never above 0.65 (the medium tier) when nothing could be checked.
    Without fitted weights (``fitted=False``) the hand-set risk table above decides.
    """

    name = "symbolic"
    version = "2"

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        thresholds: Mapping[str, float] | None = None,
        fitted: JudgeWeights | bool = True,
    ) -> None:
        self.weights = dict(KIND_WEIGHTS if weights is None else weights)
        self.thresholds = dict(THRESHOLDS if thresholds is None else thresholds)
        self.fitted: JudgeWeights | None
        if fitted is True:
            self.fitted = default_weights()
        elif isinstance(fitted, JudgeWeights):
            self.fitted = fitted
        else:
            self.fitted = None

    def verdict_for(
        self,
        alignment: Alignment,
        expected_accuracy: float | None = None,
        high_min: float = HIGH_TIER_MIN,
    ) -> Judgment:
        """Verdict and γ from an alignment (pure).

        ``expected_accuracy`` (the rules' share of correct SQL expected from this agent)
        moves P(correct) from the labelled data's base rate to that prior; ``high_min`` is
        the rules' high tier of Γ.
        """
        if self.fitted is not None:
            return self._fitted_verdict(alignment, self.fitted, expected_accuracy, high_min)
        return self._table_verdict(alignment)

    def _fitted_verdict(
        self,
        alignment: Alignment,
        w: JudgeWeights,
        expected_accuracy: float | None = None,
        high_min: float = HIGH_TIER_MIN,
    ) -> Judgment:
        feats = features_of(alignment)
        p = w.p_correct(feats, prior=expected_accuracy)
        evidence = alignment.evidence
        has_error = False
        warnings = 0
        by_kind: dict[str, Finding] = {}  # the last finding of each kind with weight
        for f in alignment.findings:  # one pass for the three
            severity = f.severity
            if severity != "info":
                by_kind[f.kind] = f
                if severity == "error":
                    has_error = True
                elif severity == "warning":
                    warnings += 1
        verdict, confidence = verdict_from_p(p, evidence, w, has_error, warnings, high_min)
        pushes = w.contributions(feats, by_kind) if by_kind else []  # of the kinds found
        reasons = [by_kind[k].message for k, c in pushes if c < 0][:3]
        return Judgment(
            verdict=verdict,
            confidence=round(confidence, 4),
            rationale=_rationale(reasons, evidence),
            issues=reasons,
            usage={"p_correct": round(p, 4), "evidence": evidence},
        )

    def _table_verdict(self, alignment: Alignment) -> Judgment:
        risky = [(f, finding_risk(f, self.weights)) for f in alignment.findings]
        risk = sum(r for _, r in risky)
        errors = sum(1 for f, r in risky if f.severity == "error" and r > 0)
        evidence = alignment.evidence
        t = self.thresholds
        if risk >= t["incorrect"]:
            verdict = "incorrect"
        elif risk >= t["potential"]:
            verdict = "potentially_incorrect"
        elif risk >= t["likely"] or evidence < 2:
            verdict = "likely_correct"
        else:
            verdict = "correct"
        if verdict in ("correct", "likely_correct"):
            # confidence in a pass grows with what could be checked
            confidence = min(0.5 + 0.15 * evidence, 0.95) - min(risk, 0.4) * 0.25
        else:
            confidence = min(0.6 + 0.12 * errors + 0.05 * evidence, 0.95)
        confidence = round(max(0.0, min(confidence, 1.0)), 4)
        reasons = [f.message for f, r in sorted(risky, key=lambda x: -x[1]) if r > 0][:3]
        return Judgment(
            verdict=verdict,
            confidence=confidence,
            rationale=_rationale(reasons, evidence),
            issues=reasons,
            usage={"risk": round(risk, 4), "evidence": evidence},
        )

    def judge(self, case: JudgeInput) -> Judgment:
        prior = case.rules.expected_accuracy
        return self.verdict_for(
            case.alignment,
            DEFAULT_EXPECTED_ACCURACY if prior is None else prior,
            case.rules.scoring.confidence.high_min,
        )

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.fitted is not None:
            d["weights"] = self.fitted.meta.get("name", "custom")
        return d


#: γ of a query whose cues line up (no finding with weight, at least one checked cue)
#: or that only one weak finding questions is at least this: the floor of the medium tier.
#: Absence of contradiction is evidence of correctness; one weak lexical hint never moves
#: a query from good to poor (DESIGN.md, "Precision first").
LINED_UP_MIN_CONFIDENCE = THIN_EVIDENCE_MAX_CONFIDENCE


def verdict_from_p(
    p: float,
    evidence: int,
    w: JudgeWeights,
    has_error: bool = False,
    warnings: int | None = None,
    high_min: float = HIGH_TIER_MIN,
) -> tuple[str, float]:
    """Verdict and γ for P(correct) = p: γ is the probability of the verdict's side,
    capped at 0.65 (the medium tier) when the question gave no checkable cue. A definite
    contradiction of the question (an ``error`` finding) caps the verdict at
    potentially_incorrect, whatever the weights say. ``warnings`` counts the weighted
    findings that are not errors (None: unknown, no floor): a query with none whose
    question gave something to check has its cues lined up and is judged ``correct``; one
    with a single warning and no error is at least ``likely_correct``; both with γ at
    least :data:`LINED_UP_MIN_CONFIDENCE`. A ``correct`` verdict that a warning questions
    becomes ``likely_correct`` where γ reaches ``high_min`` (the rules' high tier of Γ); a
    pass that two warnings or more question has γ at most
    :data:`SEVERAL_WARNINGS_MAX_CONFIDENCE`.

    >>> verdict_from_p(0.9, 3, JudgeWeights()), verdict_from_p(0.2, 0, JudgeWeights())
    (('correct', 0.9), ('incorrect', 0.65))
    >>> verdict_from_p(0.9, 3, JudgeWeights(), has_error=True)
    ('potentially_incorrect', 0.5)
    >>> verdict_from_p(0.4, 2, JudgeWeights()), verdict_from_p(0.4, 2, JudgeWeights(), warnings=0)
    (('potentially_incorrect', 0.6), ('correct', 0.65))
    >>> verdict_from_p(0.4, 2, JudgeWeights(), warnings=1)
    ('likely_correct', 0.65)
    >>> verdict_from_p(0.6, 0, JudgeWeights(), warnings=0)
    ('likely_correct', 0.6)
    >>> w = JudgeWeights()
    >>> verdict_from_p(0.9, 2, w, warnings=1), verdict_from_p(0.8, 2, w, warnings=1)
    (('likely_correct', 0.9), ('correct', 0.8))
    >>> verdict_from_p(0.9, 2, w, warnings=2), verdict_from_p(0.2, 2, w, warnings=2)
    (('correct', 0.65), ('incorrect', 0.8))
    """
    verdict = w.verdict(p)
    if has_error and verdict in ("correct", "likely_correct"):
        verdict = "potentially_incorrect"
    lined_up = not has_error and warnings is not None and evidence > 0 and warnings <= 1
    if lined_up:
        ceiling = "correct" if warnings == 0 else "likely_correct"
        verdict = min(verdict, ceiling, key=VERDICTS.index)
    confidence = p if verdict in ("correct", "likely_correct") else max(1.0 - p, 0.5)
    if lined_up:
        confidence = max(confidence, LINED_UP_MIN_CONFIDENCE)
    if evidence == 0:
        confidence = min(confidence, THIN_EVIDENCE_MAX_CONFIDENCE)
    if warnings is not None and warnings >= 2 and verdict in ("correct", "likely_correct"):
        confidence = min(confidence, SEVERAL_WARNINGS_MAX_CONFIDENCE)
    if warnings and verdict == "correct" and confidence >= high_min:
        verdict = "likely_correct"  # a weighted warning keeps a query off the top score
    return verdict, confidence


def _rationale(reasons: list[str], evidence: int) -> str:
    if reasons:
        return "; ".join(reasons)
    if evidence:
        return f"no contradiction found among {evidence} checked cue(s)"
    return "the question gives no checkable cue; nothing contradicts the SQL"

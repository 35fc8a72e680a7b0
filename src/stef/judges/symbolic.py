"""The offline symbolic judge: deterministic, no network, the default.

It weighs the alignment's findings into a risk, maps the risk to one of the four
verdicts, and sets the confidence γ from how much the question let it check: a question
with no extractable cue never gets a confident pass.

>>> from stef.align import Alignment
>>> from stef.findings import Finding
>>> a = Alignment("fully_applied", 5.0, findings=[], evidence=0)
>>> j = SymbolicJudge().verdict_for(a)
>>> j.verdict, j.confidence
('likely_correct', 0.5)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stef.align import Alignment
from stef.findings import Finding
from stef.judges.base import Judge, JudgeInput, Judgment

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
}

#: Risk thresholds: risk ≥ ``incorrect`` → incorrect; ≥ ``potential`` → potentially_incorrect;
#: ≥ ``likely`` (or fewer than two checked cues) → likely_correct; otherwise correct.
THRESHOLDS: Mapping[str, float] = {"likely": 0.3, "potential": 1.0, "incorrect": 1.5}


def finding_risk(f: Finding, weights: Mapping[str, float] = KIND_WEIGHTS) -> float:
    """Risk one finding carries (0 for info findings)."""
    if f.severity == "info":
        return 0.0
    return float(weights.get(f.kind, SEVERITY_WEIGHTS.get(f.severity, 0.0)))


class SymbolicJudge(Judge):
    """Rule-based judge over the alignment findings."""

    name = "symbolic"
    version = "1"

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        thresholds: Mapping[str, float] | None = None,
    ) -> None:
        self.weights = dict(KIND_WEIGHTS if weights is None else weights)
        self.thresholds = dict(THRESHOLDS if thresholds is None else thresholds)

    def verdict_for(self, alignment: Alignment, extra: list[Finding] | None = None) -> Judgment:
        """Verdict and γ from an alignment (pure)."""
        findings = list(alignment.findings) + list(extra or [])
        risky = [(f, finding_risk(f, self.weights)) for f in findings]
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
        if not reasons:
            rationale = (
                f"no contradiction found among {evidence} checked cue(s)"
                if evidence
                else "the question gives no checkable cue; nothing contradicts the SQL"
            )
        else:
            rationale = "; ".join(reasons)
        return Judgment(
            verdict=verdict,
            confidence=confidence,
            rationale=rationale,
            issues=reasons,
            usage={"risk": round(risk, 4), "evidence": evidence},
        )

    def judge(self, case: JudgeInput) -> Judgment:
        return self.verdict_for(case.alignment)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}

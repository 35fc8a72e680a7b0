"""The score Φ, exactly as DESIGN.md defines it (pure).

B = filter points + verdict points (+ leniency boost), capped at 10;
Γ = 1.0 for γ ≥ 0.85, 0.8 for 0.65 ≤ γ < 0.85, 0.5 below;
Φ = min(B, 10) / 10 × 100 × Γ.

>>> b = compute_score("fully_applied_with_extras", "likely_correct", 0.7, benign_extras=True)
>>> b.base, b.confidence_multiplier, b.score, band(b.score)
(9.0, 0.8, 72.0, 'marginal')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stef.findings import by_constructor
from stef.rules import ConfidenceTiers, Scoring

#: Bands, best first, with their lower bounds.
BANDS = (("excellent", 90.0), ("good", 75.0), ("marginal", 50.0), ("poor", 0.0))


@dataclass(frozen=True)
class Breakdown:
    """Every term of the score, as stored in an evaluation's ``breakdown``."""

    filter_status: str
    filter_points: float
    verdict: str
    verdict_points: float
    leniency_boost: float
    confidence: float
    confidence_multiplier: float
    base: float
    score: float

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "filter_status": self.filter_status,
            "filter_points": self.filter_points,
            "verdict": self.verdict,
            "verdict_points": self.verdict_points,
            "leniency_boost": self.leniency_boost,
            "confidence": self.confidence,
            "confidence_multiplier": self.confidence_multiplier,
            "base": self.base,
        }


def confidence_multiplier(confidence: float, tiers: ConfidenceTiers | None = None) -> float:
    """Γ for a confidence γ.

    >>> confidence_multiplier(0.85), confidence_multiplier(0.84), confidence_multiplier(0.5)
    (1.0, 0.8, 0.5)
    """
    t = tiers or ConfidenceTiers()
    if confidence >= t.high_min:
        return t.high
    if confidence >= t.medium_min:
        return t.medium
    return t.low


def band(score: float) -> str:
    """The band of a score: excellent ≥ 90, good ≥ 75, marginal ≥ 50, poor below.

    >>> band(90.0), band(89.99), band(50.0), band(0.0)
    ('excellent', 'good', 'marginal', 'poor')
    """
    for name, low in BANDS:
        if score >= low:
            return name
    return "poor"


def compute_score(
    filter_status: str,
    verdict: str,
    confidence: float,
    *,
    benign_extras: bool = False,
    scoring: Scoring | None = None,
) -> Breakdown:
    """Compute Φ from the filter class, the verdict, γ and whether every extra is benign.

    The leniency boost applies only to ``fully_applied_with_extras`` when every extra
    filter is benign.

    >>> compute_score("fully_applied", "correct", 0.9).score
    100.0
    >>> compute_score("not_applied", "incorrect", 0.95).score
    0.0
    """
    s = scoring or Scoring()
    fp = float(getattr(s.filter_points, filter_status))
    vp = float(getattr(s.verdict_points, verdict))
    boost = (
        float(s.leniency_boost)
        if (benign_extras and filter_status == "fully_applied_with_extras")
        else 0.0
    )
    base = min(fp + vp + boost, float(s.base_cap))
    gamma = confidence_multiplier(confidence, s.confidence)
    score = round(base / float(s.base_cap) * 100.0 * gamma, 4)
    return Breakdown(
        filter_status=filter_status,
        filter_points=fp,
        verdict=verdict,
        verdict_points=vp,
        leniency_boost=boost,
        confidence=round(float(confidence), 4),
        confidence_multiplier=gamma,
        base=base,
        score=score,
    )

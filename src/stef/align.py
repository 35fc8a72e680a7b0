"""Alignment of the NL spec against the SQL spec (pure, deterministic).

(Implementation in progress: the :class:`Alignment` shape below is the contract.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stef.findings import Finding
from stef.spec import Filter

#: Filter-alignment classes, best first (DESIGN.md).
FILTER_CLASSES = ("fully_applied", "fully_applied_with_extras", "partially_applied", "not_applied")


@dataclass
class Alignment:
    """How the SQL matches the question.

    ``filter_status`` is one of :data:`FILTER_CLASSES`; ``filter_points`` and
    ``leniency_boost`` come from the rules' scoring; ``findings`` holds every mismatch and
    every excused difference (with the rule that excused it); ``evidence`` counts the NL
    cues that were checked against the SQL (0 means the question said nothing checkable).
    """

    filter_status: str
    filter_points: float
    leniency_boost: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    matched_filters: list[tuple[Filter, Filter]] = field(default_factory=list)
    missing_filters: list[Filter] = field(default_factory=list)
    extra_filters: list[Filter] = field(default_factory=list)
    benign_filters: list[Filter] = field(default_factory=list)
    evidence: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "filter_status": self.filter_status,
            "filter_points": self.filter_points,
            "leniency_boost": self.leniency_boost,
            "findings": [f.to_dict() for f in self.findings],
            "matched_filters": [[a.to_dict(), b.to_dict()] for a, b in self.matched_filters],
            "missing_filters": [f.to_dict() for f in self.missing_filters],
            "extra_filters": [f.to_dict() for f in self.extra_filters],
            "benign_filters": [f.to_dict() for f in self.benign_filters],
            "evidence": self.evidence,
        }

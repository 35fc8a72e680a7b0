"""The judge interface: one small class per judge, chosen by configuration.

A judge reads a :class:`JudgeInput` (the record, both specs, the alignment and the rules)
and returns a :class:`Judgment`: one of four verdicts with a confidence γ ∈ [0, 1].

>>> Judgment("likely_correct", 0.7, "no contradiction found").points()
4.0
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stef.findings import Finding
from stef.rules import Rules, VerdictPoints
from stef.spec import Spec

if TYPE_CHECKING:
    from stef.align.filters import Alignment

#: The four verdicts, best first.
VERDICTS = ("correct", "likely_correct", "potentially_incorrect", "incorrect")


@dataclass
class JudgeInput:
    """Everything a judge may look at for one record."""

    question: str
    sql: str
    nl_spec: Spec
    sql_spec: Spec
    alignment: Alignment
    rules: Rules
    enriched_question: str | None = None
    dialect: str | None = None
    enrichment_findings: list[Finding] = field(default_factory=list)


@dataclass
class Judgment:
    """A verdict, its confidence γ, a short rationale and what it cost."""

    verdict: str
    confidence: float
    rationale: str = ""
    issues: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    model: str | None = None
    prompt_version: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must be within [0, 1], got {self.confidence!r}")

    def points(self, table: VerdictPoints | None = None) -> float:
        """Verdict points from ``table`` (DESIGN.md defaults when omitted)."""
        return float(getattr(table or VerdictPoints(), self.verdict))


class Judge(ABC):
    """Base class of every judge. Subclasses set ``name`` and implement :meth:`judge`."""

    name: str = "judge"

    @abstractmethod
    def judge(self, case: JudgeInput) -> Judgment:
        """Return a verdict for one case; raise :class:`stef.errors.JudgeError` if none."""

    async def ajudge(self, case: JudgeInput) -> Judgment:
        """Asynchronous variant; network judges override it, others run in a thread."""
        import asyncio  # only here: the offline judge's callers never load it

        return await asyncio.to_thread(self.judge, case)

    def describe(self) -> dict[str, Any]:
        """Provenance: what produced the verdicts (name, model, prompt version …)."""
        return {"name": self.name}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (HTTP clients, local servers)."""

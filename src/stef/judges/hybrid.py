"""The hybrid judge: the offline judge first, the LLM only where the offline judge is unsure.

The LLM is asked when the offline verdict's confidence is below ``threshold`` or the
verdict is ``potentially_incorrect`` (the offline judge's "I cannot tell"). Otherwise
the offline verdict stands and no token is spent. ``Judgment.usage["path"]`` records
which path decided: ``offline``, ``llm``, or ``offline_fallback`` when the LLM was asked
but gave no verdict (endpoint down or invalid answers) and ``fallback`` is on — the
LLM's error is then kept in ``usage["llm_error"]``. With ``fallback=False`` the LLM's
:class:`~stef.errors.JudgeError` is raised instead.

The default threshold (:data:`DEFAULT_THRESHOLD`, 0.5) asks the LLM only where the
offline judge cannot tell: its ``potentially_incorrect`` verdicts and passes it gives
with p below one half. Measured on 200 labelled rows with the packaged 1.5B model
(``docs/llm.md``), every higher threshold sent more records to the LLM and lowered AUROC.

>>> from stef.judges.base import Judgment
>>> HybridJudge.needs_llm(Judgment("correct", 0.9), threshold=DEFAULT_THRESHOLD)
False
>>> HybridJudge.needs_llm(Judgment("likely_correct", 0.47), threshold=DEFAULT_THRESHOLD)
True
>>> HybridJudge.needs_llm(Judgment("potentially_incorrect", 0.9), threshold=DEFAULT_THRESHOLD)
True
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from stef.errors import JudgeError
from stef.judges.base import Judge, JudgeInput, Judgment

#: Offline confidence below which the LLM is asked (see the module docstring).
DEFAULT_THRESHOLD = 0.5


class HybridJudge(Judge):
    """Offline judge, escalating unsure cases to an LLM judge."""

    name = "hybrid"

    def __init__(
        self,
        llm: Judge,
        offline: Judge | None = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        fallback: bool = True,
    ) -> None:
        if offline is None:
            from stef.judges.symbolic import SymbolicJudge

            offline = SymbolicJudge()
        self.llm = llm
        self.offline = offline
        self.threshold = threshold
        self.fallback = fallback

    @property
    def concurrency(self) -> int:
        """The LLM judge's concurrency (the batch runner awaits this many records)."""
        return int(getattr(self.llm, "concurrency", 1) or 1)

    @staticmethod
    def needs_llm(offline: Judgment, threshold: float) -> bool:
        """Is the offline verdict too unsure to stand on its own?"""
        return offline.confidence < threshold or offline.verdict == "potentially_incorrect"

    def judge(self, case: JudgeInput) -> Judgment:
        first = self.offline.judge(case)
        if not self.needs_llm(first, self.threshold):
            return self._offline(first, "offline")
        try:
            return self._llm(self.llm.judge(case), first)
        except JudgeError as e:
            return self._failed(first, e)

    async def ajudge(self, case: JudgeInput) -> Judgment:
        first = await self.offline.ajudge(case)
        if not self.needs_llm(first, self.threshold):
            return self._offline(first, "offline")
        try:
            return self._llm(await self.llm.ajudge(case), first)
        except JudgeError as e:
            return self._failed(first, e)

    def _offline(self, j: Judgment, path: str, **extra: Any) -> Judgment:
        return replace(j, usage={**j.usage, "path": path, **extra})

    def _llm(self, j: Judgment, offline: Judgment) -> Judgment:
        usage = {
            **j.usage,
            "path": "llm",
            "offline_verdict": offline.verdict,
            "offline_confidence": offline.confidence,
        }
        return replace(j, findings=[*offline.findings, *j.findings], usage=usage)

    def _failed(self, offline: Judgment, error: JudgeError) -> Judgment:
        if not self.fallback:
            raise error
        return self._offline(
            offline,
            "offline_fallback",
            llm_error={"status": error.status, "message": error.message},
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "threshold": self.threshold,
            "fallback": self.fallback,
            "offline": self.offline.describe(),
            "llm": self.llm.describe(),
        }

    def close(self) -> None:
        try:
            self.llm.close()
        finally:
            self.offline.close()

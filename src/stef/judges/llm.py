"""The LLM judge: any OpenAI-compatible endpoint, or the packaged local model behind one.

It renders the versioned prompt (``stef/prompts/judge_v1.j2``), asks for a JSON verdict,
validates it with pydantic, and on a malformed answer asks once more with the
validation error shown. A second bad answer raises :class:`JudgeError` with status
``judge_failed``; an endpoint that is down (or a circuit breaker that is open) raises it
with status ``judge_unavailable``. A verdict is never guessed.

Self-consistency (``samples=k``, temperature > 0): the k answers vote; the verdict is
the plurality (ties: higher summed confidence, then the more cautious verdict) and

    γ = agreement × stated confidence

where *agreement* is the share of the k samples that gave the same verdict, counting a
sample on the same side (both correct-ish or both incorrect-ish) as half, and
*stated confidence* is the mean confidence of the samples that agree. A sample that
stayed invalid counts as disagreeing; fewer than half valid samples is ``judge_failed``.
With one sample agreement is 1 and γ is the stated confidence.

>>> a = [JudgeAnswer(verdict="correct", confidence=0.9),
...      JudgeAnswer(verdict="correct", confidence=0.7),
...      JudgeAnswer(verdict="likely_correct", confidence=0.8)]
>>> v = vote(a, k=3)
>>> v.verdict, round(v.agreement, 3), v.stated_confidence, round(v.confidence, 3)
('correct', 0.833, 0.8, 0.667)
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stef.errors import JudgeError, StefError
from stef.findings import Finding
from stef.judges.base import VERDICTS, Judge, JudgeInput, Judgment
from stef.llm.cache import LLMCache, cache_key, first_cost
from stef.llm.client import ChatClient, CircuitBreaker, LLMUnavailableError
from stef.llm.config import LLMSettings
from stef.llm.loop import BackgroundLoop
from stef.llm.prompt import compact_json, load_prompt

if TYPE_CHECKING:
    from stef.llm.local import LocalServer

PROMPT_VERSION = "judge_v1"
_POSITIVE = ("correct", "likely_correct")


class JudgeAnswer(BaseModel):
    """The JSON the model must answer with."""

    model_config = ConfigDict(extra="ignore")

    verdict: Literal["correct", "likely_correct", "potentially_incorrect", "incorrect"]
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str = ""
    issues: list[str] = Field(default_factory=list)

    @field_validator("verdict", mode="before")
    @classmethod
    def _spelling(cls, v: Any) -> Any:
        """Accept ``"Likely Correct"`` / ``"likely-correct"`` for ``likely_correct``."""
        if isinstance(v, str):
            return "_".join(v.strip().lower().replace("-", " ").split())
        return v

    @field_validator("issues", mode="before")
    @classmethod
    def _issue_list(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [v] if v.strip() else []
        if isinstance(v, list):
            return [x if isinstance(x, str) else json.dumps(x) for x in v]
        return v


#: JSON Schema of the answer, sent to servers that constrain output with it (llama.cpp's
#: ``response_format: {"type": "json_object", "schema": ...}``) when ``constrained``.
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "confidence": {"type": "number"},
        "rationale": {"type": "string"},
        "issues": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["verdict", "confidence", "rationale", "issues"],
}


class AnswerError(ValueError):
    """The model's text is not a valid :class:`JudgeAnswer`; the message says why."""


def parse_answer(text: str) -> JudgeAnswer:
    """Read the first JSON object in ``text`` (code fences and prose around it allowed).

    >>> parse_answer('```json\\n{"verdict": "incorrect", "confidence": 0.8}\\n```').verdict
    'incorrect'
    >>> parse_answer('{"verdict": "maybe", "confidence": 2}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    stef.judges.llm.AnswerError: verdict: Input should be 'correct', ...; confidence: Input ...
    """
    start = text.find("{")
    if start < 0:
        raise AnswerError("the answer contains no JSON object")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        raise AnswerError(f"the answer is not valid JSON: {e.msg} at character {e.pos}") from None
    if not isinstance(data, dict):
        raise AnswerError("the answer is not a JSON object")
    try:
        return JudgeAnswer.model_validate(data)
    except ValidationError as e:
        raise AnswerError(
            "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors())
        ) from None


@dataclass(frozen=True)
class Vote:
    """The outcome of self-consistency voting."""

    verdict: str
    confidence: float
    agreement: float
    stated_confidence: float
    winners: tuple[JudgeAnswer, ...]


def vote(answers: list[JudgeAnswer], k: int) -> Vote:
    """Combine valid answers out of ``k`` samples (see the module docstring)."""
    if not answers:
        raise ValueError("no valid answer to vote on")
    votes: Counter[str] = Counter(a.verdict for a in answers)
    weight = {v: sum(a.confidence for a in answers if a.verdict == v) for v in VERDICTS}
    verdict = max(VERDICTS, key=lambda v: (votes[v], weight[v], VERDICTS.index(v)))
    winners = tuple(a for a in answers if a.verdict == verdict)
    same_side = sum(
        1
        for a in answers
        if a.verdict != verdict and (a.verdict in _POSITIVE) == (verdict in _POSITIVE)
    )
    agreement = (len(winners) + 0.5 * same_side) / k
    stated = sum(a.confidence for a in winners) / len(winners)
    gamma = min(1.0, max(0.0, agreement * stated))
    return Vote(verdict, round(gamma, 4), agreement, round(stated, 4), winners)


#: Findings the prompt leaves out: lexical coverage cues (question words or tables the SQL
#: does not spell) that weigh in the offline judge's statistics but are no verifiable
#: error; a small model shown them votes "incorrect" far too often, and it reads the
#: question and the SQL itself.
PROMPT_OMITTED_KINDS = frozenset(
    {"question_term_unexplained", "question_term_via_hint", "question_term_restated"}
    | {"tables_unexplained"}
)


def prompt_context(case: JudgeInput) -> dict[str, Any]:
    """What the judge prompt receives for one record (findings of
    :data:`PROMPT_OMITTED_KINDS` left out)."""
    return {
        "question": case.question,
        "enriched_question": case.enriched_question,
        "sql": case.sql,
        "dialect": case.dialect,
        "nl_spec": compact_json(case.nl_spec.to_dict()),
        "sql_spec": compact_json(case.sql_spec.to_dict()),
        "filter_status": case.alignment.filter_status,
        "findings": [f for f in case.alignment.findings if f.kind not in PROMPT_OMITTED_KINDS],
        "enrichment_findings": list(case.enrichment_findings),
        "judge_instructions": list(case.rules.judge_instructions),
    }


@dataclass
class _Sample:
    answer: JudgeAnswer | None
    prompt_tokens: int
    completion_tokens: int
    requests: int
    error: str | None = None


class LLMJudge(Judge):
    """Judge through a chat-completions endpoint (``name`` is ``openai`` or ``local``).

    ``server`` (a :class:`~stef.llm.local.LocalServer`) is started on first use and
    stopped by :meth:`close`; the client is then pointed at it.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        name: str = "openai",
        samples: int = 1,
        temperature: float | None = None,
        max_tokens: int = 512,
        cache: LLMCache | None = None,
        prompt_version: str = PROMPT_VERSION,
        server: LocalServer | None = None,
        constrained: bool = False,
    ) -> None:
        if samples < 1:
            raise ValueError("samples must be at least 1")
        temp = temperature if temperature is not None else (0.0 if samples == 1 else 0.7)
        if samples > 1 and temp <= 0:
            raise ValueError("self-consistency (samples > 1) needs a temperature above 0")
        self.name = name
        self.client = client
        self.samples = samples
        self.temperature = temp
        self.max_tokens = max_tokens
        self.cache = cache
        self.prompt = load_prompt(prompt_version)
        self.server = server
        self.constrained = constrained
        self._loop = BackgroundLoop()
        self._start_lock = threading.Lock()

    @classmethod
    def from_settings(
        cls, settings: LLMSettings, *, name: str = "openai", server: LocalServer | None = None
    ) -> LLMJudge:
        """Build from resolved settings; ``base_url`` and ``model`` are required unless local."""
        base_url = settings.base_url or (server.base_url if server else None)
        model = settings.model or (server.model.key if server else None)
        if not base_url or not model:
            missing = " and ".join(
                n
                for n, v in (
                    ("--base-url/STEF_LLM_BASE_URL", base_url),
                    ("--model/STEF_LLM_MODEL", model),
                )
                if not v
            )
            raise StefError("invalid_config", f"the {name} judge needs {missing}")
        client = ChatClient(
            base_url,
            model,
            settings.key(),
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            concurrency=settings.concurrency,
            breaker=CircuitBreaker(settings.circuit_failures, settings.circuit_reset),
        )
        path = settings.cache_path()
        return cls(
            client,
            name=name,
            samples=settings.samples,
            temperature=settings.effective_temperature(),
            max_tokens=settings.max_tokens,
            cache=LLMCache(path) if path else None,
            server=server,
            constrained=name == "local",
        )

    @property
    def concurrency(self) -> int:
        """Requests in flight at most (the batch runner awaits this many records)."""
        return self.client.concurrency

    # ------------------------------------------------------------------ Judge API

    def judge(self, case: JudgeInput) -> Judgment:
        """Synchronous wrapper of :meth:`ajudge` (runs on the judge's own event loop)."""
        return self._loop.run(self.ajudge(case))

    async def ajudge(self, case: JudgeInput) -> Judgment:
        """Ask the model (or the cache) for a verdict on one record."""
        started = time.perf_counter()
        messages, key = self.request_for(case)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            answers = [JudgeAnswer.model_validate(a) for a in hit["answers"]]
            usage = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0}
            usage.update(first_cost(hit.get("usage")))  # what the answer cost when asked
            cached = True
        else:
            await self.ensure_server()  # a re-run answered from the cache starts no server
            answers, usage = await self._ask(messages)
            cached = False
            if self.cache is not None:
                spent = round((time.perf_counter() - started) * 1000, 1)
                self.cache.put(
                    key,
                    {
                        "answers": [a.model_dump() for a in answers],
                        "usage": {**usage, "latency_ms": spent},
                    },
                    model=self.client.model,
                    prompt_version=self.prompt.version,
                )
        v = vote(answers, self.samples)
        best = max(v.winners, key=lambda a: a.confidence)
        issues = list(dict.fromkeys(i for a in v.winners for i in a.issues if i.strip()))
        return Judgment(
            verdict=v.verdict,
            confidence=v.confidence,
            rationale=best.rationale,
            issues=issues,
            findings=[
                Finding("judge_issue", "warning", i, rule=f"{self.name}_judge") for i in issues
            ],
            model=self.client.model,
            prompt_version=self.prompt.version,
            usage={
                **usage,
                "latency_ms": round((time.perf_counter() - started) * 1000, 1),
                "cached": cached,
                "samples": self.samples,
                "valid_samples": len(answers),
                "agreement": round(v.agreement, 4),
                "stated_confidence": v.stated_confidence,
            },
        )

    def request_for(self, case: JudgeInput) -> tuple[list[dict[str, str]], str]:
        """The chat messages for ``case`` and their cache key (model, prompt, sampling)."""
        messages = self.prompt.render(**prompt_context(case))
        key = cache_key(
            self.client.model,
            self.prompt.version,
            {
                "prompt_sha256": self.prompt.sha256,
                "messages": messages,
                "samples": self.samples,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "constrained": self.constrained,
            },
        )
        return messages, key

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "model": self.client.model,
            "base_url": self.client.base_url,
            "prompt_version": self.prompt.version,
            "samples": self.samples,
            "temperature": self.temperature,
        }
        if self.server is not None:
            d["local_model"] = self.server.model.key
        return d

    def close(self) -> None:
        try:
            self._loop.run(self.client.aclose())
        finally:
            self._loop.close()
            if self.server is not None:
                self.server.stop()
            if self.cache is not None:
                self.cache.close()

    # ------------------------------------------------------------------ internals

    async def ensure_server(self) -> None:
        """Start the local server on first use (no-op for a remote endpoint)."""
        server = self.server
        if server is None or server.running:
            return

        def start() -> None:
            with self._start_lock:
                if not server.running:
                    server.start()

        await asyncio.to_thread(start)
        self.client.base_url = server.base_url

    async def _ask(
        self, messages: list[dict[str, str]]
    ) -> tuple[list[JudgeAnswer], dict[str, int]]:
        k = self.samples
        results = await asyncio.gather(
            *(self._sample(messages, seed=i if k > 1 else None) for i in range(k)),
            return_exceptions=True,
        )
        samples: list[_Sample] = []
        for r in results:
            if isinstance(r, LLMUnavailableError):
                raise r
            if isinstance(r, JudgeError):
                samples.append(_Sample(None, 0, 0, 1, r.message))
            elif isinstance(r, BaseException):
                raise r
            else:
                samples.append(r)
        answers = [s.answer for s in samples if s.answer is not None]
        usage = {
            "prompt_tokens": sum(s.prompt_tokens for s in samples),
            "completion_tokens": sum(s.completion_tokens for s in samples),
            "requests": sum(s.requests for s in samples),
        }
        if 2 * len(answers) < k:
            errors = "; ".join(dict.fromkeys(s.error for s in samples if s.error))
            failed = JudgeError(
                "judge_failed",
                f"{self.name} judge gave no valid verdict "
                f"({len(answers)}/{k} valid samples): {errors}",
            )
            failed.usage = usage  # type: ignore[attr-defined]  # tokens spent all the same
            raise failed
        return answers, usage

    async def _sample(self, messages: list[dict[str, str]], seed: int | None) -> _Sample:
        """One sample: ask, validate, and ask once more with the error shown if invalid."""
        schema = ANSWER_SCHEMA if self.constrained else None
        first = await self.client.chat(
            messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
            schema=schema,
        )
        try:
            return _Sample(
                parse_answer(first.text), first.prompt_tokens, first.completion_tokens, 1
            )
        except AnswerError as e:
            problem = str(e)
        retry = [
            *messages,
            {"role": "assistant", "content": first.text},
            {
                "role": "user",
                "content": f"That answer is not valid: {problem}. Answer again with only the JSON "
                "object: verdict, confidence (0 to 1), rationale, issues.",
            },
        ]
        second = await self.client.chat(
            retry,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
            schema=schema,
        )
        tokens = (
            first.prompt_tokens + second.prompt_tokens,
            first.completion_tokens + second.completion_tokens,
        )
        try:
            return _Sample(parse_answer(second.text), *tokens, 2)
        except AnswerError as e:
            return _Sample(None, *tokens, 2, f"invalid answer twice: {problem}; then {e}")

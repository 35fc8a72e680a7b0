"""Optional LLM extraction of the NL spec, merged with the deterministic extractor's spec.

``--nl-extractor llm`` asks the model (prompt ``stef/prompts/nl_spec_v1.j2``) for the
filters, aggregations, grouping, ordering and limit a question asks for, and adds what
the deterministic :func:`stef.nl.spec.extract_nl_spec` missed. The deterministic spec
wins every conflict: the LLM only fills gaps. When the LLM fails (endpoint down,
invalid answer twice) the deterministic spec is used alone and
``spec.flags["llm_extractor"]`` says why.

>>> from stef.spec import Spec, Filter
>>> base = Spec(filters=[Filter(None, "=", ("north",), clause="question")])
>>> extra = Spec(filters=[Filter("region", "=", ("north",), clause="question"),
...                       Filter("year", "=", ("2023",), clause="question")], limit=5)
>>> m = merge_specs(base, extra)
>>> [(f.column, f.values) for f in m.filters], m.limit
([('region', ('north',)), ('year', ('2023',))], 5)
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stef.errors import JudgeError
from stef.llm.cache import LLMCache, cache_key, first_cost
from stef.llm.client import ChatClient
from stef.llm.loop import BackgroundLoop
from stef.llm.prompt import load_prompt
from stef.rules import Rules, term_key
from stef.spec import (
    AGGREGATES,
    OPERATORS,
    Aggregation,
    Filter,
    OrderKey,
    Spec,
    normalize_column,
    normalize_value,
)

PROMPT_VERSION = "nl_spec_v1"

_OP_SPELLINGS = {
    "==": "=",
    "<>": "!=",
    "eq": "=",
    "ne": "!=",
    "not_in": "not in",
    "is_null": "is null",
    "is_not_null": "is not null",
    "not_like": "not like",
    "gte": ">=",
    "lte": "<=",
    "gt": ">",
    "lt": "<",
}
_AGG_SPELLINGS = {
    "average": "avg",
    "mean": "avg",
    "total": "sum",
    "maximum": "max",
    "minimum": "min",
}


class _LLMFilter(BaseModel):
    model_config = ConfigDict(extra="ignore")
    column: str | None = None
    op: str
    values: list[str] = Field(default_factory=list)

    @field_validator("op", mode="before")
    @classmethod
    def _op(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = " ".join(v.strip().lower().split())
            v = _OP_SPELLINGS.get(v, v)
            if v not in OPERATORS:
                raise ValueError(f"op must be one of {list(OPERATORS)}")
        return v

    @field_validator("values", mode="before")
    @classmethod
    def _values(cls, v: Any) -> Any:
        if v is None:
            return []
        if not isinstance(v, list):
            v = [v]
        return [x if isinstance(x, str) else json.dumps(x) for x in v]


class _LLMAggregation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    func: str
    arg: str | None = None
    distinct: bool = False

    @field_validator("func", mode="before")
    @classmethod
    def _func(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().lower()
            v = _AGG_SPELLINGS.get(v, v)
            if v not in AGGREGATES:
                raise ValueError(f"func must be one of {list(AGGREGATES)}")
        return v


class _LLMOrder(BaseModel):
    model_config = ConfigDict(extra="ignore")
    key: str
    direction: Literal["asc", "desc"] = "asc"

    @field_validator("direction", mode="before")
    @classmethod
    def _dir(cls, v: Any) -> Any:
        return v.strip().lower()[:4].rstrip("e") if isinstance(v, str) else v


class NLSpecAnswer(BaseModel):
    """The JSON the model must answer with."""

    model_config = ConfigDict(extra="ignore")
    filters: list[_LLMFilter] = Field(default_factory=list)
    aggregations: list[_LLMAggregation] = Field(default_factory=list)
    group_by: list[str] = Field(default_factory=list)
    order_by: list[_LLMOrder] = Field(default_factory=list)
    limit: int | None = Field(None, ge=1)
    distinct: bool = False
    columns: list[str] = Field(default_factory=list)


def parse_spec_answer(text: str) -> NLSpecAnswer:
    """Read and validate the first JSON object in ``text``; ``ValueError`` says what is wrong.

    >>> a = parse_spec_answer('{"filters": [{"column": "City", "op": "==", "values": ["Paris"]}]}')
    >>> a.filters[0].op
    '='
    """
    start = text.find("{")
    if start < 0:
        raise ValueError("the answer contains no JSON object")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
        return NLSpecAnswer.model_validate(data)
    except json.JSONDecodeError as e:
        raise ValueError(f"the answer is not valid JSON: {e.msg} at character {e.pos}") from None
    except ValidationError as e:
        raise ValueError(
            "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors())
        ) from None


def answer_to_spec(answer: NLSpecAnswer, rules: Rules) -> Spec:
    """Normalise the model's answer the way the deterministic extractor normalises its own."""
    syn = rules.synonym_map()
    vmap = rules.value_map()

    def col(name: str | None) -> str | None:
        return normalize_column(name, syn) if name and name.strip() else None

    def val(v: str) -> str:
        n = normalize_value(v)
        return vmap.get(n, n)

    context = rules.context_keys()  # the application's own names: never filter values
    filters = [
        Filter(col(f.column), f.op, tuple(val(v) for v in f.values), text="llm", clause="question")
        for f in answer.filters
        if not (context and f.values and all(term_key(v) in context for v in f.values))
    ]
    aggs = [
        Aggregation(a.func, "*" if a.arg == "*" else col(a.arg), a.distinct, text="llm")
        for a in answer.aggregations
    ]
    order = [OrderKey(col(o.key) or o.key, o.direction, text="llm") for o in answer.order_by]
    group_by = [c for c in (col(g) for g in answer.group_by) if c]
    columns = [c for c in (col(g) for g in answer.columns) if c]
    return Spec(
        filters=filters,
        aggregations=aggs,
        group_by=group_by,
        order_by=order,
        limit=answer.limit,
        distinct=answer.distinct,
        columns=columns,
        cues=["llm"],
    )


def merge_specs(base: Spec, extra: Spec) -> Spec:
    """Add to ``base`` what ``extra`` has and ``base`` lacks; ``base`` wins conflicts.

    A filter of ``extra`` whose values a ``base`` filter already holds only names the
    column that ``base`` left unknown; aggregations likewise fill a missing argument.
    """
    filters = list(base.filters)
    for f in extra.filters:
        same = next((i for i, b in enumerate(filters) if set(b.values) & set(f.values)), None)
        if same is None:
            if not any((b.column, b.op, b.values) == (f.column, f.op, f.values) for b in filters):
                filters.append(f)
        elif filters[same].column is None and f.column is not None:
            filters[same] = replace(filters[same], column=f.column)
    aggs = list(base.aggregations)
    for a in extra.aggregations:
        same = next((i for i, b in enumerate(aggs) if b.func == a.func), None)
        if same is None:
            aggs.append(a)
        elif aggs[same].arg is None and a.arg is not None:
            aggs[same] = replace(aggs[same], arg=a.arg, distinct=aggs[same].distinct or a.distinct)
    merged = replace(
        base,
        filters=filters,
        aggregations=aggs,
        group_by=list(dict.fromkeys([*base.group_by, *extra.group_by])),
        order_by=list(base.order_by) or list(extra.order_by),
        limit=base.limit if base.limit is not None else extra.limit,
        distinct=base.distinct or extra.distinct,
        columns=list(dict.fromkeys([*base.columns, *extra.columns])),
        cues=list(dict.fromkeys([*base.cues, *extra.cues])),
        flags={**base.flags, "llm_extractor": "merged"},
    )
    return merged


class LLMNLExtractor:
    """NL extractor for the evaluator: ``extractor(question, enriched, rules, now) -> Spec``."""

    def __init__(
        self,
        client: ChatClient,
        *,
        cache: LLMCache | None = None,
        max_tokens: int = 400,
        prompt_version: str = PROMPT_VERSION,
        before: Callable[[], Awaitable[None]] | None = None,
        owner: Any | None = None,
    ) -> None:
        self.client = client
        self.owner = owner  # what ``close`` also releases (a local model's judge and server)
        self.before = before
        self.cache = cache
        self.max_tokens = max_tokens
        self.prompt = load_prompt(prompt_version)
        self._loop = BackgroundLoop()
        self.usage: dict[str, float] = {
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "requests": 0,
            "cached": 0,
            "failed": 0,
            "latency_ms": 0.0,
        }

    def __call__(
        self, question: str, enriched: str | None, rules: Rules, now: datetime | None = None
    ) -> Spec:
        return self.extract_with_usage(question, enriched, rules, now)[0]

    def extract_with_usage(
        self, question: str, enriched: str | None, rules: Rules, now: datetime | None = None
    ) -> tuple[Spec, dict[str, Any]]:
        """The spec and what asking for it cost (see :meth:`aextract_with_usage`)."""
        return self._loop.run(self.aextract_with_usage(question, enriched, rules, now))

    async def aextract_with_usage(
        self, question: str, enriched: str | None, rules: Rules, now: datetime | None = None
    ) -> tuple[Spec, dict[str, Any]]:
        """The deterministic spec, completed by the LLM's where it adds something, and
        this extraction's cost, for the evaluation's provenance.

        The cost holds ``requests``, ``prompt_tokens``, ``completion_tokens``,
        ``latency_ms`` and ``cached``; a cache hit adds what the answer cost when it was
        first asked (``cached_prompt_tokens``, ``cached_completion_tokens``,
        ``cached_latency_ms``), a failure ``failed: True`` (tokens spent all the same).
        """
        from stef.nl.spec import extract_nl_spec

        base = extract_nl_spec(question, enriched, rules=rules, now=now)
        started = time.perf_counter()
        spent: dict[str, Any] = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
        try:
            answer = await self._answer(question, enriched, rules, spent)
        except (JudgeError, ValueError) as e:
            self.usage["failed"] += 1
            spent.update(
                cached=False,
                failed=True,
                latency_ms=round((time.perf_counter() - started) * 1000, 1),
            )
            return replace(base, flags={**base.flags, "llm_extractor": f"failed: {e}"}), spent
        spent["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return merge_specs(base, answer_to_spec(answer, rules)), spent

    async def _answer(
        self, question: str, enriched: str | None, rules: Rules, spent: dict[str, Any]
    ) -> NLSpecAnswer:
        started = time.perf_counter()
        messages = self.prompt.render(
            question=question,
            enriched_question=enriched,
            operators=json.dumps(list(OPERATORS)),
            aggregates=json.dumps(list(AGGREGATES)),
            columns=sorted(rules.column_synonyms),
        )
        key = cache_key(
            self.client.model,
            self.prompt.version,
            {
                "prompt_sha256": self.prompt.sha256,
                "messages": messages,
                "max_tokens": self.max_tokens,
            },
        )
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            self.usage["cached"] += 1
            spent["cached"] = True
            if isinstance(hit, dict) and set(hit) == {"answer", "usage"}:
                spent.update(first_cost(hit["usage"]))  # what the answer cost when asked
                hit = hit["answer"]
            return NLSpecAnswer.model_validate(hit)
        spent["cached"] = False
        if self.before is not None:
            await self.before()
        first = await self.client.chat(messages, temperature=0.0, max_tokens=self.max_tokens)
        self._count(spent, first.prompt_tokens, first.completion_tokens)
        try:
            answer = parse_spec_answer(first.text)
        except ValueError as e:
            retry = [
                *messages,
                {"role": "assistant", "content": first.text},
                {
                    "role": "user",
                    "content": f"That answer is not valid: {e}. "
                    "Answer again with only the JSON object.",
                },
            ]
            second = await self.client.chat(retry, temperature=0.0, max_tokens=self.max_tokens)
            self._count(spent, second.prompt_tokens, second.completion_tokens)
            answer = parse_spec_answer(second.text)
        elapsed = (time.perf_counter() - started) * 1000
        self.usage["latency_ms"] += elapsed
        if self.cache is not None:
            cost = {k: spent[k] for k in ("prompt_tokens", "completion_tokens")}
            self.cache.put(
                key,
                {"answer": answer.model_dump(), "usage": {**cost, "latency_ms": round(elapsed, 1)}},
                model=self.client.model,
                prompt_version=self.prompt.version,
            )
        return answer

    def _count(self, spent: dict[str, Any], prompt_tokens: int, completion_tokens: int) -> None:
        for usage in (self.usage, spent):
            usage["prompt_tokens"] += prompt_tokens
            usage["completion_tokens"] += completion_tokens
            usage["requests"] += 1

    def describe(self) -> dict[str, Any]:
        return {
            "name": "llm",
            "model": self.client.model,
            "base_url": self.client.base_url,
            "prompt_version": self.prompt.version,
        }

    def close(self) -> None:
        try:
            self._loop.run(self.client.aclose())
        finally:
            self._loop.close()
            if self.owner is not None:
                self.owner.close()

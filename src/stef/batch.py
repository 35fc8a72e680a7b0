"""Batches: stream records through an evaluator (in order, optionally in parallel) and
summarise what came out.

Memory stays flat: records are read lazily, at most a few chunks are in flight, and the
summary keeps one float per evaluated record.

>>> from stef.evaluator import Evaluator
>>> lines = ['{"question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}', '{bad']
>>> s = Summary()
>>> for e in evaluate_stream(Evaluator(), lines):
...     s.add(e)
>>> s.records, s.evaluated, s.coverage
(2, 1, 0.5)
"""

from __future__ import annotations

import json
import math
import statistics
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Protocol

import orjson

from stef.pool import SupervisedPool
from stef.score import BANDS


class Evaluator(Protocol):
    """What a batch needs of an evaluator (:class:`stef.evaluator.Evaluator` is one).

    Declared here, so that the batch sits below the evaluator: the evaluator hands itself
    to :func:`evaluate_stream`, and nothing here imports it.
    """

    judge: Any

    @property
    def asks_llm_for_specs(self) -> bool: ...

    def evaluate_line(self, line: str) -> dict[str, Any]: ...

    def evaluate_record(self, data: Any) -> dict[str, Any]: ...

    async def aevaluate_record(self, data: Any) -> dict[str, Any]: ...

    def error_evaluation(self, item: Any, status: str, message: str) -> dict[str, Any]: ...


#: Records per chunk sent to a worker process.
CHUNK = 16


@dataclass(frozen=True)
class Encoded:
    """One evaluation as ``stef eval`` writes it: its JSON line (no newline), the fields a
    :class:`Summary` counts, and the evaluation itself when it was at hand."""

    line: str
    brief: dict[str, Any]
    evaluation: dict[str, Any] | None = None

    def decoded(self) -> dict[str, Any]:
        """The evaluation as a dict (decoded from ``line`` when it came from a worker)."""
        if self.evaluation is not None:
            return self.evaluation
        try:
            out: dict[str, Any] = orjson.loads(self.line)
        except orjson.JSONDecodeError:  # NaN written by the json fallback
            out = json.loads(self.line)
        return out


def encode_line(evaluation: dict[str, Any]) -> str:
    """One evaluation as a compact JSON line (UTF-8 text, no newline).

    orjson writes it; the standard library does where orjson cannot say the same thing
    (integers beyond 64 bits, non-finite floats in pass-through metadata).

    >>> encode_line({"id": "r-1", "score": 70.0, "metadata": {"n": float("nan")}})
    '{"id":"r-1","score":70.0,"metadata":{"n":NaN}}'
    """
    if _finite(evaluation):
        try:
            return orjson.dumps(evaluation).decode()
        except TypeError:  # orjson.JSONEncodeError
            pass
    return json.dumps(evaluation, ensure_ascii=False, separators=(",", ":"))


def _finite(evaluation: dict[str, Any]) -> bool:
    """No NaN or infinity where one can be: a top-level field, a field of a top-level
    object (``breakdown``, ``judgment`` …), anywhere in ``metadata``."""
    for key, value in evaluation.items():
        if isinstance(value, float):
            if not math.isfinite(value):
                return False
        elif isinstance(value, dict):
            if key == "metadata":
                if not _deep_finite(value):
                    return False
            elif not all(math.isfinite(v) for v in value.values() if isinstance(v, float)):
                return False
    return True


def _deep_finite(value: Any) -> bool:
    """No NaN or infinity anywhere in ``value`` (walked without recursion: metadata may
    nest deeper than Python's stack allows)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            if not math.isfinite(v):
                return False
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return True


def _brief(evaluation: dict[str, Any]) -> dict[str, Any]:
    """The part of an evaluation :meth:`Summary.add` reads (keep the two in step): small,
    since a worker process sends one per record to the parent.

    >>> _brief({"status": "ok", "score": 70.0, "band": "marginal", "findings": [
    ...     {"kind": "extra_filter", "severity": "info"}, {"kind": "missing_filter",
    ...     "severity": "error", "detail": "..."}], "provenance": {"judge": {}}})
    {'status': 'ok', 'score': 70.0, 'band': 'marginal', 'findings': [{'kind': 'missing_filter'}]}
    """
    out = {k: evaluation.get(k) for k in ("status", "score", "band")}
    out["findings"] = [
        {"kind": f.get("kind")}
        for f in evaluation.get("findings") or ()
        if f.get("severity") != "info"  # Summary counts the others only
    ]
    prov = evaluation.get("provenance") or {}
    kept = {}
    for key in ("usage", "nl_extractor_usage"):  # the judge's and the extractor's tokens
        usage = prov.get(key)
        tokens = {k: usage[k] for k in _TOKENS if k in usage} if isinstance(usage, dict) else {}
        if tokens:
            kept[key] = tokens
    if kept:
        out["provenance"] = kept
    return out


_TOKENS = ("prompt_tokens", "completion_tokens")


def _encoded(evaluation: dict[str, Any], keep: bool) -> Encoded:
    return Encoded(encode_line(evaluation), _brief(evaluation), evaluation if keep else None)


def _one(ev: Evaluator, item: Any) -> dict[str, Any]:
    return ev.evaluate_line(item) if isinstance(item, str) else ev.evaluate_record(item)


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def evaluate_stream(
    ev: Evaluator, items: Iterable[Any], workers: int = 1, deadline: float | None = None
) -> Iterator[dict[str, Any]]:
    """Evaluate ``items`` (JSONL lines as ``str`` or decoded dicts), yielding in input order.

    ``workers`` > 1 uses that many processes; a judge with ``concurrency`` > 1 (network
    judges) is awaited with that many requests in flight instead. ``deadline`` (seconds)
    runs the records in supervised worker processes (one when ``workers`` is 1): a record
    past it gets status ``timeout``, a record that kills its worker ``internal_error``.
    """
    if supervised(ev, workers, deadline):
        yield from (e.decoded() for e in _process_stream(ev, items, workers, deadline))
        return
    concurrency = int(getattr(ev.judge, "concurrency", 1) or 1)
    if concurrency > 1:
        yield from _async_stream(ev, items, concurrency)
    else:
        for x in items:
            yield _one(ev, x)


def evaluate_encoded(
    ev: Evaluator, items: Iterable[Any], workers: int = 1, deadline: float | None = None
) -> Iterator[Encoded]:
    """:func:`evaluate_stream` for writers: each evaluation already as its JSON line.

    Worker processes send back the lines, not the dicts, which are costly to pickle;
    :meth:`Encoded.decoded` turns a line back into its dict where one is needed, and
    ``brief`` is what a :class:`Summary` counts.

    >>> from stef.evaluator import Evaluator
    >>> lines = ['{"id": "a", "question": "How many users?", "sql": "SELECT COUNT(*) FROM u"}']
    >>> [e] = evaluate_encoded(Evaluator(), lines)
    >>> e.line.startswith('{"id":"a","status":"ok"'), e.decoded()["status"]
    (True, 'ok')
    >>> full, brief = Summary(), Summary()
    >>> full.add(e.decoded()); brief.add(e.brief)
    >>> full.to_dict() == brief.to_dict()
    True
    """
    if supervised(ev, workers, deadline):
        yield from _process_stream(ev, items, workers, deadline)
    else:
        for e in evaluate_stream(ev, items, workers=1):
            yield _encoded(e, keep=True)


def _one_process(ev: Evaluator) -> bool:
    """An LLM NL extractor holds one HTTP client (and maybe one local model server):
    forked workers would each start their own, so the batch stays in this process."""
    return ev.asks_llm_for_specs


def supervised(ev: Evaluator, workers: int, deadline: float | None) -> bool:
    """Records go to worker processes when asked (several workers, or a deadline) and the
    judge and extractor are offline (network ones run here, awaited, bounded by their
    client's timeout)."""
    if _one_process(ev) or int(getattr(ev.judge, "concurrency", 1) or 1) > 1:
        return False
    return workers > 1 or deadline is not None


def supervised_pool(
    ev: Evaluator, workers: int = 1, deadline: float | None = None
) -> SupervisedPool[Encoded]:
    """Worker processes evaluating lines or dicts into :class:`Encoded` lines."""

    def work(item: Any) -> Encoded:
        return _encoded(_one(ev, item), keep=False)

    def fallback(item: Any, status: str, message: str) -> Encoded:
        return _encoded(ev.error_evaluation(item, status, message), keep=True)

    return SupervisedPool(work, fallback, workers=workers, deadline=deadline, chunk=CHUNK)


def _process_stream(
    ev: Evaluator, items: Iterable[Any], workers: int, deadline: float | None
) -> Iterator[Encoded]:
    with supervised_pool(ev, workers, deadline) as pool:
        yield from pool.map(items)


def _async_stream(
    ev: Evaluator, items: Iterable[Any], concurrency: int
) -> Iterator[dict[str, Any]]:
    import asyncio  # only for judges that answer asynchronously (LLM endpoints)

    loop = asyncio.new_event_loop()
    sem = asyncio.Semaphore(concurrency)

    async def one(x: Any) -> dict[str, Any]:
        async with sem:
            if isinstance(x, str):
                from stef.errors import StefError
                from stef.record import parse_line

                try:
                    x = parse_line(x)
                except StefError:
                    return ev.evaluate_line(x)
            return await ev.aevaluate_record(x)

    async def window(chunk: list[Any]) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(one(x) for x in chunk)))

    try:
        for chunk in _chunks(items, concurrency * 4):
            yield from loop.run_until_complete(window(chunk))
    finally:
        loop.close()


def _pairwise_sum(x: Sequence[float], lo: int, n: int) -> float:
    """``sum(x[lo:lo + n])`` in numpy's pairwise order (eight running sums per block of up
    to 128, halves above), so the mean below rounds exactly as ``numpy.mean`` does."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += x[i]
        return res
    if n <= 128:
        r = [x[lo + j] for j in range(8)]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += x[lo + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(lo + i, lo + n):
            res += x[k]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(x, lo, half) + _pairwise_sum(x, lo + half, n - half)


def mean(values: Sequence[float]) -> float:
    """The mean of ``values`` (in their order), the same float ``numpy.mean`` gives.

    >>> mean([1.0, 2.0, 4.0])
    2.3333333333333335
    """
    return _pairwise_sum(values, 0, len(values)) / len(values)


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of ascending ``ordered`` by linear interpolation, computed
    exactly as ``numpy.percentile`` does (its default method, the same rounding).

    >>> percentile([10.0, 20.0, 30.0, 40.0], 90), percentile([5.0], 50)
    (37.0, 5.0)
    """
    n = len(ordered)
    at = (n - 1) * (q / 100)
    lo = math.floor(at)
    if lo >= n - 1:
        return ordered[-1]
    t = at - lo
    a, b = ordered[lo], ordered[lo + 1]
    diff = b - a
    # numpy's _lerp: from the nearer end, so that t = 1 gives b exactly
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


class Summary:
    """Running figures over a batch: coverage, mean, median, P90, band shares, statuses."""

    def __init__(self) -> None:
        self.records = 0
        self.statuses: Counter[str] = Counter()
        self.bands: Counter[str] = Counter()
        self.finding_kinds: Counter[str] = Counter()
        self.tokens: Counter[str] = Counter()
        self._scores = array("d")

    @property
    def evaluated(self) -> int:
        return len(self._scores)

    @property
    def coverage(self) -> float:
        return self.evaluated / self.records if self.records else 0.0

    def add(self, evaluation: dict[str, Any]) -> None:
        self.records += 1
        self.statuses[str(evaluation.get("status"))] += 1
        score = evaluation.get("score")
        if evaluation.get("status") == "ok" and score is not None:
            self._scores.append(float(score))
            self.bands[str(evaluation.get("band"))] += 1
            for f in evaluation.get("findings") or ():
                if f.get("severity") != "info":
                    self.finding_kinds[str(f.get("kind"))] += 1
        prov = evaluation.get("provenance") or {}
        for usage in (prov.get("usage") or {}, prov.get("nl_extractor_usage") or {}):
            for k in ("prompt_tokens", "completion_tokens"):  # the judge's and the extractor's
                if isinstance(usage.get(k), (int, float)):
                    self.tokens[k] += int(usage[k])

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain data (``None`` for figures of an empty batch)."""
        s = sorted(self._scores) if self.evaluated else None
        n = self.evaluated
        # pure Python, not numpy: `stef eval` need not import numpy for three figures
        return {
            "records": self.records,
            "evaluated": n,
            "coverage": round(self.coverage, 4),
            "mean": round(mean(self._scores), 2) if s is not None else None,
            "median": round(statistics.median(s), 2) if s is not None else None,
            "p90": round(percentile(s, 90), 2) if s is not None else None,
            "bands": {name: round(self.bands[name] / n, 4) if n else 0.0 for name, _ in BANDS},
            "statuses": dict(self.statuses.most_common()),
            "top_findings": dict(self.finding_kinds.most_common(5)),
            "tokens": dict(self.tokens),
        }

"""The evaluator: one record in, one evaluation out (the only module that wires the pipeline).

record → SQL spec and NL spec → enrichment check → alignment → judge → score.
A record that cannot be evaluated yields an evaluation with an error ``status``; nothing
raises out of :meth:`Evaluator.evaluate_record` or :meth:`Evaluator.evaluate_line`.

>>> ev = Evaluator()
>>> e = ev.evaluate(question="How many users are there?", sql="SELECT COUNT(*) FROM users")
>>> e["status"], e["breakdown"]["filter_status"], e["breakdown"]["verdict"]
('ok', 'fully_applied', 'correct')
>>> ev.evaluate_line('{"question": "x"')["status"]
'invalid_json'
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from stef._version import __version__
from stef.align.filters import Alignment, align
from stef.align.precision import PrecisionGate, default_gate
from stef.errors import StefError
from stef.findings import Finding
from stef.judges.base import Judge, JudgeInput, Judgment
from stef.nl.enrichment import EnrichmentResult, check_analyses, check_enrichment
from stef.nl.spec import TextsAnalysis, analyze_texts, extract_nl_spec
from stef.record import (
    PASSTHROUGH,
    Record,
    bounded,
    parse_line,
    parse_record,
    record_id,
    salvage,
)
from stef.rules import Rules
from stef.score import band, compute_score
from stef.spec import Filter, Spec
from stef.sql.clock import clock_reference, resolve_clock_values
from stef.sql.quiet import fallbacks_quiet
from stef.sql.spec import SqlSpecResult, extract_sql_spec, predicate_filters

logger = logging.getLogger(__name__)

#: How many (question, enriched question, time) analyses an evaluator remembers.
TEXTS_CACHE = 1024

NLExtractor = Callable[[str, "str | None", Rules, "datetime | None"], Spec]


class ScoreCalibration(Protocol):
    """Maps a score to a probability that the SQL is correct (see ``stef calibrate``)."""

    def p_correct(self, score: float) -> float: ...


def _default_nl(question: str, enriched: str | None, rules: Rules, now: datetime | None) -> Spec:
    return extract_nl_spec(question, enriched, rules=rules, now=now)


@dataclass
class Prepared:
    """A record taken through every stage before the judge."""

    record: Record
    sql: SqlSpecResult
    nl: Spec
    enrichment: EnrichmentResult
    alignment: Alignment
    started: float
    #: What an LLM NL extractor spent on this record (``None`` for the rules extractor).
    nl_usage: dict[str, Any] | None = None

    def judge_input(self, rules: Rules) -> JudgeInput:
        return JudgeInput(
            question=self.record.question,
            sql=self.record.sql,
            nl_spec=self.nl,
            sql_spec=self.sql.spec,
            alignment=self.alignment,
            rules=rules,
            enriched_question=self.record.enriched_question,
            dialect=self.record.dialect,
            enrichment_findings=list(self.enrichment.findings),
        )


class Evaluator:
    """Evaluates records with one set of rules and one judge.

    ``judge`` defaults to the offline :class:`~stef.judges.symbolic.SymbolicJudge`;
    ``nl_extractor`` to the deterministic extractor; ``calibration`` (optional) adds
    ``p_correct`` to each evaluation; ``precision`` is the gate that keeps finding kinds
    which have not earned their weight as ``info`` (by default the packaged table; pass
    ``PrecisionGate()`` to see every finding at its own severity).
    """

    def __init__(
        self,
        rules: Rules | dict[str, Any] | None = None,
        judge: Judge | None = None,
        nl_extractor: NLExtractor | None = None,
        calibration: ScoreCalibration | None = None,
        precision: PrecisionGate | None = None,
    ) -> None:
        if judge is None:
            from stef.judges.symbolic import SymbolicJudge

            judge = SymbolicJudge()
        if isinstance(rules, dict):  # a rules object as parsed JSON (validated here)
            from stef.rules import load_rules_dict

            rules = load_rules_dict(rules)
        self.rules = rules or Rules()
        self.judge = judge
        self.nl_extractor = nl_extractor or _default_nl
        #: An LLM extractor's call that also returns its cost (``None`` for a plain one).
        self._nl_with_usage: Callable[..., tuple[Spec, dict[str, Any]]] | None = getattr(
            self.nl_extractor, "extract_with_usage", None
        )
        self.calibration = calibration
        self.precision = default_gate() if precision is None else precision
        self._synonyms = self.rules.synonym_map()
        self._benign: list[Filter] = [
            f for p in self.rules.benign_filters for f in predicate_filters(p, None, self._synonyms)
        ]
        self._rules_sha = self.rules.sha256()
        self._texts: dict[
            tuple[str, str | None, datetime | None], tuple[TextsAnalysis, EnrichmentResult]
        ] = {}
        self._texts_rules = self.rules

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to ship to another process) without the remembered text analyses."""
        state = dict(self.__dict__)
        state["_texts"] = {}
        return state

    @property
    def asks_llm_for_specs(self) -> bool:
        """Does the NL extractor ask an LLM (and so hold a client, maybe a local server)?"""
        return self._nl_with_usage is not None

    # ------------------------------------------------------------------ public API

    def evaluate(
        self,
        question: str,
        sql: str,
        enriched_question: str | None = None,
        dialect: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Evaluate one question/SQL pair given as arguments."""
        record = {
            "question": question,
            "sql": sql,
            "enriched_question": enriched_question,
            "dialect": dialect,
            **fields,
        }
        return self.evaluate_record(record)

    def evaluate_line(self, line: str) -> dict[str, Any]:
        """Evaluate one JSONL line; malformed JSON gives an ``invalid_json`` evaluation."""
        started = time.perf_counter()
        try:
            rec = parse_line(line)
        except StefError as e:
            data: Any = None
            with contextlib.suppress(ValueError, RecursionError):
                data = json.loads(line)
            fallback = "line-" + hashlib.sha256(line.encode("utf-8", "replace")).hexdigest()[:16]
            return self._error(
                e.status, e.message, salvage(data), None, started, fallback_id=fallback
            )
        return self._evaluate(rec, started)

    def evaluate_record(self, data: Any) -> dict[str, Any]:
        """Evaluate one decoded record (a dict); never raises."""
        started = time.perf_counter()
        try:
            rec = parse_record(data)
        except StefError as e:
            return self._error(e.status, e.message, salvage(data), None, started)
        return self._evaluate(rec, started)

    async def aevaluate_record(self, data: Any) -> dict[str, Any]:
        """Like :meth:`evaluate_record`, awaiting the judge (for network judges)."""
        started = time.perf_counter()
        try:
            rec = data if isinstance(data, Record) else parse_record(data)
        except StefError as e:
            return self._error(e.status, e.message, salvage(data), None, started)
        try:
            prepared = self.prepare(rec, started)
        except Exception as e:
            return self._internal_error(e, rec, started)
        if isinstance(prepared, dict):
            return prepared
        try:
            judgment = await self.judge.ajudge(prepared.judge_input(self.rules))
            return self.finish(prepared, judgment)
        except StefError as e:
            return self._judge_error(e, prepared, started)
        except Exception as e:
            return self._internal_error(e, prepared.record, started)

    def error_evaluation(self, item: Any, status: str, message: str) -> dict[str, Any]:
        """The evaluation of a record (a JSONL line or a dict) that could not be finished:
        its worker died or it ran past its deadline. Provenance is salvaged from it.

        >>> e = Evaluator().error_evaluation('{"id": "r1", "question": "q", "sql": "x"}',
        ...                                  "timeout", "took too long")
        >>> e["id"], e["status"], e["error"], e["question"]
        ('r1', 'timeout', 'took too long', 'q')
        """
        started = time.perf_counter()
        data: Any = item
        fallback = None
        if isinstance(item, str):
            data = None
            with contextlib.suppress(ValueError, RecursionError):
                data = json.loads(item)
            fallback = "line-" + hashlib.sha256(item.encode("utf-8", "replace")).hexdigest()[:16]
        try:
            rec: Record | None = parse_record(data)
        except StefError:
            rec = None
        passthrough = rec.passthrough() if rec is not None else salvage(data)
        return self._error(status, message, passthrough, rec, started, fallback_id=fallback)

    def evaluate_many(self, records: Iterable[Any], workers: int = 1) -> Iterator[dict[str, Any]]:
        """Evaluate records (dicts, or JSONL lines as str) in order, optionally in parallel."""
        from stef.batch import evaluate_stream

        return evaluate_stream(self, records, workers=workers)

    def describe(self) -> dict[str, Any]:
        """Provenance shared by every evaluation of this evaluator."""
        return {
            "stef_version": __version__,
            "rules_sha256": self._rules_sha,
            "judge": self.judge.describe(),
        }

    # ------------------------------------------------------------------ stages

    def prepare(self, rec: Record, started: float) -> Prepared | dict[str, Any]:
        """Run every stage before the judge; an error evaluation when the SQL is unusable."""
        try:
            with fallbacks_quiet():
                sql = extract_sql_spec(rec.sql, rec.dialect, self._synonyms)
        except StefError as e:
            return self._error(e.status, e.message, rec.passthrough(), rec, started)
        nl_usage: dict[str, Any] | None = None  # what an LLM extractor spent
        # the record's time; without one, an instant at which periods relative to now
        # compare alike, when the SQL takes its dates from the clock alone
        when = rec.time or clock_reference(sql.spec)
        if self.nl_extractor is _default_nl:  # read each text once for both stages
            texts, checked = self._analyze_texts(rec, when)
            # a fresh result per record (its findings list is the evaluation's own)
            enrichment = EnrichmentResult(checked.consistent, list(checked.findings))
            nl = texts.merged()
        else:
            if self._nl_with_usage is not None:
                nl, nl_usage = self._nl_with_usage(
                    rec.question, rec.enriched_question, self.rules, when
                )
            else:
                nl = self.nl_extractor(rec.question, rec.enriched_question, self.rules, when)
            enrichment = check_enrichment(
                rec.question, rec.enriched_question, rules=self.rules, now=when
            )
        alignment = align(
            nl,
            resolve_clock_values(sql.spec, when, assumed=rec.time is None),  # CURRENT_DATE - 1
            self.rules,
            question=rec.question,
            enriched_question=rec.enriched_question,
            benign=self._benign,
            excused=self.precision.excused_filter_kinds(
                bool(rec.enriched_question and rec.enriched_question.strip())
            ),
        )
        if self.precision.demoted:
            alignment.findings = self.precision.apply(alignment.findings, alignment.enriched)
        return Prepared(rec, sql, nl, enrichment, alignment, started, nl_usage)

    def _analyze_texts(
        self, rec: Record, when: datetime | None
    ) -> tuple[TextsAnalysis, EnrichmentResult]:
        """:func:`~stef.nl.spec.analyze_texts` of the record's texts and their enrichment
        check (:func:`~stef.nl.enrichment.check_analyses`), remembered for the last
        :data:`TEXTS_CACHE` pairs: an agent's log asks the same question many times, and
        the same texts, rules and time give the same analysis (stef.nl is pure)."""
        if self._texts_rules is not self.rules:  # rules swapped on this evaluator
            self._texts.clear()
            self._texts_rules = self.rules
        key = (rec.question, rec.enriched_question, when)
        hit = self._texts.get(key)
        if hit is None:
            texts = analyze_texts(rec.question, rec.enriched_question, self.rules, when)
            hit = (texts, check_analyses(texts))
            if len(self._texts) >= TEXTS_CACHE:
                with contextlib.suppress(RuntimeError, StopIteration):  # another thread's
                    self._texts.pop(next(iter(self._texts)), None)  # the oldest
            self._texts[key] = hit
        return hit

    def finish(self, p: Prepared, judgment: Judgment) -> dict[str, Any]:
        """Score a judged record and assemble its evaluation."""
        b = compute_score(
            p.alignment.filter_status,
            judgment.verdict,
            judgment.confidence,
            benign_extras=p.alignment.benign_extras_only,
            scoring=self.rules.scoring,
        )
        findings: list[Finding] = [
            *(Finding("record_warning", "warning", w, rule="record") for w in p.record.warnings),
            *p.sql.findings,
            *p.alignment.findings,
            *judgment.findings,
        ]
        if p.alignment.evidence == 0:
            findings.append(
                Finding(
                    "thin_evidence",
                    "info",
                    "the question gives no cue the SQL can be checked against; confidence lowered",
                    rule="judge_confidence",
                )
            )
        out: dict[str, Any] = {
            "id": p.record.id,
            "status": "ok",
            "error": None,
            "score": b.score,
            "band": band(b.score),
        }
        if self.calibration is not None:
            out["p_correct"] = round(float(self.calibration.p_correct(b.score)), 4)
        out.update(
            {
                "breakdown": b.to_dict(),
                "findings": [f.to_dict() for f in findings],
                "judgment": {
                    "verdict": judgment.verdict,
                    "confidence": judgment.confidence,
                    "rationale": judgment.rationale,
                    "issues": list(judgment.issues),
                },
                "nl_spec": p.nl.to_dict(),
                "sql_spec": p.sql.spec.to_dict(),
                "enrichment": p.enrichment.to_dict(),
                "provenance": self._provenance(p.started, judgment, p.nl_usage),
            }
        )
        out.update(p.record.passthrough())
        out["evaluated_at"] = _now()
        return out

    def _evaluate(self, rec: Record, started: float) -> dict[str, Any]:
        try:
            prepared = self.prepare(rec, started)
            if isinstance(prepared, dict):
                return prepared
            try:
                judgment = self.judge.judge(prepared.judge_input(self.rules))
            except StefError as e:
                return self._judge_error(e, prepared, started)
            return self.finish(prepared, judgment)
        except Exception as e:  # a bug in a stage must cost one record, never the batch
            return self._internal_error(e, rec, started)

    def _judge_error(self, e: StefError, prepared: Prepared, started: float) -> dict[str, Any]:
        rec = prepared.record
        out = self._error(e.status, e.message, rec.passthrough(), rec, started, prepared)
        usage = getattr(e, "usage", None)
        if isinstance(usage, dict) and usage:
            out["provenance"]["usage"] = dict(usage)
        return out

    def _internal_error(self, e: BaseException, rec: Record, started: float) -> dict[str, Any]:
        logger.exception("internal error while evaluating record %s", rec.id)
        message = f"internal error in STEF ({type(e).__name__}: {e}); please report it"
        return self._error("internal_error", message[:500], rec.passthrough(), rec, started)

    def _provenance(
        self,
        started: float,
        judgment: Judgment | None,
        nl_usage: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        prov = self.describe()
        prov["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        if nl_usage is not None:
            prov["nl_extractor_usage"] = dict(nl_usage)
        if judgment is not None:
            if judgment.model:
                prov["model"] = judgment.model
            if judgment.prompt_version:
                prov["prompt_version"] = judgment.prompt_version
            if judgment.usage:
                prov["usage"] = dict(judgment.usage)
        return prov

    def _error(
        self,
        status: str,
        message: str,
        passthrough: dict[str, Any],
        rec: Record | None,
        started: float,
        prepared: Prepared | None = None,
        fallback_id: str | None = None,
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": rec.id if rec else _salvaged_id(passthrough, fallback_id),
            "status": status,
            "error": message,
            "score": None,
            "band": None,
            "breakdown": None,
            "findings": [f.to_dict() for f in prepared.alignment.findings] if prepared else [],
            "judgment": None,
            "nl_spec": prepared.nl.to_dict() if prepared else None,
            "sql_spec": prepared.sql.spec.to_dict() if prepared else None,
            "enrichment": prepared.enrichment.to_dict() if prepared else None,
            "provenance": self._provenance(started, None, prepared.nl_usage if prepared else None),
        }
        echoed = bounded(passthrough)
        for k in PASSTHROUGH:
            out[k] = echoed.get(k)
        out["evaluated_at"] = _now()
        return out


def _salvaged_id(passthrough: dict[str, Any], fallback: str | None) -> str:
    rid = passthrough.get("id")
    if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid).strip():
        return str(rid)[:200]
    return fallback or record_id(passthrough)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def evaluate(
    question: str,
    sql: str,
    enriched_question: str | None = None,
    dialect: str | None = None,
    rules: Rules | dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """Evaluate one question/SQL pair with the offline judge.

    >>> evaluate("How many users?", "SELECT COUNT(*) FROM users")["status"]
    'ok'
    """
    from stef.rules import load_rules_dict

    r = load_rules_dict(rules) if isinstance(rules, dict) else rules
    return shared_evaluator(r).evaluate(question, sql, enriched_question, dialect, **fields)


#: Evaluators :func:`evaluate` reuses, by the sha256 of their rules ("" for the defaults).
_SHARED: dict[str, Evaluator] = {}
_SHARED_MAX = 8
_SHARED_LOCK = threading.Lock()


def shared_evaluator(rules: Rules | None = None) -> Evaluator:
    """An offline :class:`Evaluator` for ``rules``, built once and reused by :func:`evaluate`
    (building one reads the rules, the judge's weights and the precision table).

    Keyed by the rules' content, so equal rules share one and changed rules get another.

    >>> shared_evaluator() is shared_evaluator()
    True
    """
    key = "" if rules is None else rules.sha256()
    ev = _SHARED.get(key)
    if ev is None:
        with _SHARED_LOCK:
            ev = _SHARED.get(key)
            if ev is None:
                if len(_SHARED) >= _SHARED_MAX:
                    _SHARED.pop(next(iter(_SHARED)))  # the oldest
                ev = _SHARED[key] = Evaluator(rules=rules)
    return ev

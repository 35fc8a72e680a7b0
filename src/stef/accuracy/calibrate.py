"""Measure how well STEF's score agrees with labelled data (the engine of ``stef calibrate``).

Labelled rows ``{"id","question","evidence","sql","correct","error_types","db_id"}`` are
split into the record the evaluator sees (question, evidence as the enriched question,
SQL, dialect — never the label, the error types or the database name) and the label kept
aside for scoring. Anything fitted (the decision threshold, the isotonic score →
P(correct) map) is fitted on training folds and measured on the held-out fold; folds are
grouped by normalised question text, so one question never sits on both sides.

>>> question_key("  How many  Students? ") == question_key("how many students")
True
>>> style_normalise("select T1.Name from Student as T1 where T1.Sex = 'M'", "sqlite")
"SELECT t1.name FROM student AS t1 WHERE t1.sex = 'M'"
"""

from __future__ import annotations

import json
import random
import re
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sklearn.model_selection import StratifiedGroupKFold
from sqlglot import parse_one
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from stef.accuracy import metrics as M
from stef.accuracy.calibration import Calibration
from stef.errors import StefError

#: Score at or above which a row is predicted correct before any fitting (the "good" band).
DEFAULT_THRESHOLD = 75.0
#: An error type needs this many evaluated incorrect rows to get its own line.
MIN_TYPE_SUPPORT = 10
#: A finding kind needs this many rows to be listed as a signal.
MIN_SIGNAL_SUPPORT = 1
#: Separator of NL2SQL-Bugs' "Category / Subtype" error types.
TYPE_SEPARATOR = " / "


class CalibrateError(StefError):
    """The labelled data or the calibrate options cannot be used."""

    status = "invalid_labelled_data"


class BatchEvaluator(Protocol):
    """What calibrate needs from :class:`stef.evaluator.Evaluator`."""

    def evaluate_many(
        self, records: Iterable[dict[str, Any]], workers: int = 1
    ) -> Iterator[dict[str, Any]]: ...


@dataclass(frozen=True)
class LabelledRow:
    """One labelled example; ``correct`` and ``error_types`` never reach the evaluator."""

    id: str
    question: str
    sql: str
    correct: bool
    evidence: str | None = None
    error_types: tuple[str, ...] = ()
    db_id: str | None = None
    source: str | None = None
    #: The row's own sqlglot dialect (gold-only files of warehouse SQL carry one).
    dialect: str | None = None


def load_labelled(path: str | Path) -> list[LabelledRow]:
    """Read labelled JSONL; raises :class:`CalibrateError` naming the bad line."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise CalibrateError(message=f"cannot read {p}: {err}") from None
    rows: list[LabelledRow] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{p}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise CalibrateError(message=f"{where}: not JSON ({err.msg})") from None
        rows.append(_row(obj, where, default_id=str(n)))
    if not rows:
        raise CalibrateError(message=f"{p} holds no labelled rows")
    return rows


def _row(obj: Any, where: str, default_id: str) -> LabelledRow:
    if not isinstance(obj, dict):
        raise CalibrateError(message=f"{where}: expected a JSON object")
    for key, kind in (("question", str), ("sql", str), ("correct", bool)):
        if not isinstance(obj.get(key), kind):
            raise CalibrateError(
                message=f"{where}: field {key!r} is required and must be a {kind.__name__}"
            )
    evidence = obj.get("evidence")
    if evidence is not None and not isinstance(evidence, str):
        raise CalibrateError(message=f"{where}: field 'evidence' must be a string or null")
    types = obj.get("error_types") or []
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise CalibrateError(message=f"{where}: field 'error_types' must be a list of strings")
    db_id, source = obj.get("db_id"), obj.get("source")
    dialect = obj.get("dialect")
    if dialect is not None and not isinstance(dialect, str):
        raise CalibrateError(message=f"{where}: field 'dialect' must be a string or null")
    return LabelledRow(
        id=str(obj.get("id", default_id)),
        question=obj["question"],
        sql=obj["sql"],
        correct=obj["correct"],
        evidence=evidence,
        error_types=tuple(types),
        db_id=None if db_id is None else str(db_id),
        source=None if source is None else str(source),
        dialect=dialect or None,
    )


_WORD = re.compile(r"\w+")


def question_key(question: str) -> str:
    """The grouping key of a question: case-folded words, punctuation and spacing dropped.

    >>> question_key("What's the TOP-3?")
    'what s the top 3'
    """
    return " ".join(_WORD.findall(question.casefold()))


def style_normalise(sql: str, dialect: str) -> str | None:
    """Re-render ``sql`` in one house style, or ``None`` when sqlglot cannot.

    Keywords upper case, whitespace canonical, identifiers normalised the way the
    dialect resolves them (SQLite: case-insensitive, quoted ones included), so the
    score cannot learn a label from how the SQL was typed. Quotes stay where they were
    written: in SQLite a double-quoted token may be a string (``sex = "M"``), and on
    the bundled sets quoting does not separate the labels (AUROC ≈ 0.5).

    >>> style_normalise('SELECT Count ( * ) FROM "Student"  WHERE sex="M"', "sqlite")
    'SELECT COUNT(*) FROM "student" WHERE sex = "m"'
    >>> style_normalise("SELECT * FROM t WHERE (", "sqlite") is None
    True
    """
    try:
        tree = parse_one(sql, read=dialect)
        tree = normalize_identifiers(tree, dialect=dialect)
        return tree.sql(dialect=dialect, normalize=True)
    except (SqlglotError, ValueError, KeyError, TypeError, RecursionError):
        return None


def to_record(row: LabelledRow, dialect: str, sql: str | None = None) -> dict[str, Any]:
    """The evaluator's input for ``row``: no label, no error types, no database name.
    The row's own dialect wins over ``dialect`` (the run's default).

    >>> record = to_record(LabelledRow("a", "How many?", "SELECT 1", True, "n = x"), "sqlite")
    >>> record == {"id": "a", "question": "How many?", "sql": "SELECT 1", "dialect": "sqlite",
    ...            "enriched_question": "n = x"}
    True
    """
    record: dict[str, Any] = {
        "id": row.id,
        "question": row.question,
        "sql": row.sql if sql is None else sql,
        "dialect": row.dialect or dialect,
    }
    if row.evidence and row.evidence.strip():
        record["enriched_question"] = row.evidence
    return record


def sample_groups(rows: Sequence[LabelledRow], limit: int, seed: int) -> list[LabelledRow]:
    """A seeded random sample of whole question groups holding at most ``limit`` rows.

    Groups are drawn in a seeded random order and kept when they fit; the sample keeps
    the file order.

    >>> rows = [LabelledRow(str(i), q, "SELECT 1", True) for i, q in enumerate("aabbbc")]
    >>> sorted({r.question for r in sample_groups(rows, 3, seed=1)}) in (["a", "c"], ["b"])
    True
    """
    if limit < 1:
        raise CalibrateError(message="--limit must be at least 1")
    if limit >= len(rows):
        return list(rows)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[question_key(r.question)].append(i)
    keys = sorted(groups)
    random.Random(seed).shuffle(keys)
    chosen: list[int] = []
    for k in keys:
        if len(chosen) + len(groups[k]) <= limit:
            chosen.extend(groups[k])
        if len(chosen) == limit:
            break
    return [rows[i] for i in sorted(chosen)]


def assign_folds(rows: Sequence[LabelledRow], folds: int, seed: int) -> list[int]:
    """The held-out fold of each row: k folds grouped by question, stratified by label.

    >>> rows = [LabelledRow(str(i), q, "SELECT 1", i % 2 == 0) for i, q in enumerate("aabbccdd")]
    >>> f = assign_folds(rows, 2, seed=0)
    >>> all(f[i] == f[i + 1] for i in range(0, 8, 2))
    True
    """
    groups = [question_key(r.question) for r in rows]
    n_groups = len(set(groups))
    if folds < 2:
        raise CalibrateError(message="--folds must be at least 2")
    if n_groups < folds:
        raise CalibrateError(
            message=f"{folds} folds need at least {folds} distinct questions, got {n_groups}"
        )
    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    out = [-1] * len(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class smaller than the number of folds
        labels = [r.correct for r in rows]
        for k, (_, test) in enumerate(splitter.split(rows, labels, groups)):
            for i in test:
                out[int(i)] = k
    return out


@dataclass
class Measurement:
    """What a calibrate run found: ``metrics`` (JSON-ready) and what the plots need."""

    metrics: dict[str, Any]
    labels: list[bool] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    held_out_p: list[float] | None = None
    calibration: Calibration | None = None
    #: One entry per input row (``rows.jsonl``): label, fold, status, score, verdict,
    #: held-out prediction and P(correct), so two runs can be compared row by row.
    per_row: list[dict[str, Any]] = field(default_factory=list)


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def _covered(ev: dict[str, Any]) -> bool:
    return ev.get("status") == "ok" and isinstance(ev.get("score"), (int, float))


def _raw_p(score: float) -> float:
    return min(1.0, max(0.0, score / 100.0))


def _block(
    labels: Sequence[bool],
    scores: Sequence[float],
    pred_default: Sequence[bool],
    pred_fitted: Sequence[bool],
) -> dict[str, Any]:
    return {
        "n": len(labels),
        "n_correct": sum(1 for y in labels if y),
        "n_incorrect": sum(1 for y in labels if not y),
        "auroc": M.auroc(labels, scores),
        "at_default": M.detection_metrics(labels, pred_default),
        "at_fitted": M.detection_metrics(labels, pred_fitted),
    }


@dataclass
class _HeldOut:
    """Out-of-fold predictions: each row judged by what the other folds fitted."""

    pred_fitted: list[bool]
    held_p: list[float]
    per_fold: list[dict[str, Any]]


def _held_out(
    labels: Sequence[bool],
    scores: Sequence[float],
    fold_of: Sequence[int],
    n_folds: int,
    *,
    threshold: float,
    objective: str,
    isotonic: bool,
) -> _HeldOut:
    """Fit the threshold (and the isotonic map) on the other folds, predict each fold."""
    pred_fitted = [False] * len(scores)
    held_p: list[float] = [0.0] * len(scores)
    per_fold: list[dict[str, Any]] = []
    for k in range(n_folds):
        train = [j for j, f in enumerate(fold_of) if f != k]
        test = [j for j, f in enumerate(fold_of) if f == k]
        t_lab, t_sc = [labels[j] for j in train], [scores[j] for j in train]
        t_k = M.fit_threshold(t_sc, t_lab, objective=objective, default=threshold)
        cal_k = M.fit_isotonic(t_sc, t_lab) if isotonic and train else None
        for j in test:
            pred_fitted[j] = scores[j] >= t_k
            held_p[j] = cal_k.p_correct(scores[j]) if cal_k else _raw_p(scores[j])
        per_fold.append(
            {
                "fold": k,
                "n_test": len(test),
                "threshold": t_k,
                "auroc": M.auroc([labels[j] for j in test], [scores[j] for j in test]),
            }
        )
    return _HeldOut(pred_fitted, held_p, per_fold)


def _overall(
    labels: Sequence[bool],
    scores: Sequence[float],
    pred_default: Sequence[bool],
    held: _HeldOut,
    *,
    threshold: float,
    objective: str,
) -> dict[str, Any]:
    """The detection figures at the default and the held-out thresholds, fold by fold."""
    overall = _block(labels, scores, pred_default, held.pred_fitted)
    overall["at_default"]["threshold"] = threshold
    overall["at_fitted"]["objective"] = objective
    overall["at_fitted"]["thresholds"] = [f["threshold"] for f in held.per_fold]
    overall["folds"] = held.per_fold
    fold_aurocs = [f["auroc"] for f in held.per_fold if f["auroc"] is not None]
    overall["auroc_fold_mean"] = sum(fold_aurocs) / len(fold_aurocs) if fold_aurocs else None
    return overall


def _probability_block(
    what: str, labels: Sequence[bool], p: Sequence[float], n_bins: int
) -> dict[str, Any]:
    return {
        "what": what,
        "brier": M.brier_score(labels, p),
        "ece": M.expected_calibration_error(labels, p, n_bins),
        "bins": [b.to_dict() for b in M.reliability_bins(labels, p, n_bins)],
    }


def _probability(
    labels: Sequence[bool],
    scores: Sequence[float],
    held_p: Sequence[float],
    *,
    n_bins: int,
    isotonic: bool,
) -> dict[str, Any]:
    """How well score/100 (and the held-out isotonic map) reads as P(correct)."""
    raw_p = [_raw_p(s) for s in scores]
    probability: dict[str, Any] = {"raw": _probability_block("score / 100", labels, raw_p, n_bins)}
    if isotonic and scores:
        probability["isotonic_held_out"] = _probability_block(
            "isotonic map fitted on the training folds, applied to the held-out fold",
            labels,
            held_p,
            n_bins,
        )
    return probability


def measure(
    rows: Sequence[LabelledRow],
    evaluations: Sequence[dict[str, Any]],
    folds: Sequence[int],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    objective: str = "balanced_accuracy",
    isotonic: bool = True,
    n_bins: int = 10,
    min_type_support: int = MIN_TYPE_SUPPORT,
) -> Measurement:
    """Score ``evaluations`` against the labels of ``rows`` (same order), fold by fold.

    Rows whose evaluation has no score (status other than ``ok``) are not covered: they
    are counted, split by label, and left out of every other figure.
    """
    if not (len(rows) == len(evaluations) == len(folds)):
        raise ValueError("rows, evaluations and folds differ in length")
    idx = [i for i, ev in enumerate(evaluations) if _covered(ev)]
    labels = [rows[i].correct for i in idx]
    scores = [float(evaluations[i]["score"]) for i in idx]
    n_folds = max(folds) + 1 if folds else 0

    held = _held_out(
        labels,
        scores,
        [folds[i] for i in idx],
        n_folds,
        threshold=threshold,
        objective=objective,
        isotonic=isotonic,
    )
    pred_default = M.predict(scores, threshold)
    overall = _overall(labels, scores, pred_default, held, threshold=threshold, objective=objective)
    probability = _probability(labels, scores, held.held_p, n_bins=n_bins, isotonic=isotonic)
    t_all = M.fit_threshold(scores, labels, objective=objective, default=threshold)
    overall["at_fitted"]["threshold_all_rows"] = t_all
    calibration = None
    if isotonic and idx:
        iso = M.fit_isotonic(scores, labels)
        calibration = Calibration(x=iso.x, y=iso.y, threshold=t_all)
    overall["probability"] = probability

    result: dict[str, Any] = {
        "coverage": _coverage(rows, evaluations),
        "overall": overall,
        "per_error_type": _per_type(
            rows, idx, scores, pred_default, held.pred_fitted, min_type_support
        ),
        "finding_kinds": _finding_kinds(evaluations, idx, labels),
        "bands": _bands(evaluations, idx, labels),
    }
    cost = llm_cost(evaluations)
    if cost is not None:
        result["llm_cost"] = cost
    extraction = extractor_cost(evaluations)
    if extraction is not None:
        result["nl_extractor_cost"] = extraction
    held_p = held.held_p if isotonic else None
    return Measurement(
        metrics=result,
        labels=labels,
        scores=scores,
        held_out_p=held_p,
        calibration=calibration,
        per_row=_per_row(rows, evaluations, folds, idx, held.pred_fitted, held_p),
    )


def _per_row(
    rows: Sequence[LabelledRow],
    evaluations: Sequence[dict[str, Any]],
    folds: Sequence[int],
    idx: Sequence[int],
    pred_fitted: Sequence[bool],
    held_p: Sequence[float] | None,
) -> list[dict[str, Any]]:
    at = {i: j for j, i in enumerate(idx)}
    out = []
    for i, (r, ev) in enumerate(zip(rows, evaluations, strict=True)):
        judgment = ev.get("judgment") or {}
        entry: dict[str, Any] = {
            "id": r.id,
            "question": r.question,
            "fold": folds[i],
            "correct": r.correct,
            "error_types": list(r.error_types),
            "status": ev.get("status"),
            "score": ev.get("score"),
            "verdict": judgment.get("verdict"),
            "confidence": judgment.get("confidence"),
        }
        j = at.get(i)
        if j is not None:
            entry["predicted_correct"] = pred_fitted[j]
            if held_p is not None:
                entry["p_correct_held_out"] = round(float(held_p[j]), 4)
        out.append(entry)
    return out


def llm_cost(evaluations: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """What the LLM judge spent on these evaluations (None when no LLM was asked).

    ``requests``, tokens and ``seconds`` count this run; a record answered from the cache
    costs nothing now, and what its answer cost when it was first asked is summed apart
    (``cached_*``, from the cache entry), so a cached re-run still tells the price of a
    cold one (``cold_*``: seconds only when every cache entry recorded them).

    >>> fresh = {"requests": 1, "prompt_tokens": 800, "completion_tokens": 60,
    ...          "latency_ms": 25000.0, "cached": False}
    >>> hit = {"requests": 0, "cached": True, "latency_ms": 2.0, "cached_prompt_tokens": 700,
    ...        "cached_completion_tokens": 40, "cached_latency_ms": 21000.0}
    >>> c = llm_cost([{"provenance": {"usage": fresh}}, {"provenance": {"usage": hit}}])
    >>> c["cache_hits"], c["cold_tokens_per_llm_record"], c["cold_seconds_per_llm_record"]
    (1, 800.0, 23.0)
    """
    # a usage without "cached" was not judged by an LLM (offline judge, hybrid's offline path)
    judged = [
        u
        for ev in evaluations
        if "cached" in (u := (ev.get("provenance") or {}).get("usage") or {})
    ]
    if not judged:
        return None
    c = _cost(judged)
    return {
        "records": len(evaluations),
        "llm_records": len(judged),
        "cache_hits": c["cache_hits"],
        "requests": c["requests"],
        "prompt_tokens": c["prompt_tokens"],
        "completion_tokens": c["completion_tokens"],
        "seconds": c["seconds"],
        "fresh_seconds_per_llm_record": c["fresh_seconds_per_record"],
        "cached_prompt_tokens": c["cached_prompt_tokens"],
        "cached_completion_tokens": c["cached_completion_tokens"],
        "cold_tokens_per_llm_record": c["cold_tokens_per_record"],
        "cold_seconds_per_llm_record": c["cold_seconds_per_record"],
    }


def extractor_cost(evaluations: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """What an LLM NL extractor (``--nl-extractor llm``) spent (None when none was used).

    Counted like :func:`llm_cost`: this run's requests, tokens and seconds; cache hits
    add what their answers cost when first asked to the cold figures; ``failed`` counts
    the records whose NL spec fell back to the rules extractor alone.

    >>> fresh = {"requests": 1, "prompt_tokens": 300, "completion_tokens": 50,
    ...          "latency_ms": 8000.0, "cached": False}
    >>> hit = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached": True,
    ...        "cached_prompt_tokens": 280, "cached_completion_tokens": 70}
    >>> c = extractor_cost([{"provenance": {"nl_extractor_usage": u}} for u in (fresh, hit)])
    >>> c["requests"], c["cache_hits"], c["failed"], c["cold_tokens_per_record"]
    (1, 1, 0, 350.0)
    """
    used = [
        u
        for ev in evaluations
        if isinstance(u := (ev.get("provenance") or {}).get("nl_extractor_usage"), dict)
    ]
    if not used:
        return None
    c = _cost(used)
    return {
        "records": len(evaluations),
        "extracted": len(used),
        "cache_hits": c["cache_hits"],
        "failed": sum(1 for u in used if u.get("failed")),
        "requests": c["requests"],
        "prompt_tokens": c["prompt_tokens"],
        "completion_tokens": c["completion_tokens"],
        "seconds": c["seconds"],
        "fresh_seconds_per_record": c["fresh_seconds_per_record"],
        "cold_tokens_per_record": c["cold_tokens_per_record"],
    }


def _cost(usages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Totals of LLM usage records (one per record asked, or answered from the cache)."""

    def total(key: str) -> float:
        return sum(float(u[key]) for u in usages if isinstance(u.get(key), (int, float)))

    hits = [u for u in usages if u.get("cached")]
    fresh = len(usages) - len(hits)
    cached_tokens = total("cached_prompt_tokens") + total("cached_completion_tokens")
    cold_tokens = total("prompt_tokens") + total("completion_tokens") + cached_tokens
    # cold seconds only when every cache hit recorded what its answer took when asked
    known = all(u.get("cached_latency_ms") for u in hits)
    cold_ms = (
        sum(float(u.get("latency_ms") or 0) for u in usages if not u.get("cached"))
        + total("cached_latency_ms")
        if known
        else None
    )
    return {
        "cache_hits": len(hits),
        "requests": int(total("requests")),
        "prompt_tokens": int(total("prompt_tokens")),
        "completion_tokens": int(total("completion_tokens")),
        "seconds": round(total("latency_ms") / 1000, 1),
        "fresh_seconds_per_record": (
            round(total("latency_ms") / 1000 / fresh, 2) if fresh else None
        ),
        "cached_prompt_tokens": int(total("cached_prompt_tokens")),
        "cached_completion_tokens": int(total("cached_completion_tokens")),
        "cold_tokens_per_record": round(cold_tokens / len(usages), 1),
        "cold_seconds_per_record": (
            round(cold_ms / 1000 / len(usages), 2) if cold_ms is not None else None
        ),
    }


def _coverage(rows: Sequence[LabelledRow], evaluations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    received = len(rows)
    covered = [_covered(ev) for ev in evaluations]
    statuses = Counter(str(ev.get("status")) for ev in evaluations)
    return {
        "received": received,
        "evaluated": sum(covered),
        "coverage": _ratio(sum(covered), received),
        "statuses": dict(sorted(statuses.items(), key=lambda kv: (-kv[1], kv[0]))),
        "not_covered_correct": sum(
            1 for r, c in zip(rows, covered, strict=True) if not c and r.correct
        ),
        "not_covered_incorrect": sum(
            1 for r, c in zip(rows, covered, strict=True) if not c and not r.correct
        ),
    }


def error_type_keys(error_type: str) -> tuple[str, ...]:
    """The per-type lines a labelled error type counts towards.

    NL2SQL-Bugs types ``"Category / Subtype"`` count towards both; free-text types
    (SPLASH's human feedback) count towards none.

    >>> error_type_keys("Table-Related Errors / Table Missing")
    ('Table-Related Errors', 'Table-Related Errors / Table Missing')
    >>> error_type_keys("feedback: use distinct")
    ()
    """
    if TYPE_SEPARATOR not in error_type:
        return ()
    return (error_type.split(TYPE_SEPARATOR, 1)[0].strip(), error_type.strip())


def _per_type(
    rows: Sequence[LabelledRow],
    idx: Sequence[int],
    scores: Sequence[float],
    pred_default: Sequence[bool],
    pred_fitted: Sequence[bool],
    min_support: int,
) -> dict[str, Any]:
    """Per error type: every covered correct row plus the incorrect rows of that type."""
    received: Counter[str] = Counter()
    for r in rows:
        for key in {k for t in r.error_types for k in error_type_keys(t)}:
            received[key] += 1
    free_text = any(t and not error_type_keys(t) for r in rows for t in r.error_types)
    correct_j = [j for j, i in enumerate(idx) if rows[i].correct]
    members: dict[str, list[int]] = defaultdict(list)
    for j, i in enumerate(idx):
        for key in {k for t in rows[i].error_types for k in error_type_keys(t)}:
            members[key].append(j)
    types = []

    # each category (most rows first), then its subtypes (most rows first)
    def order(k: str) -> tuple[int, str, int, int, str]:
        cat = k.split(TYPE_SEPARATOR, 1)[0]
        return (-len(members.get(cat, [])), cat, k != cat, -len(members[k]), k)

    for key in sorted(members, key=order):
        if len(members[key]) < min_support:
            continue
        sel = correct_j + members[key]
        block = _block(
            [rows[idx[j]].correct for j in sel],
            [scores[j] for j in sel],
            [pred_default[j] for j in sel],
            [pred_fitted[j] for j in sel],
        )
        types.append(
            {
                "type": key,
                "level": "subtype" if TYPE_SEPARATOR in key else "category",
                "received": received[key],
                "evaluated": len(members[key]),
                "coverage": _ratio(len(members[key]), received[key]),
                **block,
            }
        )
    return {
        "min_support": min_support,
        "free_text_types_skipped": free_text,
        "types": types,
    }


def _finding_kinds(
    evaluations: Sequence[dict[str, Any]], idx: Sequence[int], labels: Sequence[bool]
) -> list[dict[str, Any]]:
    """Each finding kind as a one-bit signal: does its presence mark an incorrect row?"""
    kinds_per_row: list[set[str]] = []
    severities: dict[str, Counter[str]] = defaultdict(Counter)
    for i in idx:
        kinds = set()
        for f in evaluations[i].get("findings") or []:
            if isinstance(f, dict) and f.get("kind"):
                kinds.add(str(f["kind"]))
                severities[str(f["kind"])][str(f.get("severity"))] += 1
        kinds_per_row.append(kinds)
    out = []
    for kind in sorted({k for ks in kinds_per_row for k in ks}):
        present = [kind in ks for ks in kinds_per_row]
        stats = M.signal_metrics(labels, present)
        if stats["support"] >= MIN_SIGNAL_SUPPORT:
            out.append({"kind": kind, **stats, "severities": dict(severities[kind])})
    out.sort(key=lambda s: (-(s["auroc"] or 0.0), -s["support"], s["kind"]))
    return out


def _bands(
    evaluations: Sequence[dict[str, Any]], idx: Sequence[int], labels: Sequence[bool]
) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for i, y in zip(idx, labels, strict=True):
        band = str(evaluations[i].get("band"))
        counts = out.setdefault(band, {"correct": 0, "incorrect": 0})
        counts["correct" if y else "incorrect"] += 1
    return out


@dataclass
class Prepared:
    """Rows ready for the evaluator: the label-free records and how the SQL was styled."""

    rows: list[LabelledRow]
    records: list[dict[str, Any]]
    folds: list[int]
    style: dict[str, Any]


def prepare(
    rows: Sequence[LabelledRow],
    *,
    dialect: str = "sqlite",
    normalise_style: bool = True,
    folds: int = 5,
    seed: int = 0,
    limit: int | None = None,
) -> Prepared:
    """Sample, assign folds and build label-free records (style-normalised by default)."""
    chosen = sample_groups(rows, limit, seed) if limit is not None else list(rows)
    fold_of = assign_folds(chosen, folds, seed)
    records = []
    rerendered = kept = 0
    for r in chosen:
        sql = style_normalise(r.sql, r.dialect or dialect) if normalise_style else None
        if normalise_style:
            rerendered, kept = (rerendered + 1, kept) if sql is not None else (rerendered, kept + 1)
        records.append(to_record(r, dialect, sql))
    style = {"normalised": normalise_style, "rerendered": rerendered, "kept_as_is": kept}
    return Prepared(rows=chosen, records=records, folds=fold_of, style=style)


def question_overlap(rows: Sequence[LabelledRow], folds: Sequence[int]) -> int:
    """How many questions sit in more than one fold (0 by construction).

    >>> rows = [LabelledRow("1", "a", "s", True), LabelledRow("2", "A?", "s", False)]
    >>> question_overlap(rows, [0, 1])
    1
    """
    seen: dict[str, set[int]] = defaultdict(set)
    for r, f in zip(rows, folds, strict=True):
        seen[question_key(r.question)].add(f)
    return sum(1 for fs in seen.values() if len(fs) > 1)

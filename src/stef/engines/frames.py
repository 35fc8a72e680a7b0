"""The evaluation function the engines share: rows of records in, rows of evaluations out.

A batch is either JSONL lines (a table whose only column is ``line``, as Ray's reader and
Spark's ``spark.read.text`` give them) or decoded records (one column per record field, as
a Parquet file or a Spark table gives them). Each becomes one evaluation row with the fixed
schema :data:`COLUMNS`: the fields a query filters on as columns, and the whole evaluation
as its JSON line in ``evaluation`` (exactly the line ``stef eval`` writes).

Lines are evaluated exactly as the local engine evaluates them (``Evaluator.evaluate_line``:
a bad line gets its error evaluation, with the same id); decoded records as
``Evaluator.evaluate_record`` after :func:`plain` turns Arrow and pandas values into plain
Python (a timestamp column into ISO 8601 text, pandas' NaN into a missing value).

>>> from stef.evaluator import Evaluator
>>> rows = evaluate_rows(Evaluator(), ['{"id": "a", "question": "How many users?",'
...                                    ' "sql": "SELECT COUNT(*) FROM users"}', '{bad'])
>>> [(r["id"], r["status"], r["score"] is not None) for r in rows]
[('a', 'ok', True), ('line-17eed55d881c0dd5', 'invalid_json', False)]
>>> rows[0]["evaluation"].startswith('{"id":"a","status":"ok"')
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from stef.batch import Encoded, encode_line, evaluate_stream
from stef.evaluator import Evaluator

if TYPE_CHECKING:
    import pandas as pd

    from stef.pool import SupervisedPool

#: Name and Spark SQL type of every column of an evaluation row, in order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"),
    ("status", "string"),
    ("error", "string"),
    ("score", "double"),
    ("band", "string"),
    ("agent", "string"),
    ("agent_version", "string"),
    ("app", "string"),
    ("dialect", "string"),
    ("timestamp", "string"),
    ("evaluated_at", "string"),
    ("finding_kinds", "array<string>"),
    ("prompt_tokens", "bigint"),
    ("completion_tokens", "bigint"),
    ("evaluation", "string"),
)

#: The schema to give Spark's ``mapInPandas`` (a DDL string).
SPARK_SCHEMA = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)

#: The one column of a batch of JSONL lines.
LINE = "line"

_TOP = ("id", "status", "error", "score", "band", "agent", "agent_version", "app", "dialect",
        "timestamp", "evaluated_at")


def evaluation_row(evaluation: dict[str, Any], line: str | None = None) -> dict[str, Any]:
    """One evaluation as a row of :data:`COLUMNS` (``line``: its JSON line, when at hand).

    ``finding_kinds`` lists the kinds of the findings that are not ``info`` (those the
    batch summary counts); the token columns add up the judge's and the NL extractor's
    usage and are null when no LLM ran.

    >>> row = evaluation_row({"id": "r", "status": "ok", "score": 80.0, "band": "good",
    ...                       "findings": [{"kind": "limit_mismatch", "severity": "warning"},
    ...                                    {"kind": "thin_evidence", "severity": "info"}]})
    >>> row["finding_kinds"], row["prompt_tokens"], row["evaluation"][:19]
    (['limit_mismatch'], None, '{"id":"r","status":')
    """
    row: dict[str, Any] = {k: evaluation.get(k) for k in _TOP}
    if row["score"] is not None:
        row["score"] = float(row["score"])
    row["finding_kinds"] = [
        str(f.get("kind"))
        for f in evaluation.get("findings") or ()
        if f.get("severity") != "info"
    ]
    prov = evaluation.get("provenance") or {}
    for k in ("prompt_tokens", "completion_tokens"):
        counts = [
            int(u[k])
            for u in (prov.get("usage") or {}, prov.get("nl_extractor_usage") or {})
            if isinstance(u.get(k), (int, float))
        ]
        row[k] = sum(counts) if counts else None
    row["evaluation"] = encode_line(evaluation) if line is None else line
    return row


def brief(row: dict[str, Any]) -> dict[str, Any]:
    """What :meth:`stef.batch.Summary.add` reads, rebuilt from an evaluation row (so a
    summary over rows equals the summary over their evaluations).

    >>> from stef.batch import Summary
    >>> e = {"status": "ok", "score": 50.0, "band": "marginal",
    ...      "findings": [{"kind": "x", "severity": "error"}],
    ...      "provenance": {"usage": {"prompt_tokens": 7, "completion_tokens": 2}}}
    >>> a, b = Summary(), Summary()
    >>> a.add(e); b.add(brief(evaluation_row(e)))
    >>> a.to_dict() == b.to_dict()
    True
    """
    out: dict[str, Any] = {k: row.get(k) for k in ("status", "score", "band")}
    out["findings"] = [{"kind": k, "severity": "warning"} for k in row.get("finding_kinds") or ()]
    usage = {
        k: row[k] for k in ("prompt_tokens", "completion_tokens") if row.get(k) is not None
    }
    if usage:
        out["provenance"] = {"usage": usage}
    return out


def plain(value: Any, *, missing_nan: bool = False) -> Any:
    """A value from an Arrow table or a pandas frame as plain JSON-like Python.

    Times and dates become ISO 8601 text, numpy scalars and arrays Python numbers and
    lists; with ``missing_nan`` (pandas frames, where NaN and NaT mean "no value") NaN
    and NaT become ``None``.

    >>> from datetime import datetime, timezone
    >>> plain({"t": datetime(2026, 1, 31, 9, 30, tzinfo=timezone.utc), "n": float("nan")},
    ...       missing_nan=True)
    {'t': '2026-01-31T09:30:00+00:00', 'n': None}
    """
    if missing_nan and _is_missing(value):
        return None
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: plain(v, missing_nan=missing_nan) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, missing_nan=missing_nan) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays
    if tolist is not None and type(value).__module__ == "numpy":
        return plain(tolist(), missing_nan=missing_nan)
    return value


def _is_missing(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NaTType", "NAType")


def plain_record(row: dict[str, Any], *, missing_nan: bool = False) -> Any:
    """A decoded record from a columnar row; a row too deep to walk stays as it is
    (its record then fails validation with its own message)."""
    try:
        return {k: plain(v, missing_nan=missing_nan) for k, v in row.items()}
    except RecursionError:
        return row


def batch_items(rows: list[dict[str, Any]], columns: list[str], *, missing_nan: bool = False
                ) -> list[Any]:
    """The items to evaluate in a batch: its lines, or its rows as decoded records."""
    if columns == [LINE]:
        return [r[LINE] for r in rows]
    return [plain_record(r, missing_nan=missing_nan) for r in rows]


def evaluate_rows(
    ev: Evaluator, items: Iterable[Any], pool: SupervisedPool[Encoded] | None = None
) -> list[dict[str, Any]]:
    """Evaluate JSONL lines (``str``) or decoded records (``dict``), in order, into rows of
    :data:`COLUMNS`. Never raises for a bad item: it gets its error evaluation.

    ``pool`` (:func:`stef.batch.supervised_pool`) runs the records in a supervised worker
    process, as ``stef eval`` does: a record past the deadline gets status ``timeout``, one
    that kills the process ``internal_error``, and the batch goes on.
    """
    if pool is not None:
        return [evaluation_row(e.decoded(), e.line) for e in pool.map(items)]
    return [evaluation_row(e) for e in evaluate_stream(ev, items)]


def evaluate_pandas(frame: pd.DataFrame, ev: Evaluator | None = None) -> pd.DataFrame:
    """A pandas frame of records (or of JSONL lines, one ``line`` column) into a frame of
    evaluations with the columns of :data:`COLUMNS`.

    >>> import pandas as pd
    >>> out = evaluate_pandas(pd.DataFrame({"id": ["a"], "question": ["How many users?"],
    ...                                     "sql": ["SELECT COUNT(*) FROM users"]}))
    >>> out[["id", "status", "band"]].values.tolist()
    [['a', 'ok', 'excellent']]
    """
    import pandas as pd

    rows = frame.to_dict("records")
    items = batch_items(rows, [str(c) for c in frame.columns], missing_nan=True)
    out = evaluate_rows(ev or _cached_evaluator(None), items)
    result = pd.DataFrame(out, columns=[name for name, _ in COLUMNS])
    for k in ("prompt_tokens", "completion_tokens"):
        result[k] = result[k].astype("Int64")
    return result


def evaluate_batches(
    frames: Iterable[pd.DataFrame],
    rules: dict[str, Any] | None = None,
    make_evaluator: Callable[[], Evaluator] | None = None,
) -> Iterator[pd.DataFrame]:
    """Spark's ``mapInPandas`` function: each frame of records into a frame of evaluations.

    One evaluator serves every partition a Python worker runs (cached by ``rules``), so the
    packaged weights are read once per worker. ``make_evaluator`` builds another evaluator
    (another judge, a calibration) instead::

        from functools import partial
        from stef.engines.frames import SPARK_SCHEMA, evaluate_batches
        evaluations = records.mapInPandas(partial(evaluate_batches, rules=rules),
                                          schema=SPARK_SCHEMA)

    >>> import pandas as pd
    >>> frames = [pd.DataFrame({"line": ['{"question": "q?", "sql": "SELECT 1"}', "{"]})]
    >>> [list(f["status"]) for f in evaluate_batches(frames)]
    [['ok', 'invalid_json']]
    """
    ev = make_evaluator() if make_evaluator is not None else _cached_evaluator(rules)
    for frame in frames:
        yield evaluate_pandas(frame, ev)


_EVALUATORS: dict[str, Evaluator] = {}


def _cached_evaluator(rules: dict[str, Any] | None) -> Evaluator:
    key = json.dumps(rules, sort_keys=True, default=str)
    ev = _EVALUATORS.get(key)
    if ev is None:
        ev = _EVALUATORS[key] = Evaluator(rules=rules)
    return ev

"""Two ``stef calibrate`` runs on the same labelled rows, compared row by row.

Each run's ``rows.jsonl`` holds every row's label, score and held-out prediction. The
runs are joined on the row id; only rows both runs scored are compared (the coverage of
each is reported beside). Every figure is given for both runs with the difference
B − A and a percentile interval from a paired bootstrap that resamples whole questions
(the rows of one question move together, as the folds keep them together).

Figures: AUROC of the score; Brier score and ECE of score/100 read as P(correct) (how
calibrated the raw score is); Brier score and ECE of the held-out isotonic P(correct);
accuracy of the held-out threshold. Lower is better for Brier and ECE.

>>> a = [{"id": str(i), "question": f"q{i}", "correct": i % 2 == 0, "status": "ok",
...       "score": 80.0 if i % 2 == 0 else 40.0, "predicted_correct": i % 2 == 0,
...       "p_correct_held_out": 0.8 if i % 2 == 0 else 0.3} for i in range(8)]
>>> b = [dict(r, score=50.0) for r in a]
>>> d = paired_diff(a, b, n_boot=200)
>>> d["shared"], d["figures"]["auroc"]["a"], d["figures"]["auroc"]["b"]
(8, 1.0, 0.5)
>>> d["figures"]["auroc"]["difference"]
-0.5
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stef.accuracy import metrics as M
from stef.accuracy.calibrate import question_key

Row = dict[str, Any]

#: name → (what it is, lower is better?)
FIGURES: dict[str, tuple[str, bool]] = {
    "auroc": ("AUROC", False),
    "brier_raw": ("Brier, score/100", True),
    "ece_raw": ("ECE, score/100", True),
    "brier_isotonic": ("Brier, isotonic", True),
    "ece_isotonic": ("ECE, isotonic", True),
    "accuracy": ("accuracy", False),
}


def load_rows(path: str | Path) -> list[Row]:
    """``rows.jsonl`` of a calibrate run (the file, or the run's output folder)."""
    p = Path(path)
    if p.is_dir():
        p = p / "rows.jsonl"
    with p.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _scored(r: Row) -> bool:
    return r.get("status") == "ok" and isinstance(r.get("score"), (int, float))


def _figure(name: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], float | None]:
    def f(y: np.ndarray, s: np.ndarray, p: np.ndarray, pred: np.ndarray) -> float | None:
        labels = [bool(v) for v in y]
        if name == "auroc":
            return M.auroc(labels, list(s))
        if name == "brier_raw":
            return M.brier_score(labels, list(s / 100.0))
        if name == "ece_raw":
            return M.expected_calibration_error(labels, list(s / 100.0))
        if np.isnan(p).any() and name.endswith("isotonic"):
            return None
        if name == "brier_isotonic":
            return M.brier_score(labels, list(p))
        if name == "ece_isotonic":
            return M.expected_calibration_error(labels, list(p))
        return M.accuracy(labels, [bool(v) for v in pred])

    return f


def paired_diff(
    a: Sequence[Row], b: Sequence[Row], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Figures of runs ``a`` and ``b`` on the rows both scored, with bootstrap intervals
    of B − A (resampling questions). Raises ``ValueError`` when the runs disagree on a
    row's label (they were not run on the same data)."""
    by_id = {str(r["id"]): r for r in a}
    pairs: list[tuple[Row, Row]] = []
    for r in b:
        other = by_id.get(str(r["id"]))
        if other is None:
            continue
        if bool(other["correct"]) != bool(r["correct"]):
            raise ValueError(f"row {r['id']!r} has another label in the second run")
        if _scored(other) and _scored(r):
            pairs.append((other, r))
    groups: dict[str, list[int]] = {}
    for i, (ra, _) in enumerate(pairs):
        groups.setdefault(question_key(str(ra.get("question") or ra["id"])), []).append(i)
    members = [np.asarray(v) for v in groups.values()]

    def arrays(side: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        rows = [pr[side] for pr in pairs]
        y = np.asarray([bool(r["correct"]) for r in rows])
        s = np.asarray([float(r["score"]) for r in rows])
        p = np.asarray([float(r.get("p_correct_held_out", np.nan)) for r in rows])
        pred = np.asarray([bool(r.get("predicted_correct")) for r in rows])
        return y, s, p, pred

    xa, xb = arrays(0), arrays(1)
    rng = np.random.default_rng(seed)
    draws = [
        np.concatenate([members[g] for g in rng.integers(0, len(members), len(members))])
        for _ in range(n_boot if members else 0)
    ]
    figures: dict[str, Any] = {}
    for name, (what, lower_better) in FIGURES.items():
        f = _figure(name)
        va, vb = f(*xa), f(*xb)
        diffs = []
        for idx in draws:
            da, db = f(*(x[idx] for x in xa)), f(*(x[idx] for x in xb))
            if da is not None and db is not None:
                diffs.append(db - da)
        lo = hi = better = None
        if diffs:
            lo, hi = (float(v) for v in np.quantile(diffs, [alpha / 2, 1 - alpha / 2]))
            wins = sum(1 for d in diffs if (d < 0 if lower_better else d > 0))
            better = wins / len(diffs)
        figures[name] = {
            "what": what,
            "lower_is_better": lower_better,
            "a": _r(va),
            "b": _r(vb),
            "difference": _r(vb - va) if va is not None and vb is not None else None,
            "interval": [_r(lo), _r(hi)] if lo is not None else None,
            "share_of_draws_b_better": _r(better),
        }
    return {
        "rows_a": len(a),
        "rows_b": len(b),
        "scored_a": sum(1 for r in a if _scored(r)),
        "scored_b": sum(1 for r in b if _scored(r)),
        "shared": len(pairs),
        "questions": len(members),
        "n_boot": n_boot,
        "alpha": alpha,
        "figures": figures,
    }


def _r(v: float | None) -> float | None:
    return None if v is None else round(float(v), 4)

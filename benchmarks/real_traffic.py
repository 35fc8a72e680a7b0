"""How the score reads on real traffic: share of correct SQL scored good+ and poor, per file.

Usage::

    .venv/bin/python benchmarks/real_traffic.py [DATA.jsonl ...]

With no file it reads every ``../shared/data/*.jsonl``. Each row is evaluated as a
record (``evidence`` is the enriched question, the row's dialect is used, no rules file,
the packaged offline judge); the label is read only to split the table into correct and
incorrect rows. Per file and class it prints rows, coverage, mean Φ, the share scored
≥ 75 (good or better), the share scored < 50 or not evaluated (poor) and the share of the
evaluated rows scored < 50. These are the
figures of issue 12's first two targets (≥ 80% good+, ≤ 5% poor on correct SQL). For a
labelled file it also prints the AUROC of Φ over its evaluated rows (packaged weights:
**not** held out; ``stef fit-judge`` prints the held-out figure). ``--drop-hints``
evaluates every row without its enriched question (the production case of no hints);
``--rules FILE`` evaluates with a rules file instead of none.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from stef import Evaluator
from stef.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--drop-hints", action="store_true", help="evaluate without evidence")
    ap.add_argument("--rules", type=Path, help="a rules file to evaluate with (default: none)")
    args = ap.parse_args()
    ev = Evaluator(rules=load_rules(args.rules) if args.rules else None)
    print(
        "| file | rows | n | coverage | mean Φ | good+ (≥ 75) | poor (< 50 or none) |"
        " poor of scored (< 50) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for path in args.files or sorted(DATA.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        scored: dict[bool, list[float | None]] = {True: [], False: []}
        for r in rows:
            e = ev.evaluate_record(
                {
                    "id": r["id"],
                    "question": r["question"],
                    "enriched_question": None if args.drop_hints else r.get("evidence"),
                    "sql": r["sql"],
                    "dialect": r.get("dialect") or "sqlite",
                }
            )
            scored[bool(r["correct"])].append(e["score"] if e["status"] == "ok" else None)
        auroc = _auroc(scored)
        if auroc is not None:
            print(f"| {path.stem} | AUROC of Φ (not held out) | {auroc:.3f} | | | | | |")
        for label, scores in scored.items():
            if not scores:
                continue
            n, ok = len(scores), [s for s in scores if s is not None]
            good = sum(s >= 75 for s in ok) / n
            poor = (sum(s < 50 for s in ok) + n - len(ok)) / n
            scored_poor = sum(s < 50 for s in ok) / len(ok) if ok else float("nan")
            mean = sum(ok) / len(ok) if ok else float("nan")
            name = "correct" if label else "incorrect"
            print(
                f"| {path.stem} | {name} | {n} | {len(ok) / n:.1%} | {mean:.1f} | "
                f"{good:.1%} | {poor:.1%} | {scored_poor:.1%} |"
            )


def _auroc(scored: dict[bool, list[float | None]]) -> float | None:
    """AUROC of Φ, correct rows positive, over evaluated rows (ties count half)."""
    pos = [s for s in scored[True] if s is not None]
    neg = [s for s in scored[False] if s is not None]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


if __name__ == "__main__":
    main()

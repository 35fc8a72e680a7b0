"""Throughput of the offline pipeline against bare ``sqlglot.parse_one`` on the same SQL.

Usage::

    .venv/bin/python benchmarks/throughput.py [DATA.jsonl] [--limit N] [--workers N] [--repeat R]

Reads labelled rows (``question``, ``evidence``, ``sql``) — labels are ignored — and
reports records/second for (a) ``sqlglot.parse_one`` alone and (b) the whole STEF
pipeline with the offline judge (``Evaluator.evaluate_record``), both measured in this
run, and their ratio. It also measures what ``stef eval`` does with a JSONL file: lines
in, JSON lines out (``stef.batch.evaluate_encoded``), in one process and, with
``--workers N``, in N worker processes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

import sqlglot

from stef.batch import evaluate_encoded
from stef.evaluator import Evaluator

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "nl2sql_bugs.jsonl"


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("data", nargs="?", default=str(DEFAULT))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dialect", default="sqlite")
    args = ap.parse_args()

    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    if args.limit:
        rows = rows[: args.limit]
    records = [
        {
            "id": r["id"],
            "question": r["question"],
            "enriched_question": r.get("evidence"),
            "sql": r["sql"],
            "dialect": args.dialect,
        }
        for r in rows
    ]
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    n = len(records)
    compiled = "sqlglotc" in str(getattr(sqlglot.parser, "__file__", "")) or any(
        str(getattr(m, "__file__", "")).endswith(".so") for m in (sqlglot.parser, sqlglot.tokens)
    )

    def bare() -> None:
        for r in records:
            with contextlib.suppress(sqlglot.errors.SqlglotError):
                sqlglot.parse_one(r["sql"], read=args.dialect)

    ev = Evaluator()

    def pipeline() -> None:
        for r in records:
            ev.evaluate_record(r)

    ev.evaluate_record(records[0])  # warm caches / imports
    t_parse = _best(bare, args.repeat)
    t_pipe = _best(pipeline, args.repeat)
    print(f"records: {n}  (sqlglot compiled extension: {compiled})")
    print(f"bare sqlglot.parse_one : {n / t_parse:9.1f} records/s")
    print(f"STEF offline pipeline  : {n / t_pipe:9.1f} records/s")
    print(f"ratio pipeline/parse   : {t_parse / t_pipe:9.3f}   (target >= 0.5)")

    def cli(workers: int) -> None:
        for e in evaluate_encoded(ev, lines, workers=workers):
            len(e.line)

    t_cli = _best(lambda: cli(1), args.repeat)
    print(f"stef eval, 1 process   : {n / t_cli:9.1f} records/s (JSONL in, JSON lines out)")
    if args.workers > 1:
        t_par = _best(lambda: cli(args.workers), args.repeat)
        print(
            f"stef eval --workers {args.workers:<3}: {n / t_par:9.1f} records/s "
            f"(x{t_cli / t_par:.2f} vs 1 process)"
        )


if __name__ == "__main__":
    main()

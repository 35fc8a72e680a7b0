"""Throughput of the offline pipeline against bare ``sqlglot.parse_one`` on the same SQL.

Usage::

    .venv/bin/python benchmarks/throughput.py [DATA.jsonl] [--limit N] [--repeat R]
        [--dialect sqlite] [--workers N]

Reads labelled rows (``question``, ``evidence``, ``sql``) — labels are ignored — and
reports records/second, each the best of ``R`` passes over all rows, all measured in this
run:

- ``sqlglot.parse_one`` alone, with no dialect and with ``--dialect``;
- ``stef.evaluate(question, sql, enriched_question)`` called once per row, no dialect
  given (what a user's loop does);
- one reused ``Evaluator``, ``evaluate_record`` with no dialect and with ``--dialect``;
- what ``stef eval FILE`` does with the rows as JSONL: lines in, JSON lines out
  (``stef.batch.evaluate_encoded``), in one process and, with ``--workers N``, in N worker
  processes;

and the ratio of each pipeline rate to the bare-parse rate on the same SQL and dialect
(issue 16's target: >= 0.25). Rates in one process are per CPU second of this process
(``time.process_time``); the ``--workers`` comparison is in wall seconds.

``--once bare`` or ``--once reused`` runs one pass of that path alone (no dialect) and
prints nothing: for a count of instructions that a busy machine does not disturb, the
difference of two runs under ``valgrind --tool=callgrind`` with ``--limit 100`` and
``--limit 400`` is what 300 rows cost.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import sqlglot

import stef
import stef.evaluator
from stef.batch import evaluate_encoded
from stef.evaluator import Evaluator

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "nl2sql_bugs.jsonl"


def best(
    fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.process_time
) -> float:
    """The fastest of ``repeat`` timed calls of ``fn``, in seconds of ``clock`` (by default
    this process's CPU time, which a busy shared machine disturbs less than wall time)."""
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
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
    ap.add_argument("--once", choices=("bare", "reused"), default=None)
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
        }
        for r in rows
    ]
    with_dialect = [{**r, "dialect": args.dialect} for r in records]
    lines = [json.dumps(r, ensure_ascii=False) for r in with_dialect]
    n = len(records)
    compiled = "sqlglotc" in str(getattr(sqlglot.parser, "__file__", "")) or any(
        str(getattr(m, "__file__", "")).endswith(".so") for m in (sqlglot.parser, sqlglot.tokens)
    )

    def bare(dialect: str | None) -> None:
        for r in records:
            with contextlib.suppress(sqlglot.errors.SqlglotError):
                sqlglot.parse_one(r["sql"], read=dialect)

    def plain_calls() -> None:
        # each pass starts cold, as a fresh process would (no-op on checkouts before it)
        getattr(stef.evaluator, "_SHARED", {}).clear()
        for r in records:
            stef.evaluate(r["question"], r["sql"], r["enriched_question"])

    def reused(items: list[dict[str, object]]) -> None:
        fresh = Evaluator()  # one per pass: what it remembers of a pass helps no other
        for r in items:
            fresh.evaluate_record(r)

    def cli(workers: int) -> None:
        for e in evaluate_encoded(Evaluator(), lines, workers=workers):
            len(e.line)

    stef.evaluate("How many users?", "SELECT COUNT(*) FROM users")  # imports, caches
    if args.once:  # one pass of one path, for an instruction count (see the module doc)
        if args.once == "bare":
            bare(None)
        else:
            reused(records)
        return
    t_bare = best(lambda: bare(None), args.repeat)
    t_bare_d = best(lambda: bare(args.dialect), args.repeat)
    rates = [
        ("stef.evaluate() calls, no dialect", best(plain_calls, args.repeat), t_bare),
        ("reused Evaluator, no dialect", best(lambda: reused(records), args.repeat), t_bare),
        (
            f"reused Evaluator, {args.dialect}",
            best(lambda: reused(with_dialect), args.repeat),
            t_bare_d,
        ),
        ("stef eval (JSONL lines), 1 process", best(lambda: cli(1), args.repeat), t_bare_d),
    ]
    walls = []
    if args.workers > 1:  # wall time: the workers' CPU is not this process's
        for w in (1, args.workers):
            walls.append(best(lambda w=w: cli(w), args.repeat, time.perf_counter))
    print(f"records: {n}  (sqlglot compiled extension: {compiled}; best of {args.repeat})")
    print(f"{'bare sqlglot.parse_one, no dialect':42} {n / t_bare:8.1f} records/s")
    print(f"{'bare sqlglot.parse_one, ' + args.dialect:42} {n / t_bare_d:8.1f} records/s")
    for label, t, t_ref in rates:
        print(f"{label:42} {n / t:8.1f} records/s  {t_ref / t:6.3f}x bare parse (target >= 0.25)")
    if walls:
        print(
            f"stef eval (JSONL lines), wall: 1 process {n / walls[0]:.1f} records/s, "
            f"{args.workers} workers {n / walls[1]:.1f} records/s: {walls[0] / walls[1]:.2f}x"
        )
    print(f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()

"""The Ray engine on 2 CPUs against 1 CPU, same records, same run; identical evaluations.

Usage::

    .venv/bin/python benchmarks/ray_engine.py [DATA.jsonl] [--n 20000] [--repeat 1]

Replicates the rows of DATA (default ``../shared/data/nl2sql_bugs.jsonl``; labelled rows
become records as in ``benchmarks/evaluations_digest.py``, ``evidence`` as the enriched
question, labels dropped) with fresh ids up to ``--n`` records, writes them as one JSONL
file, and runs ``stef.engines.ray.run`` (what ``stef eval --engine ray`` runs, with the
default ``--record-timeout``) on a local Ray runtime of 1 CPU and then of 2 CPUs. Each
time is the run alone (reading, actors starting, evaluating, writing), the runtime already
up; the best of ``--repeat``. It prints records/s for both and their ratio, and checks that
the two outputs are identical (minus ``evaluated_at`` and ``provenance.latency_ms``) and
identical to the local engine's (``stef.batch.evaluate_encoded``, as ``stef eval`` runs it)
on the first ``--local`` records. As a control it times the local engine with 2 workers
against 1 on those records: on a busy shared machine that ratio says how much of a second
core there was during the run.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import ray

from stef.batch import evaluate_encoded
from stef.engines.ray import RayJob, run
from stef.evaluator import Evaluator

sys.path.insert(0, str(Path(__file__).parent))
from evaluations_digest import canonical, to_record

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "nl2sql_bugs.jsonl"


def records(data: Path, n: int) -> list[str]:
    """``n`` JSONL records: the rows of ``data`` over and over, each with a fresh id."""
    rows = [to_record(json.loads(ln)) for ln in data.read_text().splitlines() if ln.strip()]
    out = []
    for i in range(n):
        r = dict(rows[i % len(rows)])
        r["id"] = f"{r['id']}#{i // len(rows)}"
        out.append(json.dumps(r, ensure_ascii=False))
    return out


def timed(src: Path, dest: Path, cpus: int, repeat: int) -> float:
    """Best seconds of ``repeat`` runs on a fresh local runtime of ``cpus`` CPUs."""
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)
    try:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            summary = run(RayJob(str(src), str(dest), Evaluator, workers=cpus))
            best = min(best, time.perf_counter() - t0)
    finally:
        ray.shutdown()
    print(f"  {cpus} CPU(s): {best:.1f} s, coverage {summary['coverage']:.1%}", flush=True)
    return best


def _local(lines: list[str], workers: int) -> tuple[list[str], float]:
    """The local engine's canonical evaluations of ``lines`` (as ``stef eval -w N`` runs
    them) and its seconds."""
    t0 = time.perf_counter()
    out = [canonical(e.decoded()) for e in evaluate_encoded(Evaluator(), lines, workers, 5.0)]
    return out, time.perf_counter() - t0


def _canonical_lines(path: Path) -> list[str]:
    return [canonical(json.loads(ln)) for ln in path.read_text().splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("data", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--local", type=int, default=2_018,
                    help="records checked against the local engine")
    args = ap.parse_args()
    lines = records(args.data, args.n)
    with tempfile.TemporaryDirectory() as tmp:
        src, one, two = Path(tmp, "records.jsonl"), Path(tmp, "one.jsonl"), Path(tmp, "two.jsonl")
        src.write_text("\n".join(lines) + "\n")
        print(f"{args.n:,} records from {args.data.name}, Ray {ray.__version__}")
        t1 = timed(src, one, 1, args.repeat)
        t2 = timed(src, two, 2, args.repeat)
        a, b = _canonical_lines(one), _canonical_lines(two)
        local, l1 = _local(lines[: args.local], 1)
        _, l2 = _local(lines[: args.local], 2)
    print(f"1 CPU : {args.n / t1:,.0f} records/s")
    print(f"2 CPUs: {args.n / t2:,.0f} records/s")
    print(f"ratio 2 CPUs / 1 CPU: {t1 / t2:.2f}x (target >= 1.7x)")
    print(f"control, same run: the local engine --workers 2 / --workers 1 on {len(local):,} "
          f"records: {l1 / l2:.2f}x (what this machine's cores gave just now)")
    same = a == b and len(a) == args.n
    print(f"identical evaluations, 1 CPU vs 2 CPUs ({len(a):,} records): {same}")
    same_local = a[: args.local] == local
    print(f"identical to the local engine on the first {len(local):,}: {same_local}")
    if not (same and same_local):
        raise SystemExit(1)


if __name__ == "__main__":
    main()

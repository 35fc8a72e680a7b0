"""``stef eval FILE --workers N`` against ``--workers 1`` on the same records, as a user runs it.

Usage::

    .venv/bin/python benchmarks/workers.py [DATA.jsonl] [--workers 2] [--copies 2] [--rounds 3]

Writes the labelled rows (labels dropped; ``evidence`` as the enriched question, dialect
sqlite) ``--copies`` times over with distinct ids to a temporary JSONL file, then runs the
``stef`` command on it with ``--workers 1`` and ``--workers N`` in turn, ``--rounds``
times (round robin, so both see the same load), and prints each one's median wall time,
records/s, the CPU seconds its processes used and the same-run ratio (issue 16's target:
>= 1.85x for 2 workers). The evaluations of both are compared line by line. On a shared
machine whose cores other jobs also use, the ratio is noisy and tends low: N workers only
help as far as N cores are free.

The ``stef`` runs may write Python's bytecode cache (``PYTHONDONTWRITEBYTECODE`` is dropped
from their environment) and one untimed run of each goes first, so that no timed run
compiles STEF's sources: an installed STEF has its bytecode, and compiling it is start-up
work that both runs would do once, in the parent, shrinking the ratio. The load average is
printed with every round.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "nl2sql_bugs.jsonl"


def stef_command() -> list[str]:
    script = Path(sys.executable).with_name("stef")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from stef.cli import main; sys.exit(main())"]


def write_records(data: Path, copies: int, out: Path) -> int:
    rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for c in range(copies):
            for r in rows:
                rec = {
                    "id": f"{r['id']}-{c}",
                    "question": r["question"],
                    "enriched_question": r.get("evidence"),
                    "sql": r["sql"],
                    "dialect": "sqlite",
                }
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
    return n


#: The environment of the runs: the bytecode cache may be written (see the module's help).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(argv: list[str], output: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the command and its worker processes) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([*argv, "--output", str(output)], check=True, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def without_time(path: Path) -> list[str]:
    out = []
    for line in path.read_text().splitlines():
        e = json.loads(line)
        e.pop("evaluated_at", None)
        e["provenance"].pop("latency_ms", None)
        out.append(json.dumps(e, sort_keys=True))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("data", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--copies", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp) / "records.jsonl"
        n = write_records(args.data, args.copies, records)
        base = [*stef_command(), "eval", str(records), "--no-progress"]
        counts = (1, args.workers)
        outs = {w: Path(tmp) / f"out-{w}.jsonl" for w in counts}
        walls: dict[int, list[float]] = {w: [] for w in counts}
        cpus: dict[int, list[float]] = {w: [] for w in counts}
        for w in counts:  # untimed: bytecode written, files in the page cache
            run([*base, "--workers", str(w)], outs[w])
        for r in range(args.rounds):
            for w in counts:
                wall, cpu = run([*base, "--workers", str(w)], outs[w])
                walls[w].append(wall)
                cpus[w].append(cpu)
            print(
                f"round {r + 1}: {walls[1][-1]:.2f} s / {walls[args.workers][-1]:.2f} s = "
                f"{walls[1][-1] / walls[args.workers][-1]:.2f}x "
                f"(load average {os.getloadavg()[0]:.2f})",
                flush=True,
            )
        same = without_time(outs[1]) == without_time(outs[args.workers])
    med = {w: statistics.median(walls[w]) for w in counts}
    for w in counts:
        print(
            f"stef eval --workers {w:<3} {med[w]:7.2f} s wall (median of {args.rounds}), "
            f"{n / med[w]:7.1f} records/s, {statistics.median(cpus[w]):7.2f} CPU s"
        )
    print(
        f"--workers {args.workers} / --workers 1: {med[1] / med[args.workers]:.2f}x wall "
        f"on {n} records (target >= 1.85x for 2); evaluations identical: {same}"
    )
    fast = {w: min(walls[w]) for w in counts}
    print(
        f"fastest runs: {fast[1]:.2f} s / {fast[args.workers]:.2f} s = "
        f"{fast[1] / fast[args.workers]:.2f}x (less disturbed by other jobs than the medians)"
    )
    print(f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()

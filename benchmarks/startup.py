"""Start-up time of ``stef --help`` and of a one-record ``stef eval``, against ``python -c pass``.

Usage::

    .venv/bin/python benchmarks/startup.py [--repeat N]

Each command runs ``N`` times (default 15) in a fresh process after one warm-up run (which
also writes the ``.pyc`` files an installed wheel ships with: the benchmark unsets
``PYTHONDONTWRITEBYTECODE``); the median and the fastest wall time are printed, and the
ratio of each median to that of ``python -c pass`` measured in the same run. Targets
(issue 16): ``stef --help`` <= 0.15 s, one-record ``stef eval`` <= 0.5 s. On a busy machine
the medians move with the load; the ratios move less.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

PAIR = ["--question", "How many active users are there?", "--sql", "SELECT COUNT(*) FROM users"]


def stef_command() -> list[str]:
    """The installed ``stef`` script next to this interpreter, or the same entry point."""
    script = Path(sys.executable).with_name("stef")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from stef.cli import main; sys.exit(main())"]


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    stef = stef_command()
    cases = [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        ("stef --help", [*stef, "--help"], 0.15),
        ("stef eval --question … --sql …", [*stef, "eval", *PAIR], 0.5),
    ]
    for _, argv, _ in cases:  # warm-up: imports cached, .pyc written
        run_once(argv, env)
    walls: list[list[float]] = [[] for _ in cases]
    cpus: list[list[float]] = [[] for _ in cases]
    for _ in range(args.repeat):  # round robin: every command sees the same load
        for i, (_, argv, _) in enumerate(cases):
            wall, cpu = run_once(argv, env)
            walls[i].append(wall)
            cpus[i].append(cpu)
    base_wall, base_cpu = statistics.median(walls[0]), statistics.median(cpus[0])
    print(f"{'command':32} {'wall':>7} {'fastest':>8} {'CPU':>7} {'x python':>9}  target")
    for (label, _, target), w, c in zip(cases, walls, cpus, strict=True):
        med = statistics.median(w)
        cpu = statistics.median(c)
        goal = ""
        if target is not None:
            verdict = {True: "met", False: "NOT met"}
            goal = f"<= {target:.2f} s: wall {verdict[med <= target]}, CPU {verdict[cpu <= target]}"
        ratio = f"{med / base_wall:.1f}x"
        print(f"{label:32} {med:6.3f}s {min(w):7.3f}s {cpu:6.3f}s {ratio:>9}  {goal}")
    load = os.getloadavg()[0]
    print(
        f"(medians of {args.repeat} runs each, after a warm-up; x python: wall median over that "
        f"of python -c pass ({base_wall:.3f} s wall, {base_cpu:.3f} s CPU); "
        f"load average {load:.2f} on {os.cpu_count()} CPUs)"
    )


if __name__ == "__main__":
    main()

"""Time and peak memory of ``stef eval`` on each case of the hostile corpus (issue 13).

Usage::

    .venv/bin/python benchmarks/hostile.py [--workers N] [--scale X] [--only NAME_PREFIX]

Each case of ``tests/hostile.py`` (plus a few that only a benchmark can afford: the flat
CASE at the issue's 5,000 WHENs, many numbers against a long IN list) is written to a file
and run through ``stef eval`` in a subprocess of its own; the table gives its lines, the
statuses it got, wall seconds (process start included) and peak resident memory (the
command and its worker processes). Prints a Markdown table (docs/robustness.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from hostile import Case, cases, flat_case, record, run_stef  # noqa: E402


def extra_cases() -> list[Case]:
    rng = random.Random(1)
    numbers = " ".join(str(rng.randint(1, 99_999)) for _ in range(3500))
    in_list = ", ".join(str(i) for i in range(2000))
    return [
        Case(
            "flat_case_5000",
            [record("case", flat_case(5000), "What label has each x?")],
            [("ok", None)],
        ),
        Case(
            "numbers_vs_in_list_3500x2000",
            [
                record(
                    "numbers",
                    f"SELECT * FROM users WHERE id IN ({in_list})",
                    ("Ids " + numbers)[:19_990] + "?",
                )
            ],
            [("ok", None)],
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", default="", help="Run the cases whose name starts so.")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in [*cases(args.scale), *extra_cases()]:
            if not case.name.startswith(args.only):
                continue
            path = Path(tmp) / f"{case.name}.jsonl"
            path.write_bytes(case.data())
            run = run_stef(
                ["eval", str(path), "-o", "out.jsonl", "--no-progress", "-w", args.workers],
                Path(tmp),
            )
            out = (Path(tmp) / "out.jsonl").read_text(encoding="utf-8").splitlines()
            statuses = Counter(json.loads(line)["status"] for line in out)
            expected = Counter(s for s, _ in case.expect)
            rows.append(
                (
                    case.name,
                    len(case.lines),
                    len(out),
                    ", ".join(f"{s} {n}" for s, n in sorted(statuses.items())),
                    "yes" if statuses == expected and run.code == 0 else "NO",
                    f"{len(case.data()) / 1024:,.0f}",
                    f"{run.seconds:.1f}",
                    f"{run.peak_mib:.0f}",
                )
            )
    print(
        "| case | lines | evaluations | statuses | as expected | input KiB | seconds | "
        "peak MiB |\n|---|---:|---:|---|---|---:|---:|---:|"
    )
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

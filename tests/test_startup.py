"""Start-up stays cheap: what ``stef --help`` and a one-record ``stef eval`` import.

Each command runs in a fresh interpreter under ``python -X importtime``; the test reads the
modules that interpreter imported and fails naming every heavy one it should not have
loaded (speed itself is measured by ``benchmarks/startup.py``, not asserted here). It also
checks the batch summary's pure-Python figures, which replaced numpy at start, against
numpy itself.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from array import array
from pathlib import Path

import numpy as np

from stef.batch import Summary, mean, percentile

#: Packages none of these commands needs at start: the LLM plumbing's HTTP client, the
#: numeric and plotting stack, the service, the PostgreSQL driver, templates, tracing.
HEAVY = (
    "httpx",
    "httpcore",
    "numpy",
    "scipy",
    "sklearn",
    "matplotlib",
    "pandas",
    "fastapi",
    "starlette",
    "uvicorn",
    "psycopg",
    "jinja2",
    "opentelemetry",
    "asyncio",
    "multiprocessing",
    "ray",
    "pyarrow",
)

#: ``--help`` lists the commands and options only; parsing SQL, validating rules and
#: drawing rich output wait for a command that does them.
HELP_HEAVY = (*HEAVY, "sqlglot", "pydantic", "rich", "orjson", "dateutil")

PAIR = ["--question", "How many users?", "--sql", "SELECT COUNT(*) FROM users"]


def imported_at_start(argv: list[str]) -> tuple[set[str], str]:
    """Top-level packages a fresh ``stef ARGV`` imports (via ``-X importtime``), and its
    stdout."""
    code = f"from stef.cli import main; main({argv!r})"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name.split(".")[0])
    return names, proc.stdout


def heavy_in(names: set[str], heavy: tuple[str, ...]) -> list[str]:
    return sorted(name for name in heavy if name in names)


def test_help_imports_nothing_heavy() -> None:
    names, out = imported_at_start(["--help"])
    assert "Usage: " in out and "eval" in out
    assert heavy_in(names, HELP_HEAVY) == [], (
        "`stef --help` imports heavy modules at start: "
        + ", ".join(heavy_in(names, HELP_HEAVY))
        + " (import them inside the command that needs them)"
    )


def test_subcommand_help_imports_nothing_heavy() -> None:
    names, out = imported_at_start(["eval", "--help"])
    assert "--question" in out
    assert heavy_in(names, HELP_HEAVY) == [], (
        "`stef eval --help` imports heavy modules at start: "
        + ", ".join(heavy_in(names, HELP_HEAVY))
    )


def test_one_record_eval_imports_no_llm_plumbing_or_numeric_stack() -> None:
    names, out = imported_at_start(["eval", *PAIR, "--json"])
    assert json.loads(out)["score"] == 100.0
    assert heavy_in(names, HEAVY) == [], (
        "a one-record `stef eval --question … --sql …` imports heavy modules: "
        + ", ".join(heavy_in(names, HEAVY))
    )


def test_file_eval_imports_no_numeric_stack(tmp_path: Path) -> None:
    records = tmp_path / "r.jsonl"
    records.write_text(json.dumps({"question": "How many users?", "sql": PAIR[3]}) + "\n")
    names, out = imported_at_start(["eval", str(records), "--no-progress"])
    assert json.loads(out.splitlines()[0])["score"] == 100.0
    # one worker: the pool and its multiprocessing start only with --workers > 1
    heavy = tuple(n for n in HEAVY if n != "multiprocessing")
    assert heavy_in(names, heavy) == [], (
        "`stef eval FILE` imports heavy modules at start: " + ", ".join(heavy_in(names, heavy))
    )


def test_summary_figures_equal_numpys() -> None:
    rnd = random.Random(16)
    for _ in range(400):
        n = rnd.choice([rnd.randint(1, 40), rnd.randint(1, 3000)])
        scores = [round(rnd.uniform(0, 100), rnd.choice([0, 1, 2, 6])) for _ in range(n)]
        a = np.array(scores)
        assert mean(array("d", scores)) == float(a.mean())
        ordered = sorted(scores)
        for q in (10, 50, 90, 99):
            assert percentile(ordered, q) == float(np.percentile(a, q))
        s = Summary()
        for x in scores:
            s.add({"status": "ok", "score": x, "band": "good"})
        d = s.to_dict()
        assert (d["mean"], d["median"], d["p90"]) == (
            round(float(a.mean()), 2),
            round(float(np.median(a)), 2),
            round(float(np.percentile(a, 90)), 2),
        )


def test_summary_figures_of_known_scores() -> None:
    s = Summary()
    for x in (10.0, 20.0, 30.0, 40.0):
        s.add({"status": "ok", "score": x, "band": "poor"})
    d = s.to_dict()
    assert (d["mean"], d["median"], d["p90"]) == (25.0, 25.0, 37.0)
    assert Summary().to_dict()["mean"] is None

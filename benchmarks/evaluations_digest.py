"""Digest of the evaluations STEF gives a set of files: proof that a refactor changed nothing.

Usage::

    .venv/bin/python benchmarks/evaluations_digest.py [FILE.jsonl ...] [--dump DIR]

With no file it digests ``examples/logs.jsonl`` and every ``../shared/data/*.jsonl``. Each
row becomes a record (labelled rows: ``evidence`` is the enriched question; the label is
never read), is evaluated with the packaged offline judge, and its evaluation is written
as canonical JSON (sorted keys) without the two fields that differ on every run
(``evaluated_at`` and ``provenance.latency_ms``). It prints one sha256 per file; run it
before and after a change and compare the lines. ``--dump DIR`` also writes the canonical
evaluations, one file per input, to diff them row by row.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from stef import Evaluator

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def to_record(row: dict[str, Any]) -> dict[str, Any]:
    """A labelled row as an input record (labels dropped); a record stays as it is."""
    if "evidence" not in row and "correct" not in row:
        return row
    rec = {"id": row["id"], "question": row["question"], "enriched_question": row.get("evidence"),
           "sql": row["sql"], "dialect": row.get("dialect") or "sqlite"}
    return rec


def canonical(evaluation: dict[str, Any]) -> str:
    """The evaluation as sorted-key JSON without its run-dependent fields."""
    e = dict(evaluation)
    e.pop("evaluated_at", None)
    prov = dict(e.get("provenance") or {})
    prov.pop("latency_ms", None)
    e["provenance"] = prov
    return json.dumps(e, sort_keys=True, ensure_ascii=False, default=str)


def digest(path: Path, dump: Path | None) -> str:
    ev = Evaluator()
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    out = []
    for ln in lines:
        try:
            item: Any = to_record(json.loads(ln))
        except json.JSONDecodeError:
            item = ln
        out.append(canonical(ev.evaluate_record(item)))
    text = "\n".join(out) + "\n"
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        (dump / (path.stem + ".jsonl")).write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--dump", type=Path)
    args = ap.parse_args()
    files = args.files or [ROOT / "examples" / "logs.jsonl", *sorted(DATA.glob("*.jsonl"))]
    for f in files:
        print(f"{digest(f, args.dump)}  {f.name}")


if __name__ == "__main__":
    main()

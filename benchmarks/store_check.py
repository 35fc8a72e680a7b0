"""Check that two versions of STEF print the same ``stef stats`` figures over one store.

Writes every figure of every grouping ``benchmarks/store.py`` times (:data:`store.STATS`,
and the few extra ones given by ``--extra``), group by group, as ``stats.rows`` computes
them (what ``stef stats`` prints), into a JSON file; ``--compare A B`` then says, per
grouping, how many groups there are and which differ. Run it once with each version of
the code over the same store (``PYTHONPATH=/old/src`` picks the old one):

    PYTHONPATH=/tmp/pgbase/src .venv/bin/python benchmarks/store_check.py \\
        --store postgresql://127.0.0.1:5432/stef_pg10 --out /tmp/old.json
    .venv/bin/python benchmarks/store_check.py \\
        --store postgresql://127.0.0.1:5432/stef_pg10 --out /tmp/new.json
    .venv/bin/python benchmarks/store_check.py --compare /tmp/old.json /tmp/new.json

Exit status 1 when a figure differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store import STATS

from stef.monitor.stats import rows as stats_rows
from stef.monitor.store import Selection, open_store

#: Groupings beyond :data:`store.STATS`: selections over many windows, one more width.
EXTRA: list[tuple[str, list[str], float | None, Selection]] = [
    ("--by app --window 5m", ["app"], 300.0, Selection()),
    ("--where status=ok --by metadata.team --window 10m", ["metadata.team"], 600.0,
     Selection(status="ok")),
    ("--where finding=filter_missing --by agent --window 10m", ["agent"], 600.0,
     Selection(finding="filter_missing")),
    ("--where metadata.team=team-1 --by agent --window 7m", ["agent"], 420.0,
     Selection(metadata={"team": "team-1"})),
]


def dump(store_target: str, out: Path, extra: bool) -> None:
    store = open_store(store_target)
    print(f"{store!r}: {store.count():,} evaluations")
    figures: dict[str, list[dict[str, Any]]] = {}
    for label, by, window, sel in STATS + (EXTRA if extra else []):
        rows = stats_rows(store.tallies(sel, by=by, window=window), by)
        figures[label] = [r.to_dict() for r in rows]
        print(f"{label:55s} {len(rows):>7} groups")
    store.close()
    out.write_bytes(orjson.dumps(figures))


def compare(a: Path, b: Path) -> int:
    old, new = orjson.loads(a.read_bytes()), orjson.loads(b.read_bytes())
    bad = 0
    for label in old.keys() | new.keys():
        x, y = old.get(label), new.get(label)
        if x is None or y is None:
            print(f"{label:55s} only in {'the second' if x is None else 'the first'}")
            continue
        differ = [i for i, (r, s) in enumerate(zip(x, y, strict=False)) if r != s]
        if len(x) != len(y) or differ:
            bad += 1
            print(f"{label:55s} DIFFERS: {len(x)} / {len(y)} groups, {len(differ)} differ")
            for i in differ[:3]:
                keys = [k for k in x[i] if x[i][k] != y[i].get(k)]
                print("   ", {k: (x[i][k], y[i].get(k)) for k in keys})
        else:
            print(f"{label:55s} identical, {len(x)} groups")
    return 1 if bad else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", help="the store (SQLite path or postgresql:// URL)")
    ap.add_argument("--out", type=Path, help="where to write the figures (JSON)")
    ap.add_argument("--no-extra", action="store_true", help="only the groupings of STATS")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not args.store or not args.out:
        ap.error("--store and --out, or --compare A B")
    dump(args.store, args.out, not args.no_extra)


if __name__ == "__main__":
    main()

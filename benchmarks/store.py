"""Benchmark the evaluation store: ingest rate and ``stef stats`` latency.

Generates synthetic evaluations (3 agents x 2 versions x 2 apps over 30 days), writes
them to a fresh SQLite store and times, against baselines measured in the same run:

* ingest: ``Store.write`` versus a bare ``executemany`` of (id, JSON) into a table with
  only a primary key (the least any store must do);
* stats: every grouping and window of :data:`STATS` (tallies + the figures of each group,
  sorted: ``Store.tallies`` and ``stats.rows``, what ``stef stats`` computes) versus a
  bare ``SELECT agent, agent_version, count(*), avg(score) …
  GROUP BY`` over the store's own ``evaluations`` table (also timed over the bare
  table): those rollups answer, and those that scan the rows (a metadata key, sub-hour
  windows, a status selection);
* size: bytes per evaluation of the store versus the bare table of (id, JSON), and the
  stored (compressed) documents versus their JSON.

Run: ``.venv/bin/python benchmarks/store.py [--n 1000000] [--dir /tmp/b] [--reuse]``
(``--reuse`` times the stats over the store a previous run left in ``--dir``). Targets:
>= 20,000 evaluations/s ingest, every stats query under 2 s on 1 million evaluations.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "monitor"))
from monitor_factory import T0, iso, make_evaluation

from stef.monitor.stats import rows as stats_rows
from stef.monitor.store import Selection, SQLiteStore

AGENTS = [(a, v) for a in ("sql-bot", "report-bot", "ask-data") for v in ("1.3", "1.4")]
APPS = ("sales", "finance")
POOL = 20_000
#: (what ``stef stats`` is given, grouping, window seconds, selection): hourly rollups
#: answer the first three, 10-minute rollups the 30m and 10m windows by agent, the others
#: scan the rows.
STATS: list[tuple[str, list[str], float | None, Selection]] = [
    ("--by agent,agent_version --window 1d", ["agent", "agent_version"], 86400.0, Selection()),
    ("(everything, one row)", [], None, Selection()),
    ("--by app --window 1h", ["app"], 3600.0, Selection()),
    ("--by metadata.team", ["metadata.team"], None, Selection()),
    ("--by metadata.team --window 1d", ["metadata.team"], 86400.0, Selection()),
    ("--by agent --window 30m", ["agent"], 1800.0, Selection()),
    ("--by agent,agent_version --window 10m", ["agent", "agent_version"], 600.0, Selection()),
    (
        "--where status=ok --by agent,agent_version",
        ["agent", "agent_version"],
        None,
        Selection(status="ok"),
    ),
    # Rows again, many groups: windows the rollups do not answer, and a finding selection.
    ("--by metadata.team --window 10m", ["metadata.team"], 600.0, Selection()),
    (
        "--by metadata.team,agent,app --window 1h",
        ["metadata.team", "agent", "app"],
        3600.0,
        Selection(),
    ),
    ("--by agent --window 7m", ["agent"], 420.0, Selection()),
    (
        "--where finding=filter_missing --by agent",
        ["agent"],
        None,
        Selection(finding="filter_missing"),
    ),
]


def pool(seed: int = 0) -> list[dict[str, Any]]:
    """A pool of distinct evaluations to cycle through."""
    rng = random.Random(seed)
    out = []
    for i in range(POOL):
        agent, version = AGENTS[i % len(AGENTS)]
        ev = make_evaluation(
            i,
            rng,
            agent=agent,
            agent_version=version,
            app=APPS[i % 2],
            quality=-0.05 if version == "1.4" else 0.0,
            error_rate=0.03,
            metadata={"team": f"team-{i % 4}", "region": "eu"},
        )
        out.append(ev)
    return out


def stream(evs: list[dict[str, Any]], n: int) -> Iterator[dict[str, Any]]:
    """``n`` evaluations spread over 30 days, each with its own id and time."""
    step = 30 * 86400 / n
    for i in range(n):
        ev = dict(evs[i % POOL])
        ts = T0 + timedelta(seconds=i * step)
        ev["id"] = f"ev-{i}"
        ev["timestamp"] = iso(ts)
        ev["evaluated_at"] = iso(ts + timedelta(seconds=2))
        yield ev


#: CPU seconds of this process in the last :func:`timed` call.
LAST_CPU = [0.0]


def timed(fn: Any) -> tuple[float, Any]:
    """Wall seconds of ``fn()`` and its result (its CPU seconds in ``LAST_CPU[0]``)."""
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    LAST_CPU[0] = time.process_time() - c0
    return time.perf_counter() - t0, result


def time_stats(store: Any, bare_s: float) -> None:
    """Time every :data:`STATS` query (tallies and figures) against the bare GROUP BY."""
    print(f"stats, bare GROUP BY count/avg (the baseline):     {bare_s:6.3f} s")
    for label, by, window, sel in STATS:

        def run(sel: Selection = sel, by: list[str] = by, window: float | None = window) -> int:
            tallies = store.tallies(sel, by=by, window=window)
            return len(stats_rows(tallies, by))  # each group's figures, as `stef stats` does

        took, rows = timed(run)
        print(
            f"stats {label:45s} {took:6.3f} s ({rows:>6} rows), {took / bare_s:5.2f}x bare, "
            f"{LAST_CPU[0]:.2f} CPU s"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="evaluations to store")
    ap.add_argument("--dir", default=None, help="where to put the databases (default: a temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse the stores in --dir if complete")
    args = ap.parse_args()
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="stef-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    evs = pool()
    n = args.n
    print(f"{n:,} synthetic evaluations, databases in {workdir}")
    path, bare_path = workdir / "stef.db", workdir / "bare.db"
    if args.reuse and path.exists() and bare_path.exists():
        store = SQLiteStore(path, check=False)
        bare = sqlite3.connect(bare_path, isolation_level=None)
        assert store.count() == n, store.count()
        print("reusing both stores (no ingest timed)")
    else:
        store, bare = ingest(workdir, evs, n)
    bare_q = (
        "SELECT agent, agent_version, count(*), avg(score) FROM {} GROUP BY agent, agent_version"
    )
    bare_table_s, _ = timed(lambda: bare.execute(bare_q.format("bare")).fetchall())
    print(f"stats, bare GROUP BY count/avg over the bare table:  {bare_table_s:6.3f} s")
    # The baseline of the ratios: the same GROUP BY over the store's own light columns.
    bare_stats_s, _ = timed(lambda: store.conn.execute(bare_q.format("evaluations")).fetchall())
    time_stats(store, bare_stats_s)
    json_bytes = bare.execute("SELECT sum(length(CAST(doc AS BLOB))) FROM bare").fetchone()[0]
    doc_bytes = store.conn.execute("SELECT sum(length(doc)) FROM evaluation_docs").fetchone()[0]
    store.close()
    bare.close()
    size = sum(p.stat().st_size for p in workdir.glob("stef.db*"))
    bare_size = int((workdir / "bare_size.txt").read_text())
    print(
        f"store size: {size / 1e6:,.0f} MB ({size / n:,.0f} bytes per evaluation), "
        f"{size / bare_size:.2f}x the bare table of (id, JSON) ({bare_size / n:,.0f} bytes)"
    )
    print(
        f"documents: {doc_bytes / n:,.0f} bytes stored per evaluation for {json_bytes / n:,.0f} "
        f"bytes of JSON ({doc_bytes / json_bytes:.2f}x)"
    )


def ingest(workdir: Path, evs: list[dict[str, Any]], n: int) -> tuple[SQLiteStore, Any]:
    """Write the bare table and the store afresh, printing both rates."""
    gen_s, _ = timed(lambda: sum(1 for _ in stream(evs, n)))
    print(f"generating alone:        {gen_s:7.2f} s (included in both ingest timings)")
    bare_path = workdir / "bare.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(bare_path) + suffix).unlink(missing_ok=True)
    bare = sqlite3.connect(bare_path, isolation_level=None)
    bare.execute("PRAGMA journal_mode = WAL")
    bare.execute("PRAGMA synchronous = NORMAL")
    bare.execute("CREATE TABLE bare (id TEXT PRIMARY KEY, doc TEXT NOT NULL)")

    def bare_ingest() -> None:
        it = stream(evs, n)
        while True:
            rows = [(ev["id"], orjson.dumps(ev).decode()) for ev in islice(it, 5000)]
            if not rows:
                return
            bare.execute("BEGIN")
            bare.executemany("INSERT INTO bare VALUES (?, ?)", rows)
            bare.execute("COMMIT")

    bare_s, _ = timed(bare_ingest)
    bare.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (workdir / "bare_size.txt").write_text(str(bare_path.stat().st_size))
    path = workdir / "stef.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    store = SQLiteStore(path)
    store_s, stored = timed(lambda: store.write(stream(evs, n)))
    store_cpu = LAST_CPU[0]
    assert stored == n, stored
    print(f"ingest, bare executemany: {n / bare_s:10,.0f} evaluations/s ({bare_s:.1f} s)")
    print(
        f"ingest, Store.write:      {n / store_s:10,.0f} evaluations/s ({store_s:.1f} s), "
        f"{bare_s / store_s:.2f}x the bare rate, {store_cpu:.1f} CPU s"
    )
    again_s, stored = timed(lambda: store.write(stream(evs, min(n, 100_000))))
    print(
        f"re-ingest (all known):    {min(n, 100_000) / again_s:10,.0f} evaluations/s, {stored} new"
    )
    # Populate the bare table's columns for a fair GROUP BY baseline.
    bare.execute("ALTER TABLE bare ADD COLUMN agent TEXT")
    bare.execute("ALTER TABLE bare ADD COLUMN agent_version TEXT")
    bare.execute("ALTER TABLE bare ADD COLUMN score REAL")
    bare.execute("BEGIN")
    bare.execute(
        "UPDATE bare SET agent = json_extract(doc, '$.agent'), "
        "agent_version = json_extract(doc, '$.agent_version'), score = json_extract(doc, '$.score')"
    )
    bare.execute("COMMIT")
    return store, bare


if __name__ == "__main__":
    main()

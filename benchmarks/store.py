"""Benchmark the evaluation store: ingest rate and ``stef stats`` latency.

Generates synthetic evaluations (3 agents x 2 versions x 2 apps over 30 days), writes
them to a fresh SQLite store and times, against baselines measured in the same run:

* ingest: ``Store.write`` versus a bare ``executemany`` of (id, JSON) into a table with
  only a primary key (the least any store must do);
* stats: ``stef stats --by agent,agent_version --window 1d`` (tallies + figures) versus
  a bare ``SELECT agent, agent_version, count(*), avg(score) … GROUP BY`` over the same
  table; also the path that groups by a metadata key, which cannot use rollups.

Run: ``.venv/bin/python benchmarks/store.py [--n 1000000] [--dir /tmp]``. Targets:
>= 20,000 evaluations/s ingest, stats under 2 s on 1 million evaluations.
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
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "monitor"))
from monitor_factory import T0, iso, make_evaluation

from stef.monitor.stats import figures
from stef.monitor.store import SQLiteStore

AGENTS = [(a, v) for a in ("sql-bot", "report-bot", "ask-data") for v in ("1.3", "1.4")]
APPS = ("sales", "finance")
POOL = 20_000


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


def timed(fn: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="evaluations to store")
    ap.add_argument("--dir", default=None, help="where to put the databases (default: a temp dir)")
    args = ap.parse_args()
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="stef-bench-"))
    evs = pool()
    n = args.n
    print(f"{n:,} synthetic evaluations, databases in {workdir}")

    gen_s, _ = timed(lambda: sum(1 for _ in stream(evs, n)))
    print(f"generating alone:        {gen_s:7.2f} s (included in both ingest timings)")

    bare_path = workdir / "bare.db"
    bare_path.unlink(missing_ok=True)
    bare = sqlite3.connect(bare_path, isolation_level=None)
    bare.execute("PRAGMA journal_mode = WAL")
    bare.execute("PRAGMA synchronous = NORMAL")
    bare.execute("CREATE TABLE bare (id TEXT PRIMARY KEY, doc TEXT NOT NULL)")

    def bare_ingest() -> None:
        it = stream(evs, n)
        while True:
            rows = [
                (ev["id"], orjson.dumps(ev).decode())
                for ev, _ in zip(it, range(5000), strict=False)
            ]
            if not rows:
                return
            bare.execute("BEGIN")
            bare.executemany("INSERT INTO bare VALUES (?, ?)", rows)
            bare.execute("COMMIT")

    bare_s, _ = timed(bare_ingest)

    path = workdir / "stef.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    store = SQLiteStore(path)
    store_s, stored = timed(lambda: store.write(stream(evs, n)))
    assert stored == n, stored
    print(f"ingest, bare executemany: {n / bare_s:10,.0f} evaluations/s ({bare_s:.1f} s)")
    print(
        f"ingest, Store.write:      {n / store_s:10,.0f} evaluations/s ({store_s:.1f} s), "
        f"{bare_s / store_s:.2f}x the bare rate"
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
    bare_q = (
        "SELECT agent, agent_version, count(*), avg(score) FROM bare GROUP BY agent, agent_version"
    )
    bare_stats_s, _ = timed(lambda: bare.execute(bare_q).fetchall())

    def stats(by: list[str], window: float | None) -> int:
        tallies = store.tallies(by=by, window=window)
        return len([figures(t) for t in tallies.values()])

    stats_s, rows = timed(lambda: stats(["agent", "agent_version"], 86400.0))
    print(f"stats, bare GROUP BY count/avg: {bare_stats_s:6.3f} s")
    print(
        f"stats --by agent,agent_version --window 1d: {stats_s:6.3f} s ({rows} rows), "
        f"{stats_s / bare_stats_s:.2f}x the bare GROUP BY"
    )
    all_s, rows = timed(lambda: stats([], None))
    print(f"stats (everything, one row):               {all_s:6.3f} s")
    meta_s, rows = timed(lambda: stats(["metadata.team"], None))
    print(f"stats --by metadata.team (no rollups):     {meta_s:6.3f} s ({rows} rows)")
    odd_s, rows = timed(lambda: stats(["agent"], 1800.0))
    print(f"stats --by agent --window 30m (no rollups): {odd_s:6.3f} s ({rows} rows)")
    store.close()
    bare.close()
    size = sum(p.stat().st_size for p in workdir.glob("stef.db*"))
    print(f"store size: {size / 1e6:,.0f} MB ({size / n:,.0f} bytes per evaluation)")


if __name__ == "__main__":
    main()

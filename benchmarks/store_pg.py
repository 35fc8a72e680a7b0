"""Benchmark the PostgreSQL store: ingest rate and ``stef stats`` latency.

The same synthetic evaluations as ``benchmarks/store.py`` (3 agents x 2 versions x 2 apps
over 30 days), written into a fresh database ``stef_bench_<random>`` on the server at
``--server`` (dropped at the end unless ``--keep``), timed against baselines measured in
the same run on the same server:

* ingest: ``Store.write`` versus a bare ``COPY`` of (id, JSON) into a table with only a
  primary key (the least any store must do);
* stats: every grouping and window of ``store.STATS`` (tallies + figures) versus a bare
  ``SELECT agent, agent_version, count(*), avg(score) … GROUP BY`` over the store's own
  ``evaluations`` table;
* size: bytes per evaluation of the store's tables versus the bare table of (id, JSON),
  and the stored (compressed) documents versus their JSON.

Run: ``.venv/bin/python benchmarks/store_pg.py [--n 1000000] [--server postgresql://…]``;
``--keep --name stef_store_scale`` keeps the database, and ``--reuse`` then times the stats
over it again without ingesting.
Targets (issues 14 and 16): >= 20,000 evaluations/s ingest, every stats query under 2 s on
1 million evaluations.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from itertools import islice
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store import LAST_CPU, pool, stream, time_stats, timed

from stef.monitor.store.postgres import PostgresStore
from stef.monitor.store.sqlite import SQLiteStore


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="evaluations to store")
    ap.add_argument(
        "--server",
        default="postgresql://127.0.0.1:5432/test",
        help="a database on the server to connect to first (the benchmark makes its own)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the benchmark database")
    ap.add_argument(
        "--sqlite",
        action="store_true",
        help="also time SQLiteStore.write on the same evaluations, in this run",
    )
    ap.add_argument("--name", default=None, help="the database (default: stef_bench_<random>)")
    ap.add_argument("--reuse", action="store_true", help="time the stats over --name as it is")
    args = ap.parse_args()
    name = args.name or f"stef_bench_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(args.server, autocommit=True)
    if not args.reuse:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    url = urlsplit(args.server)._replace(path=f"/{name}").geturl()
    try:
        run(url, args.n, args.sqlite, args.reuse)
    finally:
        if not args.keep:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.close()


def run(url: str, n: int, with_sqlite: bool, reuse: bool) -> None:
    evs = pool()
    version = psycopg.connect(url).execute("SHOW server_version").fetchone()
    print(f"{n:,} synthetic evaluations, PostgreSQL {version[0] if version else '?'}, {url}")
    bare = psycopg.connect(url, autocommit=True)
    if reuse:
        store = PostgresStore(url)
        assert store.count() == n, store.count()
        print("reusing the database (no ingest timed)")
    else:
        store = ingest(url, bare, evs, n, with_sqlite)
    bare_q = (
        "SELECT agent, agent_version, count(*), avg(score) FROM evaluations "
        "GROUP BY agent, agent_version"
    )
    bare_stats_s, _ = timed(lambda: bare.execute(bare_q).fetchall())
    time_stats(store, bare_stats_s)

    def size(*tables: str) -> int:
        row = bare.execute(
            "SELECT sum(pg_total_relation_size(c)) FROM unnest(%s::regclass[]) AS c",
            (list(tables),),
        ).fetchone()
        return int(row[0]) if row and row[0] else 0

    total = size("evaluations", "evaluation_docs", "findings", "rollups")
    bare_total = size("bare")
    print(
        f"store size: {total / 1e6:,.0f} MB ({total / n:,.0f} bytes per evaluation), "
        f"{total / bare_total:.2f}x the bare table of (id, JSON) ({bare_total / n:,.0f} bytes)"
    )
    docs = bare.execute("SELECT sum(length(doc)) FROM evaluation_docs").fetchone()
    json_size = bare.execute("SELECT sum(octet_length(doc)) FROM bare").fetchone()
    if docs and json_size and docs[0] and json_size[0]:
        print(
            f"documents: {docs[0] / n:,.0f} bytes stored per evaluation for "
            f"{json_size[0] / n:,.0f} bytes of JSON ({docs[0] / json_size[0]:.2f}x)"
        )
    store.close()
    bare.close()


def ingest(
    url: str, bare: psycopg.Connection, evs: list[dict], n: int, with_sqlite: bool
) -> PostgresStore:
    """The bare COPY and ``PostgresStore.write`` (and SQLite's, with ``--sqlite``), timed."""
    gen_s, _ = timed(lambda: sum(1 for _ in stream(evs, n)))
    print(f"generating alone:        {gen_s:7.2f} s (included in both ingest timings)")
    bare.execute("CREATE TABLE bare (id TEXT PRIMARY KEY, doc TEXT NOT NULL)")
    copy_sql = "COPY bare (id, doc) FROM STDIN"

    def bare_ingest() -> None:
        it = stream(evs, n)
        while True:
            rows = [(ev["id"], orjson.dumps(ev).decode()) for ev in islice(it, 5000)]
            if not rows:
                return
            with bare.transaction(), bare.cursor() as cur, cur.copy(copy_sql) as copy:
                for row in rows:
                    copy.write_row(row)

    bare_s, _ = timed(bare_ingest)
    store = PostgresStore(url)
    store_s, stored = timed(lambda: store.write(stream(evs, n)))
    store_cpu = LAST_CPU[0]
    assert stored == n, stored
    print(f"ingest, bare COPY:        {n / bare_s:10,.0f} evaluations/s ({bare_s:.1f} s)")
    print(
        f"ingest, Store.write:      {n / store_s:10,.0f} evaluations/s ({store_s:.1f} s), "
        f"{bare_s / store_s:.2f}x the bare rate, {store_cpu:.1f} client CPU s"
    )
    if with_sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            lite = SQLiteStore(Path(tmp) / "stef.db")
            lite_s, _ = timed(lambda: lite.write(stream(evs, n)))
            lite.close()
        print(
            f"ingest, SQLiteStore.write: {n / lite_s:9,.0f} evaluations/s ({lite_s:.1f} s); "
            f"PostgreSQL/SQLite {lite_s / store_s:.2f}x"
        )
    m = min(n, 100_000)
    again_s, stored = timed(lambda: store.write(stream(evs, m)))
    print(f"re-ingest (all known):    {m / again_s:10,.0f} evaluations/s, {stored} new")
    bare.execute("VACUUM ANALYZE")
    return store


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"benchmark wall time: {time.perf_counter() - t0:.0f} s")

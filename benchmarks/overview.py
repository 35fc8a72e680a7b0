"""How long the dashboard's overview page takes over a big store.

Usage::

    .venv/bin/python benchmarks/overview.py --store postgresql://127.0.0.1/stef_overview_bench
    .venv/bin/python benchmarks/overview.py --store big.db --repeat 5

Build the store first (``benchmarks/store_pg.py --n 1000000 --name stef_overview_bench
--keep`` leaves a PostgreSQL database of a million evaluations). The page is requested
through the real app (FastAPI's test client, no token check) ``--repeat`` times; the script
prints each time, the median, and the same-run ratio to the store's plain ``count()`` of
the same evaluations (the cheapest question one can ask of it). Issue 14's target: the
overview over 1M evaluations in < 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import time

from fastapi.testclient import TestClient

from stef.service import ServiceConfig, create_app
from stef.store import open_store


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--store", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    store = open_store(args.store)
    t0 = time.perf_counter()
    n = store.count()
    count_s = time.perf_counter() - t0
    store.close()
    app = create_app(ServiceConfig(store=args.store, no_auth=True))
    times = []
    with TestClient(app) as client:
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            r = client.get("/")
            times.append(time.perf_counter() - t0)
            r.raise_for_status()
    med = statistics.median(times)
    print(f"evaluations: {n:,}; count(): {count_s:.3f} s")
    print("overview: " + ", ".join(f"{t:.3f} s" for t in times))
    print(f"overview median: {med:.3f} s = {med / count_s:.1f}x count()")


if __name__ == "__main__":
    main()

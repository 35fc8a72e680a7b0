"""The service's overhead: batches through ``POST /v1/evaluate`` against the offline rate,
and the latency one record per request adds beyond the evaluation itself.

Run: .venv/bin/python benchmarks/service.py [--records FILE] [--n 10000] [--rounds 2]

1. Offline: the records evaluated in this process the way ``stef eval`` does (each
   evaluation encoded as its JSON line), alone and with ``--store``-style writes of 500.
2. Service: ``stef serve`` started as a second process on loopback (fresh SQLite store);
   this process sends the same records in batches of 100, one request after the other,
   each stored. Rate = records / wall time; also with two requests in flight (a client
   that sends the next batch while one is evaluated). Rounds alternate, best of each.
3. Latency: one record per request at 20 requests/s (open loop, scheduled sends) for
   ``--latency-requests``; overhead = wall latency - the evaluator's own ``latency_ms``
   (client-observed), and the server's share alone (``Server-Timing`` - ``latency_ms``).
Targets (issue 14): service >= 80% of the offline rate; p99 overhead <= 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson

from stef.batch import evaluate_encoded
from stef.evaluator import Evaluator
from stef.monitor.store import open_store
from stef.rules import load_rules

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-write-token"


def records(path: Path, n: int, tag: str) -> list[dict[str, Any]]:
    base = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:  # the examples keep one broken line on purpose
            continue
        if isinstance(rec, dict):
            base.append(rec)
    out = []
    for i in range(n):
        r = dict(base[i % len(base)])
        r["id"] = f"{tag}-{i:06d}"
        out.append(r)
    return out


def offline(recs: list[dict[str, Any]], rules: Any, store_path: Path | None) -> float:
    ev = Evaluator(rules=rules)
    store = open_store(store_path) if store_path else None
    lines = [json.dumps(r) for r in recs]
    t0 = time.perf_counter()
    batch = []
    with open(os.devnull, "w", encoding="utf-8") as out:
        for enc in evaluate_encoded(ev, lines):
            out.write(enc.line + "\n")
            if store is not None:
                batch.append(enc.decoded())
                if len(batch) >= 500:
                    store.write(batch)
                    batch.clear()
    if store is not None:
        if batch:
            store.write(batch)
        store.close()
    return len(recs) / (time.perf_counter() - t0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(store: Path, rules: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "STEF_TOKENS": f"write:{TOKEN}"}
    stef = str(Path(sys.executable).parent / "stef")
    cmd = [
        stef, "serve", "--store", str(store), "--rules", str(rules),
        "--port", str(port), "--rate-limit", "0", "--log-level", "warning",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("stef serve did not become ready")


def service_rate(
    url: str, recs: list[dict[str, Any]], batch: int = 100, in_flight: int = 1
) -> float:
    """Records per second through batches of ``batch``, ``in_flight`` requests at a time."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    bodies = [orjson.dumps({"records": recs[i : i + batch]}) for i in range(0, len(recs), batch)]

    async def run() -> float:
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=300) as client:
            warm = orjson.dumps({"records": recs[:10]})
            await client.post("/v1/evaluate?store=false", content=warm)  # warm up
            queue = list(reversed(bodies))

            async def worker() -> None:
                while queue:
                    body = queue.pop()
                    r = await client.post("/v1/evaluate", content=body)
                    r.raise_for_status()
                    assert len(orjson.loads(r.content)["evaluations"]) == batch

            t0 = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(in_flight)))
            return len(recs) / (time.perf_counter() - t0)

    return asyncio.run(run())


async def latency(url: str, recs: list[dict[str, Any]], rate: float) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    totals: list[float] = []
    overheads: list[float] = []
    server_overheads: list[float] = []
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30, limits=limits) as c:
        for r in recs[:20]:  # open connections and warm up
            await c.post("/v1/evaluate?store=false", json=r)

        async def one(rec: dict[str, Any], at: float) -> None:
            await asyncio.sleep(max(0.0, at - time.perf_counter()))
            t0 = time.perf_counter()
            resp = await c.post("/v1/evaluate", json=rec)
            wall = (time.perf_counter() - t0) * 1000
            ev = orjson.loads(resp.content)["evaluations"][0]
            own = float(ev["provenance"]["latency_ms"])
            server = float(resp.headers["server-timing"].partition("dur=")[2])
            totals.append(wall)
            overheads.append(wall - own)
            server_overheads.append(server - own)

        start = time.perf_counter() + 0.5
        await asyncio.gather(*(one(r, start + i / rate) for i, r in enumerate(recs)))
    o, t, so = np.array(overheads), np.array(totals), np.array(server_overheads)
    return {
        "p50_server_overhead_ms": float(np.percentile(so, 50)),
        "p99_server_overhead_ms": float(np.percentile(so, 99)),
        "requests": len(recs),
        "p50_total_ms": float(np.percentile(t, 50)),
        "p99_total_ms": float(np.percentile(t, 99)),
        "p50_overhead_ms": float(np.percentile(o, 50)),
        "p99_overhead_ms": float(np.percentile(o, 99)),
        "max_overhead_ms": float(o.max()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=Path, default=ROOT / "examples" / "logs.jsonl")
    ap.add_argument("--rules", type=Path, default=ROOT / "examples" / "rules.json")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--latency-requests", type=int, default=400)
    ap.add_argument("--rate", type=float, default=20.0)
    args = ap.parse_args()
    rules = load_rules(args.rules)
    tmp = Path(tempfile.mkdtemp(prefix="stef-bench-service-"))
    proc, url = start_server(tmp / "served.db", args.rules)
    try:
        best = {"offline": 0.0, "offline_store": 0.0, "service": 0.0, "service_2": 0.0}
        for k in range(args.rounds):
            recs = records(args.records, args.n, f"r{k}")
            best["offline"] = max(best["offline"], offline(recs, rules, None))
            best["offline_store"] = max(
                best["offline_store"], offline(recs, rules, tmp / f"offline{k}.db")
            )
            best["service"] = max(best["service"], service_rate(url, recs))
            recs2 = records(args.records, args.n, f"q{k}")
            best["service_2"] = max(best["service_2"], service_rate(url, recs2, in_flight=2))
            print(f"round {k + 1}: " + ", ".join(f"{k_} {v:.0f}/s" for k_, v in best.items()))
        lat_recs = records(args.records, args.latency_requests, "lat")
        lat = asyncio.run(latency(url, lat_recs, args.rate))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    result = {
        "records": args.n,
        "offline_rate": round(best["offline"], 1),
        "offline_store_rate": round(best["offline_store"], 1),
        "service_rate": round(best["service"], 1),
        "service_vs_offline": round(best["service"] / best["offline"], 3),
        "service_vs_offline_store": round(best["service"] / best["offline_store"], 3),
        "service_2_in_flight_rate": round(best["service_2"], 1),
        "service_2_in_flight_vs_offline": round(best["service_2"] / best["offline"], 3),
        "latency_at_rate": args.rate,
        **{k: round(v, 2) for k, v in lat.items()},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

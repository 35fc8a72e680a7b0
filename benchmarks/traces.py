"""``/v1/traces`` ingest rate (text-to-SQL spans/s) against ``stef eval`` on the same records.

Usage::

    .venv/bin/python benchmarks/traces.py [DATA.jsonl] [--limit N] [--batch B] [--clients C]

Turns each record (``question``, ``sql``; ``../shared/data`` rows or ``examples/logs.jsonl``)
into a GenAI-convention trace of three spans (``invoke_agent`` with the question, ``chat``,
``execute_tool`` with the SQL), packs B traces per OTLP/protobuf request and POSTs them to a
real uvicorn server on loopback serving :func:`stef.interop.otlp_http.traces_router`, whose
ingest function is an :class:`~stef.interop.ingest.IngestWorker` (evaluate with the offline
judge, store in SQLite). All in this run, it reports:

- decode: protobuf → spans → records, no HTTP (calls/s);
- receiver alone: calls/s through HTTP, decoding and trace assembly into an ingest function
  that only counts (what ``/v1/traces`` itself costs);
- accepted: calls/s over the POSTs answered 200 while the worker evaluates in the same
  process (decode, trace assembly, queueing, sharing the interpreter with evaluation);
- end to end: calls/s until the last evaluation is stored;
- ``stef serve``: the same requests to :func:`stef.service.create_app` (bearer token, body
  limit, per-token app screening, metrics), first with its evaluate function replaced by one
  that only counts (what ``/v1/traces`` costs inside the service), then as it runs: every
  answer waits until its calls are evaluated and stored (calls/s until the last answer);
- ``stef eval``: the same records as JSONL through ``stef.batch.evaluate_encoded``
  (what ``stef eval`` does), evaluations/s, before and after the HTTP runs (the mean is
  the reference of the ratios: other jobs on a shared machine change its speed);
- the CPU bound: 2 cores × ``stef eval``'s CPU time per record / the worker server's per
  call (server, workers and the benchmark's clients), which the load changes less than
  the rates;

and the ratios of each rate to ``stef eval``'s, and whether ``stef serve --eval-workers`` stores
the evaluations the one-process server stores.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from stef.batch import evaluate_encoded
from stef.evaluator import Evaluator
from stef.interop.calls import records_from_spans
from stef.interop.ingest import IngestWorker
from stef.interop.otlp_http import standalone_app
from stef.interop.spans import spans_from_otlp_proto

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "nl2sql_bugs.jsonl"
DEFAULT = SHARED if SHARED.exists() else ROOT / "examples" / "logs.jsonl"


def _kv(key: str, value: str) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(string_value=value))


def _load(path: Path, limit: int) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and isinstance(r.get("question"), str) and r.get("sql"):
            rows.append(r)
    while len(rows) < limit:
        rows = rows + rows
    return rows[:limit]


def _request(rows: list[dict[str, Any]], start: int) -> bytes:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend([_kv("service.name", "bench-bot"), _kv("service.version", "1")])
    spans = rs.scope_spans.add().spans
    for i, r in enumerate(rows):
        tid = (start + i + 1).to_bytes(16, "big")
        msg = json.dumps([{"role": "user", "parts": [{"type": "text", "content": r["question"]}]}])
        for n, (name, attrs) in enumerate(
            [
                (
                    "invoke_agent",
                    [
                        _kv("gen_ai.operation.name", "invoke_agent"),
                        _kv("gen_ai.agent.name", "bench-bot"),
                        _kv("gen_ai.agent.version", "1"),
                        _kv("gen_ai.input.messages", msg),
                    ],
                ),
                ("chat", [_kv("gen_ai.operation.name", "chat"), _kv("gen_ai.input.messages", msg)]),
                (
                    "execute_tool",
                    [
                        _kv("gen_ai.operation.name", "execute_tool"),
                        _kv("gen_ai.tool.call.arguments", json.dumps({"sql": r["sql"]})),
                    ],
                ),
            ]
        ):
            s = spans.add()
            s.trace_id, s.span_id, s.name = tid, (n + 1).to_bytes(8, "big"), name
            s.start_time_unix_nano = 1_764_583_200_000_000_000 + n
            if n:
                s.parent_span_id = (1).to_bytes(8, "big")
            s.attributes.extend(attrs)
    return req.SerializeToString()


class LiveServer:
    """uvicorn serving ``app`` on a free loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        import socket
        import threading

        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})

    def __enter__(self) -> LiveServer:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def _post_all(url: str, bodies: list[bytes], clients: int) -> float:
    """Seconds to POST every body (``clients`` at a time); every answer must be a 200."""
    headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(timeout=600) as client:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            codes = list(
                pool.map(
                    lambda b: client.post(url + "/v1/traces", content=b, headers=headers),
                    bodies,
                )
            )
        took = time.perf_counter() - t0
    assert [c.status_code for c in codes] == [200] * len(bodies), codes[:3]
    return took


TOKEN = "bench-write-token"


def _serve_rate(
    bodies: list[bytes], n: int, clients: int, workers: int | None
) -> tuple[float, float, list[dict[str, Any]]]:
    """calls/s through ``stef serve``'s app with ``eval_workers=workers`` (``None``: its
    store function replaced by a counter), the CPU seconds of this process and its workers
    meanwhile, and the evaluations stored (by id)."""
    from stef.monitor.store import open_store
    from stef.service import ServiceConfig, create_app, parse_tokens

    received = [0]

    async def count(records: list[dict[str, Any]]) -> bool:
        received[0] += len(records)
        return True

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "stef.db"
        config = ServiceConfig(
            store=db,
            tokens=parse_tokens(f"write:{TOKEN}"),
            rate_limit=None,
            eval_workers=workers or 0,
        )
        app = create_app(config)
        if workers is None:
            app.state.store_calls = count
        before = _cpu()
        with LiveServer(app) as srv:
            took = _post_all(srv.url, bodies, clients)
        cpu = _cpu() - before  # the app's lifespan closed the workers: their time counts
        store = open_store(db)
        stored = sorted(store.query(), key=lambda e: e["id"])
        store.close()
    if workers is None:
        assert received[0] == n, received
    else:
        assert len(stored) == n, (len(stored), n)
    return n / took, cpu, stored


def _cpu() -> float:
    """CPU seconds of this process (server and clients) and of its reaped children."""
    import resource

    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


def _timeless(evaluations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in evaluations:
        e = dict(e)
        e.pop("evaluated_at", None)
        e["provenance"] = {k: v for k, v in e["provenance"].items() if k != "latency_ms"}
        out.append(e)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("data", nargs="?", default=str(DEFAULT))
    ap.add_argument("--limit", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=100, help="traces per OTLP request")
    ap.add_argument("--clients", type=int, default=2, help="concurrent exporters")
    ap.add_argument(
        "--eval-workers", type=int, default=2, help="stef serve --eval-workers to compare"
    )
    args = ap.parse_args()

    rows = _load(Path(args.data), args.limit)
    bodies = [_request(rows[i : i + args.batch], i) for i in range(0, len(rows), args.batch)]
    n = len(rows)
    print(
        f"{n} text-to-SQL calls ({3 * n} spans) from {args.data}, "
        f"{len(bodies)} requests of {args.batch} traces"
    )

    t0 = time.perf_counter()
    found = sum(len(records_from_spans(spans_from_otlp_proto(b))) for b in bodies)
    decode = found / (time.perf_counter() - t0)
    assert found == n, (found, n)

    received = [0]

    def count(records: list[dict[str, Any]]) -> bool:
        received[0] += len(records)
        return True

    with LiveServer(standalone_app(count)) as srv, httpx.Client() as client:
        headers = {"Content-Type": "application/x-protobuf"}
        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            list(
                pool.map(
                    lambda b: client.post(srv.url + "/v1/traces", content=b, headers=headers),
                    bodies,
                )
            )
        receiver = n / (time.perf_counter() - t0)
    assert received[0] == n, received

    ev = Evaluator()
    ev.evaluate(question="warm up", sql="SELECT 1")
    lines = [
        json.dumps({"id": f"r{i}", "question": r["question"], "sql": r["sql"]})
        for i, r in enumerate(rows)
    ]
    first = _stef_eval(ev, lines)  # once before and once after the HTTP runs (see below)
    standalone = {w: _standalone(ev, bodies, n, args.clients, w) for w in (0, args.eval_workers)}

    serve_alone, _, _ = _serve_rate(bodies, n, args.clients, None)
    serve = {w: _serve_rate(bodies, n, args.clients, w) for w in (0, args.eval_workers)}
    same = _timeless(serve[0][2]) == _timeless(serve[args.eval_workers][2])

    last = _stef_eval(ev, lines)
    # other jobs on a shared machine change the speed between runs: the mean of the two
    cli, cli_cpu = (first[0] + last[0]) / 2, (first[1] + last[1]) / 2
    print(f"stef eval before / after the HTTP runs: {first[0]:,.0f} / {last[0]:,.0f} evaluations/s")

    w = args.eval_workers
    rows_out = [
        ("decode (protobuf -> records, no HTTP)", decode, "calls/s", None),
        ("/v1/traces receiver alone (no eval)", receiver, "calls/s", None),
        ("/v1/traces accepted while evaluating", standalone[0][0], "calls/s", None),
        ("/v1/traces end to end (stored)", standalone[0][1], "calls/s", None),
        (f"  the same, IngestWorker workers={w}", standalone[w][1], "calls/s", None),
        ("stef serve /v1/traces, no eval", serve_alone, "calls/s", None),
        ("stef serve /v1/traces end to end", serve[0][0], "calls/s", serve[0][1]),
        (f"  the same, --eval-workers {w}", serve[w][0], "calls/s", serve[w][1]),
        ("stef eval, same records", cli, "evaluations/s", cli_cpu),
    ]
    for label, rate, unit, cpu in rows_out:
        spans = f" ({3 * rate:,.0f} spans/s)" if unit == "calls/s" else ""
        cpu_s = f"  {cpu:5.2f} CPU s" if cpu is not None else ""
        print(f"{label:40s} {rate:10,.0f} {unit}{spans}{cpu_s}")
    for label, rate in (
        ("receiver alone", receiver),
        ("accepted", standalone[0][0]),
        ("end to end", standalone[0][1]),
        (f"end to end, IngestWorker workers={w}", standalone[w][1]),
        ("stef serve no eval", serve_alone),
        ("stef serve end to end", serve[0][0]),
        (f"stef serve end to end, --eval-workers {w}", serve[w][0]),
    ):
        print(f"ratio {label} / stef eval: {rate / cli:6.2f}")
    print(
        f"--eval-workers {w} / in-process, stef serve end to end: {serve[w][0] / serve[0][0]:.2f}x"
    )
    print(f"stored evaluations identical with --eval-workers {w} and in-process: {same}")
    ceiling = 2 * cli_cpu / serve[w][1]
    print(
        f"CPU bound on 2 cores, --eval-workers {w} / stef eval: {ceiling:.2f}x "
        f"({serve[w][1] / n * 1e3:.2f} CPU ms a call served, {cli_cpu / n * 1e3:.2f} evaluated)"
    )
    e2e = serve[w][0]
    print(
        f"stef serve end to end >= 2,000 text-to-SQL calls/s: {'yes' if e2e >= 2000 else 'no'} "
        f"({e2e:,.0f}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)"
    )


def _stef_eval(ev: Evaluator, lines: list[str]) -> tuple[float, float]:
    """``stef eval``'s path on the JSONL lines: evaluations/s and CPU seconds."""
    t0, c0 = time.perf_counter(), _cpu()
    m = sum(1 for _ in evaluate_encoded(ev, lines))
    return m / (time.perf_counter() - t0), _cpu() - c0


def _standalone(
    ev: Evaluator, bodies: list[bytes], n: int, clients: int, workers: int
) -> tuple[float, float]:
    """calls/s accepted and stored through ``standalone_app(IngestWorker(...).submit)``."""
    with tempfile.TemporaryDirectory() as tmp:
        worker = IngestWorker(ev, Path(tmp) / "stef.db", max_queue=10 * n, workers=workers)
        with LiveServer(standalone_app(worker.submit)) as srv, httpx.Client() as client:
            headers = {"Content-Type": "application/x-protobuf"}

            def post(body: bytes) -> int:
                return client.post(
                    srv.url + "/v1/traces", content=body, headers=headers
                ).status_code

            t0 = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                codes = list(pool.map(post, bodies))
            t_accept = time.perf_counter() - t0
            assert worker.wait_idle(3600)
            t_all = time.perf_counter() - t0
        stats = worker.close()
    assert codes.count(200) == len(bodies), codes
    assert stats["stored"] == n, stats
    return n / t_accept, n / t_all


if __name__ == "__main__":
    main()

"""What the service does with records and evaluations, apart from HTTP: evaluate with the
rules of each record's app, store, count in the metrics.

The store is opened once per worker thread (:class:`StoreHandle`): SQLite connections
belong to the thread that opened them, and every store call of the service runs in the
threadpool, off the event loop. A store that declares ``thread_safe = True`` is shared.

With ``ServiceConfig.eval_workers`` ≥ 1 (and offline judging) records are evaluated and
stored by that many worker processes (:class:`stef.interop.ingest.EvalPool`), each with its
own copy of the evaluators and its own store connection; this process keeps HTTP and
counts what comes back (:meth:`Engine.submit`, :meth:`Engine.account`).

>>> import tempfile, pathlib
>>> engine = Engine(ServiceConfig(store=pathlib.Path(tempfile.mkdtemp()) / "s.db"))
>>> [e["status"] for e in engine.evaluate_and_store(
...     [{"id": "r1", "question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}])]
['ok']
>>> engine.store().existing_ids(["r1"])
{'r1'}
>>> engine.close()
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stef.evaluator import Evaluator
from stef.interop.ingest import Done, EvalPool, offline
from stef.judges.base import Judge
from stef.monitor.store import Store, check_evaluation, open_store
from stef.monitor.store.sqlite import record_time
from stef.rules import Rules
from stef.service.metrics import Metrics


@dataclass
class ServiceConfig:
    """Everything :func:`stef.service.create_app` needs.

    ``rules`` applies to records of any app without its own entry in ``app_rules``.
    ``tokens`` empty and ``no_auth`` false: the app refuses to be built.
    """

    store: str | Path
    rules: Rules | None = None
    app_rules: dict[str, Rules] = field(default_factory=dict)
    judge: Judge | None = None
    nl_extractor: Any = None
    tokens: Sequence[Any] = ()
    no_auth: bool = False
    max_body_bytes: int = 10 * 1024 * 1024
    max_batch: int = 1000
    rate_limit: float | None = 50.0
    rate_burst: int | None = None
    cors_origins: Sequence[str] = ()
    title: str = "STEF"
    #: Serve ``POST /v1/traces`` (OTLP/HTTP); ``trace_map`` says which span attribute holds
    #: which record field (:class:`stef.interop.calls.TraceMap`), ``traces_wait`` how long a
    #: trace waits for its root span.
    traces: bool = True
    trace_map: Any = None
    traces_wait: float = 10.0
    #: Sinks (:mod:`stef.interop.sinks`) every evaluation the service makes is delivered to,
    #: in the background (retried ``export_attempts`` times with exponential backoff from
    #: ``export_backoff`` seconds); ``export_close_timeout`` bounds the flush at shutdown.
    exports: Sequence[Any] = ()
    export_attempts: int = 5
    export_backoff: float = 0.5
    export_close_timeout: float = 10.0
    #: Worker processes evaluating and storing records (0: in this process). Used with an
    #: offline judge and extractor only; network judges are awaited here, concurrently.
    #: ``record_timeout``: seconds one record may take in a worker (then status ``timeout``).
    eval_workers: int = 0
    record_timeout: float | None = 5.0


class StoreHandle:
    """One store per thread (or one shared store when it is thread-safe)."""

    def __init__(self, target: str | Path, opener: Callable[[str | Path], Store] = open_store):
        self.target = target
        self.opener = opener
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[Store] = []
        first = opener(target)  # opens, creates and migrates now: bad targets fail at start
        self._shared = first if getattr(first, "thread_safe", False) else None
        self._local.store = first
        self._all.append(first)

    def get(self) -> Store:
        if self._shared is not None:
            return self._shared
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            store = self.opener(self.target)
            self._local.store = store
            with self._lock:
                self._all.append(store)
        return store

    def close(self) -> None:
        with self._lock:
            stores, self._all = self._all, []
        for store in stores:
            # a connection of another thread: SQLite refuses to close it here, harmless
            with contextlib.suppress(Exception):
                store.close()


class Engine:
    """Evaluators (one per app with rules), the store and the metrics."""

    def __init__(self, config: ServiceConfig, metrics: Metrics | None = None) -> None:
        self.config = config
        self.metrics = metrics or Metrics()
        self.default = Evaluator(
            rules=config.rules, judge=config.judge, nl_extractor=config.nl_extractor
        )
        self.by_app = {
            app: Evaluator(rules=rules, judge=self.default.judge, nl_extractor=config.nl_extractor)
            for app, rules in config.app_rules.items()
        }
        self.stores = StoreHandle(config.store)
        self.started = time.time()
        self.pool = self._pool()
        self.deliveries = _deliveries(config)

    def _pool(self) -> EvalPool | None:
        n = self.config.eval_workers
        if n < 1 or not all(offline(ev) for ev in (self.default, *self.by_app.values())):
            return None
        return EvalPool(
            self.evaluator_for,
            self.config.store,
            workers=n,
            deadline=self.config.record_timeout,
        )

    def store(self) -> Store:
        return self.stores.get()

    def evaluator_for(self, record: Any) -> Evaluator:
        app = record.get("app") if isinstance(record, Mapping) else None
        return self.by_app.get(app, self.default) if isinstance(app, str) else self.default

    def rules_of(self, app: str | None) -> Rules:
        return (self.by_app.get(app, self.default) if app else self.default).rules

    def evaluate(self, records: Sequence[Any]) -> list[dict[str, Any]]:
        """Evaluations of ``records`` in order (never raises for a bad record)."""
        out = []
        for record in records:
            ev = self.evaluator_for(record).evaluate_record(record)
            self.metrics.observe_evaluation(ev)
            out.append(ev)
        return out

    def write(self, evaluations: Sequence[Mapping[str, Any]]) -> int:
        """Store evaluations (idempotent by id); how many were new."""
        started = time.perf_counter()
        new = self.store().write(evaluations)
        self.metrics.store_write.observe(time.perf_counter() - started)
        return new

    def evaluate_and_store(
        self, records: Sequence[Any], store: bool = True
    ) -> list[dict[str, Any]]:
        """Evaluate ``records`` and (unless ``store`` is false) keep them; the function
        other routers (``/v1/traces``) call through ``app.state.evaluate_records``."""
        if self.pool is not None:
            return self.account(self.pool.submit(records, store=store, full=True).result())
        evaluations = self.evaluate(records)
        if store and evaluations:
            self.write(evaluations)
        self._deliver(evaluations)
        return evaluations

    def submit(self, records: Sequence[Any]) -> Future[list[Done]]:
        """Records to the worker processes (``eval_workers``): a future of what they
        stored, whole evaluations when ``--export`` needs them, else their briefs; pass it
        to :meth:`account`."""
        assert self.pool is not None
        return self.pool.submit(records, full=bool(self.deliveries))

    def account(self, results: list[Done]) -> list[dict[str, Any]]:
        """Count what the workers evaluated (metrics; whole evaluations to ``--export``)."""
        out = []
        for ev, took in results:
            if took is not None:
                self.metrics.store_write.observe(took)
            self.metrics.observe_evaluation(ev)
            out.append(ev)
        self._deliver(out)
        return out

    def _deliver(self, evaluations: Sequence[Mapping[str, Any]]) -> None:
        for delivery in self.deliveries:  # queues only: never blocks, never raises
            for ev in evaluations:
                delivery.submit(ev)

    def ingest(self, evaluations: Sequence[Mapping[str, Any]]) -> int:
        """Store evaluations made elsewhere (already checked by :func:`ingest_problem`)."""
        for ev in evaluations:
            self.metrics.ingested.labels(str(ev.get("app") or "")).inc()
        return self.write(evaluations)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
        for delivery in self.deliveries:
            delivery.close(self.config.export_close_timeout)
        self.stores.close()

    def ready(self) -> tuple[bool, str]:
        """Whether the store answers (and so is migrated: opening migrates)."""
        try:
            self.store().count({"agent": "__stef_readyz__"})  # one index probe
        except Exception as exc:
            return False, f"store not reachable: {type(exc).__name__}: {exc}"
        return True, "ok"


def _deliveries(config: ServiceConfig) -> list[Any]:
    if not config.exports:
        return []
    from stef.interop.delivery import Delivery

    return [
        Delivery(sink, max_attempts=config.export_attempts, backoff=config.export_backoff)
        for sink in config.exports
    ]


def ingest_problem(ev: Any) -> str | None:
    """Why ``ev`` cannot be ingested, or ``None``.

    >>> ingest_problem({"id": "a", "status": "ok", "score": 50, "timestamp": "yesterday"})
    "field 'timestamp' is not an ISO 8601 time: 'yesterday'"
    """
    problem = check_evaluation(ev)
    if problem is None:
        try:
            record_time(ev)
        except ValueError as exc:
            problem = str(exc)
    return problem

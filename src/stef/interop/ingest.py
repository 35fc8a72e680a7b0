"""Evaluate and store records off the request path: a bounded queue and one worker thread.

:meth:`IngestWorker.submit` is the function ``/v1/traces`` (and the SDK's receiver) hands
records to: it returns at once, ``False`` when the queue is full (the caller answers 503
with ``Retry-After``). One thread owns the store (SQLite connections stay on the thread that
opened them), evaluates each batch with the evaluator and writes it; each stored evaluation
is then passed to ``on_evaluation`` (e.g. :meth:`stef.interop.delivery.Delivery.submit`).
``stef serve`` has its own evaluate-and-store function; this worker is what the interop
package uses where no service is running (tests, the benchmark, ``stef import``-free setups).

With ``workers`` ≥ 1 the evaluating moves to that many worker processes (:class:`EvalPool`,
which ``stef serve --eval-workers`` uses too): each evaluates a chunk of records and stores
it through its own store connection, and only a small summary of each evaluation comes back,
so this process is left with HTTP, decoding and dispatch.

>>> import tempfile, pathlib
>>> from stef.evaluator import Evaluator
>>> w = IngestWorker(Evaluator(), pathlib.Path(tempfile.mkdtemp()) / "s.db")
>>> w.submit([{"id": "a", "question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}])
True
>>> w.close()["stored"]
1
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from stef.pool import DEFAULT_DEADLINE, SharedPool

log = logging.getLogger("stef.interop")


#: What a worker hands back for one record: the evaluation (whole, or its
#: :func:`metrics_brief`) and, for the first record of each chunk it stored, the seconds the
#: store write took.
Done = tuple[dict[str, Any], float | None]


def metrics_brief(evaluation: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an evaluation that counting it reads (the service's metrics, the
    ingest counts): a few scalars instead of the whole evaluation.

    >>> metrics_brief({"id": "a", "status": "ok", "score": 90.0, "findings": [],
    ...                "provenance": {"latency_ms": 1.5, "judge": "offline"}})
    {'id': 'a', 'status': 'ok', 'score': 90.0, 'provenance': {'latency_ms': 1.5}}
    """
    out = {k: evaluation[k] for k in _BRIEF if k in evaluation}
    prov = evaluation.get("provenance") or {}
    kept = {k: prov[k] for k in _BRIEF_PROV if k in prov}
    if kept:
        out["provenance"] = kept
    return out


_BRIEF = ("id", "agent", "agent_version", "app", "status", "band", "score")
_BRIEF_PROV = ("latency_ms", "usage", "nl_extractor_usage")


def offline(evaluator: Any) -> bool:
    """Can ``evaluator`` run in worker processes? Not with an LLM extractor or a network
    judge (they hold one client each, and run concurrently here instead)."""
    if getattr(evaluator, "asks_llm_for_specs", False):
        return False
    return int(getattr(evaluator.judge, "concurrency", 1) or 1) <= 1


class EvalPool:
    """Records evaluated *and stored* by ``workers`` processes.

    ``evaluator_for(record)`` picks the evaluator of a record (it runs in the workers:
    their copies of the evaluators, made by fork). Each worker opens ``store_target`` once
    and writes each chunk it evaluated in one transaction (``replace`` as for
    :meth:`stef.monitor.store.Store.write`). :meth:`submit` answers once every record is
    stored; a record whose worker dies or runs past ``deadline`` seconds gets its error
    evaluation (status ``internal_error`` or ``timeout``), stored from here; a store
    failure fails the submission (:class:`stef.pool.PoolError`).

    >>> import tempfile, pathlib
    >>> from stef.evaluator import Evaluator
    >>> ev = Evaluator()
    >>> pool = EvalPool(lambda r: ev, pathlib.Path(tempfile.mkdtemp()) / "s.db", workers=2)
    >>> rec = {"id": "a", "question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}
    >>> [(brief["id"], brief["status"]) for brief, _ in pool.submit([rec]).result()]
    [('a', 'ok')]
    >>> pool.close()
    """

    def __init__(
        self,
        evaluator_for: Callable[[Any], Any],
        store_target: str | Path,
        *,
        workers: int = 2,
        deadline: float | None = DEFAULT_DEADLINE,
        replace: bool = False,
        chunk: int = 16,
    ) -> None:
        from stef.monitor.store import open_store

        self.evaluator_for = evaluator_for
        self.store_target = store_target
        self.replace = replace
        self._store: Any = None  # each worker's own, opened on its first chunk
        self._opener = open_store
        self._parent_store: Any = None
        self._parent_lock = threading.Lock()
        # one writer at a time, across the workers: a worker waiting here wakes as soon as
        # the other is done, where SQLite's busy handler would sleep 1, 2, 5 … 100 ms
        self._write_lock = mp.get_context("fork").Lock()
        self.pool: SharedPool[Done] = SharedPool(
            self._work, self._fallback, workers=workers, deadline=deadline, chunk=chunk
        )

    def submit(
        self, records: Sequence[Any], *, store: bool = True, full: bool = False
    ) -> Future[list[Done]]:
        """Evaluate (and unless ``store`` is false, store) ``records``; a future of one
        :data:`Done` per record, in order: the whole evaluation when ``full``, else its
        :func:`metrics_brief`."""
        return self.pool.submit((r, store, full) for r in records)

    def _work(self, items: list[tuple[Any, bool, bool]]) -> list[Done]:
        """In a worker: evaluate the chunk, store what is to be stored, answer briefly."""
        evaluations = []
        for record, _, _ in items:
            ev = self.evaluator_for(record)
            try:
                evaluations.append(ev.evaluate_record(record))
            except Exception as exc:  # evaluate_record never raises; if it does, one pays
                msg = f"internal error in STEF ({type(exc).__name__}: {exc})"[:500]
                evaluations.append(ev.error_evaluation(record, "internal_error", msg))
        keep = [v for v, (_, store, _) in zip(evaluations, items, strict=True) if store]
        took = None
        if keep:
            if self._store is None:
                self._store = self._opener(self.store_target)
            with self._write_lock:
                started = time.perf_counter()
                self._store.write(keep, replace=self.replace)
                took = time.perf_counter() - started
        out: list[Done] = []
        for v, (_, _, full) in zip(evaluations, items, strict=True):
            out.append((v if full else metrics_brief(v), took))
            took = None
        return out

    def _fallback(self, item: tuple[Any, bool, bool], status: str, message: str) -> Done:
        """Here: the error evaluation of a record that cost its worker, stored."""
        record, store, full = item
        ev = self.evaluator_for(record).error_evaluation(record, status, message)
        took = None
        if store:
            with self._parent_lock:
                if self._parent_store is None:
                    self._parent_store = self._opener(self.store_target)
                with self._write_lock:
                    started = time.perf_counter()
                    self._parent_store.write([ev], replace=self.replace)
                    took = time.perf_counter() - started
        return (ev if full else metrics_brief(ev), took)

    @property
    def restarts(self) -> int:
        """Workers replaced so far (one died or ran past the deadline)."""
        return self.pool.restarts

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        self.pool.close()
        with self._parent_lock:
            if self._parent_store is not None:
                # opened on the pool's thread: SQLite may refuse to close it from this one
                with contextlib.suppress(Exception):
                    self._parent_store.close()
                self._parent_store = None


class IngestWorker:
    """Records in, evaluations stored, in a background thread."""

    def __init__(
        self,
        evaluator: Any,
        store_target: str | Path,
        *,
        max_queue: int = 100_000,
        batch: int = 500,
        on_evaluation: Callable[[Mapping[str, Any]], Any] | None = None,
        workers: int = 0,
        deadline: float | None = DEFAULT_DEADLINE,
    ) -> None:
        from stef.monitor.store import open_store

        open_store(store_target).close()  # fail now, in the caller, on a bad store target
        self.evaluator = evaluator
        self.store_target = store_target
        self.batch = batch
        self.on_evaluation = on_evaluation
        #: ``workers`` ≥ 1 (and an offline evaluator): evaluated and stored in processes.
        self.pool = (
            EvalPool(
                lambda r: evaluator, store_target, workers=workers, deadline=deadline, replace=True
            )
            if workers >= 1 and offline(evaluator)
            else None
        )
        self._in_flight = threading.Semaphore(2)  # pool jobs at once: one evaluating, one queued
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(maxsize=max_queue)
        self._counts = {"received": 0, "stored": 0, "rejected": 0, "errors": 0}
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._thread = threading.Thread(target=self._run, name="stef-ingest", daemon=True)
        self._thread.start()

    def submit(self, records: Sequence[dict[str, Any]]) -> bool:
        """Queue records for evaluation; ``False`` (nothing queued) when the queue is full."""
        with self._lock:
            if self._queue.maxsize - self._queue.qsize() < len(records):
                self._counts["rejected"] += len(records)
                return False
            self._counts["received"] += len(records)
            self._pending += len(records)
        for r in records:
            self._queue.put(r)
        return True

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until every queued record is stored (``False`` on timeout)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {**self._counts, "pending": self._pending}

    def close(self, timeout: float = 60.0) -> dict[str, int]:
        """Store what is queued, stop the thread, return the counts."""
        self._queue.put(None)
        self._thread.join(timeout)
        if self.pool is not None:
            self.pool.close()
        return self.stats()

    def _run(self) -> None:
        from stef.monitor.store import open_store

        store = open_store(self.store_target)
        try:
            stop = False
            while not stop:
                items = [self._queue.get()]
                while len(items) < self.batch:
                    try:
                        items.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                stop = None in items
                records = [r for r in items if r is not None]
                if self.pool is not None:
                    self._dispatch(records)
                else:
                    self._process(store, records)
            for _ in range(2):  # the last jobs stored
                self._in_flight.acquire()
        finally:
            store.close()

    def _dispatch(self, records: list[dict[str, Any]]) -> None:
        """Hand a batch to the worker processes; counted when they have stored it."""
        if not records:
            return
        assert self.pool is not None
        self._in_flight.acquire()
        try:
            future = self.pool.submit(records, full=self.on_evaluation is not None)
        except Exception:
            self._in_flight.release()
            self._finish(records, [], failed=True)
            return

        def done(f: Future[list[Any]]) -> None:
            self._in_flight.release()
            try:
                results = f.result()
            except Exception:
                log.exception("stef ingest: could not evaluate or store %d record(s)", len(records))
                self._finish(records, [], failed=True)
            else:
                self._finish(records, [ev for ev, _ in results], failed=False)

        future.add_done_callback(done)

    def _process(self, store: Any, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        try:
            evaluations = [self.evaluator.evaluate_record(r) for r in records]
            store.write(evaluations, replace=True)
            stored = len(evaluations)
        except Exception:  # a store failure must not kill the worker; it is counted
            log.exception("stef ingest: could not evaluate or store %d record(s)", len(records))
            evaluations, stored = [], 0
        self._finish(records, evaluations, failed=stored == 0)

    def _finish(self, records: list[dict[str, Any]], evaluations: list[Any], failed: bool) -> None:
        """Count a batch stored (or failed) and pass its evaluations on."""
        if failed:
            with self._lock:
                self._counts["errors"] += len(records)
        hand = self.on_evaluation
        if hand is not None:
            for ev in evaluations:
                try:
                    hand(ev)
                except Exception:
                    log.exception("stef ingest: on_evaluation failed")
        with self._idle:
            self._counts["stored"] += 0 if failed else len(records)
            self._pending -= len(records)
            self._idle.notify_all()

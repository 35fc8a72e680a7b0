"""Evaluate and store records off the request path: a bounded queue and one worker thread.

:meth:`IngestWorker.submit` is the function ``/v1/traces`` (and the SDK's receiver) hands
records to: it returns at once, ``False`` when the queue is full (the caller answers 503
with ``Retry-After``). One thread owns the store (SQLite connections stay on the thread that
opened them), evaluates each batch with the evaluator and writes it; each stored evaluation
is then passed to ``on_evaluation`` (e.g. :meth:`stef.interop.delivery.Delivery.submit`).
``stef serve`` has its own evaluate-and-store function; this worker is what the interop
package uses where no service is running (tests, the benchmark, ``stef import``-free setups).

>>> import tempfile, pathlib
>>> from stef.evaluator import Evaluator
>>> w = IngestWorker(Evaluator(), pathlib.Path(tempfile.mkdtemp()) / "s.db")
>>> w.submit([{"id": "a", "question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}])
True
>>> w.close()["stored"]
1
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("stef.interop")


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
    ) -> None:
        from stef.monitor.store import open_store

        open_store(store_target).close()  # fail now, in the caller, on a bad store target
        self.evaluator = evaluator
        self.store_target = store_target
        self.batch = batch
        self.on_evaluation = on_evaluation
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
                self._process(store, [r for r in items if r is not None])
        finally:
            store.close()

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
            with self._lock:
                self._counts["errors"] += len(records)
        for ev in evaluations:
            if self.on_evaluation is not None:
                try:
                    self.on_evaluation(ev)
                except Exception:
                    log.exception("stef ingest: on_evaluation failed")
        with self._idle:
            self._counts["stored"] += stored
            self._pending -= len(records)
            self._idle.notify_all()

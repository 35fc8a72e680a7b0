"""Deliver evaluation results to a sink in the background: batched, retried, counted.

:meth:`Delivery.submit` never blocks and never raises: it puts the evaluation on a bounded
queue (a full queue drops it and counts the drop). One background thread takes batches of
up to ``sink.max_batch``, sends them, and retries a 429, a 5xx or a connection failure with
exponential backoff (honouring ``Retry-After``) up to ``max_attempts`` times; anything else
(a 4xx) fails at once. :meth:`Delivery.stats` reports the counts; :meth:`Delivery.close`
flushes within a bounded time. Credentials are added to each request when it is sent and
appear in no log line, no exception text and no count.

>>> from stef.interop.sinks import PhoenixSink
>>> d = Delivery(PhoenixSink("http://127.0.0.1:9"), max_attempts=1, start=False)
>>> d.submit({"id": "x", "metadata": {}})  # no span to annotate: skipped, not queued
False
>>> d.stats()["skipped"]
1
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from stef.interop.sinks import LocalSink, Outgoing, Sink

log = logging.getLogger("stef.interop")


def retryable(status: int) -> bool:
    """Whether an HTTP status asks for a retry (408, 429, any 5xx)."""
    return status in (408, 429) or status >= 500


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delta seconds or an HTTP date).

    >>> retry_after("3"), retry_after(None), retry_after("soon")
    (3.0, None, None)
    """
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class Delivery:
    """A background sender of evaluations to one sink."""

    def __init__(
        self,
        sink: Sink,
        *,
        max_queue: int = 10_000,
        flush_interval: float = 1.0,
        max_attempts: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        timeout: float = 10.0,
        start: bool = True,
    ) -> None:
        self.sink = sink
        self.flush_interval = flush_interval
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._queue: queue.Queue[Mapping[str, Any]] = queue.Queue(maxsize=max_queue)
        self._client = httpx.Client(timeout=timeout)
        self._lock = threading.Lock()
        self._counts = {
            "queued": 0,
            "sent": 0,
            "failed": 0,
            "dropped": 0,
            "skipped": 0,
            "retries": 0,
            "requests": 0,
        }
        self._last_error: str | None = None
        self._stop = threading.Event()
        #: set when :meth:`close` runs out of time: retries stop waiting and give up
        self._abort = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"stef-{sink.name}", daemon=True)
        if start:
            self._thread.start()

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._counts[key] += n

    def submit(self, evaluation: Mapping[str, Any]) -> bool:
        """Queue one evaluation; ``False`` when it was skipped or dropped (never raises)."""
        try:
            if not self.sink.accepts(evaluation):
                self._count("skipped")
                return False
            self._queue.put_nowait(evaluation)
        except queue.Full:
            self._count("dropped")
            return False
        except Exception:  # a malformed evaluation must not reach the caller
            self._count("skipped")
            return False
        self._count("queued")
        return True

    def stats(self) -> dict[str, Any]:
        """Counts so far: queued, sent, failed, dropped, skipped, retries, requests, pending."""
        with self._lock:
            out: dict[str, Any] = dict(self._counts)
        out["pending"] = self._queue.qsize()
        out["last_error"] = self._last_error
        return out

    def close(self, timeout: float = 30.0) -> dict[str, Any]:
        """Send what is queued (waiting at most ``timeout`` seconds), stop, return the stats."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        if self._thread.is_alive():
            # out of time: stop retrying; the daemon thread ends after its current request
            self._abort.set()
        else:
            self._client.close()
        return self.stats()

    def run_once(self) -> None:
        """Send everything queued now, in the calling thread (for tools and tests)."""
        while not self._queue.empty():
            self._send_batch(self._take(block=False))

    # --- the background thread -----------------------------------------------------------

    def _take(self, block: bool) -> list[Mapping[str, Any]]:
        batch: list[Mapping[str, Any]] = []
        try:
            batch.append(
                self._queue.get(timeout=self.flush_interval) if block else self._queue.get_nowait()
            )
        except queue.Empty:
            return batch
        while len(batch) < self.sink.max_batch:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _run(self) -> None:
        while not (self._stop.is_set() and self._queue.empty()):
            batch = self._take(block=not self._stop.is_set())
            if batch:
                self._send_batch(batch)

    def _send_batch(self, batch: list[Mapping[str, Any]]) -> None:
        if not batch:
            return
        if isinstance(self.sink, LocalSink):
            try:
                self.sink.write(batch)
                self._count("sent", len(batch))
            except Exception as e:
                self._fail(len(batch), f"could not write: {type(e).__name__}: {e}")
            return
        try:
            requests = self.sink.build(batch)
        except Exception as e:  # a bad evaluation: counted, never raised
            self._fail(
                len(batch), f"could not build a {self.sink.name} request: {type(e).__name__}"
            )
            return
        for req in requests:
            if self._send(req):
                self._count("sent", req.items)
            else:
                self._count("failed", req.items)

    def _fail(self, n: int, message: str) -> None:
        self._count("failed", n)
        self._last_error = message
        log.warning("stef export to %s: %s", self.sink.name, message)

    def _send(self, req: Outgoing) -> bool:
        headers = {"Content-Type": req.content_type, **req.headers, **self.sink.auth_headers()}
        for attempt in range(1, self.max_attempts + 1):
            self._count("requests")
            wait = None
            try:
                resp = self._client.post(req.url, content=req.body, headers=headers)
            except httpx.HTTPError as e:
                problem = f"{type(e).__name__} from {_where(req.url)}"
            else:
                if resp.status_code < 300:
                    return True
                problem = f"HTTP {resp.status_code} from {_where(req.url)}"
                if not retryable(resp.status_code):
                    self._last_error = problem
                    log.warning("stef export to %s failed: %s", self.sink.name, problem)
                    return False
                wait = retry_after(resp.headers.get("Retry-After"))
            if attempt == self.max_attempts:
                break
            if wait is None:
                wait = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
                wait *= 0.5 + random.random() / 2
            self._count("retries")
            log.info(
                "stef export to %s: %s; retry %d in %.2fs", self.sink.name, problem, attempt, wait
            )
            if self._abort.wait(min(wait, self.max_backoff)):
                break
        self._last_error = problem
        log.warning(
            "stef export to %s failed after %d attempts: %s",
            self.sink.name,
            self.max_attempts,
            problem,
        )
        return False


def _where(url: str) -> str:
    """The URL without its query string or any user:password part, for messages."""
    u = httpx.URL(url)
    return str(u.copy_with(query=None, userinfo=b""))

"""Supervised worker processes: each record gets a deadline and a memory budget, and a
worker that dies or runs past the deadline costs only the record it was working on.

:class:`SupervisedPool` runs ``work(item)`` in forked child processes and yields the
results in input order. The parent watches every child: a child that exits (a segfault
in compiled code, the kernel's out-of-memory killer) or that has worked on one record for
longer than ``deadline`` seconds is killed and replaced; that record's result is
``fallback(item, status, message)`` (status ``internal_error`` or ``timeout``) and the
records queued behind it go to the new child. The batch always finishes.

>>> import os
>>> def work(x):
...     if x == "crash":
...         os._exit(3)
...     return x.upper()
>>> pool = SupervisedPool(work, lambda item, status, msg: status, workers=2, deadline=5)
>>> list(pool.map(["a", "crash", "b"]))
['A', 'internal_error', 'B']
>>> pool.close()
"""

from __future__ import annotations

import contextlib
import faulthandler
import multiprocessing as mp
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from multiprocessing.connection import Connection, wait
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: Default per-record deadline of ``stef eval`` and ``stef watch`` (seconds).
DEFAULT_DEADLINE = 5.0
#: Default memory budget of one worker process beyond what it holds at start (MiB).
DEFAULT_MEMORY_MB = 2048


class _Failed:
    """``work`` raised in the child (it should not): the record becomes ``internal_error``."""

    def __init__(self, message: str) -> None:
        self.message = message


def _limit_memory(memory_mb: int | None) -> None:
    if not memory_mb:
        return
    try:
        import resource

        with open("/proc/self/statm") as fh:
            vm = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = vm + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError, ImportError):  # not Linux: no budget, still a deadline
        pass


def _child(conn: Connection, work: Callable[[Any], Any], memory_mb: int | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    faulthandler.disable()  # a crash is reported by the parent, for its record
    _limit_memory(memory_mb)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        for idx, item in msg:
            try:
                out: Any = work(item)
            except MemoryError:
                out = _Failed(f"evaluating this record needed more than {memory_mb} MiB")
            except Exception as e:  # work must not raise; if it does, one record pays
                out = _Failed(f"internal error in STEF ({type(e).__name__}: {e})"[:500])
            conn.send((idx, out))


@dataclass
class _Worker:
    proc: Any
    conn: Connection
    pending: deque[tuple[int, Any]] = field(default_factory=deque)
    started: float = 0.0


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-exitcode).name}"
        return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


class SupervisedPool(Generic[T]):
    """``workers`` child processes running ``work``, each record under ``deadline`` seconds
    (``None``: no deadline) and each child under ``memory_mb`` MiB more than it started
    with (``None``: no budget). Reusable: :meth:`map` may be called again (``stef watch``)."""

    def __init__(
        self,
        work: Callable[[Any], T],
        fallback: Callable[[Any, str, str], T],
        *,
        workers: int = 1,
        deadline: float | None = DEFAULT_DEADLINE,
        memory_mb: int | None = DEFAULT_MEMORY_MB,
        chunk: int = 8,
    ) -> None:
        self.work = work
        self.fallback = fallback
        self.size = max(1, workers)
        self.deadline = deadline
        self.memory_mb = memory_mb
        self.chunk = max(1, chunk)
        self._ctx = mp.get_context("fork")
        self._workers: list[_Worker] = []
        #: Records that cost a worker (killed or timed out), for the caller's summary.
        self.restarts = 0

    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(
            target=_child, args=(child, self.work, self.memory_mb), daemon=True
        )
        proc.start()
        child.close()
        return _Worker(proc, parent)

    def _replace(self, w: _Worker) -> _Worker:
        with contextlib.suppress(OSError, ValueError):
            w.proc.kill()
        w.proc.join(5)
        with contextlib.suppress(OSError):
            w.conn.close()
        self.restarts += 1
        fresh = self._spawn()
        self._workers[self._workers.index(w)] = fresh
        rest = list(w.pending)
        if rest:
            fresh.pending.extend(rest)
            fresh.conn.send(rest)
            fresh.started = time.monotonic()
        return fresh

    def map(self, items: Iterable[Any]) -> Iterator[T]:
        """Results of ``work`` over ``items``, in input order."""
        while len(self._workers) < self.size:
            self._workers.append(self._spawn())
        it = iter(items)
        done: dict[int, T] = {}
        sent = emitted = 0
        exhausted = False
        window = self.size * self.chunk * 2
        while True:
            if not exhausted:
                for w in self._workers:
                    # only an idle worker is sent more: one busy sending results while we
                    # block sending it a big chunk would wait on us forever (full pipes)
                    if not w.pending and sent - emitted < window:
                        part = list(islice(it, self.chunk))
                        if not part:
                            exhausted = True
                            break
                        msg = [(sent + k, x) for k, x in enumerate(part)]
                        sent += len(part)
                        w.started = time.monotonic()
                        w.pending.extend(msg)
                        w.conn.send(msg)
            while emitted in done:
                yield done.pop(emitted)
                emitted += 1
            if exhausted and emitted == sent:
                return
            if not any(w.pending for w in self._workers):
                # every worker idle: the window was full when they were last offered work,
                # and emitting has just emptied it; waiting on no worker would never return
                continue
            self._collect(done)

    def _collect(self, done: dict[int, T]) -> None:
        busy = [w for w in self._workers if w.pending]
        timeout = None
        if self.deadline is not None and busy:
            first = min(w.started for w in busy)
            timeout = max(0.0, first + self.deadline - time.monotonic())
        ready = wait([w.conn for w in busy], timeout)
        now = time.monotonic()
        for w in busy:
            if w.conn in ready:
                try:
                    while w.conn.poll():
                        idx, out = w.conn.recv()
                        _, item = w.pending.popleft()
                        w.started = now
                        if isinstance(out, _Failed):
                            out = self.fallback(item, "internal_error", out.message)
                        done[idx] = out
                except (EOFError, OSError):
                    w.proc.join(5)
                    self._lose_first(w, done, "internal_error", self._died(w))
                    continue
            if self.deadline is not None and w.pending and now - w.started > self.deadline:
                self._lose_first(
                    w,
                    done,
                    "timeout",
                    f"evaluating this record took longer than {self.deadline:g} s "
                    "(--record-timeout); it was stopped",
                )

    def _died(self, w: _Worker) -> str:
        return (
            f"the worker process evaluating this record died ({_death(w.proc.exitcode)}); "
            "please report it"
        )

    def _lose_first(self, w: _Worker, done: dict[int, T], status: str, message: str) -> None:
        idx, item = w.pending.popleft()
        done[idx] = self.fallback(item, status, message)
        self._replace(w)

    def close(self) -> None:
        """Stop the children (idempotent)."""
        for w in self._workers:
            with contextlib.suppress(OSError, ValueError, BrokenPipeError):
                w.conn.send(None)
        for w in self._workers:
            w.proc.join(2)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(2)
            with contextlib.suppress(OSError):
                w.conn.close()
        self._workers.clear()

    def __enter__(self) -> SupervisedPool[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

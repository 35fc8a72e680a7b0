"""Supervised worker processes: each record gets a deadline and a memory budget, and a
worker that dies or runs past the deadline costs only the record it was working on.

:class:`SupervisedPool` runs ``work(item)`` in forked child processes and yields the
results in input order. The parent watches every child: a child that exits (a segfault
in compiled code, the kernel's out-of-memory killer) or that has worked on one record for
longer than ``deadline`` seconds is killed and replaced; that record's result is
``fallback(item, status, message)`` (status ``internal_error`` or ``timeout``) and the
records queued behind it go to the new child. The batch always finishes. A child sends its
results in batches (every :data:`FLUSH` seconds, and at the end of each chunk), so the
parent wakes about once per chunk, not once per record; when a child is lost with several
records unanswered, they are retried one by one, and the one that is lost again on its own
gets ``fallback``.

:class:`SharedPool` is the same supervision for a server: threads :meth:`~SharedPool.submit`
lists of items and get a future each; ``work`` takes a whole chunk (so a worker can store
its chunk in one transaction), and a chunk whose worker dies or runs past its deadline is
retried record by record, so that only the record that caused it gets ``fallback``.

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
import selectors
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from itertools import islice
from multiprocessing.connection import Connection, wait
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: Default per-record deadline of ``stef eval`` and ``stef watch`` (seconds).
DEFAULT_DEADLINE = 5.0
#: Default memory budget of one worker process beyond what it holds at start (MiB).
DEFAULT_MEMORY_MB = 2048
#: A child of :class:`SupervisedPool` sends the results it holds once this many seconds
#: have passed since it last sent (and at the end of each chunk).
FLUSH = 0.05


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
    for msg in _messages(conn, memory_mb):
        held: list[tuple[int, Any]] = []
        last = time.monotonic()
        for idx, item in msg:
            try:
                out: Any = work(item)
            except MemoryError:
                out = _Failed(f"evaluating this record needed more than {memory_mb} MiB")
            except Exception as e:  # work must not raise; if it does, one record pays
                out = _Failed(f"internal error in STEF ({type(e).__name__}: {e})"[:500])
            held.append((idx, out))
            now = time.monotonic()
            if now - last >= FLUSH:
                conn.send(held)
                held, last = [], now
        if held:
            conn.send(held)


class _Watch:
    """The connections of the busy workers, watched by one selector for the pool's life.

    ``multiprocessing.connection.wait`` builds (and registers) a new selector per call, and
    the parent waits about once per record: on a two-core machine that is CPU the workers
    would use.
    """

    def __init__(self) -> None:
        self._sel = selectors.DefaultSelector()
        self._on: dict[int, Connection] = {}

    def wait(self, conns: list[Connection], timeout: float | None) -> list[Connection]:
        """The ones of ``conns`` ready to read (after at most ``timeout`` seconds)."""
        want = {id(c): c for c in conns}
        for key in [k for k in self._on if k not in want]:
            self.forget(self._on[key])
        for key, conn in want.items():
            if key not in self._on:
                self._sel.register(conn, selectors.EVENT_READ)
                self._on[key] = conn
        if not want:
            return []
        return [key.fileobj for key, _ in self._sel.select(timeout)]  # type: ignore[misc]

    def forget(self, conn: Connection) -> None:
        """Stop watching ``conn`` (before it is closed)."""
        if self._on.pop(id(conn), None) is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(conn)

    def close(self) -> None:
        for conn in list(self._on.values()):
            self.forget(conn)
        self._sel.close()


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


def _died(proc: Any) -> str:
    """The error message of a record whose worker process ``proc`` died."""
    return (
        f"the worker process evaluating this record died ({_death(proc.exitcode)}); "
        "please report it"
    )


def _start(
    ctx: Any, target: Callable[..., None], work: Any, memory_mb: int | None
) -> tuple[Any, Connection]:
    """A started child process running ``target(conn, work, memory_mb)`` and the parent's
    end of its pipe."""
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=target, args=(child, work, memory_mb), daemon=True)
    proc.start()
    child.close()
    return proc, parent


def _messages(conn: Connection, memory_mb: int | None) -> Iterator[Any]:
    """In a child: ignore Ctrl-C (the parent's to handle), leave crashes to the parent to
    report, take on the memory budget, then yield what the parent sends until it sends
    ``None`` or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    faulthandler.disable()
    _limit_memory(memory_mb)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        yield msg


class _Pool:
    """What both pools are given: the work, its fallback, how many children, each record's
    deadline and each child's memory budget, and records per message."""

    def __init__(
        self,
        work: Callable[..., Any],
        fallback: Callable[[Any, str, str], Any],
        workers: int,
        deadline: float | None,
        memory_mb: int | None,
        chunk: int,
    ) -> None:
        self.work = work
        self.fallback = fallback
        self.size = max(1, workers)
        self.deadline = deadline
        self.memory_mb = memory_mb
        self.chunk = max(1, chunk)
        self._ctx = mp.get_context("fork")


class SupervisedPool(_Pool, Generic[T]):
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
        super().__init__(work, fallback, workers, deadline, memory_mb, chunk)
        self._workers: list[_Worker] = []
        self._watch = _Watch()
        self._suspects: deque[tuple[int, Any]] = deque()  # of a lost child: one at a time
        #: Workers replaced (one died or ran past the deadline).
        self.restarts = 0

    def _spawn(self) -> _Worker:
        return _Worker(*_start(self._ctx, _child, self.work, self.memory_mb))

    def _replace(self, w: _Worker) -> _Worker:
        with contextlib.suppress(OSError, ValueError):
            w.proc.kill()
        w.proc.join(5)
        self._watch.forget(w.conn)
        with contextlib.suppress(OSError):
            w.conn.close()
        self.restarts += 1
        fresh = self._spawn()
        self._workers[self._workers.index(w)] = fresh
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
        self._suspects.clear()
        while True:
            for w in self._workers:
                # only an idle worker is sent more: one busy sending results while we
                # block sending it a big chunk would wait on us forever (full pipes)
                if w.pending:
                    continue
                if self._suspects:
                    msg = [self._suspects.popleft()]
                elif not exhausted and sent - emitted < window:
                    part = list(islice(it, self.chunk))
                    if not part:
                        exhausted = True
                        continue
                    msg = [(sent + k, x) for k, x in enumerate(part)]
                    sent += len(part)
                else:
                    continue
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
        ready = self._watch.wait([w.conn for w in busy], timeout)
        now = time.monotonic()
        for w in busy:
            if w.conn in ready:
                try:
                    # one message per wake: the selector answers again at once while more
                    # wait (Connection.poll would build a selector of its own each time)
                    results = w.conn.recv()
                except (EOFError, OSError):
                    w.proc.join(5)
                    self._lose(w, done, "internal_error", _died(w.proc))
                    continue
                w.started = now
                for idx, out in results:
                    _, item = w.pending.popleft()
                    if isinstance(out, _Failed):
                        out = self.fallback(item, "internal_error", out.message)
                    done[idx] = out
            if self.deadline is not None and w.pending and now - w.started > self.deadline:
                self._lose(
                    w,
                    done,
                    "timeout",
                    f"evaluating this record took longer than {self.deadline:g} s "
                    "(--record-timeout); it was stopped",
                )

    def _lose(self, w: _Worker, done: dict[int, T], status: str, message: str) -> None:
        """Replace a lost child. Its one unanswered record gets ``fallback``; several (it
        had not sent all it finished) are retried one by one, ahead of the rest."""
        pending = list(w.pending)
        w.pending.clear()
        self._replace(w)
        if len(pending) == 1:
            idx, item = pending[0]
            done[idx] = self.fallback(item, status, message)
        else:
            self._suspects.extendleft(reversed(pending))

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
            self._watch.forget(w.conn)
            with contextlib.suppress(OSError):
                w.conn.close()
        self._workers.clear()

    def __enter__(self) -> SupervisedPool[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PoolError(Exception):
    """A chunk of a :class:`SharedPool` job failed as a whole (``work`` raised in the
    worker: e.g. its store refused the write), or the pool closed before it was done."""


def _chunk_child(conn: Connection, work: Callable[[list[Any]], Any], memory_mb: int | None) -> None:
    for msg in _messages(conn, memory_mb):
        try:
            out: Any = work(msg)
        except MemoryError:
            out = _Failed(f"this chunk of records needed more than {memory_mb} MiB")
        except Exception as e:  # the chunk fails; the caller decides (the service: a 503)
            out = _Failed(f"{type(e).__name__}: {e}"[:500])
        conn.send(out)


class _Job(Generic[T]):
    """One :meth:`SharedPool.submit`: its future and the results so far."""

    def __init__(self, n: int) -> None:
        self.future: Future[list[T]] = Future()
        self.results: list[Any] = [None] * n
        self.missing = n

    def put(self, i: int, result: T) -> None:
        self.results[i] = result
        self.missing -= 1
        if self.missing == 0 and not self.future.done():
            self.future.set_result(self.results)

    def fail(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)


#: An item in flight: its job, its place in the job, the item.
_Entry = tuple[_Job[Any], int, Any]


@dataclass
class _Slot:
    proc: Any
    conn: Connection
    entries: list[_Entry] = field(default_factory=list)
    started: float = 0.0


class SharedPool(_Pool, Generic[T]):
    """``workers`` supervised processes shared by any number of threads.

    ``work(items)`` runs in a worker on a chunk of up to ``chunk`` items (of one job or of
    several) and returns one result per item, in order. A worker that dies (or holds a
    chunk longer than ``deadline`` seconds per item) is replaced; its chunk's items are
    retried one by one, and the item that kills a worker on its own gets
    ``fallback(item, status, message)`` (run here, status ``internal_error`` or
    ``timeout``). ``work`` raising fails its chunk's jobs with :class:`PoolError`.

    >>> pool = SharedPool(lambda xs: [x * 2 for x in xs], lambda x, s, m: s, workers=2)
    >>> pool.submit([1, 2, 3]).result(), pool.submit([]).result()
    ([2, 4, 6], [])
    >>> pool.close()
    """

    def __init__(
        self,
        work: Callable[[list[Any]], Sequence[T]],
        fallback: Callable[[Any, str, str], T],
        *,
        workers: int = 1,
        deadline: float | None = DEFAULT_DEADLINE,
        memory_mb: int | None = DEFAULT_MEMORY_MB,
        chunk: int = 16,
    ) -> None:
        super().__init__(work, fallback, workers, deadline, memory_mb, chunk)
        #: Workers replaced (died or ran past the deadline).
        self.restarts = 0
        self._lock = threading.Lock()
        self._queue: deque[_Entry] = deque()  # submitted, not yet sent (under _lock)
        self._suspects: deque[_Entry] = deque()  # of a lost chunk: retried one at a time
        self._closed = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._slots = [self._spawn() for _ in range(self.size)]
        self._thread = threading.Thread(target=self._run, name="stef-pool", daemon=True)
        self._thread.start()

    def submit(self, items: Iterable[Any]) -> Future[list[T]]:
        """A future of ``work``'s results for ``items``, in their order (thread-safe)."""
        entries = list(items)
        job: _Job[T] = _Job(len(entries))
        if not entries:
            job.future.set_result([])
            return job.future
        with self._lock:
            if self._closed:
                raise PoolError("the pool is closed")
            self._queue.extend((job, i, x) for i, x in enumerate(entries))
        self._wake()
        return job.future

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"x")  # one byte: atomic from any thread

    def _spawn(self) -> _Slot:
        return _Slot(*_start(self._ctx, _chunk_child, self.work, self.memory_mb))

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    if self._closed:
                        return
                self._offer()
                busy = [s for s in self._slots if s.entries]
                timeout = None
                if self.deadline is not None and busy:
                    first = min(s.started + self._limit(s) for s in busy)
                    timeout = max(0.0, first - time.monotonic())
                ready = wait([*(s.conn for s in busy), self._wake_r], timeout)
                if self._wake_r in ready:
                    with contextlib.suppress(BlockingIOError, OSError):
                        while os.read(self._wake_r, 4096):
                            pass
                self._collect(busy, ready)
        finally:
            self._stop()

    def _limit(self, s: _Slot) -> float:
        return (self.deadline or 0.0) * len(s.entries)

    def _next(self) -> list[_Entry]:
        """The next chunk: one suspect alone, else up to ``chunk`` queued items of jobs not
        failed yet."""
        while self._suspects:
            entry = self._suspects.popleft()
            if not entry[0].future.done():
                return [entry]
        part: list[_Entry] = []
        with self._lock:
            while self._queue and len(part) < self.chunk:
                entry = self._queue.popleft()
                if not entry[0].future.done():
                    part.append(entry)
        return part

    def _offer(self) -> None:
        for s in self._slots:
            if s.entries:
                continue  # only an idle worker is sent more (see SupervisedPool.map)
            part = self._next()
            if not part:
                return
            s.entries, s.started = part, time.monotonic()
            with contextlib.suppress(OSError, ValueError):  # died idle: noticed below
                s.conn.send([x for _, _, x in part])

    def _collect(self, busy: list[_Slot], ready: list[Any]) -> None:
        now = time.monotonic()
        for s in busy:
            if s.conn in ready:
                try:
                    out = s.conn.recv()
                except (EOFError, OSError):
                    s.proc.join(5)
                    self._lose(s, "internal_error", _died(s.proc))
                    continue
                entries, s.entries = s.entries, []
                if isinstance(out, _Failed):
                    for job in {id(e[0]): e[0] for e in entries}.values():
                        job.fail(PoolError(out.message))
                else:
                    for (job, i, _), result in zip(entries, out, strict=True):
                        job.put(i, result)
            elif self.deadline is not None and now - s.started > self._limit(s):
                self._lose(
                    s,
                    "timeout",
                    f"evaluating this record took longer than {self.deadline:g} s; it was stopped",
                )

    def _lose(self, s: _Slot, status: str, message: str) -> None:
        """Replace the worker; the one item of a lone chunk gets ``fallback``, the items of
        a bigger chunk are retried one by one to find the one that caused it."""
        entries, s.entries = s.entries, []
        with contextlib.suppress(OSError, ValueError):
            s.proc.kill()
        s.proc.join(5)
        with contextlib.suppress(OSError):
            s.conn.close()
        self.restarts += 1
        self._slots[self._slots.index(s)] = self._spawn()
        if len(entries) > 1:
            self._suspects.extendleft(reversed(entries))
            return
        for job, i, item in entries:
            try:
                job.put(i, self.fallback(item, status, message))
            except Exception as e:  # e.g. the store refused the error evaluation
                job.fail(PoolError(f"{type(e).__name__}: {e}"))

    def _stop(self) -> None:
        closed = PoolError("the pool closed before these records were evaluated")
        with self._lock:
            self._closed = True
            left = [*self._queue, *self._suspects]
            self._queue.clear()
        self._suspects.clear()
        for s in self._slots:
            left.extend(s.entries)
            s.entries = []
        for job, _, _ in left:
            job.fail(closed)
        for s in self._slots:
            with contextlib.suppress(OSError, ValueError, BrokenPipeError):
                s.conn.send(None)
        for s in self._slots:
            s.proc.join(2)
            if s.proc.is_alive():
                s.proc.kill()
                s.proc.join(2)
            with contextlib.suppress(OSError):
                s.conn.close()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the workers; jobs not done by then fail with :class:`PoolError`
        (idempotent)."""
        with self._lock:
            self._closed = True
        self._wake()
        self._thread.join(timeout)
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def __enter__(self) -> SharedPool[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

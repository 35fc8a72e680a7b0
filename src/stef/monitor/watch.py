"""Follow a directory of JSONL logs: evaluate each new complete line once, store it, alert.

Offsets (bytes read per file) are saved in the store in the same transaction as the
evaluations of the lines before them, so a restart neither re-reads nor skips a line. A
line is read only once it ends with a newline; a file that shrank is read again from
the start (it was truncated or replaced).

>>> import tempfile, pathlib
>>> from stef.monitor.store import open_store
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.jsonl").write_text('{"id": "r1"}\\n{"id": "r2"')
>>> fake = lambda line: {"id": "e-" + line[9:11], "status": "invalid_record", "score": None}
>>> w = Watcher(d, open_store(d / "stef.db"), fake)
>>> w.poll().stored, w.poll().stored
(1, 0)
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stef.monitor.alerts import AlertMonitor
from stef.monitor.store import Store

#: Bytes read from one file per poll at most (the rest waits for the next poll).
READ_LIMIT = 16 * 1024 * 1024


def evaluator_function(evaluator: Any) -> Callable[[str], dict[str, Any]]:
    """Turn a :class:`stef.evaluator.Evaluator` into ``line -> evaluation``.

    A line holding a JSON object goes to ``evaluate_record``; anything else to
    ``evaluate_line``, which returns an error evaluation for it.
    """

    def run(line: str) -> dict[str, Any]:
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            result: dict[str, Any] = evaluator.evaluate_record(data)
        else:
            result = evaluator.evaluate_line(line)
        return result

    return run


def _failed(line: str, path: Path, offset: int, exc: Exception) -> dict[str, Any]:
    digest = hashlib.sha256(f"{path}:{offset}:{line}".encode("utf-8", "replace")).hexdigest()
    return {
        "id": "watch-" + digest[:16],
        "status": "internal_error",
        "error": f"{type(exc).__name__}: {exc}",
        "score": None,
        "band": None,
        "breakdown": None,
        "findings": [],
    }


@dataclass
class PollResult:
    """What one pass over the directory did."""

    lines: int = 0
    stored: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Watcher:
    """Reads new lines of ``directory/*.jsonl``, evaluates, stores and checks alerts."""

    def __init__(
        self,
        directory: str | Path,
        store: Store,
        evaluate: Callable[[str], dict[str, Any]],
        monitor: AlertMonitor | None = None,
        *,
        pattern: str = "*.jsonl",
        batch_size: int = 200,
    ) -> None:
        self.directory = Path(directory)
        self.store = store
        self.evaluate = evaluate
        self.monitor = monitor
        self.pattern = pattern
        self.batch_size = batch_size

    def files(self) -> list[Path]:
        """The files followed, in name order."""
        return sorted(p for p in self.directory.glob(self.pattern) if p.is_file())

    def poll(self) -> PollResult:
        """Process every complete line written since the last poll."""
        result = PollResult()
        offsets = self.store.offsets()
        for path in self.files():
            key = str(path.resolve())
            offset = offsets.get(key, 0)
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                continue
            if size < offset:
                result.notes.append(f"{path.name} shrank; reading it again from the start")
                offset = 0
                self.store.save_offsets({key: 0})
            if size == offset:
                continue
            self._read(path, key, offset, result)
        return result

    def _read(self, path: Path, key: str, offset: int, result: PollResult) -> None:
        with path.open("rb") as fh:
            fh.seek(offset)
            data = fh.read(READ_LIMIT)
        end = data.rfind(b"\n")
        if end < 0:
            return  # no complete line yet
        batch: list[dict[str, Any]] = []
        pos = offset
        for raw in data[: end + 1].splitlines(keepends=True):
            line_start, pos = pos, pos + len(raw)
            text = raw.decode("utf-8", errors="replace").strip()
            if text:
                try:
                    batch.append(self.evaluate(text))
                except Exception as exc:  # a monitor must survive one bad record
                    batch.append(_failed(text, path, line_start, exc))
                result.lines += 1
            if len(batch) >= self.batch_size:
                self._flush(batch, key, pos, result)
                batch = []
        self._flush(batch, key, pos, result)

    def _flush(
        self, batch: list[dict[str, Any]], key: str, offset: int, result: PollResult
    ) -> None:
        result.stored += self.store.write(batch, offsets={key: offset})
        if batch and self.monitor is not None:
            result.events.extend(self.monitor.check())

    def run(
        self,
        interval: float = 2.0,
        once: bool = False,
        stop: threading.Event | None = None,
        report: Callable[[PollResult], None] | None = None,
    ) -> None:
        """Poll every ``interval`` seconds until ``stop`` is set (or once)."""
        stop = stop or threading.Event()
        while True:
            result = self.poll()
            if report is not None:
                report(result)
            if once or stop.wait(interval):
                return

"""Follow a directory of JSONL logs: evaluate each new complete line once, store it, alert.

Offsets (bytes read per file) are saved in the store in the same transaction as the
evaluations of the lines before them, so a restart neither re-reads nor skips a line. A
line is read only once it ends with a newline. Each file is known by its device and inode
and a hash of its first kilobyte: a file that shrank, was rewritten in place (copytruncate)
or replaced by a new one (rename and create) is read from the start; a followed file
renamed to another followed name goes on where it was. A line over :data:`READ_LIMIT`
becomes one ``invalid_json`` evaluation and reading goes on after it. Only regular files
inside the directory are followed (no symlinks, no pattern reaching outside it).

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

#: Bytes read from one file per poll at most (the rest waits for the next poll); also the
#: longest line read (a longer one is skipped as one error evaluation).
READ_LIMIT = 16 * 1024 * 1024
#: Bytes of a file's head whose hash tells a rewritten file from the one read before.
HEAD_BYTES = 1024
#: Suffixes of the offset keys that hold a file's identity (device:inode) and head hash.
INODE_KEY, HEAD_KEY = "\t#inode", "\t#head"  # no NUL: PostgreSQL text refuses it


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
        "error": f"{type(exc).__name__}: {exc}"[:500],
        "score": None,
        "band": None,
        "breakdown": None,
        "findings": [],
    }


def _oversized(path: Path, offset: int, size: int) -> dict[str, Any]:
    digest = hashlib.sha256(f"{path}:{offset}:{size}".encode("utf-8", "replace")).hexdigest()
    return {
        "id": "watch-" + digest[:16],
        "status": "invalid_json",
        "error": f"line is too long ({size:,} bytes > {READ_LIMIT:,}); skipped",
        "score": None,
        "band": None,
        "breakdown": None,
        "findings": [],
    }


def _hash(data: bytes) -> int:
    """A 56-bit hash (fits every store's integer column)."""
    return int.from_bytes(hashlib.sha256(data).digest()[:7], "big")


def _head_hash(path: Path, offset: int) -> int:
    with path.open("rb") as fh:
        return _hash(fh.read(min(offset, HEAD_BYTES)))


def _next_newline(path: Path, start: int) -> int:
    """Offset of the first newline at or after ``start``, or -1 (the line goes on)."""
    with path.open("rb") as fh:
        fh.seek(start)
        pos = start
        while block := fh.read(1 << 20):
            k = block.find(b"\n")
            if k >= 0:
                return pos + k
            pos += len(block)
    return -1


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

    def files(self, notes: list[str] | None = None) -> list[Path]:
        """The files followed, in name order: regular files matching the pattern inside
        the directory (a symlink or a path leading outside it is skipped, with a note)."""
        root = self.directory.resolve()
        out = []
        for p in sorted(self.directory.glob(self.pattern)):
            if p.is_symlink() or not p.is_file():
                if p.is_symlink() and notes is not None:
                    notes.append(f"{p.name} is a symbolic link; not followed")
                continue
            if not p.resolve().is_relative_to(root):
                if notes is not None:
                    notes.append(f"{p} is outside {self.directory}; not followed")
                continue
            out.append(p)
        return out

    def poll(self) -> PollResult:
        """Process every complete line written since the last poll."""
        result = PollResult()
        offsets = self.store.offsets()
        by_inode = {v: k[: -len(INODE_KEY)] for k, v in offsets.items() if k.endswith(INODE_KEY)}
        for path in self.files(result.notes):
            key = str(path.resolve())
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            inode = _hash(f"{st.st_dev}:{st.st_ino}".encode())
            offset = self._offset(path, key, inode, offsets, by_inode, result)
            if st.st_size < offset:
                result.notes.append(f"{path.name} shrank; reading it again from the start")
                offset = 0
                self.store.save_offsets({key: 0})
            if st.st_size == offset:
                continue
            self._read(path, key, offset, inode, result)
        return result

    @staticmethod
    def _offset(
        path: Path,
        key: str,
        inode: int,
        offsets: dict[str, int],
        by_inode: dict[int, str],
        result: PollResult,
    ) -> int:
        """Where to go on reading ``path``: its saved offset if it is still the file read
        before (same inode, same head), the offset of the path it was renamed from, or 0."""
        source = key
        known = offsets.get(key + INODE_KEY)
        if known is not None and known != inode:
            result.notes.append(f"{path.name} is a new file (rotated); reading it from the start")
            return 0
        if key not in offsets:
            source = by_inode.get(inode, "")
            if source not in offsets:
                return 0
        offset = offsets[source]
        head = offsets.get(source + HEAD_KEY)
        if offset and head is not None and path.stat().st_size >= offset:  # shrank: poll says
            try:
                same = _head_hash(path, offset) == head
            except OSError:
                same = False
            if not same:
                result.notes.append(
                    f"{path.name} was rewritten (truncated and refilled); reading it from the start"
                )
                return 0
        return offset

    def _read(self, path: Path, key: str, offset: int, inode: int, result: PollResult) -> None:
        with path.open("rb") as fh:
            fh.seek(offset)
            data = fh.read(READ_LIMIT)
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) == READ_LIMIT:  # one line longer than we read at once
                newline = _next_newline(path, offset + len(data))
                if newline >= 0:
                    size = newline - offset
                    result.notes.append(f"{path.name}: a line of {size:,} bytes was skipped")
                    result.lines += 1
                    self._flush(
                        [_oversized(path, offset, size)], path, key, newline + 1, inode, result
                    )
            return  # no complete line yet
        batch: list[dict[str, Any]] = []
        pos = offset
        for raw in data[: end + 1].split(b"\n")[:-1]:
            line_start, pos = pos, pos + len(raw) + 1
            if line_start == 0 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a UTF-8 byte-order mark
            text = raw.decode("utf-8", errors="replace").strip()
            if text:
                try:
                    batch.append(self.evaluate(text))
                except Exception as exc:  # a monitor must survive one bad record
                    batch.append(_failed(text, path, line_start, exc))
                result.lines += 1
            if len(batch) >= self.batch_size:
                self._flush(batch, path, key, pos, inode, result)
                batch = []
        self._flush(batch, path, key, pos, inode, result)

    def _flush(
        self,
        batch: list[dict[str, Any]],
        path: Path,
        key: str,
        offset: int,
        inode: int,
        result: PollResult,
    ) -> None:
        marks = {key: offset, key + INODE_KEY: inode, key + HEAD_KEY: _head_hash(path, offset)}
        result.stored += self.store.write(batch, offsets=marks)
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

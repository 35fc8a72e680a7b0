"""A persistent cache of LLM answers: one SQLite file, keyed by a content hash.

The key is the sha256 of the model, the prompt version and the exact inputs (the
rendered messages and the sampling settings), so re-evaluating the same record with
the same model and prompt costs nothing, and changing any of them misses.

>>> c = LLMCache(":memory:")
>>> k = cache_key("qwen", "judge_v1", {"messages": ["hi"]})
>>> c.get(k) is None
True
>>> c.put(k, {"verdict": "correct"}, model="qwen", prompt_version="judge_v1")
>>> c.get(k)
{'verdict': 'correct'}
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    created REAL NOT NULL,
    value TEXT NOT NULL
)
"""


def cache_key(model: str, prompt_version: str, inputs: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of model, prompt version and inputs.

    >>> cache_key("m", "v1", {"a": 1, "b": 2}) == cache_key("m", "v1", {"b": 2, "a": 1})
    True
    >>> cache_key("m", "v1", {"a": 1}) == cache_key("m", "v2", {"a": 1})
    False
    """
    blob = json.dumps(
        {"model": model, "prompt_version": prompt_version, "inputs": inputs},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


#: What a cache entry records of the request that first produced it.
COST_KEYS = ("prompt_tokens", "completion_tokens", "latency_ms")


def first_cost(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a cached answer cost when it was first asked, as ``cached_*`` usage keys.

    >>> first_cost({"prompt_tokens": 700, "completion_tokens": 40, "latency_ms": 9.5, "x": 1})
    {'cached_prompt_tokens': 700, 'cached_completion_tokens': 40, 'cached_latency_ms': 9.5}
    >>> first_cost(None)
    {}
    """
    usage = usage or {}
    return {f"cached_{k}": usage[k] for k in COST_KEYS if isinstance(usage.get(k), (int, float))}


class LLMCache:
    """SQLite-backed key → JSON cache, safe to share between threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connect()

    def _connect(self) -> None:
        self._pid = os.getpid()
        self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(_SCHEMA)
        self._conn.commit()

    @property
    def _db(self) -> sqlite3.Connection:
        """The connection of this process (a forked worker opens its own)."""
        if self._pid != os.getpid():
            self._lock = threading.Lock()
            self._connect()
        return self._conn

    def __repr__(self) -> str:
        return f"LLMCache({self.path!r})"

    def get(self, key: str) -> Any | None:
        """The stored value, or ``None`` on a miss."""
        with self._lock:
            row = self._db.execute("SELECT value FROM llm_cache WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: Any, *, model: str = "", prompt_version: str = "") -> None:
        """Store (or replace) a JSON-serialisable value."""
        blob = json.dumps(value, ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO llm_cache (key, model, prompt_version, created, value) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, model, prompt_version, time.time(), blob),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

"""``stef.capture``: record an agent's text-to-SQL calls from its own code.

For agents that do not trace. Each :meth:`Capture.record` puts a record on a bounded queue
and returns at once; a background thread sends batches to a STEF service
(``POST URL/v1/evaluate`` with ``{"records": [...]}`` and the bearer token) or appends them to
a JSONL file (``stef eval`` / ``stef watch`` read it). Nothing here raises into the agent: a
full queue drops the record (counted), a slow or dead receiver is retried in the background,
and leaving the ``with`` block waits at most ``close_timeout`` seconds for the last batch.

::

    with stef.capture(agent="sql-bot", version="1.4", url="http://stef:8000") as c:
        sql = my_agent(question)
        c.record(question, sql, enriched_question=rewritten)

    @stef.capture(agent="sql-bot", version="1.4", path="calls.jsonl")
    def answer(question: str) -> str:      # returns the SQL (or {"sql": …, "enriched_question": …})
        ...

Without ``url`` or ``path``, ``STEF_URL`` or ``STEF_CAPTURE_FILE`` say where; ``STEF_TOKEN``
holds the token.

>>> import tempfile, pathlib, json
>>> out = pathlib.Path(tempfile.mkdtemp()) / "calls.jsonl"
>>> with capture(agent="sql-bot", version="1.4", path=out) as c:
...     c.record("How many users?", "SELECT COUNT(*) FROM users")
True
>>> json.loads(out.read_text())["agent_version"]
'1.4'
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from stef.interop.delivery import Delivery
from stef.interop.sinks import LocalSink, Outgoing, Sink

log = logging.getLogger("stef.interop")
F = TypeVar("F", bound=Callable[..., Any])


class ServiceSink(Sink):
    """Records to a STEF service: ``POST URL/v1/evaluate`` with ``{"records": [...]}``."""

    name = "service"
    max_batch = 100

    def __init__(self, url: str, token: str | None = None, endpoint: str = "/v1/evaluate") -> None:
        super().__init__(url)
        self.endpoint = endpoint
        self._token = token

    def accepts(self, ev: Mapping[str, Any]) -> bool:
        return True

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    def build(self, batch: Sequence[Mapping[str, Any]]) -> list[Outgoing]:
        body = json.dumps({"records": list(batch)}, ensure_ascii=False, default=str).encode()
        return [Outgoing(self.url + self.endpoint, body, "application/json", items=len(batch))]


class FileSink(LocalSink):
    """Records appended to a JSONL file (one ``write`` per batch, under a lock)."""

    name = "file"
    max_batch = 500
    _lock = threading.Lock()

    def __init__(self, path: str | Path) -> None:
        super().__init__(str(path))
        self.path = Path(path)

    def write(self, batch: Sequence[Mapping[str, Any]]) -> None:
        text = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in batch)
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(text)


class _Nowhere(LocalSink):
    name = "nowhere"

    def write(self, batch: Sequence[Mapping[str, Any]]) -> None:
        raise OSError("no destination: give url= or path=, or set STEF_URL or STEF_CAPTURE_FILE")


class Capture:
    """Records of one agent (name, version, app) sent in the background. See the module."""

    def __init__(
        self,
        agent: str | None = None,
        version: str | None = None,
        *,
        url: str | None = None,
        path: str | Path | None = None,
        token: str | None = None,
        app: str | None = None,
        dialect: str | None = None,
        max_queue: int = 10_000,
        flush_interval: float = 0.2,
        timeout: float = 2.0,
        close_timeout: float = 2.0,
        max_attempts: int = 3,
    ) -> None:
        self.agent, self.version, self.app, self.dialect = agent, version, app, dialect
        self.close_timeout = close_timeout
        url = url or os.environ.get("STEF_URL")
        path = path or os.environ.get("STEF_CAPTURE_FILE")
        sink: Sink
        if url:
            sink = ServiceSink(url, token or os.environ.get("STEF_TOKEN"))
        elif path:
            sink = FileSink(path)
        else:
            log.warning("stef.capture: no url or path (STEF_URL, STEF_CAPTURE_FILE); dropping")
            sink = _Nowhere("")
        self._delivery = Delivery(
            sink,
            max_queue=max_queue,
            flush_interval=flush_interval,
            max_attempts=max_attempts,
            backoff=0.2,
            max_backoff=5.0,
            timeout=timeout,
        )
        self._closed = False
        atexit.register(self.close)

    def record(
        self,
        question: str,
        sql: str,
        enriched_question: str | None = None,
        *,
        dialect: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> bool:
        """Queue one call; ``False`` when it was dropped. Never raises, never waits."""
        try:
            rec: dict[str, Any] = {
                "id": id or f"cap-{uuid.uuid4().hex}",
                "question": question,
                "sql": sql,
                "enriched_question": enriched_question,
                "dialect": dialect or self.dialect,
                "agent": self.agent,
                "agent_version": self.version,
                "app": self.app,
                "timestamp": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                "metadata": dict(metadata) if metadata else None,
            }
            rec = {k: v for k, v in rec.items() if v is not None}
            return self._delivery.submit(rec)
        except Exception:  # the agent must never see our failure
            log.debug("stef.capture: record dropped", exc_info=True)
            return False

    def stats(self) -> dict[str, Any]:
        """sent, failed, dropped, pending … (see :meth:`Delivery.stats`)."""
        return self._delivery.stats()

    def close(self, timeout: float | None = None) -> dict[str, Any]:
        """Send what is queued, waiting at most ``timeout`` (default ``close_timeout``)."""
        if self._closed:
            return self.stats()
        self._closed = True
        try:
            atexit.unregister(self.close)
            return self._delivery.close(self.close_timeout if timeout is None else timeout)
        except Exception:
            return self.stats()

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, fn: F) -> F:
        """Decorate an agent function ``fn(question, …) -> sql`` (or a mapping with ``sql``)."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            try:
                question = kwargs.get("question", args[0] if args else None)
                sql, enriched = result, None
                if isinstance(result, Mapping):
                    sql, enriched = result.get("sql"), result.get("enriched_question")
                if isinstance(question, str) and isinstance(sql, str):
                    self.record(question, sql, enriched if isinstance(enriched, str) else None)
            except Exception:
                log.debug("stef.capture: call not recorded", exc_info=True)
            return result

        return wrapper  # type: ignore[return-value]


def capture(agent: str | None = None, version: str | None = None, **options: Any) -> Capture:
    """A :class:`Capture`: a context manager, and a decorator for the agent's function."""
    return Capture(agent, version, **options)

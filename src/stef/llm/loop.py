"""A private event loop on a daemon thread, so synchronous callers can use async clients.

>>> import asyncio
>>> loop = BackgroundLoop()
>>> async def two(): return 2
>>> loop.run(two())
2
>>> loop.close()
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """Runs coroutines on one long-lived loop, so HTTP pools survive between calls."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def _ensure(self) -> asyncio.AbstractEventLoop:
        if self._pid != os.getpid():  # a forked worker: the parent's thread is not here
            self._lock = threading.Lock()
            self._loop = self._thread = None
            self._pid = os.getpid()
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="stef-llm", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the background loop and wait for its result (thread-safe)."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure()).result()

    def close(self) -> None:
        """Stop the loop and its thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            loop.close()

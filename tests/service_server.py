"""A real uvicorn server on a free loopback port, and a store of a few thousand
evaluations, for the service tests.

    with LiveServer(create_app(config)) as srv:
        httpx.get(srv.url + "/healthz")
"""

from __future__ import annotations

import copy
import socket
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import uvicorn

from stef.evaluator import Evaluator
from stef.monitor.stats import iso
from stef.monitor.store import open_store
from stef.rules import load_rules

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

#: Tokens of the test servers (scope, apps, secret).
WRITE = "write-all-secret"
READ = "read-all-secret"
SHOP_WRITE = "shop-write-secret"
SHOP_READ = "shop-read-secret"
BOOKS_READ = "books-read-secret"
TOKENS = (
    f"write:{WRITE},read:{READ},write@shop:{SHOP_WRITE},read@shop:{SHOP_READ},"
    f"read@books:{BOOKS_READ}"
)
#: Every question of a ``books`` evaluation ends with this, so a page that shows one is caught.
BOOKS_MARK = "(books-only)"
START = 1_790_000_000.0  # 2026-09-21, record times go forward from here


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class LiveServer:
    """uvicorn serving ``app`` on 127.0.0.1 in a thread; ``url`` is its base URL."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=True)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()


def template_evaluations() -> list[dict[str, Any]]:
    """The examples' records evaluated once with the examples' rules."""
    ev = Evaluator(rules=load_rules(EXAMPLES / "rules.json"))
    lines = (EXAMPLES / "logs.jsonl").read_text(encoding="utf-8").splitlines()
    return [ev.evaluate_line(line) for line in lines if line.strip()]


def build_store(path: Path, n: int = 3000) -> list[dict[str, Any]]:
    """``n`` evaluations cloned from the examples (apps ``shop`` and ``books``, one record
    every 10 minutes from :data:`START`), stored at ``path``; returns them."""
    templates = template_evaluations()
    out = []
    for i in range(n):
        ev = copy.deepcopy(templates[i % len(templates)])
        ev["id"] = f"{ev['id']}-{i:05d}"
        ev["app"] = "books" if i % 3 == 0 else "shop"
        if ev["app"] == "books":
            ev["question"] = f"{ev.get('question') or ''} {BOOKS_MARK}"
        ev["timestamp"] = iso(START + 600 * i)
        ev["agent"] = ev.get("agent") or "unknown-agent"
        out.append(ev)
    store = open_store(path)
    try:
        store.write(out)
    finally:
        store.close()
    return out


def loads(data: bytes) -> Any:
    return orjson.loads(data)

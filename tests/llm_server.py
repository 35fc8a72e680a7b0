"""A scriptable OpenAI-compatible HTTP server on 127.0.0.1 for the LLM tests.

Queue replies (chat completions, error statuses, delays, ``Retry-After`` headers, broken
bodies) and read back the requests the server got:

    with LLMServer() as srv:
        srv.enqueue(completion({"verdict": "correct", "confidence": 0.9}))
        ...  # point a client at srv.base_url
        srv.chat_requests[0].body["messages"]

When the queue is empty the server answers ``default`` (HTTP 500 unless set), so a test
that sends more requests than it scripted sees it fail rather than hang.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer. A ``dict``/``list`` body is sent as JSON, a ``str`` as is."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def completion(
    content: str | dict[str, Any],
    *,
    prompt_tokens: int = 120,
    completion_tokens: int = 30,
    model: str = "test-model",
) -> Reply:
    """A chat-completion reply whose message is ``content`` (a dict is sent as JSON text)."""
    text = json.dumps(content) if isinstance(content, dict) else content
    return Reply(
        body={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def error(status: int, message: str, **headers: str) -> Reply:
    """An OpenAI-style error reply."""
    return Reply(status=status, body={"error": {"message": message}}, headers=dict(headers))


class LLMServer:
    """The server; use as a context manager or call :meth:`start`/:meth:`stop`."""

    def __init__(self, default: Reply | None = None, reject_response_format: bool = False) -> None:
        self.default = default or error(500, "no scripted reply left")
        self.reject_response_format = reject_response_format
        self.requests: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def chat_requests(self) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            if (
                self.reject_response_format
                and isinstance(seen.body, dict)
                and "response_format" in seen.body
            ):
                return error(400, "Unrecognized request argument supplied: response_format")
            return self._queue.pop(0) if self._queue else self.default

    def start(self) -> LLMServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, reply: Reply) -> None:
                if reply.delay and server._stopping.wait(reply.delay):
                    return
                data = (
                    reply.body.encode()
                    if isinstance(reply.body, str)
                    else json.dumps(reply.body).encode()
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._reply(Reply(body={"object": "list", "data": [{"id": "test-model"}]}))
                else:
                    self._reply(error(404, "not found"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                seen = Seen("POST", self.path, dict(self.headers.items()), body)
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._reply(server._next(seen))
                finally:
                    with server._lock:
                        server.in_flight -= 1

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

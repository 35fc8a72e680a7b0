"""Loopback servers for the interop tests: a real uvicorn server, and a scripted receiver.

    with LiveServer(standalone_app(worker.submit)) as srv:   # uvicorn on 127.0.0.1
        ... srv.url + "/v1/traces"

    with Receiver([Reply(429, headers={"Retry-After": "1"}), Reply(200)]) as rx:
        ... rx.url; rx.seen[0].body

The receiver answers its script in order, then ``default`` (200 unless set); each reply may
wait (``delay``) before answering, to play a slow backend.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


class Receiver:
    """A scripted HTTP receiver on 127.0.0.1 that records every POST."""

    def __init__(self, script: list[Reply] | None = None, default: Reply | None = None) -> None:
        self.script = list(script or [])
        self.default = default or Reply()
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                with outer._lock:
                    outer.seen.append(
                        Seen(
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                            time.monotonic(),
                        )
                    )
                    reply = outer.script.pop(0) if outer.script else outer.default
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def dead_url() -> str:
    """A loopback URL nothing listens on (connections are refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


class LiveServer:
    """uvicorn serving ``app`` on a free 127.0.0.1 port in a thread."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def emit_openinference_trace(tracer: Any, agent_name: str, question: str, sql: str) -> Any:
    """An OpenInference-shaped agent trace: an AGENT span holding an LLM span whose answer
    carries ``sql`` in a fenced block (what Phoenix-instrumented agents send); returns the
    LLM span, the one the evaluation is filed under."""
    with tracer.start_as_current_span("sql_agent") as agent:
        agent.set_attributes(
            {
                "openinference.span.kind": "AGENT",
                "agent.name": agent_name,
                "input.value": question,
            }
        )
        with tracer.start_as_current_span("ChatCompletion") as llm:
            llm.set_attributes(
                {
                    "openinference.span.kind": "LLM",
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": question,
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": f"```sql\n{sql}\n```",
                }
            )
    return llm

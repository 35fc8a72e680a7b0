"""``create_app``: the service as one ASGI application (FastAPI).

Other packages add their own routes through ``routers`` and evaluate through
``app.state.evaluate_records(records, store=True)`` (a coroutine; evaluation runs in the
threadpool, or in the worker processes of ``ServiceConfig.eval_workers``), authenticating
with :func:`stef.service.deps.require_write`. ``/v1/traces`` stores through
``app.state.store_calls(records)``, which brings back only what the metrics count.

>>> import tempfile, pathlib
>>> from stef.service.engine import ServiceConfig
>>> app = create_app(ServiceConfig(store=pathlib.Path(tempfile.mkdtemp()) / "s.db", no_auth=True))
>>> sorted(p for p in app.openapi()["paths"] if p.startswith("/v1"))[:3]
['/v1/compare', '/v1/evaluate', '/v1/evaluations']
>>> app.state.engine.close()
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import stef.service.api as api
import stef.service.pages as pages
from stef._version import __version__
from stef.errors import StefError
from stef.service.auth import RateLimiter, TokenError, TokenSet
from stef.service.engine import Engine, ServiceConfig
from stef.service.errors import ApiError
from stef.service.metrics import InteropCollector

logger = logging.getLogger("stef.service")

EvaluateRecords = Callable[..., Awaitable[list[dict[str, Any]]]]


#: How much of an oversized body is read and dropped before the 413 goes out. A client
#: still sending when the server answers and closes would see its connection reset
#: instead of the answer; a body larger than this is cut off all the same.
DRAIN_LIMIT = 1 << 20


async def _drain(receive: Receive, budget: int) -> None:
    """Read and drop the rest of a request body, at most about ``budget`` bytes."""
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


class BodyLimit:
    """413 for a request body over ``limit`` bytes, by Content-Length or as it streams.
    Up to :data:`DRAIN_LIMIT` bytes of the body are read first, so that the client, which
    may still be sending, reads the 413 rather than a reset connection."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        error = ApiError(
            413,
            "payload_too_large",
            f"the request body is over the limit of {self.limit} bytes",
            field="body",
        )
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            if int(length) <= DRAIN_LIMIT:
                await _drain(receive, int(length))
            await _send_error(send, error)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    if message.get("more_body", False):
                        await _drain(receive, DRAIN_LIMIT - seen)
                    raise error
            return message

        await self.app(scope, limited, send)


class Timing:
    """``Server-Timing: app;dur=MS`` on every response, and the request histogram."""

    def __init__(self, app: ASGIApp, metrics: Any) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                took = time.perf_counter() - started
                headers = list(message.get("headers", []))
                headers.append((b"server-timing", f"app;dur={took * 1000:.2f}".encode()))
                message = {**message, "headers": headers}
                route = getattr(scope.get("route"), "path", None) or "unmatched"
                self.metrics.http.labels(route, scope["method"], str(message["status"])).observe(
                    took
                )
            await send(message)

        await self.app(scope, receive, timed)


async def _send_error(send: Send, error: ApiError) -> None:
    body = api.dumps(error.body())
    await send(
        {
            "type": "http.response.start",
            "status": error.status,
            "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def error_response(error: ApiError) -> Response:
    return Response(
        api.dumps(error.body()),
        status_code=error.status,
        media_type="application/json",
        headers=error.headers,
    )


def _field(loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc if p not in ("query", "path", "body", "header")]
    return ".".join(parts) or "body"


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def on_api_error(request: Request, exc: ApiError) -> Response:
        if getattr(request.state, "page", False):
            return pages.error_page(exc)
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        field = _field(first.get("loc", ()))
        message = f"{field}: {first.get('msg', 'invalid')}"
        return error_response(ApiError(422, "invalid_request", message, field=field))

    @app.exception_handler(HTTPException)
    async def on_http(request: Request, exc: HTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request")
        message = "no such page or endpoint" if exc.status_code == 404 else str(exc.detail)
        headers = dict(exc.headers or {})  # Allow: of a 405
        return error_response(ApiError(exc.status_code, code, message, headers=headers))

    @app.exception_handler(StefError)
    async def on_stef(request: Request, exc: StefError) -> Response:
        status = 503 if exc.status == "store_error" else 422
        code = "store_error" if status == 503 else "invalid_request"
        return error_response(ApiError(status, code, exc.message))

    @app.exception_handler(Exception)
    async def on_bug(request: Request, exc: Exception) -> Response:
        logger.exception("internal error on %s %s", request.method, request.url.path)
        return error_response(
            ApiError(500, "internal_error", f"internal error ({type(exc).__name__}); see the log")
        )


def _install_ingest(app: FastAPI, engine: Engine) -> None:
    """``app.state.evaluate_records`` (evaluate, store, answer the evaluations) and
    ``app.state.store_calls`` (``/v1/traces``' ingest function: every call evaluated and
    stored before the answer; in the worker processes when there are, ``eval_workers``)."""

    async def evaluate_records(records: list[Any], store: bool = True) -> list[dict[str, Any]]:
        return await run_in_threadpool(engine.evaluate_and_store, records, store)

    async def store_calls(records: list[Any]) -> bool:
        if engine.pool is None:
            await run_in_threadpool(engine.evaluate_and_store, records)
        else:
            engine.account(await asyncio.wrap_future(engine.submit(records)))
        return True

    app.state.evaluate_records = evaluate_records
    app.state.store_calls = store_calls


def create_app(
    config: ServiceConfig,
    routers: Sequence[APIRouter] = (),
    engine: Engine | None = None,
) -> FastAPI:
    """The service: the API, the dashboard, metrics, auth and limits.

    Raises :class:`~stef.service.auth.TokenError` when no token is configured and
    ``config.no_auth`` is false.
    """
    if not config.tokens and not config.no_auth:
        raise TokenError(
            message="no token configured: set STEF_TOKENS or --token-file, or pass --no-auth"
        )
    engine = engine or Engine(config)
    receiver = None
    if config.traces:
        from stef.service.traces import traces_receiver

        receiver = traces_receiver(config.trace_map, config.traces_wait, config.max_body_bytes)
        routers = [*routers, receiver.router]
    engine.metrics.registry.register(
        InteropCollector(receiver.stats if receiver else None, engine.deliveries)
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        if receiver is not None:
            await receiver.close()  # evaluates what is still held, before the store closes
        await run_in_threadpool(engine.close)  # flushes --export within its timeout

    app = FastAPI(
        title=config.title,
        version=__version__,
        summary="STEF evaluation service: evaluate, store, list, stats, compare, metrics.",
        docs_url=None,  # the Swagger and ReDoc pages load assets from a CDN
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.engine = engine
    app.state.traces_receiver = receiver
    app.state.tokens = TokenSet(config.tokens)
    app.state.no_auth = config.no_auth
    app.state.max_batch = config.max_batch
    app.state.limiter = (
        RateLimiter(config.rate_limit, config.rate_burst) if config.rate_limit else None
    )

    _install_ingest(app, engine)
    _install_handlers(app)
    app.include_router(api.router)
    for router in routers:
        app.include_router(router)
    app.include_router(pages.router)
    pages.mount_static(app)
    app.add_middleware(BodyLimit, limit=config.max_body_bytes)
    app.add_middleware(Timing, metrics=engine.metrics)
    if config.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    return app

"""``POST /v1/traces``: an OTLP/HTTP trace receiver that turns text-to-SQL spans into records.

Point an agent's OTLP/HTTP exporter at it (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=
http://stef:8000/v1/traces``). Protobuf (``application/x-protobuf``) and JSON
(``application/json``) bodies, gzip-encoded or not, are decoded; every text-to-SQL call
(:mod:`stef.interop.calls`) becomes a record and is handed to the ingest function once its
trace can be read (:mod:`stef.interop.assemble`: the root span arrived, or ``wait`` passed). Answers
follow the OTLP/HTTP specification: 200 with an ``ExportTraceServiceResponse`` in the
request's encoding; 400 with a ``google.rpc.Status`` for a body that cannot be decoded; 413
for a body over the limit; 415 for another content type; 503 with ``Retry-After`` when the
ingest function is full (returns ``False``) or fails, which exporters retry.
``dependencies`` (e.g. ``[Depends(require_write)]``) guard the route like the service's own.

The ingest function takes a list of records. It is given to :func:`traces_router`, or read
from ``request.app.state.<state_attr>`` at request time (``stef serve`` puts its
evaluate-and-store function there as ``evaluate_records``). It may be a coroutine
function; a plain function runs in the thread pool.

>>> router = traces_router(ingest=lambda records: True)
>>> [r.path for r in router.routes]
['/v1/traces']
"""

from __future__ import annotations

import asyncio
import gzip
import inspect
import json
import logging
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from stef.interop.assemble import TraceAssembler
from stef.interop.calls import TraceMap
from stef.interop.spans import PayloadError, Span, spans_from_otlp_json, spans_from_otlp_proto

log = logging.getLogger("stef.interop")
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
#: The largest body accepted (after decompression), in bytes.
MAX_BODY = 32 * 1024 * 1024
#: google.rpc.Code values used in error answers.
INVALID_ARGUMENT, UNAVAILABLE = 3, 14


def _status_body(code: int, message: str, as_proto: bool) -> tuple[bytes, str]:
    if as_proto:
        from google.rpc.status_pb2 import Status

        return Status(code=code, message=message).SerializeToString(), PROTOBUF
    return json.dumps({"code": code, "message": message}).encode(), JSON


def _error(http: int, code: int, message: str, as_proto: bool, **headers: str) -> Response:
    body, ctype = _status_body(code, message, as_proto)
    return Response(body, status_code=http, media_type=ctype, headers=headers)


def _success(as_proto: bool, records: int, refused: Sequence[tuple[str, str]] = ()) -> Response:
    headers = {"X-Stef-Records": str(records)}
    message = ""
    if refused:
        headers["X-Stef-Rejected"] = str(len(refused))
        message = f"{len(refused)} text-to-SQL span(s) refused; the first: {refused[0][1]}"
    if as_proto:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        answer = ExportTraceServiceResponse()
        if refused:
            answer.partial_success.rejected_spans = len(refused)
            answer.partial_success.error_message = message
        return Response(answer.SerializeToString(), media_type=PROTOBUF, headers=headers)
    body: dict[str, Any] = {}
    if refused:
        body["partialSuccess"] = {"rejectedSpans": len(refused), "errorMessage": message}
    return Response(json.dumps(body).encode(), media_type=JSON, headers=headers)


def _decompress(body: bytes, encoding: str, limit: int) -> bytes:
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise PayloadError(f"unsupported Content-Encoding {encoding!r} (gzip, deflate)")
    try:
        wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
        d = zlib.decompressobj(wbits)
        out = d.decompress(body, limit + 1)
    except (zlib.error, gzip.BadGzipFile) as e:
        raise PayloadError(f"body is not valid {encoding}: {e}") from None
    if len(out) > limit:
        raise OverflowError
    return out


def decode_spans(body: bytes, content_type: str) -> list[Span]:
    """The spans of an OTLP/HTTP body of the given content type."""
    if content_type == PROTOBUF:
        return spans_from_otlp_proto(body)
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError) as e:
        raise PayloadError(f"body is not JSON: {e}") from None
    return spans_from_otlp_json(payload)


#: What a screen returns: the records to hand on, and for each one refused a (reason code,
#: message) pair.
Screened = tuple[list[dict[str, Any]], list[tuple[str, str]]]


class TracesReceiver:
    """``POST /v1/traces`` (:attr:`router`) feeding ``ingest`` (or ``app.state``'s).

    Spans are held until their trace's root span arrives (or ``wait`` seconds pass), so a
    tool call exported before its agent span still gets the agent's question and name.
    :meth:`close` (call it from the app's lifespan) hands on what is still held.

    Spans are assembled per *owner*, ``request.state.principal`` (what
    :func:`stef.service.deps.require_write` sets; ``None`` without auth): spans sent with
    one token never complete a trace sent with another. ``screen(owner, records)``, when
    given, decides which records that owner may hand on; each one refused is counted by its
    reason and reported in the answer's ``partial_success`` (``rejected_spans``,
    ``error_message``), as the OTLP specification asks for data refused for good.
    """

    def __init__(
        self,
        *,
        ingest: Callable[[list[dict[str, Any]]], Any] | None = None,
        state_attr: str = "evaluate_records",
        dependencies: Sequence[Any] = (),
        trace_map: TraceMap | None = None,
        wait: float = 10.0,
        max_body: int = MAX_BODY,
        screen: Callable[[Any, list[dict[str, Any]]], Screened] | None = None,
        openapi_extra: dict[str, Any] | None = None,
        responses: dict[int | str, dict[str, Any]] | None = None,
    ) -> None:
        self.ingest, self.state_attr, self.wait, self.max_body = ingest, state_attr, wait, max_body
        self.trace_map = trace_map or TraceMap(source="otlp")
        self.screen = screen
        self._assemblers: dict[Any, TraceAssembler] = {}
        #: spans decoded, records handed on, records refused by reason, records lost
        self.counts: dict[str, Any] = {"spans": 0, "records": 0, "rejected": {}, "lost": 0}
        self._sweeper: asyncio.Task[None] | None = None
        self._app: Any = None
        self.router = APIRouter(dependencies=list(dependencies))
        self.router.add_api_route(
            "/v1/traces",
            self.receive,
            methods=["POST"],
            summary="OTLP/HTTP trace receiver",
            openapi_extra=openapi_extra,
            responses=responses,
        )

    def assembler(self, owner: Any = None) -> TraceAssembler:
        """The trace assembler of ``owner`` (made on first use)."""
        asm = self._assemblers.get(owner)
        if asm is None:
            asm = self._assemblers[owner] = TraceAssembler(self.trace_map, wait=self.wait)
        return asm

    def stats(self) -> dict[str, Any]:
        """The counts, and how many traces are held now."""
        held = sum(a.pending() for a in self._assemblers.values())
        return {**self.counts, "rejected": dict(self.counts["rejected"]), "held": held}

    def _refuse(self, owner: Any, records: list[dict[str, Any]]) -> Screened:
        if self.screen is None or not records:
            return records, []
        kept, refused = self.screen(owner, records)
        for code, _ in refused:
            self.counts["rejected"][code] = self.counts["rejected"].get(code, 0) + 1
        if refused:
            log.warning("stef /v1/traces: %d span(s) refused: %s", len(refused), refused[0][1])
        return kept, refused

    async def hand_on(self, app: Any, records: list[dict[str, Any]], owner: Any = None) -> bool:
        """Give records to the ingest function; ``True`` when it took them."""
        return (await self._hand_on(app, records, owner))[0]

    async def _hand_on(
        self, app: Any, records: list[dict[str, Any]], owner: Any
    ) -> tuple[bool, list[tuple[str, str]]]:
        """Screen, then ingest what is kept; records refused for good are marked handed on
        with the rest (a retried request does not count them again)."""
        kept, refused = self._refuse(owner, records)
        if kept:
            fn = self.ingest or getattr(app.state, self.state_attr, None)
            if fn is None:
                log.error("stef /v1/traces: no ingest function at app.state.%s", self.state_attr)
                return False, refused
            try:
                if inspect.iscoroutinefunction(fn):
                    accepted = await fn(kept)
                else:
                    accepted = await run_in_threadpool(fn, kept)
            except Exception:
                log.exception("stef /v1/traces: ingest of %d record(s) failed", len(kept))
                return False, refused
            if accepted is False:
                return False, refused
        self.counts["records"] += len(kept)
        self.assembler(owner).done(records)
        return True, refused

    async def _offer(self, app: Any, owner: Any, records: list[dict[str, Any]], when: str) -> None:
        if records and not await self.hand_on(app, records, owner):
            self.counts["lost"] += len(records)
            log.warning("stef /v1/traces: %d record(s) %s lost", len(records), when)

    async def _sweep(self, app: Any) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.wait / 2 or 0.05))
            for owner, asm in list(self._assemblers.items()):
                await self._offer(app, owner, asm.expire(), "of incomplete traces")

    async def close(self) -> None:
        """Stop the sweeper and hand on every record still held (at shutdown)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        if self._app is None:
            return
        for owner, asm in list(self._assemblers.items()):
            await self._offer(self._app, owner, asm.flush(), "held at shutdown")

    async def receive(self, request: Request) -> Response:
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        as_proto = ctype == PROTOBUF
        if ctype not in (PROTOBUF, JSON):
            msg = f"unsupported Content-Type {ctype or '(none)'!r}; send {PROTOBUF} or {JSON}"
            return _error(415, INVALID_ARGUMENT, msg, False)
        body = await request.body()
        encoding = request.headers.get("content-encoding", "").strip().lower()
        limit = self.max_body
        try:
            if len(body) > limit:
                raise OverflowError
            spans = decode_spans(_decompress(body, encoding, limit), ctype)
        except OverflowError:
            return _error(413, INVALID_ARGUMENT, f"body over {limit:,} bytes", as_proto)
        except PayloadError as e:
            return _error(400, INVALID_ARGUMENT, e.message, as_proto)
        if self._sweeper is None:
            self._app = request.app
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep(request.app))
        self.counts["spans"] += len(spans)
        owner = getattr(request.state, "principal", None)
        records = self.assembler(owner).add(spans)
        ok, refused = True, list[tuple[str, str]]()
        if records:
            ok, refused = await self._hand_on(request.app, records, owner)
        if not ok:
            msg = "evaluation queue is full; retry later"
            return _error(503, UNAVAILABLE, msg, as_proto, **{"Retry-After": "1"})
        return _success(as_proto, len(records) - len(refused), refused)


def traces_router(**options: Any) -> APIRouter:
    """The :class:`TracesReceiver` router alone (options as for :class:`TracesReceiver`)."""
    return TracesReceiver(**options).router


def standalone_app(ingest: Callable[[list[dict[str, Any]]], Any], **options: Any) -> Any:
    """A minimal FastAPI app serving only ``/v1/traces`` (tests, the benchmark)."""
    from contextlib import asynccontextmanager

    from fastapi import FastAPI

    receiver = TracesReceiver(**options)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        await receiver.close()

    app = FastAPI(title="stef traces receiver", lifespan=lifespan)
    app.state.evaluate_records = ingest
    app.state.traces_receiver = receiver
    app.include_router(receiver.router)
    return app

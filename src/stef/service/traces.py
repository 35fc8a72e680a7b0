"""``POST /v1/traces`` in the service: OTLP/HTTP traces in, each text-to-SQL call evaluated
and stored, under the same tokens as ``/v1/evaluate``.

The receiver is :class:`stef.interop.otlp_http.TracesReceiver`, guarded by
:func:`~stef.service.deps.require_write` and handing records to the service's
evaluate-and-store function for calls (``app.state.store_calls``). A token limited to
some apps writes only their evaluations, here as on ``/v1/evaluate``; a call span it may
not write is *refused for good* (an exporter must not retry it) and the others of the
request are evaluated: the answer is a 200 whose ``partial_success`` says how many spans
were refused and why (:func:`screen_apps`).

>>> from stef.service.auth import Principal
>>> shop = Principal("write", frozenset({"shop"}), "x")
>>> rec = {"id": "t-s", "app": "books", "metadata": {"span_id": "s"}}
>>> screen_apps(shop, [rec])
([], [('app_forbidden', "span s: this token may not write app 'books'; it may write ['shop']")])
>>> kept, refused = screen_apps(shop, [{"id": "t-u", "metadata": {"span_id": "u"}}])
>>> kept[0]["app"], refused
('shop', [])
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends

from stef.interop.calls import TraceMap
from stef.interop.otlp_http import JSON, PROTOBUF, Screened, TracesReceiver
from stef.service.auth import Principal
from stef.service.deps import require_write
from stef.service.errors import ERROR_SCHEMA

#: google.rpc.Status in OTLP/JSON: what 400, 413, 415 and 503 answer.
_STATUS = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
}
_BINARY = {"type": "string", "format": "binary"}
_ANSWER = {
    "type": "object",
    "description": "ExportTraceServiceResponse; partialSuccess when spans were refused.",
    "properties": {
        "partialSuccess": {
            "type": "object",
            "properties": {
                "rejectedSpans": {"type": "integer"},
                "errorMessage": {"type": "string"},
            },
        }
    },
}


def _content(json_schema: dict[str, Any], proto: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {JSON: {"schema": json_schema}}
    if proto:
        out[PROTOBUF] = {"schema": _BINARY}
    return out


OPENAPI_EXTRA: dict[str, Any] = {
    "description": "OTLP/HTTP: an ExportTraceServiceRequest as protobuf or OTLP/JSON "
    "(optionally gzip or deflate). Every text-to-SQL call span becomes a record, evaluated "
    "and stored once its trace's root span has arrived (docs/interop.md). Spans a token "
    "limited to some apps may not write are refused and counted (partialSuccess).",
    "requestBody": {
        "required": True,
        "content": _content(
            {
                "type": "object",
                "required": ["resourceSpans"],
                "properties": {"resourceSpans": {"type": "array", "items": {"type": "object"}}},
            }
        ),
    },
}
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Accepted (X-Stef-Records: calls evaluated).",
        "content": _content(_ANSWER),
    },
    400: {"description": "Not an OTLP body (google.rpc.Status).", "content": _content(_STATUS)},
    401: {"description": "No valid token.", "content": _content(ERROR_SCHEMA, proto=False)},
    403: {"description": "A read token.", "content": _content(ERROR_SCHEMA, proto=False)},
    413: {
        "description": "Body over the limit.",
        "content": _content({"anyOf": [_STATUS, ERROR_SCHEMA]}),
    },
    415: {"description": "Another content type.", "content": _content(_STATUS, proto=False)},
    429: {"description": "Rate limited.", "content": _content(ERROR_SCHEMA, proto=False)},
    503: {"description": "Evaluation failed; retry.", "content": _content(_STATUS)},
}


def screen_apps(who: Principal | None, records: list[dict[str, Any]]) -> Screened:
    """The records ``who`` may write, and a (reason, message) for each it may not.

    A token for all apps keeps everything. A token limited to one app gives a record that
    names no app that app (as ``/v1/evaluate`` does); a record of another app is refused
    (``app_forbidden``), and so is one naming no app when the token has several
    (``app_missing``: which of them is it?).
    """
    if who is None or who.apps is None:
        return records, []
    only = next(iter(who.apps)) if len(who.apps) == 1 else None
    kept: list[dict[str, Any]] = []
    refused: list[tuple[str, str]] = []
    for rec in records:
        span = (rec.get("metadata") or {}).get("span_id") or rec.get("id")
        app = rec.get("app")
        if app is None and only is not None:
            rec["app"] = only
            kept.append(rec)
        elif app is None:
            refused.append(
                (
                    "app_missing",
                    f"span {span}: no app, and this token may write {sorted(who.apps)}; "
                    "send it in an attribute (stef serve --trace-map app=ATTRIBUTE)",
                )
            )
        elif who.may_see(app):
            kept.append(rec)
        else:
            refused.append(
                (
                    "app_forbidden",
                    f"span {span}: this token may not write app {app!r}; "
                    f"it may write {sorted(who.apps)}",
                )
            )
    return kept, refused


def traces_receiver(
    trace_map: TraceMap | None = None, wait: float = 10.0, max_body: int = 32 * 1024 * 1024
) -> TracesReceiver:
    """The service's ``/v1/traces``: write tokens, app screening, the documented answers."""
    return TracesReceiver(
        state_attr="store_calls",
        dependencies=[Depends(require_write)],
        trace_map=trace_map,
        wait=wait,
        max_body=max_body,
        screen=screen_apps,
        openapi_extra=OPENAPI_EXTRA,
        responses=RESPONSES,
    )

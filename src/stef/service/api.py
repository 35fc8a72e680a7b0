"""The HTTP API under ``/v1``, plus ``/healthz``, ``/readyz`` and ``/metrics``.

Every store call and every evaluation runs in the threadpool (``run_in_threadpool``),
never on the event loop.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

import stef.service.queries as queries
import stef.service.schemas as s
from stef._version import __version__
from stef.service.auth import Principal
from stef.service.deps import require_read, require_write
from stef.service.engine import ingest_problem
from stef.service.errors import ApiError, invalid
from stef.service.metrics import CONTENT_TYPE

router = APIRouter()
Reader = Annotated[Principal, Depends(require_read)]
Writer = Annotated[Principal, Depends(require_write)]


def dumps(obj: Any) -> bytes:
    """JSON bytes (orjson; the standard library for what orjson refuses)."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(obj, ensure_ascii=False, default=str).encode()


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(dumps(obj), status_code=status, media_type="application/json")


async def read_json(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        raise invalid("the request body is empty; send a JSON object", "body")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise invalid(f"the request body is not JSON ({exc})", "body") from None


def _flag(value: str | None, name: str, default: bool) -> bool:
    if value is None:
        return default
    low = value.strip().lower()
    if low in ("1", "true", "yes"):
        return True
    if low in ("0", "false", "no"):
        return False
    raise invalid(f"{name} must be true or false", name)


def check_apps(items: list[Any], who: Principal, field: str) -> None:
    """403 unless ``who`` may write each item's app; a token of one app fills a missing one."""
    if who.apps is None:
        return
    only = next(iter(who.apps)) if len(who.apps) == 1 else None
    for i, item in enumerate(items):
        app = item.get("app")
        if app is None and only is not None:
            item["app"] = only
        elif not who.may_see(app):
            raise ApiError(
                403,
                "forbidden",
                f"this token may not write app {app!r}; it may write {sorted(who.apps)}",
                field=f"{field}[{i}].app",
            )


def check_records(records: list[Any], field: str) -> None:
    """422 for what the store could not keep: an unreadable ``timestamp`` (the store
    places records by time) or ``metadata`` that is not an object."""
    from stef.monitor.stats import to_epoch

    for i, rec in enumerate(records):
        where = f"{field}[{i}]" if field == "records" else "body"
        ts = rec.get("timestamp")
        if ts is not None and ts != "":
            try:
                ok = to_epoch(ts) is not None
            except (ValueError, OverflowError, TypeError):
                ok = False
            if not ok:
                raise invalid(f"timestamp {ts!r} is not an ISO 8601 time", f"{where}.timestamp")
        meta = rec.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise invalid("metadata must be an object or null", f"{where}.metadata")


def _items(data: Any, key: str, limit: int) -> tuple[list[Any], str]:
    """The objects of ``{key: [...]}`` or one object; errors name the field."""
    if not isinstance(data, dict):
        raise invalid(f"the body must be a JSON object (one item or {{{key!r}: [...]}})", "body")
    if key not in data:
        return [data], "body"
    items = data[key]
    if not isinstance(items, list):
        raise invalid(f"{key!r} must be a list", key)
    if len(items) > limit:
        raise ApiError(
            413,
            "batch_too_large",
            f"{len(items)} items in one request; at most {limit} are allowed",
            field=key,
        )
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise invalid("each item must be a JSON object", f"{key}[{i}]")
    return items, key


@router.post(
    "/v1/evaluate",
    summary="Evaluate one record or a batch",
    openapi_extra=s.body(s.EVALUATE_BODY),
    responses=s.responses(s.EVALUATIONS_OUT, 401, 403, 413, 422, 429),
)
async def evaluate(
    request: Request,
    who: Writer,
    store: str | None = Query(None, description="false: evaluate without storing."),
) -> Response:
    """Evaluate one record object, or ``{"records": [...]}``; answer ``{"evaluations": [...]}``
    in input order. Stored (idempotent by id) unless ``store=false``."""
    keep = _flag(store, "store", True)
    records, field = _items(await read_json(request), "records", request.app.state.max_batch)
    check_apps(records, who, "records" if field == "records" else "body")
    check_records(records, field)
    evaluate_records = request.app.state.evaluate_records
    evaluations = await evaluate_records(records, store=keep)
    return json_response({"evaluations": evaluations, "stored": keep})


@router.post(
    "/v1/ingest",
    summary="Store evaluations made elsewhere",
    openapi_extra=s.body(s.INGEST_BODY),
    responses=s.responses(s.INGEST_OUT, 401, 403, 413, 422, 429),
)
async def ingest(request: Request, who: Writer) -> Response:
    """``{"evaluations": [...]}`` (or one evaluation) as ``stef eval`` writes them;
    idempotent by id. An invalid evaluation is a 422 naming it; nothing is stored then."""
    items, field = _items(await read_json(request), "evaluations", request.app.state.max_batch)
    for i, ev in enumerate(items):
        problem = ingest_problem(ev)
        if problem:
            raise invalid(problem, f"evaluations[{i}]" if field == "evaluations" else "body")
    check_apps(items, who, "evaluations" if field == "evaluations" else "body")
    engine = request.app.state.engine
    new = await run_in_threadpool(engine.ingest, items)
    return json_response({"received": len(items), "new": new})


_SEL = {
    "agent": Query(None),
    "agent_version": Query(None),
    "app": Query(None),
    "status": Query(None, description="ok, or an error status such as sql_unparseable."),
    "finding": Query(None, description="Only evaluations with a finding of this kind."),
    "since": Query(None, description="ISO 8601 time or a duration ago (7d)."),
    "until": Query(None, description="ISO 8601 time or a duration ago."),
    "where": Query(None, description="CLI-style selection: agent=a,metadata.team=ops."),
}


def _params(request: Request) -> Mapping[str, Any]:
    return dict(request.query_params)


@router.get(
    "/v1/evaluations",
    summary="List evaluations",
    responses=s.responses(s.LIST_OUT, 401, 403, 422, 429),
)
async def list_evaluations(
    request: Request,
    who: Reader,
    agent: str | None = _SEL["agent"],
    agent_version: str | None = _SEL["agent_version"],
    app: str | None = _SEL["app"],
    status: str | None = _SEL["status"],
    finding: str | None = _SEL["finding"],
    since: str | None = _SEL["since"],
    until: str | None = _SEL["until"],
    where: str | None = _SEL["where"],
    band: str | None = Query(None, description="excellent, good, marginal or poor."),
    q: str | None = Query(None, description="Text searched in question and SQL."),
    sort: str | None = Query(None, description="-time (default), time, -score, score, -stored."),
    limit: str | None = Query(None, description="Page size, 1 to 500 (default 50)."),
    cursor: str | None = Query(None, description="next_cursor of the previous page."),
    full: str | None = Query(None, description="true: whole evaluations, not summaries."),
) -> Response:
    """A page of evaluations with the CLI's selections, sorting and cursor pagination."""
    params = _params(request)
    lq = queries.list_query(params)
    whole = _flag(full, "full", False)
    engine = request.app.state.engine
    page = await run_in_threadpool(lambda: queries.list_evaluations(engine.store(), lq, who))
    if not whole:
        page["evaluations"] = [queries.summary(e) for e in page["evaluations"]]
    return json_response(page)


@router.get(
    "/v1/evaluations/{evaluation_id}",
    summary="One evaluation",
    responses=s.responses(s.EVALUATION, 401, 404, 422, 429),
)
async def get_evaluation(request: Request, evaluation_id: str, who: Reader) -> Response:
    """The whole stored evaluation (404 when unknown or outside the token's apps)."""
    engine = request.app.state.engine
    ev = await run_in_threadpool(lambda: queries.get_evaluation(engine.store(), evaluation_id, who))
    return json_response(ev)


@router.get(
    "/v1/stats",
    summary="Figures per group and window (stef stats)",
    responses=s.responses(s.STATS_OUT, 401, 403, 422, 429),
)
async def stats(
    request: Request,
    who: Reader,
    by: str | None = Query(None, description="agent,agent_version (default), app, metadata.KEY."),
    window: str | None = Query(None, description="1h, 6h, 1d, 1w …"),
    top: str | None = Query(None, description="Finding kinds per row (default 3)."),
    agent: str | None = _SEL["agent"],
    agent_version: str | None = _SEL["agent_version"],
    app: str | None = _SEL["app"],
    status: str | None = _SEL["status"],
    finding: str | None = _SEL["finding"],
    since: str | None = _SEL["since"],
    until: str | None = _SEL["until"],
    where: str | None = _SEL["where"],
) -> Response:
    """The ``stef stats --json`` rows: records, coverage, mean, median, P10, P90, shares."""
    params = _params(request)
    engine = request.app.state.engine
    return json_response(
        await run_in_threadpool(lambda: queries.stats(engine.store(), params, who))
    )


@router.get(
    "/v1/compare",
    summary="Compare two selections (stef compare)",
    responses=s.responses(s.COMPARE_OUT, 401, 403, 422, 429),
)
async def compare(
    request: Request,
    who: Reader,
    baseline: str | None = Query(None, description="Selection, e.g. agent=a,agent_version=1."),
    candidate: str | None = Query(None, description="Selection, e.g. agent=a,agent_version=2."),
    since: str | None = _SEL["since"],
    until: str | None = _SEL["until"],
    alpha: str | None = Query(None, description="Significance level (default 0.05)."),
    min_records: str | None = Query(None, description="Fewer on a side: undecided (10)."),
) -> Response:
    """Mean and P90 differences with intervals, coverage, band shift, paired test, verdict."""
    params = _params(request)
    engine = request.app.state.engine
    return json_response(
        await run_in_threadpool(lambda: queries.comparison(engine.store(), params, who))
    )


@router.get("/v1/rules", summary="Rules per app", responses=s.responses(s.RULES_OUT, 401, 429))
async def rules(request: Request, who: Reader) -> Response:
    """The default rules and each app's own (only the token's apps)."""
    engine = request.app.state.engine
    apps = {
        app: engine.rules_of(app).model_dump(mode="json")
        for app in sorted(engine.by_app)
        if who.may_see(app)
    }
    return json_response({"default": engine.default.rules.model_dump(mode="json"), "apps": apps})


@router.get("/healthz", summary="Liveness", responses=s.responses(s.STATUS_OUT))
async def healthz() -> Response:
    """The process answers."""
    return json_response({"status": "ok", "version": __version__})


@router.get("/readyz", summary="Readiness", responses=s.responses(s.STATUS_OUT, 503))
async def readyz(request: Request) -> Response:
    """The store answers and is migrated (503 otherwise)."""
    ok, detail = await run_in_threadpool(request.app.state.engine.ready)
    if not ok:
        raise ApiError(503, "not_ready", detail)
    return json_response({"status": "ready"})


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    responses={
        200: {"content": {CONTENT_TYPE: {"schema": {"type": "string"}}}, "description": "OK"},
        401: s.responses({}, 401)[401],
        429: s.responses({}, 429)[429],
    },
)
async def metrics(request: Request, who: Reader) -> Response:
    """The Prometheus text format; a token limited to apps sees only their series."""
    body = request.app.state.engine.metrics.exposition(who.apps)
    return Response(body, media_type=CONTENT_TYPE)

"""The dashboard: server-rendered HTML pages (Jinja2), no script, no CDN.

Each page has its JSON twin in the API and links to it: the overview ``/`` is
``/v1/stats``, the list ``/evaluations`` is ``/v1/evaluations``, a record page is
``/v1/evaluations/{id}``, the compare page ``/v1/compare``. A browser signs in once on
``/login``; the token then travels in an HttpOnly, SameSite=Strict cookie, honoured on
reads only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool

import stef.service.charts as charts
import stef.service.queries as queries
from stef.monitor.report_html import BAND_COLORS, _fmt, _label, _pct, pick_window
from stef.monitor.stats import BANDS, figures
from stef.service.auth import Principal
from stef.service.deps import COOKIE, _limit, identify
from stef.service.highlight import segments

HERE = Path(__file__).parent
router = APIRouter(include_in_schema=False)
_ENV = Environment(
    loader=FileSystemLoader(str(HERE / "templates")),
    autoescape=select_autoescape(["html", "j2"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["num"] = _fmt
_ENV.filters["pct"] = _pct
_ENV.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False, default=str)
#: Strict: no script at all, styles from this origin (and inline SVG attributes).
CSP = (
    "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
LIST_FILTERS = ("agent", "agent_version", "app", "band", "status", "finding", "since", "until", "q")


class Links:
    """Where a page's links go: the server's URLs (this class), or anchors inside one offline
    file (:class:`OfflineLinks`); ``None`` where a page has nothing to link to."""

    offline = False

    def record(self, ev_id: Any) -> str | None:
        return "/evaluations/" + quote(str(ev_id), safe="/")

    def list(self, params: Mapping[str, Any]) -> str | None:
        return _link("/evaluations", params)

    def json(self, path: str, params: Mapping[str, Any]) -> str | None:
        return _link(path, params)


def anchor(ev_id: Any) -> str:
    """The element id of a record's page in an offline file (any id is safe in it).

    >>> anchor("r1")
    'r-82f3e9c695dc6b8d'
    """
    return "r-" + hashlib.sha256(str(ev_id).encode("utf-8")).hexdigest()[:16]


class OfflineLinks(Links):
    """Links inside a ``stef report`` file: a record's page is ``#r-…`` when the file holds
    it; the list is ``#evaluations-1`` (a filtered list exists only on a server)."""

    offline = True

    def __init__(self, ids: set[str]) -> None:
        self.ids = ids

    def record(self, ev_id: Any) -> str | None:
        return "#" + anchor(ev_id) if str(ev_id) in self.ids else None

    def list(self, params: Mapping[str, Any]) -> str | None:
        return None

    def json(self, path: str, params: Mapping[str, Any]) -> str | None:
        return None


ONLINE = Links()
_ENV.globals.update(links=ONLINE, offline=False, idp="")


def mount_static(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")


def render_html(name: str, **context: Any) -> str:
    """A template rendered to text (the server's pages and ``stef report``'s file)."""
    return _ENV.get_template(name).render(bands=BANDS, band_colors=BAND_COLORS, **context)


def render(
    name: str, status: int = 200, headers: dict[str, str] | None = None, **context: Any
) -> Response:
    html = render_html(name, **context)
    return Response(
        html,
        status_code=status,
        media_type="text/html",
        headers={
            "Content-Security-Policy": CSP,
            "X-Content-Type-Options": "nosniff",
            **(headers or {}),
        },
    )


def _who(request: Request) -> Principal | None:
    who = identify(request)
    if who is not None:
        _limit(request, who)
        request.state.page = True
    return who


def _login(request: Request, message: str | None = None) -> Response:
    return render("login.html.j2", status=401, message=message, next=request.url.path)


def _params(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.query_params.items() if v != ""}


def _link(path: str, params: Mapping[str, Any]) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


# -- overview ------------------------------------------------------------------------


def overview_context(
    engine: Any,
    params: dict[str, str],
    who: Principal,
    sel: Any = None,
    links: Links = ONLINE,
    width: float | None = None,
) -> dict[str, Any]:
    """What the overview shows of the selection ``sel`` (or ``params``'), for ``who``;
    ``width``: the over-time chart's window in seconds (chosen from the data by default)."""
    store = engine.store()
    sel = sel if sel is not None else queries.selection_from(params)
    sels = queries.scoped(sel, who)
    overall = queries.total_tally(store, sels)
    ctx: dict[str, Any] = {"overall": figures(overall, top=8), "empty": overall.records == 0}
    ctx["selection"] = sel.describe()
    if overall.records == 0:
        return ctx
    by = ["agent", "agent_version"]
    groups_all = sorted(
        queries.merged_tallies(store, sels, by=by).items(), key=lambda kv: -kv[1].records
    )
    groups = [(k[0], t) for k, t in groups_all[:8]]
    ctx["groups"] = [
        {
            "label": _label(values),
            "figures": figures(t, top=3),
            "link": links.list({**params, "agent": values[0], "agent_version": values[1]}),
        }
        for values, t in groups
    ]
    starts = [k[1] for k in queries.merged_tallies(store, sels, window=3600.0) if k[1] is not None]
    first, last = (min(starts), max(starts)) if starts else (0.0, 0.0)
    width = width or pick_window(first, last + 3600.0)
    series: dict[str, list[tuple[float, Any]]] = {}
    shown = {_label(v) for v, _ in groups}
    windowed = queries.merged_tallies(store, sels, by=by, window=width)
    for (values, start), tally in sorted(windowed.items(), key=lambda kv: kv[0][1] or 0.0):
        if _label(values) in shown and start is not None:
            series.setdefault(_label(values), []).append((start, tally))
    ctx["window_hours"] = width / 3600
    ctx["time_svg"] = charts.score_over_time(series, width)
    ctx["bands_svg"] = charts.band_shares([(_label(v), t) for v, t in groups])
    ctx["classes_svg"] = charts.classes([(_label(v), t) for v, t in groups])
    ctx["findings"] = [
        {
            "kind": k,
            "records": n,
            "share": share,
            "link": links.list({**params, "finding": k}),
        }
        for k, n, share in figures(overall, top=10).top_findings
    ]
    ctx["errors_links"] = {st: links.list({"status": st}) for st in ctx["overall"].errors}
    ctx["json_link"] = links.json(
        "/v1/stats", {**params, "by": "agent,agent_version", "window": f"{int(width)}s"}
    )
    return ctx


@router.get("/")
async def overview(request: Request) -> Response:
    who = _who(request)
    if who is None:
        return _login(request)
    params = _params(request)
    engine = request.app.state.engine
    ctx = await run_in_threadpool(overview_context, engine, params, who)
    return render("overview.html.j2", page="overview", params=params, **ctx)


# -- list ----------------------------------------------------------------------------


def list_rows(page: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for ev in page["evaluations"]:
        row = queries.summary(ev)
        row["shown_findings"] = [f for f in row["findings"] if f["severity"] != "info"]
        out.append(row)
    return out


def _choices(engine: Any, who: Principal) -> dict[str, list[str]]:
    keys = ("agent", "agent_version", "app")
    tallies = queries.merged_tallies(
        engine.store(), queries.scoped(queries.Selection(), who), by=list(keys)
    )
    found: dict[str, set[str]] = {k: set() for k in keys}
    kinds: set[str] = set()
    for (values, _), tally in tallies.items():
        for k, v in zip(keys, values, strict=True):
            if v is not None:
                found[k].add(v)
        kinds.update(k for k, n in tally.findings.items() if n)
    out = {k: sorted(v) for k, v in found.items()}
    out["finding"] = sorted(kinds)
    return out


@router.get("/evaluations")
async def evaluations(request: Request) -> Response:
    who = _who(request)
    if who is None:
        return _login(request)
    params = _params(request)
    lq = queries.list_query(params)
    engine = request.app.state.engine

    def work() -> tuple[dict[str, Any], dict[str, list[str]]]:
        page = queries.list_evaluations(engine.store(), lq, who, keyset=False)
        return page, _choices(engine, who)

    page, choices = await run_in_threadpool(work)
    base = {k: v for k, v in params.items() if k != "cursor"}
    prev_link = None
    if lq.offset > 0:
        prev_offset = max(0, lq.offset - lq.limit)
        prev_cursor = queries.encode_cursor(prev_offset) if prev_offset else None
        prev_link = _link("/evaluations", {**base, "cursor": prev_cursor})
    next_link = (
        _link("/evaluations", {**base, "cursor": page["next_cursor"]})
        if page["next_cursor"]
        else None
    )
    return render(
        "list.html.j2",
        page="list",
        params=params,
        rows=list_rows(page),
        total=page["total"],
        first=lq.offset + 1,
        sorts=queries.SORTS,
        sort=lq.sort,
        limit=lq.limit,
        choices=choices,
        prev_link=prev_link,
        next_link=next_link,
        json_link=_link("/v1/evaluations", params),
    )


# -- record --------------------------------------------------------------------------


@router.get("/evaluations/{evaluation_id}")
async def record(request: Request, evaluation_id: str) -> Response:
    who = _who(request)
    if who is None:
        return _login(request)
    engine = request.app.state.engine
    ev = await run_in_threadpool(lambda: queries.get_evaluation(engine.store(), evaluation_id, who))
    ctx = record_context(ev)
    return render("record.html.j2", json_link="/v1/evaluations/" + evaluation_id, **ctx)


def record_context(ev: dict[str, Any]) -> dict[str, Any]:
    """What a record's page shows: the SQL cut into segments by the findings it places."""
    findings = list(ev.get("findings") or [])
    sql = ev.get("sql") or ""
    segs = segments(sql, [f.get("sql") for f in findings])
    placed = {n for s in segs for n in s.findings}
    return {
        "page": "record",
        "ev": ev,
        "findings": [(i + 1, f, (i + 1) in placed) for i, f in enumerate(findings)],
        "sev": {i + 1: f.get("severity") for i, f in enumerate(findings)},
        "segments": segs,
        "time": ev.get("timestamp") or ev.get("evaluated_at"),
    }


# -- compare -------------------------------------------------------------------------


@router.get("/compare")
async def compare_page(request: Request) -> Response:
    who = _who(request)
    if who is None:
        return _login(request)
    params = _params(request)
    ctx: dict[str, Any] = {"params": params, "page": "compare"}
    if params.get("baseline") and params.get("candidate"):
        engine = request.app.state.engine
        ctx.update(await run_in_threadpool(compare_context, engine.store(), params, who))
        ctx["json_link"] = _link("/v1/compare", params)
    return render("compare.html.j2", **ctx)


def compare_context(store: Any, params: dict[str, str], who: Principal) -> dict[str, Any]:
    """The ``stef compare`` result of ``params``' baseline and candidate, and their chart."""
    result = queries.comparison(store, params, who)
    sides = []
    for name in ("baseline", "candidate"):
        sel = queries.parse_selection_text(params[name], name)
        tally = queries.total_tally(store, queries.scoped(sel, who))
        sides.append((f"{name}: {sel.describe()}", tally))
    return {"result": result, "svg": charts.distribution(sides)}


# -- sign-in -------------------------------------------------------------------------


@router.get("/login")
async def login_form(request: Request) -> Response:
    nxt = request.query_params.get("next", "/")
    return render("login.html.j2", status=200, message=None, next=nxt)


@router.post("/login")
async def login(request: Request) -> Response:
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    secret = (form.get("token") or [""])[0].strip()
    nxt = (form.get("next") or ["/"])[0]
    if not nxt.startswith("/") or nxt.startswith("//"):
        nxt = "/"
    state = request.app.state
    if not state.no_auth and (not secret or state.tokens.find(secret) is None):
        return render("login.html.j2", status=401, message="That token is not valid.", next=nxt)
    response = RedirectResponse(nxt, status_code=303)
    if secret:
        response.set_cookie(
            COOKIE, secret, httponly=True, samesite="strict", secure=request.url.scheme == "https"
        )
    return response


@router.post("/logout")
async def logout() -> Response:
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE)
    return response


def error_page(error: Any) -> Response:
    """An API error met by a page, as HTML."""
    return render("error.html.j2", status=error.status, error=error, headers=error.headers)

"""Reading the store for the API and the dashboard, always within what a principal may see.

A token limited to apps ``{shop}`` reads through selections narrowed to ``app=shop``; one
limited to several apps reads each app's tallies and adds them up, or (for lists) reads
and keeps only its apps' evaluations. Asking for an app outside the token's apps is a 403.

>>> from stef.service.auth import Principal
>>> p = Principal("read", frozenset({"a", "b"}), "x")
>>> [s.app for s in scoped(Selection(agent="bot"), p)]
['a', 'b']
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stef.errors import StefError
from stef.monitor.compare import compare
from stef.monitor.stats import BANDS, GroupKey, Tally, check_group_keys, parse_duration, rows
from stef.monitor.store import Selection, Store
from stef.monitor.store.keyset import check_position
from stef.service.auth import Principal
from stef.service.errors import ApiError, invalid

#: Orders a list may be sorted by (the store's).
SORTS = ("-time", "time", "-score", "score", "-stored")
#: Query parameters of a selection.
SELECTION_PARAMS = ("agent", "agent_version", "app", "status", "finding", "since", "until")
MAX_LIMIT = 500


def selection_from(
    params: Mapping[str, Any], prefix: str = "", where: str | None = None
) -> Selection:
    """A selection from query parameters (``agent``, ``since`` … and ``metadata.KEY``),
    on top of a CLI-style ``where`` (``agent=a,app=b``); errors name the parameter."""
    now = time.time()
    try:
        base = Selection.parse(where, now=now)
    except StefError as exc:
        raise invalid(exc.message, prefix + "where") from None
    pairs: dict[str, Any] = {}
    for key in SELECTION_PARAMS:
        value = params.get(prefix + key)
        if value not in (None, ""):
            pairs[key] = value
    for key, value in params.items():
        if key.startswith(prefix + "metadata.") and value not in (None, ""):
            pairs[key[len(prefix) :]] = value
    for key, value in pairs.items():
        try:
            part = Selection.from_mapping({key: value}, now=now)
        except StefError as exc:
            raise invalid(exc.message, prefix + key) from None
        if key.startswith("metadata."):
            base = base.narrowed(metadata={**base.metadata, **part.metadata})
        else:
            base = base.narrowed(**{key: getattr(part, key)})
    return base


def parse_selection_text(text: str, name: str) -> Selection:
    """A CLI-style selection given as one parameter (``baseline=agent=a,agent_version=1``)."""
    try:
        return Selection.parse(text, now=time.time())
    except StefError as exc:
        raise invalid(exc.message, name) from None


def scoped(sel: Selection, who: Principal) -> list[Selection]:
    """The selections ``who`` reads ``sel`` through (403 for an app outside its apps)."""
    if who.apps is None:
        return [sel]
    if sel.app is not None:
        if sel.app not in who.apps:
            raise ApiError(
                403, "forbidden", f"this token may not read app {sel.app!r}", field="app"
            )
        return [sel]
    return [sel.narrowed(app=a) for a in sorted(who.apps)]


def merged_tallies(
    store: Store, sels: Sequence[Selection], by: Sequence[str] = (), window: float | None = None
) -> dict[GroupKey, Tally]:
    out: dict[GroupKey, Tally] = {}
    for sel in sels:
        for key, tally in store.tallies(sel, by=by, window=window).items():
            if key in out:
                out[key].merge(tally)
            else:
                out[key] = tally
    return out


def total_tally(store: Store, sels: Sequence[Selection]) -> Tally:
    total = Tally()
    for tally in merged_tallies(store, sels).values():
        total.merge(tally)
    return total


# -- lists -------------------------------------------------------------------------


@dataclass(frozen=True)
class ListQuery:
    """What a list of evaluations asks for."""

    selection: Selection
    band: str | None = None
    text: str | None = None
    sort: str = "-time"
    limit: int = 50
    offset: int = 0
    #: keyset position to start after (a cursor from a keyset page), instead of ``offset``
    after: list[Any] | None = None

    def python_filters(self) -> bool:
        return self.band is not None or bool(self.text)


def list_query(params: Mapping[str, Any]) -> ListQuery:
    """Parse a list's parameters; every error names its parameter."""
    sel = selection_from(params, where=params.get("where") or None)
    band = params.get("band") or None
    if band is not None and band not in BANDS:
        raise invalid(f"band must be one of {', '.join(BANDS)}", "band")
    sort = params.get("sort") or "-time"
    if sort not in SORTS:
        raise invalid(f"sort must be one of {', '.join(SORTS)}", "sort")
    limit = _int(params.get("limit"), "limit", 50, 1, MAX_LIMIT)
    offset, after = decode_position(params.get("cursor") or None, sort)
    text = (params.get("q") or "").strip() or None
    return ListQuery(sel, band, text, sort, limit, offset, after)


def _int(value: Any, name: str, default: int, low: int, high: int) -> int:
    if value in (None, ""):
        return default
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise invalid(f"{name} must be an integer", name) from None
    if not low <= n <= high:
        raise invalid(f"{name} must be within [{low}, {high}]", name)
    return n


def encode_cursor(offset: int) -> str:
    """An opaque cursor for the page starting at ``offset``.

    >>> decode_cursor(encode_cursor(150))
    150
    """
    return base64.urlsafe_b64encode(json.dumps({"o": offset}).encode()).decode().rstrip("=")


def encode_keyset(position: Sequence[Any], sort: str) -> str:
    """An opaque cursor for the page after keyset ``position`` (from ``Store.page``) in ``sort``.

    >>> decode_position(encode_keyset([7, 1.5, None], "-time"), "-time")
    (0, [7, 1.5, None])
    """
    raw = json.dumps({"k": list(position), "s": sort}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int:
    """The offset of an offset cursor (0 for none)."""
    return decode_position(cursor, None)[0]


def decode_position(cursor: str | None, sort: str | None) -> tuple[int, list[Any] | None]:
    """(offset, keyset position) of a cursor this service gave out for ``sort``."""
    if cursor is None:
        return 0, None
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if "k" in data:
            if sort is not None and data.get("s") != sort:
                raise ValueError
            return 0, check_position(data["k"])
        offset = data["o"]
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ValueError
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
        raise invalid("cursor is not one this service gave out", "cursor") from None
    return int(offset), None


def _matches(ev: Mapping[str, Any], q: ListQuery, who: Principal) -> bool:
    if not who.may_see(ev.get("app")):
        return False
    if q.band is not None and ev.get("band") != q.band:
        return False
    if q.text:
        needle = q.text.lower()
        hay = (ev.get("question"), ev.get("enriched_question"), ev.get("sql"))
        if not any(isinstance(h, str) and needle in h.lower() for h in hay):
            return False
    return True


def list_evaluations(
    store: Store, q: ListQuery, who: Principal, keyset: bool = True
) -> dict[str, Any]:
    """One page: ``{"evaluations": [...], "next_cursor": …, "total": …}``.

    With ``keyset`` (the API), a list the store selects alone pages by keyset (its cursor
    holds the last row's position); else, and under band, text or several-app filters, by
    offset (the dashboard, which links to the previous page and numbers its rows).

    ``total`` is the count of the whole selection when the store can count it (no band,
    text or multi-app filter), else ``None``.
    """
    sels = scoped(q.selection, who)
    sel = sels[0] if len(sels) == 1 else q.selection
    if q.band is not None:
        if sel.status not in (None, "ok"):
            return {"evaluations": [], "next_cursor": None, "total": 0}
        sel = sel.narrowed(status="ok")
    filtered = q.python_filters() or len(sels) > 1
    pager = getattr(store, "page", None)
    if keyset and not filtered and q.offset == 0 and callable(pager):
        # Keyset pages: page 1,000 of a million evaluations costs what page 1 costs.
        rows, position = pager(sel, order_by=q.sort, limit=q.limit, after=q.after)
        return {
            "evaluations": rows,
            "next_cursor": None if position is None else encode_keyset(position, q.sort),
            "total": store.count(sel),
        }
    want = q.offset + q.limit + 1
    it: Iterator[dict[str, Any]] = store.query(
        selection=sel, order_by=q.sort, limit=None if filtered else want
    )
    page: list[dict[str, Any]] = []
    seen = 0
    more = False
    for ev in it:
        if filtered and not _matches(ev, q, who):
            continue
        if seen >= q.offset:
            if len(page) == q.limit:
                more = True
                break
            page.append(ev)
        seen += 1
    total = None if filtered else store.count(sel)
    return {
        "evaluations": page,
        "next_cursor": encode_cursor(q.offset + q.limit) if more else None,
        "total": total,
    }


def summary(ev: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a list shows of one evaluation."""
    bd = ev.get("breakdown") or {}
    keep = (
        "id", "status", "error", "score", "band", "agent", "agent_version", "app",
        "timestamp", "evaluated_at", "question", "sql",
    )  # fmt: skip
    out = {k: ev.get(k) for k in keep}
    out["filter_status"] = bd.get("filter_status")
    out["verdict"] = bd.get("verdict")
    out["findings"] = [
        {"kind": f.get("kind"), "severity": f.get("severity"), "message": f.get("message")}
        for f in ev.get("findings") or ()
    ]
    return out


def get_evaluation(store: Store, ev_id: str, who: Principal) -> dict[str, Any]:
    """One evaluation by id (404 when absent or outside the token's apps)."""
    getter = getattr(store, "get", None)
    found: dict[str, Any] | None = None
    if callable(getter):
        found = getter(ev_id)
    elif store.existing_ids([ev_id]):
        sels = scoped(Selection(), who)
        for sel in sels:
            found = next((e for e in store.query(selection=sel) if e.get("id") == ev_id), None)
            if found is not None:
                break
    if found is None or not who.may_see(found.get("app")):
        raise ApiError(404, "not_found", f"no evaluation with id {ev_id!r}", field="id")
    return found


# -- stats and compare ---------------------------------------------------------------


def stats(store: Store, params: Mapping[str, Any], who: Principal) -> dict[str, Any]:
    """The ``stef stats`` rows for ``by``, ``window`` and a selection."""
    by_text = params.get("by")
    keys = [k.strip() for k in ("agent,agent_version" if by_text is None else by_text).split(",")]
    keys = [k for k in keys if k]
    try:
        check_group_keys(keys)
    except ValueError as exc:
        raise invalid(str(exc), "by") from None
    window_text = params.get("window") or None
    try:
        width = parse_duration(window_text) if window_text else None
    except ValueError as exc:
        raise invalid(str(exc), "window") from None
    top = _int(params.get("top"), "top", 3, 0, 50)
    sel = selection_from(params, where=params.get("where") or None)
    tallies = merged_tallies(store, scoped(sel, who), by=keys, window=width)
    return {
        "by": keys,
        "window": window_text,
        "selection": sel.describe(),
        "rows": [r.to_dict() for r in rows(tallies, by=keys, top=top)],
    }


def comparison(store: Store, params: Mapping[str, Any], who: Principal) -> dict[str, Any]:
    """The ``stef compare`` result of two selections, verdict included."""
    sides = []
    extra = selection_from({k: params.get(k) for k in ("since", "until")})
    for name in ("baseline", "candidate"):
        text = params.get(name)
        if not text:
            raise invalid(f"{name} is required (a selection such as agent=a,agent_version=1)", name)
        sel = parse_selection_text(text, name)
        if extra.since is not None:
            sel = sel.narrowed(since=extra.since)
        if extra.until is not None:
            sel = sel.narrowed(until=extra.until)
        try:
            sels = scoped(sel, who)
        except ApiError as exc:
            exc.field = name
            raise
        pairs = [p for s in sels for p in store.score_pairs(s)]
        sides.append((sel, total_tally(store, sels), pairs))
    alpha = _float(params.get("alpha"), "alpha", 0.05)
    min_records = _int(params.get("min_records"), "min_records", 10, 1, 1_000_000)
    (bs, bt, bp), (cs, ct, cp) = sides
    result = compare(bt, ct, bp, cp, alpha=alpha, min_records=min_records).to_dict()
    result["baseline"]["selection"] = bs.describe()
    result["candidate"]["selection"] = cs.describe()
    return result


def _float(value: Any, name: str, default: float) -> float:
    if value in (None, ""):
        return default
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise invalid(f"{name} must be a number", name) from None
    if not 0 < x < 1:
        raise invalid(f"{name} must be within (0, 1)", name)
    return x

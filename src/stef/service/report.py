"""``stef report``: the dashboard's pages rendered into one self-contained offline file.

The same context functions and templates as the server's pages (:mod:`stef.service.pages`):
the overview, the evaluation list — paged inside the file, ``page_size`` rows a page, up to
``max_records`` records, lowest score first with error records after them — a page per listed
record (question, enriched question, the SQL with each finding's fragment marked, breakdown,
specs) and, with a baseline and a candidate, the compare page. Each page is a ``<section>``
shown by its anchor (``#overview``, ``#evaluations-2``, ``#r-…``) with CSS ``:target``: no
script, no request, the stylesheet inlined.

>>> import tempfile, pathlib
>>> from stef.monitor.store import open_store
>>> store = open_store(pathlib.Path(tempfile.mkdtemp()) / "s.db")
>>> "No evaluations stored for this selection yet." in build_report(store)
True
>>> store.close()
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import stef.service.pages as pages
from stef.monitor.stats import iso
from stef.monitor.store import Selection, Store
from stef.service.auth import ANONYMOUS

#: Shows one page at a time: the targeted one, else the overview (the last section).
OFFLINE_CSS = """
.page { display: none; } .page:target { display: block; }
#overview { display: block; } .page:target ~ #overview { display: none; }
.generated { margin: 0 0 8px; }
"""


class _Engine:
    """What the page context functions need of an engine: its store."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def store(self) -> Store:
        return self._store


def _listed(store: Store, sel: Selection, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` evaluations: scored ones lowest first, then the error records."""
    scored: list[dict[str, Any]] = []
    if sel.status in (None, "ok"):
        ok = sel.narrowed(status="ok")
        scored = list(store.query(selection=ok, order_by="score", limit=limit))
    rest = limit - len(scored)
    if rest <= 0 or sel.status == "ok":
        return scored
    errors = (ev for ev in store.query(selection=sel, order_by="-time") if ev.get("status") != "ok")
    return scored + list(itertools.islice(errors, rest))


def _list_pages(
    rows: list[dict[str, Any]], total: int, page_size: int, links: pages.OfflineLinks
) -> list[str]:
    chunks = [rows[i : i + page_size] for i in range(0, len(rows), page_size)] or [[]]
    out = []
    for n, chunk in enumerate(chunks, start=1):
        out.append(
            _page(
                "list.html.j2",
                f"evaluations-{n}",
                links,
                page="list",
                params={},
                rows=pages.list_rows({"evaluations": chunk}),
                total=total,
                first=(n - 1) * page_size + 1,
                prev_link=f"#evaluations-{n - 1}" if n > 1 else None,
                next_link=f"#evaluations-{n + 1}" if n < len(chunks) else None,
            )
        )
    return out


def _page(name: str, anchor_id: str, links: pages.OfflineLinks, **ctx: Any) -> str:
    """One page of the file: the server's template, as a ``<section id=anchor_id>``."""
    ctx.setdefault("json_link", None)
    return pages.render_html(
        name, offline=True, links=links, anchor_id=anchor_id, idp=anchor_id + "-", **ctx
    )


def build_report(
    store: Store,
    selection: Selection | None = None,
    baseline: str | None = None,
    candidate: str | None = None,
    title: str = "STEF report",
    window: float | None = None,
    page_size: int = 50,
    max_records: int = 1000,
    now: float | None = None,
) -> str:
    """The offline file (HTML text) of ``selection``'s evaluations in ``store``.

    ``baseline`` and ``candidate`` are selections as ``stef compare`` takes them
    (``agent_version=1.3``); ``window`` the over-time chart's window in seconds.
    """
    sel = selection or Selection()
    engine = _Engine(store)
    rows = _listed(store, sel, max_records)
    links = pages.OfflineLinks({str(ev.get("id")) for ev in rows})
    overview = pages.overview_context(engine, {}, ANONYMOUS, sel=sel, links=links, width=window)
    sections = _list_pages(rows, store.count(sel), page_size, links)
    for ev in rows:
        anchor = pages.anchor(ev.get("id"))
        sections.append(_page("record.html.j2", anchor, links, **pages.record_context(ev)))
    if baseline and candidate:
        params = {"baseline": baseline, "candidate": candidate}
        ctx = pages.compare_context(store, params, ANONYMOUS)
        sections.append(
            _page("compare.html.j2", "compare", links, page="compare", params=params, **ctx)
        )
    # last: shown when no other page is the target
    sections.append(
        _page("overview.html.j2", "overview", links, page="overview", params={}, **overview)
    )
    css = (pages.HERE / "static" / "style.css").read_text(encoding="utf-8") + OFFLINE_CSS
    return pages.render_html(
        "report.html.j2",
        title=title,
        css=css,
        sections=sections,
        compare=bool(baseline and candidate),
        generated=iso(time.time() if now is None else now),
        selection=sel.describe(),
        listed=len(rows),
        total=overview["overall"].records,
    )

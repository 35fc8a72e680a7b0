"""``stef report``: one self-contained HTML page of the stored evaluations.

Charts are drawn with matplotlib into inline SVG (text kept as text), the page has its
CSS inline and loads nothing from the network, so it opens offline and can be mailed.

>>> import tempfile, pathlib
>>> from stef.monitor.store import open_store
>>> store = open_store(pathlib.Path(tempfile.mkdtemp()) / "s.db")
>>> html = build_report(store)
>>> "No evaluations stored yet" in html and "http" not in html.split("<body")[0]
True
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from jinja2 import Environment, FileSystemLoader, select_autoescape
from matplotlib.figure import Figure

from stef.monitor.compare import Comparison, compare
from stef.monitor.stats import BANDS, FILTER_CLASSES, VERDICTS, Tally, figures, iso
from stef.monitor.store import Selection, Store

TEMPLATES = Path(__file__).parent / "templates"
BAND_COLORS = {"excellent": "#1a9850", "good": "#91cf60", "marginal": "#fdae61", "poor": "#d73027"}
FILTER_COLORS = dict(zip(FILTER_CLASSES, ("#1a9850", "#91cf60", "#fdae61", "#d73027"), strict=True))
VERDICT_COLORS = dict(zip(VERDICTS, ("#1a9850", "#91cf60", "#fdae61", "#d73027"), strict=True))
PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
MAX_GROUPS = 8
_STEPS = (3600.0, 6 * 3600.0, 86400.0, 7 * 86400.0, 30 * 86400.0)


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _figure(width: float, height: float) -> Figure:
    import matplotlib

    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["text.parse_math"] = False  # labels are user text: "$\\frac{$" is plain
    fig = Figure(figsize=(width, height), dpi=100)
    return fig


def _label(group: Sequence[str | None]) -> str:
    return " ".join(g if g is not None else "—" for g in group) or "all"


def pick_window(first: float, last: float, points: int = 40) -> float:
    """A window width giving about ``points`` points between two times.

    >>> pick_window(0, 30 * 86400)
    86400.0
    """
    span = max(last - first, 1.0)
    for step in _STEPS:
        if span / step <= points:
            return step
    return _STEPS[-1]


def _distribution_chart(groups: list[tuple[str, Tally]]) -> str:
    fig = _figure(9, 3.4)
    ax = fig.add_subplot()
    edges = np.arange(0, 110, 10.0)
    width = 10 / (len(groups) + 1)
    for i, (label, tally) in enumerate(groups):
        values, counts = tally.score_arrays()
        hist, _ = np.histogram(values, bins=edges, weights=counts)
        share = hist / max(1, counts.sum())
        ax.bar(
            edges[:-1] + width * (i + 0.5),
            share * 100,
            width=width,
            label=label,
            color=PALETTE[i % len(PALETTE)],
            align="edge",
        )
    ax.set_xlim(0, 100)
    ax.set_xticks(edges)
    ax.set_xlabel("score")
    ax.set_ylabel("% of evaluated records")
    ax.legend(fontsize=8, frameon=False, ncols=min(4, len(groups)))
    ax.grid(axis="y", alpha=0.3)
    return _svg(fig)


def _time_chart(series: dict[str, list[tuple[float, Tally]]], window: float) -> str:
    from datetime import datetime, timezone

    fig = _figure(9, 5.2)
    ax_mean, ax_cov = fig.subplots(2, 1, sharex=True, height_ratios=[2.2, 1])
    for i, (label, points) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        xs = [datetime.fromtimestamp(t + window / 2, tz=timezone.utc) for t, _ in points]
        figs = [figures(t) for _, t in points]
        ax_mean.plot(xs, [f.mean for f in figs], "-o", ms=3, color=color, label=f"{label} mean")
        ax_mean.plot(xs, [f.p90 for f in figs], "--", color=color, alpha=0.6, label=f"{label} P90")
        ax_cov.plot(xs, [100 * (f.coverage or 0) for f in figs], "-", color=color, label=label)
    ax_mean.set_ylabel("score")
    ax_mean.set_ylim(0, 105)
    ax_mean.grid(alpha=0.3)
    ax_mean.legend(fontsize=7, frameon=False, ncols=2, loc="lower left")
    ax_cov.set_ylabel("coverage %")
    ax_cov.set_ylim(max(0.0, ax_cov.get_ylim()[0] - 1), 100.5)
    ax_cov.grid(alpha=0.3)
    fig.autofmt_xdate()
    return _svg(fig)


def _stacked_chart(
    groups: list[tuple[str, Tally]], panels: list[tuple[str, str, dict[str, str]]]
) -> str:
    height = 0.9 + 0.32 * len(groups) * len(panels)
    fig = _figure(9, max(2.2, height))
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    labels = [label for label, _ in groups]
    for ax, (title, attr, colors) in zip(axes, panels, strict=True):
        left = np.zeros(len(groups))
        for key, color in colors.items():
            shares = np.array([getattr(figures(t), attr).get(key, 0.0) * 100 for _, t in groups])
            ax.barh(labels, shares, left=left, color=color, label=key.replace("_", " "))
            for y, (x0, w) in enumerate(zip(left, shares, strict=True)):
                if w >= 7:
                    ax.text(x0 + w / 2, y, f"{w:.0f}%", ha="center", va="center", fontsize=7)
            left += shares
        ax.set_xlim(0, 100)
        ax.set_title(title, fontsize=10, loc="left", pad=16)
        ax.invert_yaxis()
        ax.xaxis.set_major_formatter("{x:.0f}%")
        ax.legend(fontsize=7, frameon=False, ncols=4, loc="lower right", bbox_to_anchor=(1.0, 1.0))
    fig.subplots_adjust(hspace=0.6 + 0.1 * len(groups))
    return _svg(fig)


def _findings_of(ev: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    return [f for f in ev.get("findings") or [] if kind is None or f.get("kind") == kind]


def _record(ev: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": ev.get("id"),
        "group": _label([ev.get("agent"), ev.get("agent_version")]),
        "score": ev.get("score"),
        "band": ev.get("band"),
        "question": ev.get("question") or "",
        "sql": ev.get("sql") or "",
        "findings": [f for f in _findings_of(ev) if f.get("severity") != "info"],
        "time": ev.get("timestamp") or ev.get("evaluated_at"),
    }


def build_report(
    store: Store,
    *,
    selection: Selection | None = None,
    baseline: Selection | None = None,
    candidate: Selection | None = None,
    title: str = "STEF report",
    window: float | None = None,
    worst: int = 10,
    top_kinds: int = 8,
    alpha: float = 0.05,
    now: float | None = None,
) -> str:
    """Render the report of the evaluations in ``selection`` as one HTML string."""
    sel = selection or Selection()
    overall = Tally()
    for t in store.tallies(sel).values():
        overall.merge(t)
    context: dict[str, Any] = {
        "title": title,
        "generated": iso(now if now is not None else time.time()),
        "selection": sel.describe(),
        "empty": overall.records == 0,
        "overall": figures(overall, top=top_kinds),
        "bands": BANDS,
        "band_colors": BAND_COLORS,
    }
    if overall.records == 0:
        return _render(context)
    by = ["agent", "agent_version"]
    groups_all = sorted(store.tallies(sel, by=by).items(), key=lambda kv: -kv[1].records)
    groups = [(_label(k[0]), t) for k, t in groups_all[:MAX_GROUPS]]
    context["hidden_groups"] = max(0, len(groups_all) - MAX_GROUPS)
    context["groups"] = [(label, figures(t)) for label, t in groups]
    context["distribution_svg"] = _distribution_chart(groups)

    first = store.query(selection=sel, order_by="time", limit=1)
    last = store.latest_time(sel)
    t0 = next(first, {})
    from stef.monitor.store.sqlite import record_time

    start = record_time(t0) if t0 else 0.0
    width = window or pick_window(start, last or start)
    series: dict[str, list[tuple[float, Tally]]] = {}
    shown = {label for label, _ in groups}
    for (values, wstart), tally in sorted(
        store.tallies(sel, by=by, window=width).items(), key=lambda kv: kv[0][1] or 0.0
    ):
        label = _label(values)
        if label in shown and wstart is not None:
            series.setdefault(label, []).append((wstart, tally))
    context["window_hours"] = width / 3600
    context["time_svg"] = _time_chart(series, width)
    context["bands_svg"] = _stacked_chart(groups, [("Score bands", "bands", BAND_COLORS)])
    context["classes_svg"] = _stacked_chart(
        groups,
        [
            ("Filter classes", "filters", FILTER_COLORS),
            ("Judge verdicts", "verdicts", VERDICT_COLORS),
        ],
    )

    if baseline is not None and candidate is not None:
        context["comparison"] = _comparison(store, sel, baseline, candidate, alpha)

    worst_records = store.query(selection=sel.narrowed(status="ok"), order_by="score", limit=worst)
    context["worst"] = [_record(ev) for ev in worst_records]
    kinds = []
    for kind, n, share in figures(overall, top=top_kinds).top_findings:
        examples = []
        for ev in store.query(selection=sel.narrowed(finding=kind), order_by="-stored", limit=2):
            rec = _record(ev)
            rec["messages"] = [f.get("message", "") for f in _findings_of(ev, kind)]
            examples.append(rec)
        kinds.append({"kind": kind, "records": n, "share": share, "examples": examples})
    context["kinds"] = kinds
    return _render(context)


def _comparison(
    store: Store, sel: Selection, baseline: Selection, candidate: Selection, alpha: float
) -> dict[str, Any]:
    def merged(s: Selection) -> Selection:
        return Selection.from_mapping({**_as_map(sel), **_as_map(s)})

    b, c = merged(baseline), merged(candidate)
    tallies = []
    for s in (b, c):
        t = Tally()
        for part in store.tallies(s).values():
            t.merge(part)
        tallies.append(t)
    result: Comparison = compare(
        tallies[0], tallies[1], store.score_pairs(b), store.score_pairs(c), alpha=alpha
    )
    chart = _distribution_chart(
        [(f"baseline: {b.describe()}", tallies[0]), (f"candidate: {c.describe()}", tallies[1])]
    )
    return {"baseline": b.describe(), "candidate": c.describe(), "result": result, "svg": chart}


def _as_map(s: Selection) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: getattr(s, k)
        for k in ("agent", "agent_version", "app", "status", "finding", "since", "until")
        if getattr(s, k) is not None
    }
    out.update({f"metadata.{k}": v for k, v in s.metadata.items()})
    return out


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _render(context: dict[str, Any]) -> str:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _fmt
    env.filters["pct"] = _pct
    return env.get_template("report.html.j2").render(**context)

"""The drawing helpers of the dashboard's and ``stef report``'s charts (matplotlib into
inline SVG, text kept as text), their colours and number formats.

The pages themselves, online and in ``stef report``'s offline file, are rendered by
:mod:`stef.service.pages` (one code path; :mod:`stef.service.report` puts them in one file).

>>> _fmt(81.234), _pct(0.5), pick_window(0.0, 86400.0 * 3) / 3600
('81.2', '50.0%', 6.0)
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from stef.monitor.stats import FILTER_CLASSES, VERDICTS, Tally, figures

TEMPLATES = Path(__file__).parent / "templates"
BAND_COLORS = {"excellent": "#1a9850", "good": "#91cf60", "marginal": "#fdae61", "poor": "#d73027"}
FILTER_COLORS = dict(zip(FILTER_CLASSES, ("#1a9850", "#91cf60", "#fdae61", "#d73027"), strict=True))
VERDICT_COLORS = dict(zip(VERDICTS, ("#1a9850", "#91cf60", "#fdae61", "#d73027"), strict=True))
PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
MAX_GROUPS = 8
_STEPS = (3600.0, 6 * 3600.0, 86400.0, 7 * 86400.0, 30 * 86400.0)


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg")  # the layout engine fits it: one drawing, not two
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _figure(width: float, height: float) -> Figure:
    import matplotlib

    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["text.parse_math"] = False  # labels are user text: "$\\frac{$" is plain
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
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


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"

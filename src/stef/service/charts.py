"""Server-rendered SVG charts for the dashboard (matplotlib, text kept as text), reusing
the report's drawing helpers.

>>> from stef.monitor.stats import Tally
>>> t = Tally(); t.add({"status": "ok", "score": 80.0, "band": "good", "findings": []})
>>> score_over_time({"bot 1": [(0.0, t)]}, 3600.0).startswith("<svg")
True
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone

from stef.monitor import report_html as rh
from stef.monitor.stats import Tally, figures

_LOCK = threading.Lock()  # matplotlib's rcParams and font cache are process-wide
#: Score ranges of the bands, drawn behind the score line.
BAND_RANGES = (("poor", 0, 50), ("marginal", 50, 75), ("good", 75, 90), ("excellent", 90, 100))


def score_over_time(series: dict[str, list[tuple[float, Tally]]], window: float) -> str:
    """Mean score per window for each group over the band ranges, with coverage below."""
    with _LOCK:
        fig = rh._figure(9, 4.6)
        ax, ax_cov = fig.subplots(2, 1, sharex=True, height_ratios=[2.4, 1])
        for name, low, high in BAND_RANGES:
            ax.axhspan(low, high, color=rh.BAND_COLORS[name], alpha=0.12, lw=0)
            ax.text(1.005, (low + high) / 2, name, transform=ax.get_yaxis_transform(),
                    fontsize=7, va="center", color="#555")  # fmt: skip
        for i, (label, points) in enumerate(series.items()):
            color = rh.PALETTE[i % len(rh.PALETTE)]
            xs = [datetime.fromtimestamp(t + window / 2, tz=timezone.utc) for t, _ in points]
            figs = [figures(t) for _, t in points]
            ax.plot(xs, [f.mean for f in figs], "-o", ms=3, color=color, label=label)
            ax_cov.plot(xs, [100 * (f.coverage or 0) for f in figs], "-", color=color)
        ax.set_ylabel("mean score")
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7, frameon=False, ncols=3, loc="lower left")
        ax_cov.set_ylabel("coverage %")
        ax_cov.set_ylim(max(0.0, ax_cov.get_ylim()[0] - 1), 100.5)
        ax_cov.grid(alpha=0.3)
        fig.autofmt_xdate()
        return rh._svg(fig)


def band_shares(groups: list[tuple[str, Tally]]) -> str:
    """Stacked band shares per group (the report's chart)."""
    with _LOCK:
        return rh._stacked_chart(groups, [("Score bands", "bands", rh.BAND_COLORS)])


def classes(groups: list[tuple[str, Tally]]) -> str:
    """Stacked filter classes and judge verdicts per group."""
    panels = [
        ("Filter classes", "filters", rh.FILTER_COLORS),
        ("Judge verdicts", "verdicts", rh.VERDICT_COLORS),
    ]
    with _LOCK:
        return rh._stacked_chart(groups, panels)


def distribution(groups: list[tuple[str, Tally]]) -> str:
    """Score histograms side by side (the report's chart)."""
    with _LOCK:
        return rh._distribution_chart(groups)

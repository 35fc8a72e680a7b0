"""The ranges a store's scan of the rows is cut in (:meth:`SQLReader._slices
<stef.monitor.store.common.SQLReader._slices>`): ranges of ``seq`` (the table itself, read
without an index) or of the record time ``t`` (through its index, each range inside one
window where it can), of about a given number of rows each.

>>> ranges((1, 100, 0.0, 99.0), "seq", Selection(), None, 30)
[(-inf, 30.0), (30.0, 60.0), (60.0, 90.0), (90.0, inf)]
>>> ranges((1, 10, 0.0, 9.0), "t", Selection(), None, 30)
[(-inf, inf)]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from stef.monitor.store.selection import Selection

#: At most this many ranges for one figure query (else it scans all rows at once).
MAX_SLICES = 10_000
#: About how many rows a range of whole windows holds where a window holds fewer rows than
#: a range may (``per``): as few windows as reach it, one where a window alone does, and no
#: more than :data:`MAX_SLICES` ranges. A range of one window groups without each row's
#: window start computed, and small ranges sort their rows in less time than ``per`` rows.
WINDOW_ROWS = 200
#: The first and last ``seq`` and ``t``, each read from its index (a query of several
#: min/max aggregates would scan the table).
SPANS = "SELECT " + ", ".join(
    f"(SELECT {f}({c}) FROM evaluations)" for c in ("seq", "t") for f in ("min", "max")
)


def ranges(
    spans: Sequence[Any],
    column: str,
    sel: Selection,
    window: float | None,
    per: int,
    *,
    window_rows: int | None = WINDOW_ROWS,
    split: bool = True,
) -> list[tuple[float, float]]:
    """Ranges of ``column`` (``seq`` or ``t``) of about ``per`` rows each, from ``spans``
    (what :data:`SPANS` reads); a time range is a whole number of windows, or lies inside
    one. The rows are counted as the span of ``seq`` (dense: each write takes the next
    ones; no ``count(*)``). The first range starts at -inf and the last ends at +inf.
    Windows that hold fewer rows than ``per`` go about ``window_rows`` rows a range
    (:data:`WINDOW_ROWS`; ``None``: ``per``); ``split=False`` never cuts a window in
    several ranges (each group of a window then comes from one range, whole).

    >>> ranges((1, 100, 0.0, 99.0), "t", Selection(), 10.0, 30, window_rows=None)
    [(-inf, 20.0), (20.0, 40.0), (40.0, 60.0), (60.0, 80.0), (80.0, inf)]
    >>> len(ranges((1, 100, 0.0, 99.0), "t", Selection(), 10.0, 30, window_rows=10))  # one a window
    10
    >>> ranges((1, 100, 0.0, 99.0), "t", Selection(), 50.0, 30, split=False)
    [(-inf, 50.0), (50.0, inf)]
    """
    everything = [(-math.inf, math.inf)]
    if spans[0] is None or int(spans[1]) - int(spans[0]) + 1 <= per:
        return everything
    total = int(spans[1]) - int(spans[0]) + 1
    first, last = (spans[0], spans[1] + 1) if column == "seq" else (spans[2], spans[3])
    lo = max(float(first), sel.since if sel.since is not None else -math.inf)
    hi = min(float(last), sel.until if sel.until is not None else math.inf)
    if hi < lo:
        return everything
    width = max((float(last) - float(first)) * per / total, 1.0)
    if window is not None and window > width and split:
        # Several ranges per window, each inside one: their rows need no window start
        # computed (see ``SQLReader._sliced_groups``).
        per_window = math.ceil(window / width)
        start = math.floor(lo / window) * window
        count = (int((hi - start) // window) + 1) * per_window
        step = window / per_window
        edges = [start + (i // per_window) * window + (i % per_window) * step for i in range(count)]
    else:
        if window is not None:
            least = math.ceil(((hi - lo) / window + 1) / MAX_SLICES)  # windows a range
            small = width * min(window_rows or per, per) / per
            width = max(1, least, int(small // window)) * float(window)
        start = math.floor(lo / width) * width
        count = int((hi - start) // width) + 1
        edges = [start + i * width for i in range(count)]
    if count > MAX_SLICES:
        return everything
    edges += [math.inf]
    edges[0] = -math.inf
    return list(itertools.pairwise(edges))

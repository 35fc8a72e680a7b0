"""The frames of a query's windows: how many rows before the current one a moving aggregate
reads (``AVG(x) OVER (ORDER BY d ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)``: 6), or how
long a span (``RANGE BETWEEN INTERVAL '6 days' PRECEDING …``: 6 days), read from the sqlglot
tree.

>>> import sqlglot
>>> q = "SELECT AVG(x) OVER (ORDER BY d ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) FROM t"
>>> window_frames(list(sqlglot.parse_one(q, read="postgres").find_all(exp.Window)))
[['rows', 6.0, '']]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from stef.sql.outputs import RANKING, rank_cuts

#: Interval units as the unit a frame of rows or a question's period counts in.
_UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month"}
_UNITS |= {"months": "month", "hour": "hour", "hours": "hour", "year": "year", "years": "year"}


def window_flags(tree: exp.Expr, windows: Sequence[exp.Expr]) -> dict[str, list[Any]]:
    """The SQL spec's flags about windows: ``rank_cuts`` (:func:`stef.sql.outputs.rank_cuts`)
    and ``window_frames`` (:func:`window_frames`), empty where the query has no window."""
    if not windows:
        return {"rank_cuts": [], "window_frames": []}
    return {"rank_cuts": rank_cuts(tree), "window_frames": window_frames(windows)}


def window_frames(windows: Sequence[exp.Expr]) -> list[list[str | float]]:
    """``[kind, preceding, unit]`` of each window frame that reaches back a fixed way to the
    current row: ``rows`` and a count of rows (unit ``''``), or ``range`` and a span with
    its unit (``['range', 6.0, 'day']``). Frames open at the start (``UNBOUNDED``) or that
    end before the current row are left out."""
    out: list[list[str | float]] = []
    for win in windows:
        spec = win.args.get("spec")
        if not isinstance(spec, exp.WindowSpec) or spec.args.get("start_side") != "PRECEDING":
            continue
        end = spec.args.get("end")
        if end not in (None, "CURRENT ROW"):
            continue
        start = spec.args.get("start")
        kind = str(spec.args.get("kind") or "").casefold()
        if isinstance(start, exp.Literal) and not start.is_string and kind == "rows":
            out.append(["rows", float(start.this), ""])
        elif isinstance(start, exp.Interval) and kind == "range":
            amount, unit = start.this, start.args.get("unit")
            name = _UNITS.get(unit.name.casefold()) if unit is not None else None
            number = _float(amount.this) if isinstance(amount, exp.Literal) else None
            if name and number is not None:
                out.append(["range", number, name])
    return out


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def rank_windows(windows: Sequence[exp.Expr], render: Callable[[exp.Expr], str]) -> list[list[str]]:
    """``[key, direction]`` of the first ORDER BY key of each ranking window
    (``ROW_NUMBER``/``RANK``/``DENSE_RANK … OVER (ORDER BY …)``): a superlative may be
    answered by the rows ranked first; ``render`` writes the key as the spec names it.

    >>> import sqlglot
    >>> q = "SELECT n FROM (SELECT n, RANK() OVER (ORDER BY c DESC) AS r FROM t) WHERE r = 1"
    >>> rank_windows(list(sqlglot.parse_one(q).find_all(exp.Window)), lambda e: e.sql())
    [['c', 'desc']]
    """
    out: list[list[str]] = []
    for win in windows:
        order = win.args.get("order")
        if isinstance(win.this, RANKING) and order is not None and order.expressions:
            first = order.expressions[0]
            key = first.this if isinstance(first, exp.Ordered) else first
            out.append([render(key), "desc" if first.args.get("desc") else "asc"])
    return out

"""Keyset (cursor) pagination over the store's orders: the next page starts after the last
row seen, found through the index, however deep the page (no ``OFFSET`` to skip over).

A position is the last row's ``[seq, t, score]``; :func:`after_clause` is the condition
that keeps only rows after it in an order of :data:`stef.monitor.store.common.ORDERS`.

>>> after_clause("-time", [42, 1700000000.0, 80.0], "?")
('(e.t < ? OR (e.t = ? AND e.seq < ?))', [1700000000.0, 1700000000.0, 42])
>>> after_clause("score", [7, 0.0, None], "?")
('(e.score IS NULL AND e.seq > ?)', [7])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def check_position(after: Any) -> list[Any]:
    """``after`` as ``[seq, t, score]``, or ``ValueError`` saying what is wrong with it."""
    if (
        not isinstance(after, (list, tuple))
        or len(after) != 3
        or isinstance(after[0], bool)
        or not isinstance(after[0], int)
        or isinstance(after[1], bool)
        or not isinstance(after[1], (int, float))
        or (
            after[2] is not None
            and (isinstance(after[2], bool) or not isinstance(after[2], (int, float)))
        )
    ):
        raise ValueError("a page position is [seq, t, score] as a page returned it")
    return [int(after[0]), float(after[1]), None if after[2] is None else float(after[2])]


def after_clause(order_by: str | None, after: Sequence[Any], mark: str) -> tuple[str, list[Any]]:
    """SQL over ``evaluations e`` keeping the rows after position ``after`` in ``order_by``."""
    seq, t, score = check_position(after)
    if order_by in (None, "-stored"):
        return f"e.seq {'>' if order_by is None else '<'} {mark}", [seq]
    if order_by in ("time", "-time"):
        op = ">" if order_by == "time" else "<"
        return f"(e.t {op} {mark} OR (e.t = {mark} AND e.seq {op} {mark}))", [t, t, seq]
    if order_by in ("score", "-score"):
        if score is None:  # nulls come last, in storage order
            return f"(e.score IS NULL AND e.seq > {mark})", [seq]
        op = ">" if order_by == "score" else "<"
        return (
            f"(e.score IS NULL OR e.score {op} {mark} OR (e.score = {mark} AND e.seq > {mark}))",
            [score, score, seq],
        )
    raise ValueError(f"no keyset for order {order_by!r}")

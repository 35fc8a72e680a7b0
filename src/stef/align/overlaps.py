"""A period asked as the rows active during it: two columns that open and close each row.

"Monthly recurring revenue for December 2024" is answered by the subscriptions active in
December: ``start_date <= '2024-12-31' AND (end_date IS NULL OR end_date >= '2024-12-01')``.
Neither condition alone selects December (the first keeps every row begun by its end), but
together, on two columns, they keep the rows whose span meets it. Read from the spec's
filters only (a condition inside an OR is one too); no schema.
"""

from __future__ import annotations

from collections.abc import Sequence

from stef.align.dates import filter_span, nl_span
from stef.align.matching import canon_col
from stef.spec import Filter


def overlap_answer(
    req: Filter, candidates: Sequence[Filter], used: set[int]
) -> tuple[int, int] | None:
    """The positions of an upper bound at the asked period's end on one column and a lower
    bound at its start on another (see the module doc), or None.

    >>> req = Filter(None, "=", ("2024-12",), func="month")
    >>> began = Filter("start_date", "<=", ("2024-12-31",))
    >>> ended = Filter("end_date", ">=", ("2024-12-01",), clause="or")
    >>> overlap_answer(req, [began, ended], set())
    (0, 1)
    >>> overlap_answer(req, [began, Filter("start_date", ">=", ("2024-12-01",))], set())
    """
    want = nl_span(req)
    if want is None or want.start is None or want.end is None:
        return None
    bounds = [
        (i, c, filter_span(c))
        for i, c in enumerate(candidates)
        if i not in used and c.column and c.func is None and c.op in ("<", "<=", ">", ">=")
    ]
    for i, upper, up in bounds:
        if up is None or up.start is not None or up.end != want.end:
            continue
        for j, lower, low in bounds:
            if low is None or low.end is not None or low.start != want.start:
                continue
            if canon_col(str(lower.column)) != canon_col(str(upper.column)):
                return i, j
    return None

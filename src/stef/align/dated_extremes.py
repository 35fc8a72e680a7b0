"""The first or the last of a date asked, against the MIN or MAX the SQL takes of it.

"The earliest purchase date of each customer" is ``MIN(order_date)``; the SQL's
``MAX(order_date)`` gives each customer's latest (``aggregation_direction``, an error).
Read where the question puts a first/earliest or a last/latest/most recent before a dated
noun within a few words ("first purchase date", "the most recent order"), and the SQL takes
exactly one extreme, over a column named for a date. "Oldest" and "youngest" are left alone:
the oldest person has the earliest birth date.
"""

from __future__ import annotations

import re

from stef.findings import FindingCollector
from stef.spec import Spec
from stef.sql.predicates import DATE_LIKE_NAME

#: A first or a last of something dated: "first purchase", "the most recent order date".
_EXTREME = re.compile(
    r"\b(?:(?P<min>first|earliest)|(?P<max>last|latest|most\s+recent|newest))\s+"
    r"(?!(?:\d+|two|three|four|five|ten|few)\b)(?:[a-z]+\s+){0,2}?"
    r"(?P<n>date|purchase|order|login|visit|sale|payment|signup|activity|time|day|seen)s?\b"
)


def check_dated_extreme(sql: Spec, out: FindingCollector, text: str) -> None:
    """Report a first date answered by MAX, or a last one by MIN (see the module doc).
    ``text`` is the question (and hints) as :func:`stef.align.matching.searchable` gives it.

    >>> from stef.spec import Aggregation
    >>> sql = Spec(aggregations=[Aggregation("max", "order_date", False, "MAX(order_date)")])
    >>> out = FindingCollector()
    >>> check_dated_extreme(sql, out, " earliest purchase date of each customer ")
    >>> print(out.findings[0].message)
    the question asks for the earliest purchase; the SQL takes MAX(order_date), the latest
    """
    extremes = [a for a in sql.aggregations if a.func in ("min", "max")]
    if len(extremes) != 1 or sql.window_functions:
        return
    taken = extremes[0]
    arg = (taken.arg or "").rsplit(".", 1)[-1].casefold()
    if not arg or not arg.replace("_", "").isalnum() or not DATE_LIKE_NAME.search(arg):
        return  # a plain column named for a date, not an expression (an age)
    m = _EXTREME.search(text)
    if m is None:
        return
    asked = "min" if m.group("min") else "max"
    if taken.func == asked:
        return
    out.add(
        "aggregation_direction",
        "error",
        f"the question asks for the {m.group(0).strip()}; the SQL takes"
        f" {taken.text or f'{taken.func.upper()}({taken.arg})'},"
        f" the {'latest' if taken.func == 'max' else 'earliest'}",
        m.group(0).strip(),
        taken.text,
        "aggregation",
    )

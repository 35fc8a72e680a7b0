"""Comparisons the question asks for that need more than one figure per row.

* A row against its own group: "employees who earn more than the average salary of their
  department" compared with an overall average (``comparison_not_per_group``).
* A period against the one before: "month-over-month change in active users" answered by
  one figure per month and nothing that sets a month beside the one before it
  (``period_comparison_missing``).
* An average per unit: "average revenue per customer" as ``AVG(amount)`` over order rows,
  nothing making one figure per customer first (``average_per_unit_missing``).
* Duplicates: "duplicate email addresses" answered by SQL that sets no row beside another
  (``duplicates_unfound``).
* A moving aggregate over the wrong span: "7-day moving average" over a frame of 30 rows
  (``window_size_mismatch``).

Each reads the question's words and the SQL's shape (a subquery tied to nothing of the
outer row; no window, join, grouping or subquery at all), never a schema.
"""

from __future__ import annotations

import re

from stef.align.grouping import CATEGORY_HEADS
from stef.findings import FindingCollector
from stef.spec import Spec

#: A comparison with a figure of each row's own group: "earn more than the average salary
#: of their department", "above the mean for its category", "their team's average".
_OWN_GROUP = re.compile(
    r"\b(?:average|mean|median|avg|typical)\b[^.?!;]{0,40}?\b(?:of|in|for|within|across|among)"
    r"\s+(?:their|its|his|her|the\s+same)\s+(?:own\s+)?(?P<g>[a-z]{3,})"
    r"|\b(?:their|its|his|her)\s+(?:own\s+)?(?P<h>[a-z]{3,})(?:'s|\s+s)?\s+(?:average|mean|median)\b"
)
_COMPARED = frozenset({">", "<", ">=", "<=", "=", "!="})


def check_comparisons(sql: Spec, out: FindingCollector, text: str) -> None:
    """Every check of this module (see the module doc); ``text`` as
    :func:`stef.align.measures.check_median` takes it."""
    check_own_group(sql, out, text)
    check_period_over_period(sql, out, text)
    check_average_per_unit(sql, out, text)
    check_duplicates(sql, out, text)
    check_compared_to_figure(sql, out, text)
    check_moving_window(sql, out, text)


#: "a 7-day moving average", "12-month rolling sum", "30 day trailing mean".
_MOVING = re.compile(
    r"\b(?P<n>\d+)[- ](?P<unit>day|week|month|hour|year)s?\s+"
    r"(?:moving|rolling|trailing|running)\s+(?:average|avg|mean|sum|total|count)"
)


def check_moving_window(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question asks for an N-unit moving aggregate ("7-day moving average of daily
    orders") and every fixed window frame of the SQL spans another number of rows or
    another span (``ROWS BETWEEN 29 PRECEDING AND CURRENT ROW``: 30 rows): the average
    runs over the wrong number of days (``window_size_mismatch``, an error). A frame of
    ``N - 1`` rows before the current one spans N rows; one of ``N`` before it (N + 1 rows,
    an off-by-one many write) is let pass. ``text`` as :func:`check_own_group` takes it.

    >>> out = FindingCollector()
    >>> sql = Spec(flags={"window_frames": [["rows", 29.0, ""]]})
    >>> check_moving_window(sql, out, " 7-day moving average of daily orders ")
    >>> [f.kind for f in out.findings]
    ['window_size_mismatch']
    >>> ok = Spec(flags={"window_frames": [["rows", 6.0, ""]]})
    >>> check_moving_window(ok, out, " 7-day moving average of daily orders ")
    >>> len(out.findings)
    1
    """
    frames = sql.flags.get("window_frames")
    if not frames or (m := _MOVING.search(text)) is None:
        return
    n, unit = float(m.group("n")), m.group("unit")
    spans = [f for f in frames if f[0] == "rows" or f[2] == unit]
    if not spans or any(float(f[1]) in (n - 1, n) for f in spans):
        return
    kind, before, per = spans[0]
    size = f"{int(float(before)) + 1} rows" if kind == "rows" else f"{before:g} {per}s before"
    out.add(
        "window_size_mismatch",
        "error",
        f"the question asks for a {m.group(0)}; the SQL's window frame spans {size}",
        m.group(0),
        None,
        "aggregation",
    )


def check_own_group(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question compares each row with a figure of its own group ("employees who earn
    more than the average salary of their department") and the SQL compares it with a
    subquery tied to nothing of the outer row: no correlation or join, no window, so every
    row meets one overall figure (``comparison_not_per_group``). ``text`` as
    :func:`stef.align.measures.check_median` takes it.

    >>> from stef.spec import Filter
    >>> f = Filter("salary", ">", (), "salary > (SELECT AVG(salary) FROM employees)")
    >>> out = FindingCollector()
    >>> q = " employees who earn more than the average salary of their department "
    >>> check_own_group(Spec(filters=[f], subqueries=1), out, q)
    >>> [f.kind for f in out.findings]
    ['comparison_not_per_group']
    >>> tied = {"kind": "inner", "tables": ["employees"], "left": "dept_id"}
    >>> check_own_group(Spec(filters=[f], subqueries=1, joins=[tied]), out, q)
    >>> len(out.findings)
    1
    """
    if not sql.subqueries or sql.joins or sql.window_functions or sql.group_by:
        return
    m = _OWN_GROUP.search(text)
    if m is None:
        return
    compared = next((f for f in sql.filters if f.op in _COMPARED and not f.values), None)
    if compared is None:
        return
    group = m.group("g") or m.group("h")
    if m.group("h") and "'s" not in m.group(0) and group not in CATEGORY_HEADS:
        return  # "their overall average": the row's own history, unless a group is named
    out.add(
        "comparison_not_per_group",
        "warning",
        f"the question compares each row with a figure of its own {group}; the SQL's"
        f" {compared.text or compared.column} compares every row with one overall figure"
        " (the subquery is tied to nothing of the outer row)",
        m.group(0),
        compared.text,
        "aggregation",
    )


#: "month-over-month", "year over year", "YoY", "week-on-week": each period beside the last
#: ("MoM" and "WoW" are left out: "mom" and "wow" are words too).
_OVER_PERIOD = re.compile(
    r"\b(?:(?P<u>day|week|month|quarter|year)[- ]+(?:over|on)[- ]+(?P=u)|qoq|yoy)\b"
)


def check_period_over_period(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question compares each period with the one before ("month-over-month growth",
    "YoY change") and the SQL computes figures by period with nothing that sets two periods
    side by side: no window (``LAG``), join, subquery, CTE or set operation
    (``period_comparison_missing``). ``text`` as :func:`check_own_group` takes it.

    >>> out = FindingCollector()
    >>> check_period_over_period(Spec(group_by=["month"]), out, " month over month change ")
    >>> [f.kind for f in out.findings]
    ['period_comparison_missing']
    >>> check_period_over_period(Spec(group_by=["m"], window_functions=["lag"]), out, " mom ")
    >>> len(out.findings)
    1
    """
    m = _OVER_PERIOD.search(text)
    if m is None or sql.window_functions or sql.joins or sql.subqueries or sql.ctes:
        return
    if sql.set_operations or "case" in (sql.flags.get("functions") or ()):
        return  # two periods in CASE branches may stand side by side
    out.add(
        "period_comparison_missing",
        "warning",
        f"the question asks for {m.group(0).strip()!r}; the SQL sets no period beside the one"
        " before (no LAG window, self-join or subquery)",
        m.group(0).strip(),
        None,
        "aggregation",
    )


#: An average of each unit's total: "average revenue per customer", "average daily sales",
#: "orders per day on average".
_PER_UNIT = re.compile(
    r"\b(?:average|avg|mean)\s+(?:(?P<adj>daily|weekly|monthly|yearly|annual|hourly)\s+)?"
    r"(?P<m>[a-z]+)(?:\s+[a-z]+)?\s+per\s+(?P<u>[a-z]+)\b(?:\s+(?P<u2>[a-z]+))?"
    r"|\b(?:average|avg|mean)\s+(?:of\s+(?:the\s+)?)?"
    r"(?P<adj2>daily|weekly|monthly|yearly|annual|hourly)\s+[a-z]+"
)
_UNIT_OF = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year",
            "annual": "year", "hourly": "hour"}  # fmt: skip
_WORD = re.compile(r"[a-z]+")


def check_average_per_unit(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question averages a total per unit ("average revenue per customer", "average
    daily revenue") and the SQL averages its rows (``AVG(amount) FROM orders``) with
    nothing that makes one figure per unit first: no GROUP BY, subquery, CTE, window or
    division, and no table or averaged column named for the unit
    (``average_per_unit_missing``). ``text`` as :func:`check_own_group` takes it.

    >>> from stef.spec import Aggregation
    >>> sql = Spec(aggregations=[Aggregation("avg", "amount")], tables=["orders"])
    >>> out = FindingCollector()
    >>> check_average_per_unit(sql, out, " what is the average revenue per customer ")
    >>> check_average_per_unit(sql, out, " average daily revenue in march ")
    >>> [f.message.split(";")[0] for f in out.findings]  # doctest: +NORMALIZE_WHITESPACE
    ['the question averages per customer', 'the question averages per day']
    >>> users = Spec(aggregations=[Aggregation("avg", "revenue")], tables=["customers"])
    >>> check_average_per_unit(users, out, " average revenue per customer ")
    >>> len(out.findings)
    2
    """
    if not any(a.func == "avg" for a in sql.aggregations) or sql.group_by or sql.window_functions:
        return
    if sql.subqueries or sql.ctes or sql.flags.get("division"):
        return
    m = _PER_UNIT.search(text)
    if m is None:
        return
    adj = m.group("adj") or m.group("adj2")
    unit = _UNIT_OF[adj] if adj else m.group("u")
    if unit is None or (not adj and m.group("m") in ("number", "count", "amount")):
        return  # "average number of orders per customer": a count per unit, read elsewhere
    if not adj and (unit in CATEGORY_HEADS or m.group("u2") in CATEGORY_HEADS):
        return  # "per region", "per device type": a breakdown, which the grouping checks read
    stem = unit.rstrip("s")[:5]
    named = [*sql.tables, *(a.arg or "" for a in sql.aggregations if a.func == "avg")]
    if any(stem in w for n in named for w in _WORD.findall(n.casefold())):
        return  # AVG(revenue) FROM customers, AVG(daily_total): one row per unit already
    avg = next(a for a in sql.aggregations if a.func == "avg")
    out.add(
        "average_per_unit_missing",
        "warning",
        f"the question averages per {unit}; the SQL's {avg.text or 'AVG'} averages the rows of"
        f" {sql.tables[0] if sql.tables else 'its table'}, and nothing makes one figure per"
        f" {unit} first (no GROUP BY, subquery or division)",
        m.group(0).strip(),
        avg.text,
        "aggregation",
    )


#: Rows that share a value with another row: "duplicate email addresses", "repeated orders".
#: (Not a value named so: "closed as an exact duplicate".)
_DUPLICATES = re.compile(
    r"(?<!exact )(?<!than )(?<!an )(?<!a )\b(?:duplicate|duplicated|repeated)\s+"
    r"(?:[a-z]+\s+)?[a-z]+s\b"
    r"|(?<!exact )(?<!than )\bduplicates\b|\bappear(?:s|ing)?\s+more\s+than\s+once\b"
)


def check_duplicates(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question asks for duplicates ("duplicate email addresses") and nothing of the SQL
    compares rows with each other: no HAVING, window, GROUP BY, subquery, CTE or join
    (``duplicates_unfound``: ``SELECT DISTINCT email`` lists every address once).
    ``text`` as :func:`check_own_group` takes it.

    >>> out = FindingCollector()
    >>> check_duplicates(Spec(distinct=True, tables=["users"]), out, " duplicate email addresses ")
    >>> [f.kind for f in out.findings]
    ['duplicates_unfound']
    """
    m = _DUPLICATES.search(text) if "dup" in text or "repeat" in text or "once" in text else None
    if m is None or sql.group_by or sql.window_functions or sql.subqueries or sql.ctes:
        return
    if sql.joins or sql.set_operations or any(f.clause == "having" for f in sql.filters):
        return
    out.add(
        "duplicates_unfound",
        "warning",
        f"the question asks for duplicates ({m.group(0)!r}); nothing in the SQL (GROUP BY …"
        " HAVING, a window, a self-join) compares a row with the others",
        m.group(0),
        None,
        "aggregation",
    )


#: A row compared with a figure the question names rather than a number: "revenue larger
#: than the revenue of some companies in Austin", "a fee higher than average", "earn more than
#: their manager" (not "how many more … than", "three times more than").
_YES_NO = re.compile(r"\s*(?:is|are|was|were|does|do|did|has|have|will|can)\b")
_THAN_FIGURE = re.compile(
    r"(?<!many )(?<!much )(?<!times )\b(?:more|greater|larger|higher|bigger|less|fewer|smaller"
    r"|lower|older|younger|longer|shorter|heavier|lighter|taller|cheaper|costlier)"
    r"\s+than\s+(?:the|any|all|some|every|that|those|its|their|his|her|average|overall)\b"
)


def check_compared_to_figure(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question keeps the rows that exceed (or fall short of) a figure ("companies whose
    revenue is larger than the revenue of some companies in Austin") and the SQL compares
    nothing by order anywhere: no ``>``, ``<`` or BETWEEN (``comparison_missing``).
    ``text`` as :func:`check_own_group` takes it.

    >>> out = FindingCollector()
    >>> sql = Spec(flags={"compares_order": False})
    >>> check_compared_to_figure(sql, out, " campuses with a fee higher than average ")
    >>> [f.kind for f in out.findings]
    ['comparison_missing']
    """
    m = _THAN_FIGURE.search(text) if " than " in text else None
    if m is None or sql.flags.get("compares_order", True) or _YES_NO.match(text):
        return  # "is revenue higher than the target?" may be answered by both figures
    out.add(
        "comparison_missing",
        "warning",
        f"the question compares rows with a figure ({m.group(0)!r}); the SQL compares nothing"
        " (no >, < or BETWEEN)",
        m.group(0),
        None,
        "filter",
    )

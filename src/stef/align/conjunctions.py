"""Rows that must hold two values at once: "customers who placed orders in both 2022 and
2023", "users who bought both a laptop and a mouse". A row of orders holds one year and
one product, so such a question needs the values met across rows (``INTERSECT``, ``HAVING
COUNT(DISTINCT …) = 2``, two ``EXISTS``, a self-join); ``YEAR(d) IN (2022, 2023)`` alone
keeps the customers of either (``filter_wrong_operator``).

Left alone where "both" means each of the two (a GROUP BY or output of the compared
column: "revenue in both 2022 and 2023" by year) or where the SQL could meet them across
rows in any way.
"""

from __future__ import annotations

import re
from collections import Counter

from stef.align.matching import values_match
from stef.findings import FindingCollector
from stef.spec import Filter, Spec

#: "both A and B": the span of the two values.
_BOTH = re.compile(r"\bboth\s+(?P<span>[^.?!;]{1,80}?\band\b[^.?!;,]{1,60})", re.IGNORECASE)


def check_conjunctions(
    nl: Spec, sql: Spec, out: FindingCollector, question: str, hints: str | None = None
) -> None:
    """Two values a row must hold at once (:func:`check_both`), one kept and one excluded but
    both required (:func:`check_but_not`), two values set against each other but pooled into
    one figure (:func:`check_versus`), two values listed together
    compared on two columns (:func:`check_listed_columns`), and two stated conditions
    joined by OR (:func:`check_or_for_and`; an "or" of the hints allows one too)."""
    check_both(nl, sql, out, question)
    check_but_not(sql, out, question)
    check_versus(sql, out, question)
    check_listed_columns(sql, out, question)
    check_or_for_and(nl, sql, out, f"{question}\n{hints}" if hints else question)


def check_both(nl: Spec, sql: Spec, out: FindingCollector, question: str) -> None:
    """Report a single IN list (or OR) that keeps rows with either of two values the
    question asks each row's subject to have both of (see the module doc).

    >>> from stef.spec import Filter
    >>> years = [Filter(None, "=", (y,), y) for y in ("2022", "2023")]
    >>> kept = Filter("created_at", "in", ("2022", "2023"), "YEAR(created_at) IN (2022, 2023)")
    >>> out = FindingCollector()
    >>> nl, sql = Spec(filters=years), Spec(filters=[kept])
    >>> check_both(nl, sql, out, "Who ordered in both 2022, 2023")
    >>> out.findings
    []
    >>> check_both(nl, sql, out, "Who bought in both 2022 and 2023")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    >>> by_year = Spec(filters=[kept], group_by=["created_at"])
    >>> check_both(Spec(filters=years), by_year, out, "Sales in both 2022 and 2023")
    >>> len(out.findings)
    1
    """
    low = question.casefold()
    if "both" not in low or (m := _BOTH.search(question)) is None:
        return
    span = m.group("span").casefold()
    asked = [f for f in nl.filters if f.text and f.text.casefold() in span and f.values]
    if _union_of_either(asked, sql, out, m):
        return
    if not _single_rows(sql):
        return
    for f in sql.filters:
        if f.op != "in" or f.negated or not f.column:
            continue
        held = [
            a.text or a.values[0]
            for a in asked
            if any(values_match(a.values[0], v) for v in f.values)
        ]
        if len(held) < 2:  # lower-case values the question writes out: "both a laptop and a mouse"
            held = [v for v in f.values if _written(v, m.group("span"))]
        if len(held) < 2 or _each(sql, f.column):
            continue
        names = " and ".join(held[:2])
        out.add(
            "filter_wrong_operator",
            "error",
            f"the question asks for rows with both {names}; the SQL's {f.text or f.column}"
            " keeps those with either",
            m.group(0),
            f.text,
            "filter_alignment",
        )
        return


#: Two quoted values listed together ("'China' or 'Japan'"), not the two ends of a span
#: ("between 'Paris' and 'London'", "from 'A' to 'B'"). Unquoted names are not read: "Mike
#: Larson and Dante Alvarez" lists two people by four words.
_LISTED = re.compile(
    r"""(?<!between\s)(?<!from\s)(["'])([^"'\n]{1,40})\1\s*,?\s+(?:or|and)\s+(["'])"""
    r"""([^"'\n]{1,40})\3"""
)


def _compared_on(value: str, sql: Spec) -> set[str]:
    """The columns the SQL compares with exactly ``value`` (``=``, ``IN``, ``LIKE``)."""
    low = value.casefold()
    return {
        f.column.rsplit(".", 1)[-1]
        for f in sql.filters
        if f.column and f.op in ("=", "in", "like") and any(v.strip("%") == low for v in f.values)
    }


def check_listed_columns(sql: Spec, out: FindingCollector, question: str) -> None:
    """Two quoted values the question lists together ("perpetrators in country 'China' or
    'Japan'") are values of one attribute; the SQL comparing each on its own column
    (``country = 'China' OR location = 'Japan'``) reads one of them as something else
    (``filter_wrong_column``, a warning).

    >>> from stef.spec import Filter
    >>> pairs = [("country", "china"), ("location", "japan")]
    >>> sql = Spec(filters=[Filter(c, "=", (v,)) for c, v in pairs])
    >>> out = FindingCollector()
    >>> check_listed_columns(sql, out, "Perpetrators in country 'China' or 'Japan'?")
    >>> print(out.findings[0].message)
    the question lists 'China' with 'Japan'; the SQL compares them on country and location
    """
    if "'" not in question and '"' not in question:
        return
    for m in _LISTED.finditer(question):
        first, second = m.group(2), m.group(4)
        a, b = _compared_on(first, sql), _compared_on(second, sql)
        if a and b and a.isdisjoint(b):
            out.add(
                "filter_wrong_column",
                "warning",
                f"the question lists {first!r} with {second!r}; the SQL compares them on"
                f" {min(a)} and {min(b)}",
                m.group(0),
                f"{min(a)}, {min(b)}",
                "filter_alignment",
            )
            return


def _written(value: str, span: str) -> bool:
    """Does the "both" span write ``value`` out as a word of its own (a one-letter value
    in upper case: "product A", never the article "a"; SQL values come lower-cased)?

    >>> _written("mouse", "a laptop and a mouse"), _written("a", "a laptop and a mouse")
    (True, False)
    >>> _written("a", "product A and product B"), _written("lap", "a laptop and a mouse")
    (True, False)
    """
    if len(value) < 2:
        return re.search(rf"(?<!\S){re.escape(value.upper())}(?!\S)", span) is not None
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", span, re.IGNORECASE) is not None


#: "in 2023 but not in 2024", "Germany and not France": a second value excluded.
_BUT_NOT = re.compile(r"\b(?:but|and|yet)\s+not\b", re.IGNORECASE)


def check_but_not(sql: Spec, out: FindingCollector, question: str) -> None:
    """ "Customers who bought in 2023 but not in 2024" answered by an INTERSECT of the two
    years and no negation anywhere (no NOT, ``<>``, EXCEPT or outer join): the SQL keeps the
    customers of both years, the very ones the question excludes (``filter_wrong_operator``).

    >>> out = FindingCollector()
    >>> sql = Spec(set_operations=["intersect"], flags={"negation": False})
    >>> check_but_not(sql, out, "Customers who bought in 2023 but not in 2024")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    """
    ops = sql.set_operations
    if not ops or any(op != "intersect" for op in ops) or sql.flags.get("negation"):
        return
    if (m := _BUT_NOT.search(question)) is None:
        return
    out.add(
        "filter_wrong_operator",
        "error",
        f"the question excludes what follows {m.group(0)!r}; the SQL's INTERSECT keeps the rows"
        " of both sides, and nothing in it negates",
        m.group(0),
        "INTERSECT",
        "filter_alignment",
    )


#: "iOS vs Android", "weekends versus weekdays": two things set against each other.
_VERSUS = re.compile(
    r"(?P<a>[\w.+#-]+(?:\s+[\w.+#-]+)?)\s+(?:vs\.?|versus|compared\s+(?:to|with))\s+"
    r"(?P<b>[\w.+#-]+(?:\s+[\w.+#-]+)?)",
    re.IGNORECASE,
)


def check_versus(sql: Spec, out: FindingCollector, question: str) -> None:
    """Two values the question sets against each other ("average session length on iOS vs
    Android") that the SQL keeps together in one IN list (or OR) on a column it neither
    groups by, outputs, splits with CASE nor takes apart in a set operation: one figure for
    both, where the question compares two (``values_pooled``, an error).

    >>> from stef.spec import Filter
    >>> both = Filter("platform", "in", ("ios", "android"), "platform IN ('iOS', 'Android')")
    >>> out = FindingCollector()
    >>> check_versus(Spec(filters=[both]), out, "Average session length on iOS vs Android")
    >>> [f.kind for f in out.findings]
    ['values_pooled']
    >>> out = FindingCollector()
    >>> by = Spec(filters=[both], group_by=["platform"])
    >>> check_versus(by, out, "Average session length on iOS vs Android")
    >>> out.findings
    []
    """
    low = question.casefold()
    if "vs" not in low and "versus" not in low and "compared" not in low:
        return
    if sql.set_operations or sql.window_functions:
        return
    for m in _VERSUS.finditer(question):
        a, b = m.group("a"), m.group("b")
        for f in sql.filters:
            if f.op != "in" or f.negated or not f.column or f.clause != "where":
                continue
            first = next((v for v in f.values if _written(v, a)), None)
            second = next((v for v in f.values if _written(v, b) and v != first), None)
            if first is None or second is None:
                continue
            if _each(sql, f.column) or _split(sql, f.column):
                continue
            out.add(
                "values_pooled",
                "error",
                f"the question sets {_as_said(first, a)} against {_as_said(second, b)}; the"
                f" SQL's {f.text or f.column} pools them into one figure (no GROUP BY, output"
                " or CASE on its column)",
                m.group(0),
                f.text,
                "grouping",
            )
            return


def _as_said(value: str, text: str) -> str:
    """``value`` as ``text`` writes it ("ios" in "on iOS" → "iOS")."""
    m = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE)
    return m.group(0) if m else value


def _split(sql: Spec, column: str) -> bool:
    """Does a CASE condition of the SQL read ``column`` (two figures, one per value)?"""
    col = column.casefold()
    return any(f.clause == "case" and (f.column or "").casefold() == col for f in sql.filters)


def _union_of_either(
    asked: list[Filter], sql: Spec, out: FindingCollector, m: re.Match[str]
) -> bool:
    """ "Customers who bought both shoes and socks" as ``… WHERE category = 'shoes' UNION …
    WHERE category = 'socks'``: a UNION keeps the rows of either branch, so two of the
    asked values compared with ``=`` on one column across its branches keep those with
    either (``filter_wrong_operator``). Only a query whose set operations are all UNIONs,
    with nothing else that could meet the values across rows.

    >>> from stef.spec import Filter
    >>> asked = [Filter(None, "=", ("shoes",), "shoes")]  # "socks" is read from the span
    >>> sides = [Filter("category", "=", (v,), f"category = '{v}'") for v in ("shoes", "socks")]
    >>> out = FindingCollector()
    >>> m = _BOTH.search("Customers who bought both shoes and socks")
    >>> _union_of_either(asked, Spec(filters=sides, set_operations=["union"]), out, m)
    True
    >>> _union_of_either(asked, Spec(filters=sides, set_operations=["intersect"]), out, m)
    False
    """
    ops = sql.set_operations
    if not ops or any(not op.startswith("union") for op in ops):
        return False
    if sql.subqueries or sql.ctes or any(f.clause == "having" for f in sql.filters):
        return False
    by_column: dict[str, list[str]] = {}
    for f in sql.filters:
        if f.op != "=" or f.negated or not f.column or len(f.values) != 1:
            continue
        v = f.values[0]
        said = [a.text or a.values[0] for a in asked if values_match(a.values[0], v)]
        if said or _written(v, m.group("span")):  # "both shoes and socks", lower case
            by_column.setdefault(f.column.casefold(), []).append(said[0] if said else v)
    held = next((v for v in by_column.values() if len(set(v)) >= 2), None)
    if held is None:
        return False
    first, second = sorted(set(held), key=held.index)[:2]
    out.add(
        "filter_wrong_operator",
        "error",
        f"the question asks for rows with both {first} and {second}; the SQL's UNION keeps"
        " those with either",
        m.group(0),
        "UNION",
        "filter_alignment",
    )
    return True


def _single_rows(sql: Spec) -> bool:
    """Does nothing in the SQL meet values across rows: no set operation, HAVING,
    subquery, window or table joined to itself?"""
    if sql.set_operations or sql.subqueries or sql.ctes or sql.window_functions:
        return False
    if any(f.clause == "having" for f in sql.filters):
        return False
    return not any(len(set(j.get("tables") or ())) == 1 for j in sql.joins)


def _each(sql: Spec, column: str) -> bool:
    """Is the compared column a GROUP BY key or an output ("both" as "each of the two")?"""
    col = column.casefold()
    keys = [k.casefold() for k in sql.group_by]
    outputs = [c for p in sql.projections for c in p.columns]
    return any(col in k for k in keys) or any(col == c.casefold() for c in outputs)


#: Words of a question that allow either of two conditions.
_EITHER = re.compile(r"\b(?:or|either|any\s+of|whichever)\b", re.IGNORECASE)


def check_or_for_and(nl: Spec, sql: Spec, out: FindingCollector, question: str) -> None:
    """Two conditions the question states together ("customers in Germany with more than 5
    orders") that the SQL joins with OR (``country = 'Germany' OR orders > 5``): rows that
    meet either one are kept (``filter_wrong_operator``). Only where the question says no
    "or", "either" or "any of", and the two OR branches test different columns, each with a
    value the question states.

    >>> from stef.spec import Filter
    >>> nl = Spec(filters=[Filter(None, "=", ("germany",), "Germany", "question"),
    ...                    Filter(None, ">", ("5",), "more than 5", "question")])
    >>> sql = Spec(filters=[Filter("country", "=", ("germany",), "country = 'Germany'", "or"),
    ...                     Filter("orders", ">", ("5",), "orders > 5", "or")])
    >>> out = FindingCollector()
    >>> check_or_for_and(nl, sql, out, "List customers in Germany with more than 5 orders.")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    >>> check_or_for_and(nl, sql, out, "Customers in Germany or with more than 5 orders")
    >>> len(out.findings)
    1
    """
    if _EITHER.search(question):
        return
    branches = [f for f in sql.filters if f.clause == "or" and f.column and f.values]
    times = Counter(f.column for f in branches)
    if len(times) < 2:
        return
    stated = [a for a in nl.filters if a.clause == "question" and a.values]
    held: dict[str, str] = {}  # column -> the question's words it answers
    for f in branches:
        if times[f.column] > 1:
            continue  # "Mike Larson and Dante Alvarez": each branch tests the same columns
        for a in stated:
            said = a.text or a.values[0]
            if said in held.values() or a.op != f.op:
                continue
            if values_match(a.values[0], f.values[0]):
                held.setdefault(f.column or "", said)
    if len(held) < 2:
        return
    (c1, t1), (c2, t2) = list(held.items())[:2]
    out.add(
        "filter_wrong_operator",
        "warning",
        f"the question asks for {t1!r} and {t2!r} together; the SQL joins its conditions on"
        f" {c1} and {c2} with OR, keeping rows that meet either",
        f"{t1}; {t2}",
        None,
        "filter_alignment",
    )


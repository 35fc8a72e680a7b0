"""Checks of the SQL's literals against what their columns hold: a year compared with a
whole date, a name compared with a number, a range that selects nothing, an ORDER BY on a
column the WHERE clause pins to one value. Pure functions of the SQL spec.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stef.align.matching import float_value
from stef.findings import FindingCollector
from stef.spec import Filter, Spec
from stef.sql.predicates import DATE_LIKE_NAME

_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_ ]*")
#: What separates the words of a schema name (``first_name``, ``OrderDate``).
NAME_WORDS = re.compile(r"[^0-9a-z]+")


def descriptive(name: str) -> bool:
    """Does a column name a thing rather than count it (``store_name``, ``title``)?"""
    low = name.casefold()
    return low.endswith(("name", "title"))


#: Words that make a column a date (``date``, ``birthday``, ``opendate``, ``dob``).
_DATE_NAME = re.compile(r"date|birthday|\bdob\b")
#: A bare year or year-month ("2008", "2013-10"): part of a date, never a whole one.
_PARTIAL_DATE = re.compile(r"[12][0-9]{3}(?:-[0-9]{1,2})?")
_MAGNITUDE_OPS = frozenset({"<", ">", "<=", ">=", "between"})
#: Date parts a filter may take of a column (``strftime('%Y', d)`` → ``year``).
_DATE_PARTS = frozenset({"year", "month", "day", "year_month", "date"})


def _unquoted(value: str, text: str) -> bool:
    """Is ``value`` written in ``text`` as a bare number, not a quoted string?

    >>> _unquoted("1980", "dob > 1980"), _unquoted("1930", "birthday > '1930'")
    (True, False)
    """
    if "'" not in text and '"' not in text:  # what every quoted value needs
        return True
    return not any(f"{a}{value}{b}" in text for a in "'\"" for b in "'\"")


def check_value_formats(sql: Spec, out: FindingCollector) -> None:
    """Conditions whose value cannot have the column's form:

    - a date column equal to a bare year or year-month (``date = '2008'``) — a stored date
      never equals part of itself — or ranged against a bare number (``dob > 1980``),
      which compares a date string with a number; the year must be taken out
      (``strftime('%Y', date)``); or a range of a date ending at a year or a month
      (``date BETWEEN '2008-08' AND '2008-10'``), which leaves out that month's days;
    - a name or title compared by size with a number (``name > 5``);
    - a date part taken of a column whose name says no date (``strftime('%Y', frequency)``).

    >>> from stef.spec import Filter, Spec
    >>> out = FindingCollector()
    >>> check_value_formats(Spec(filters=[Filter("birth_date", "=", ("1920",))]), out)
    >>> check_value_formats(Spec(filters=[Filter("name", ">", ("5",), "name > 5")]), out)
    >>> check_value_formats(Spec(filters=[Filter("date", "between", ("2008-08", "2008-10"))]), out)
    >>> [f.kind for f in out.findings]
    ['date_compared_to_year', 'name_compared_to_number', 'date_compared_to_year']
    """
    for f in sql.filters:
        if f.func:
            _check_date_part(f, sql, out)
        if f.func or not f.column or f.clause == "join" or not f.values:
            continue
        words = NAME_WORDS.sub(" ", f.column.casefold())
        dated = _DATE_NAME.search(words) is not None
        if dated and any(
            _PARTIAL_DATE.fullmatch(v)
            and (f.op in ("=", "in") or (f.op in _MAGNITUDE_OPS and _unquoted(v, f.text)))
            for v in f.values
        ):
            out.add(
                "date_compared_to_year",
                "error",
                f"{f.text!r} compares a date with a bare year; no date matches it as meant",
                None,
                f.text,
                "value_format",
            )
        elif dated and f.op in ("<=", "between") and _PARTIAL_DATE.fullmatch(f.values[-1]):
            out.add(  # date BETWEEN '2008-08' AND '2008-10': '2008-10-15' sorts after '2008-10'
                "date_compared_to_year",
                "error",
                f"{f.text!r} ends at a bare year or month; the stored dates within it sort"
                " after it and are left out",
                None,
                f.text,
                "value_format",
            )
        elif (
            f.op in _MAGNITUDE_OPS
            and descriptive(f.column)
            and all(_NUMBER.fullmatch(v) and _unquoted(v, f.text) for v in f.values)
        ):
            out.add(
                "name_compared_to_number",
                "error",
                f"{f.text!r} compares a name by size with a number",
                None,
                f.text,
                "value_format",
            )


_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def _check_date_part(f: Filter, sql: Spec, out: FindingCollector) -> None:
    """A date part taken of a column whose name says no date (``date_part_of_non_date``), and
    strftime's two-digit month or day compared with one digit (``date_part_unpadded``)."""
    if (
        f.func in _DATE_PARTS
        and f.column
        and _PLAIN_NAME.fullmatch(f.column)
        and not DATE_LIKE_NAME.search(f.column.casefold())
        and not _dated_aggregate(f.column, sql)
    ):
        out.add(
            "date_part_of_non_date",
            "warning",
            f"{f.text!r} takes the {f.func} of {f.column!r}, whose name says no date",
            None,
            f.text,
            "value_format",
        )
    if f.func in ("month", "day") and _unpadded(f, sql.flags.get("string_literals") or ()):
        out.add(
            "date_part_unpadded",
            "error",
            f"{f.text!r} compares strftime's two-digit {f.func} ('09') with one digit;"
            " no row matches",
            None,
            f.text,
            "value_format",
        )


def _dated_aggregate(column: str, sql: Spec) -> bool:
    """Is ``column`` the name a subquery or CTE gives an aggregate of a dated column
    (``MIN(order_date) AS first_order``)?

    >>> sql = Spec(flags={"aggregate_aliases": [["first_order", "min", "order_date"]]})
    >>> _dated_aggregate("first_order", sql), _dated_aggregate("total", sql)
    (True, False)
    """
    name = column.rsplit(".", 1)[-1].casefold()
    return any(
        alias.casefold() == name and DATE_LIKE_NAME.search(arg.casefold()) is not None
        for alias, _func, arg in sql.flags.get("aggregate_aliases") or ()
    )


def _unpadded(f: Filter, written: Sequence[str]) -> bool:
    """Does a filter on SQLite's ``strftime('%m' | '%d', …)`` (text, always two digits)
    compare it with a string of one digit (``IN ('9', '10')``; ``written``: the SQL's string
    literals as written, since a filter's values are normalised)?

    >>> f = Filter("d", "in", ("9", "10"), "strftime('%m', d) IN ('9', '10')", func="month")
    >>> _unpadded(f, ["9", "10"]), _unpadded(f, ["09", "10"])
    (True, False)
    """
    one_digit = {v for v in written if len(v) == 1 and v.isdigit()}
    if not one_digit or "strftime" not in f.text.casefold():
        return False
    return not one_digit.isdisjoint(f.values)


def check_ranges(sql: Spec, out: FindingCollector) -> None:
    """Conditions no row can meet or sorts that cannot order anything:

    - a BETWEEN whose low bound is above its high one (``ua BETWEEN 8 AND 6.5``);
    - ORDER BY a column that a WHERE equality or IS NULL holds to one value
      (``WHERE a13 = 1996 ORDER BY a13``): every row ties, so the LIMIT picks any.

    >>> from stef.spec import Filter, OrderKey, Spec
    >>> out = FindingCollector()
    >>> check_ranges(Spec(filters=[Filter("ua", "between", ("8", "6.5"))]), out)
    >>> pinned = Spec(filters=[Filter("a13", "=", ("1996",))], order_by=[OrderKey("a13", "desc")])
    >>> check_ranges(pinned, out)
    >>> [f.kind for f in out.findings]
    ['empty_range', 'order_by_constant']
    """
    for f in sql.filters:
        if f.op != "between" or len(f.values) != 2:
            continue
        low, high = (float_value(v) for v in f.values)
        if low is not None and high is not None and low > high:
            out.add(
                "empty_range",
                "error",
                f"{f.text!r} has its low bound above its high one; no row meets it",
                None,
                f.text,
                "value_format",
            )
            break
    if sql.subqueries or sql.set_operations or sql.ctes:
        return  # the filters of another SELECT may pin their own column of that name
    pinned = {
        f.column
        for f in sql.filters
        if f.column
        and f.clause == "where"
        and not f.func
        and ((f.op == "=" and len(f.values) == 1) or f.op == "is null")
    }
    for o in sql.order_by:
        if not o.is_aggregate and o.key in pinned:
            out.add(
                "order_by_constant",
                "warning",
                f"ORDER BY {o.key} sorts rows that the WHERE clause holds to one {o.key}",
                None,
                o.text or o.key,
                "structure",
            )
            return

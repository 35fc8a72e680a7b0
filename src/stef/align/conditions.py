"""Conditions of the SQL that cannot say what they mean, read by :mod:`stef.sql.bounds` from
the tree as written and reported here: a column of no source of the query, ``= NULL``,
SQLite's strftime text compared with a number, a column compared with an aggregate of another
column, two bounds on one column the same way.

>>> out = FindingCollector()
>>> check_conditions(Spec(flags={"redundant_bounds": ["h > 1 OR h > 3"]}), out)
>>> [(f.kind, f.severity) for f in out.findings]
[('filter_redundant_bound', 'error')]
"""

from __future__ import annotations

from stef.findings import FindingCollector
from stef.spec import Spec

#: Each flag of :func:`stef.sql.bounds.condition_flags` and the finding its first entry (SQL
#: text) gives: kind, severity, message.
_CONDITIONS: tuple[tuple[str, str, str, str], ...] = (
    (
        "unknown_qualifiers",
        "column_source_unknown",
        "error",
        "{} is qualified by a name that no table, alias, subquery or CTE of the query has:"
        " the SQL does not run",
    ),
    (
        "null_compared",
        "null_compared",
        "error",
        "{} is never true: NULL is tested with IS NULL or IS NOT NULL",
    ),
    (
        "text_compared_to_number",
        "value_type_mismatch",
        "error",
        "{} compares strftime's text with a number: in SQLite no row matches",
    ),
    (
        "other_aggregate_compared",
        "aggregate_compared_other_column",
        "warning",
        "{} compares a column with an aggregate of another column",
    ),
    (
        "redundant_bounds",
        "filter_redundant_bound",
        "error",
        "{} bounds one column the same way twice: one of the two conditions does nothing (it"
        " was probably meant for another column or the other side)",
    ),
)


def check_conditions(sql: Spec, out: FindingCollector) -> None:
    """Report the conditions of the module doc, one finding of each kind at most: a column of
    no source of the query (``column_source_unknown``), a comparison with NULL by ``=``
    (``null_compared``), strftime's text compared with a number
    (``value_type_mismatch``), a column compared with an aggregate of another column
    (``aggregate_compared_other_column``), two bounds on one column the same way
    (``filter_redundant_bound``)."""
    for flag, kind, severity, message in _CONDITIONS:
        found = sql.flags.get(flag)
        if found:
            out.add(kind, severity, message.format(found[0]), None, found[0], "structure")

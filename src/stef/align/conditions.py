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


def check_conditions(sql: Spec, out: FindingCollector) -> None:
    """Report the conditions of the module doc, one finding of each kind at most: a column of
    no source of the query (``column_source_unknown``), a comparison with NULL by ``=``
    (``null_compared``), strftime's text compared with a number
    (``value_type_mismatch``), a column compared with an aggregate of another column
    (``aggregate_compared_other_column``), two bounds on one column the same way
    (``filter_redundant_bound``)."""
    for column in sql.flags.get("unknown_qualifiers") or ():
        out.add(
            "column_source_unknown",
            "error",
            f"{column} is qualified by a name that no table, alias, subquery or CTE of the"
            " query has: the SQL does not run",
            None,
            column,
            "structure",
        )
        break
    for compared in sql.flags.get("null_compared") or ():
        out.add(
            "null_compared",
            "error",
            f"{compared} is never true: NULL is tested with IS NULL or IS NOT NULL",
            None,
            compared,
            "structure",
        )
        break
    for compared in sql.flags.get("text_compared_to_number") or ():
        out.add(
            "value_type_mismatch",
            "error",
            f"{compared} compares strftime's text with a number: in SQLite no row matches",
            None,
            compared,
            "structure",
        )
        break
    for compared in sql.flags.get("other_aggregate_compared") or ():
        out.add(
            "aggregate_compared_other_column",
            "warning",
            f"{compared} compares a column with an aggregate of another column",
            None,
            compared,
            "structure",
        )
        break
    for chain in sql.flags.get("redundant_bounds") or ():
        out.add(
            "filter_redundant_bound",
            "error",
            f"{chain} bounds one column the same way twice: one of the two conditions does"
            " nothing (it was probably meant for another column or the other side)",
            None,
            chain,
            "structure",
        )
        return

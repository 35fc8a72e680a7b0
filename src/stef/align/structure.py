"""Structural checks that need no question: redundant or bridge-only tables, integer
division, identical set-operation sides, cartesian joins, duplicate outputs, aggregates in
WHERE and nested aggregates (flags set by :mod:`stef.sql.spec`).
"""

from __future__ import annotations

from stef.findings import FindingCollector
from stef.spec import Spec


def check_structure(sql: Spec, out: FindingCollector) -> None:
    flags = sql.flags
    for table in flags.get("redundant_tables") or ():
        out.add(
            "table_redundant",
            "warning",
            f"table {table!r} is joined but none of its columns is used",
            None,
            table,
            "structure",
        )
    for table in flags.get("bridge_tables") or ():
        out.add(
            "table_bridge_only",
            "warning",
            f"table {table!r} only links two other tables; none of its columns is used",
            None,
            table,
            "structure",
        )
    ungrouped = flags.get("ungrouped_columns") or ()
    if ungrouped:
        out.add(
            "ungrouped_column",
            "warning",
            f"column {ungrouped[0]!r} is selected beside an aggregate with no GROUP BY: "
            "its value is one arbitrary row's",
            None,
            ungrouped[0],
            "structure",
        )
    if flags.get("integer_division"):
        out.add(
            "integer_division",
            "warning",
            "integer operands are divided without a CAST: the dialect truncates the result",
            None,
            None,
            "structure",
        )
    if flags.get("identical_set_sides"):
        out.add(
            "set_operation_identical",
            "error",
            "both sides of the set operation are the same query",
            None,
            " ".join(sql.set_operations).upper(),
            "structure",
        )
    if flags.get("cartesian_join"):
        out.add(
            "cartesian_join",
            "warning",
            "tables are joined with no linking condition",
            None,
            ", ".join(sql.tables),
            "structure",
        )
    if flags.get("duplicate_projections"):
        out.add(
            "duplicate_projection",
            "warning",
            "the same expression is selected twice",
            None,
            None,
            "structure",
        )
    if flags.get("aggregate_in_where"):
        out.add(
            "aggregate_in_where",
            "error",
            "an aggregate appears in WHERE (it belongs in HAVING)",
            None,
            None,
            "structure",
        )
    if flags.get("nested_aggregate"):
        out.add(
            "nested_aggregate",
            "warning",
            "an aggregate is nested inside another",
            None,
            None,
            "structure",
        )

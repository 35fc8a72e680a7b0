"""Date spines: a series of dates a query generates as its rows, read as the period it keeps.

"Total sales for each month of 2024, including months with no sales" is answered by a
spine of months LEFT JOINed to the sales (PostgreSQL's ``generate_series('2024-01-01'::date,
'2024-12-01', '1 month')``, BigQuery's ``UNNEST(GENERATE_DATE_ARRAY('2024-01-01',
'2024-12-31', INTERVAL 1 DAY))``): the spine, not a WHERE, bounds the rows to 2024. Each
spine with literal ISO dates at both ends becomes two conditions on its column, from the
first date and before the step after the last (a month spine ending at ``2024-12-01`` keeps
December), so that the period checks read it like ``d >= '2024-01-01' AND d < '2025-01-01'``.

>>> import sqlglot
>>> q = "SELECT m FROM generate_series('2024-01-01'::date, '2024-12-01', '1 month') AS t(m)"
>>> [(f.column, f.op, f.values) for f in spine_filters(sqlglot.parse_one(q, read="postgres"))]
[('m', '>=', ('2024-01-01',)), ('m', '<', ('2025-01-01',))]
"""

from __future__ import annotations

import re
from datetime import date

from dateutil.relativedelta import relativedelta
from sqlglot import exp

from stef.spec import Filter
from stef.sql.clock import interval_amount

_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_STEPS = {"day": "days", "week": "weeks", "month": "months", "year": "years"}


def _day(node: exp.Expr | None) -> date | None:
    """A literal ISO date, under casts (``'2024-01-01'::date``), else None."""
    while isinstance(node, (exp.Cast, exp.TryCast)):
        node = node.this
    if not isinstance(node, exp.Literal) or not _ISO_DAY.fullmatch(node.name[:10]):
        return None
    try:
        return date.fromisoformat(node.name[:10])
    except ValueError:
        return None


def _after(last: date, step: exp.Expr | None) -> date | None:
    """The day after a spine's last step: ``last`` plus its step (one day without one)."""
    if step is None:
        return last + relativedelta(days=1)
    if isinstance(step, exp.Literal) and step.is_string:  # PostgreSQL's '1 month'
        step = exp.Interval(this=exp.Literal.string(step.name))
    got = interval_amount(step, lambda n: n.name)
    unit = _STEPS.get(got[1].casefold().removesuffix("s")) if got is not None else None
    if got is None or unit is None or got[0] <= 0 or got[0] != int(got[0]):
        return None
    return last + relativedelta(**{unit: int(got[0])})


def _column(node: exp.Expr) -> str:
    """The name the spine's rows go by: its alias's column (``AS t(m)``) or its alias."""
    source = node.parent
    while source is not None and not isinstance(source, (exp.Table, exp.Unnest, exp.From)):
        source = source.parent
    alias = source.args.get("alias") if source is not None else None
    if isinstance(alias, exp.TableAlias):
        columns = alias.args.get("columns") or []
        return str(columns[0].name if columns else alias.name).casefold()
    return "spine"


def spine_filters(tree: exp.Expr) -> list[Filter]:
    """Two conditions for each date spine of ``tree`` (see the module doc)."""
    out: list[Filter] = []
    for node in tree.find_all(exp.GenerateSeries, exp.GenerateDateArray):
        first, last = _day(node.args.get("start")), _day(node.args.get("end"))
        after = _after(last, node.args.get("step")) if last is not None else None
        if first is None or after is None or after <= first:
            continue
        column, text = _column(node), node.sql()
        out.append(Filter(column, ">=", (first.isoformat(),), text, "where"))
        out.append(Filter(column, "<", (after.isoformat(),), text, "where"))
    return out

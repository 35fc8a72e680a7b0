"""The event a question dates against the date column the SQL bounds.

"How many orders were shipped in March 2024?" answered by ``created_at >= '2024-03-01' AND
created_at < '2024-04-01'`` counts the orders created in March, not those shipped then: the
question dates an event (shipped, delivered, cancelled, paid, hired …) and the SQL bounds the
period on a column named for creation (``created_at``, ``order_date``, ``signup_date``),
while nothing of the SQL names the event but a test that it happened (``churned_at IS NOT
NULL``) (``date_column_mismatch``, a warning). A creation
verb ("placed", "signed up", "created") is answered by such a column, and a column named for
the event (``shipped_at``) answers it; neither is reported.
"""

from __future__ import annotations

import re

from stef.align.matching import name_words
from stef.align.states import participle_stem
from stef.findings import FindingCollector
from stef.spec import Filter, Spec

#: An event verb dated by a period right after it: "shipped in March", "hired since 2020".
_DATED_EVENT = re.compile(
    r"\b(?P<v>shipped|delivered|cancell?ed|refunded|paid|closed|resolved|hired|terminated"
    r"|completed|returned|renewed|churned|converted|approved|published|expired|activated"
    r"|dispatched|fulfilled|redeemed|answered|accepted)\s+"
    r"(?:in|on|during|between|since|before|after|from|last|this|within|over\s+the)\b"
)
#: Words of a date column named for when a row was made.
_CREATION = frozenset(
    {"created", "creation", "create", "placed", "ordered", "order", "signup", "registered"}
    | {"submitted", "posted", "inserted", "added", "opened"}
)
_DATED = frozenset({"date", "at", "time", "timestamp", "dt", "ts", "day", "on"})


def _stem(verb: str) -> str:
    """The stem a column named for the event shares: a participle's
    (:func:`stef.align.states.participle_stem`), an irregular one's first three letters.

    >>> _stem("shipped"), _stem("cancelled"), _stem("delivered"), _stem("paid")
    ('ship', 'cancel', 'deliver', 'pai')
    """
    return participle_stem(verb) if verb.endswith("ed") else verb[:3]


def _creation_column(f: Filter) -> bool:
    """Is the filter's column a date named for when its row was made (``created_at``,
    ``order_date``)?"""
    words = {w.casefold() for w in name_words((f.column or "").rsplit(".", 1)[-1])}
    return bool(words & _CREATION) and bool(words & _DATED or words & {"created", "creation"})


def check_event_dates(sql: Spec, out: FindingCollector, question: str) -> None:
    """Report a dated event answered by a creation date (see the module doc).

    >>> lo = Filter("created_at", ">=", ("2024-03-01",), "created_at >= '2024-03-01'")
    >>> out = FindingCollector()
    >>> check_event_dates(Spec(filters=[lo], columns=["created_at"]), out,
    ...                   "How many orders were shipped in March 2024?")
    >>> print(out.findings[0].message)
    the question dates when rows were shipped; the SQL bounds created_at, a creation date
    """
    m = _DATED_EVENT.search(question.casefold())
    if m is None:
        return
    stem = _stem(m.group("v"))
    bounds = (">", ">=", "<", "<=", "between", "=")
    dated = [f for f in sql.filters if f.clause in ("where", "having") and f.op in bounds]
    names = [*sql.tables, *sql.literals, *(f.column or "" for f in dated)]
    names += [p.expr for p in sql.projections] + [v for f in sql.filters for v in f.values]
    if any(stem in n.casefold() for n in names):
        return  # a table, value, output or bound named for the event: shipped_at >= …
    # (a column named for it only tested for NULL: the rows where it happened, dated otherwise)
    creation = next((f for f in dated if _creation_column(f)), None)
    if creation is None:
        return
    out.add(
        "date_column_mismatch",
        "warning",
        f"the question dates when rows were {m.group('v')}; the SQL bounds {creation.column},"
        " a creation date",
        m.group(0),
        creation.text,
        "filter_alignment",
    )

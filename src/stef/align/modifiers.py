"""A measure the question qualifies one way and the SQL aggregates qualified another way.

"What is the average amount due?" answered by ``AVG(amount_paid)``: the column shares the
measure's noun (amount) but names another kind of it (paid), a word the question never
says, while the question's own qualifier (due) names nothing of the SQL: one word for one
word (a unit or a form, ``_usd``, ``_mib``, ``_total``, is no kind). Both must hold:
``AVG(amount_usd)`` for "the average amount" (a unit), ``SUM(net_revenue)`` for "the total
net revenue" and ``SUM(amount)`` for "the total amount due" are left alone
(``aggregation_measure_mismatch``).

>>> from stef.spec import Aggregation
>>> nl = Spec(aggregations=[Aggregation("avg", None, False, "average amount due")])
>>> sql = Spec(aggregations=[Aggregation("avg", "amount_paid", False, "AVG(amount_paid)")],
...            columns=["amount_paid"], tables=["payments"])
>>> out = FindingCollector()
>>> check_measure_modifiers(nl, sql, out, " what is the average amount due for payments ")
>>> print(out.findings[0].message)
the question asks for the average of 'amount due'; the SQL averages amount_paid (paid)
"""

from __future__ import annotations

from stef.align.matching import name_words
from stef.align.measures import measure_words
from stef.align.terms import _Vocabulary
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.request import singular
from stef.spec import Spec

#: What each aggregate does to its measure, and what the question calls it, for a message.
_VERBS = {
    "avg": "averages",
    "sum": "adds up",
    "max": "takes the highest",
    "min": "takes the lowest",
}
_NOUNS = {"avg": "average", "sum": "total", "max": "highest", "min": "lowest"}
#: Words of a column name that say its unit, currency or form, not another kind of measure.
_FORM_WORDS = lx._words(
    """usd eur gbp jpy inr cny cad aud chf cent cents dollar dollars euro euros pound pounds
    amt val value num number total sum avg count cnt qty pct percent ratio rate raw
    km kg lb lbs mile miles meter meters metre metres hour hours hrs minute minutes min mins
    second seconds sec secs day days week weeks month months year years ms byte bytes kb mb gb
    tb kib mib gib sqft sqm ft"""
)


def check_measure_modifiers(nl: Spec, sql: Spec, out: FindingCollector, text: str) -> None:
    """Report an asked aggregate whose measure's qualifier names nothing of the SQL while
    the same aggregate of the SQL runs over a column of that measure named with a word the
    question never says (see the module doc). ``text`` is the question and hints as
    :func:`stef.align.matching.searchable` gives them."""
    vocabulary: _Vocabulary | None = None
    for asked in nl.aggregations:
        measure = measure_words(asked.text) if asked.func in _VERBS else None
        if measure is None or len(measure) < 2:
            continue
        for agg in sql.aggregations:
            if agg.func != asked.func or not agg.arg or "(" in agg.arg or " " in agg.arg:
                continue
            column = agg.arg.rsplit(".", 1)[-1]
            words = [singular(w.casefold()) for w in name_words(column) if len(w) >= 3]
            if not set(measure) & set(words):
                continue  # the column is no kind of the measure
            other = [w for w in words if w not in measure and w not in _FORM_WORDS]
            if len(other) != 1 or f" {other[0]}" in text:
                continue  # no other kind, the question's own word, or more than one word
            vocabulary = vocabulary or _Vocabulary.of(sql)[0]
            unsaid = [m for m in measure if m not in words and not vocabulary.accounts(m)]
            if len(unsaid) != 1:
                continue  # one qualifier for another, or nothing to compare
            out.add(
                "aggregation_measure_mismatch",
                "warning",
                f"the question asks for the {_NOUNS[agg.func]} of {' '.join(measure)!r}; the SQL"
                f" {_VERBS[agg.func]} {column} ({' '.join(other)})",
                asked.text,
                agg.text,
                "aggregation",
            )
            return

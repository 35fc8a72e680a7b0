"""A condition the question negates that the SQL keeps as its own rows.

"Which countries do not have a stadium that was opened after 2006?" answered by ``SELECT
country FROM stadium WHERE opening_year > 2006``, "Which products were not sold in 2023?"
by an inner join kept to ``year = 2023``: the question excludes the rows of a value it
states, the SQL keeps exactly those rows and negates nothing anywhere (no NOT, ``<>``,
NOT IN, NOT EXISTS, EXCEPT or outer join): it lists the countries and products that did
(``filter_wrong_operator``). The negation must stand in the value's own clause (no "and",
"or", "but" or comma between them), and not right before a comparison it turns around
("not older than 30" is ``<= 30``), and the value's condition must be the SQL's only one
(another may carry the negation: a flag, ``istextless = 1``, or a value, ``status =
'Retired'`` for "did not finish on 2015-11-29"). Periods relative to now are
:func:`stef.align.clock_periods.check_negated_periods`' to read.

>>> from stef.spec import Filter
>>> f = Filter("opening_year", ">", ("2006",), "Opening_year > 2006", "where")
>>> out = FindingCollector()
>>> check_negated_values(Spec(filters=[f]), out,
...     "Which countries do not have a stadium that was opened after 2006?")
>>> check_negated_values(Spec(filters=[f]), out, "Which countries are not older than 2006?")
>>> [f.kind for f in out.findings]
['filter_wrong_operator']
"""

from __future__ import annotations

import re

from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.spec import Spec

#: Where a clause ends, between a negation and the value it would govern.
_CLAUSE_BREAK = re.compile(r"[,;:.?!]|\b(?:and|or|but|while|whereas|although|though)\b")
#: A comparison right after the negation, which the negation turns around ("not older
#: than 30", "no more than 5", "not before 2010").
_TURNED = re.compile(
    r"\s*(?:(?:be|been|being|is|are|was|were)\s+)?(?:[a-z]+er\s+than|more|less|fewer|above"
    r"|below|over|under|exceed\w*|before|after|earlier|later|at\s+(?:least|most)|equal"
    r"|greater|smaller|higher|lower|larger|bigger|between|within|in\s+the\s+(?:last|past))\b"
)
#: How far back (characters) a negation may stand from the value it governs.
_REACH = 60
_OPS = frozenset({"=", ">", "<", ">=", "<=", "between", "like", "in"})


def check_negated_values(sql: Spec, out: FindingCollector, question: str) -> None:
    """Report a value the question excludes that the SQL's only conditions keep (see the
    module doc); said once."""
    if sql.flags.get("negation") or any(f.negated for f in sql.filters):
        return
    kept = [f for f in sql.filters if f.clause == "where"]
    if len(kept) != 1 or any(f.kind == "filter_wrong_operator" for f in out.findings):
        return  # another condition may carry the negation; or the operator is told already
    low = question.casefold()
    if lx.NEGATION_ANY.search(low) is None:
        return
    for f in kept:
        if f.op not in _OPS or not f.values:
            continue
        for value in f.values:
            core = value.strip("%").casefold()
            if len(core) < 2:
                continue
            m = re.search(rf"(?<![\w.-]){re.escape(core)}(?![\w-])", low)
            if m is None or not _negated(question, m.start()):
                continue
            out.add(
                "filter_wrong_operator",
                "error",
                f"the question excludes the rows of {question[m.start() : m.end()]!r}; the SQL"
                f" keeps only them ({f.text or f.column}) and negates nothing",
                question[m.start() : m.end()],
                f.text,
                "filter",
            )
            return


def _negated(question: str, at: int) -> bool:
    """Does a negation govern the value at ``at``: in its clause, at most :data:`_REACH`
    characters back, written in lower case (a capitalised "No" is part of a name: "No
    Child Left Behind"), and not right before a comparison it turns around?

    >>> _negated("stadiums not opened after 2006", 26), _negated("not in cs and older than 20", 25)
    (True, False)
    >>> _negated("No Child Left Behind funding in 2017", 32)
    False
    """
    start = max(0, at - _REACH)
    window = question[start:at]
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(window.casefold())]
    clause = window[breaks[-1] :] if breaks else window
    negations = [m for m in lx.NEGATION_ANY.finditer(clause) if m.group(0)[0].islower()]
    if not negations:
        return False
    last = negations[-1]
    return _TURNED.match(clause.casefold(), last.end()) is None

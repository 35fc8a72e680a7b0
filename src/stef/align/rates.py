"""Rates, percentages and products the question names, against what the SQL computes.

* A named rate turned upside down: "click-through rate" answered by ``SUM(impressions) /
  SUM(clicks)``: the rate's own word ("click") names a column of the divisor and none of the
  dividend, and no division of the SQL has it on top (``ratio_inverted``, a warning).
* A percentage bound compared with a fraction: "campaigns with an open rate above 25%"
  answered by ``opens / sends > 25``, a ratio (at most 1 for a share) held against 25,
  nothing multiplied by 100; or ``opens * 100.0 / sends > 0.25``, a percentage held against
  a fraction (``percentage_scale_mismatch``, an error).

* A product the enrichment spells out: "stock value (quantity x unit cost)" answered by
  ``SUM(i.quantity)``, an output that multiplies nothing, where no column is named for the
  product itself (``product_missing``, a warning).

The first two read the SQL's divisions from its tree (``division_sides``) and the comparison
as the spec's filters hold it; none reads a schema.
"""

from __future__ import annotations

import re

from stef.align.answers import TIMES_100
from stef.align.counted import COMPARED_BY
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.lexicon import QUESTION_FILLER_WORDS
from stef.spec import Spec

#: "click-through rate", "open rate", "conversion rate": the word that names the event
#: a rate counts.
_RATE = re.compile(r"\b(?P<w>[a-z]{4,})(?:[- ]through)?\s+rates?\b")
#: Words before "rate" that name no event counted (the rate is of something else).
_NOT_EVENTS = lx._words(
    """growth interest exchange tax hourly daily monthly weekly yearly annual average overall
    heart unemployment inflation this that which their what the"""
)
#: A bound stated as a percentage: "above 25%", "more than 5 percent", "under 2.5 %".
_PERCENT_BOUND = re.compile(COMPARED_BY + r"(?P<n>\d+(?:\.\d+)?)\s*(?:%|percent\b)")


def check_rates(
    sql: Spec, out: FindingCollector, question: str, hints: str | None = None
) -> None:
    """The checks of the module doc."""
    check_rate_direction(sql, out, question)
    check_percent_bound(sql, out, question)
    check_product(sql, out, f"{question}\n{hints}" if hints else question)


def _stem(word: str) -> str:
    """The stem a column naming the event shares ("conversion" → "conver", "clicks" → "click").

    >>> _stem("conversion"), _stem("click"), _stem("bounce")
    ('conver', 'click', 'bounc')
    """
    return word[:6] if len(word) > 6 else word.rstrip("e") if len(word) > 4 else word


def check_rate_direction(sql: Spec, out: FindingCollector, question: str) -> None:
    """A named rate whose event word names only the divisor (see the module doc).

    >>> out = FindingCollector()
    >>> sides = [[["impressions"], ["clicks"]]]
    >>> check_rate_direction(Spec(flags={"division_sides": sides}), out, "Click-through rate")
    >>> print(out.findings[0].message)
    the question asks for the click rate; the SQL divides by clicks, with impressions on top
    """
    sides = sql.flags.get("division_sides") or []
    if not sides:
        return
    for m in _RATE.finditer(question.casefold()):
        word = m.group("w")
        if word in _NOT_EVENTS:
            continue
        stem = _stem(word)
        on_top = any(any(stem in c for c in top) for top, _ in sides)
        if on_top:
            continue
        for top, under in sides:
            named = [c for c in under if stem in c]
            if named and top:
                out.add(
                    "ratio_inverted",
                    "warning",
                    f"the question asks for the {word} rate; the SQL divides by {named[0]},"
                    f" with {', '.join(dict.fromkeys(top))} on top",
                    m.group(0),
                    None,
                    "aggregation",
                )
                return


def check_percent_bound(sql: Spec, out: FindingCollector, question: str) -> None:
    """A percentage bound compared on the other scale (see the module doc).

    >>> from stef.spec import Filter
    >>> ratio = Filter("opens / sends", ">", ("25",), "opens / sends > 25", "where")
    >>> out = FindingCollector()
    >>> check_percent_bound(Spec(filters=[ratio]), out, "Campaigns with an open rate above 25%")
    >>> print(out.findings[0].message)
    the question compares with 25%; the SQL compares the fraction opens / sends with 25
    """
    for m in _PERCENT_BOUND.finditer(question.casefold()):
        number = float(m.group("n"))
        for f in sql.filters:
            column = f.column or ""
            if "/" not in column or len(f.values) != 1 or f.clause == "case":
                continue
            try:
                value = float(f.values[0])
            except ValueError:
                continue
            scaled = bool(TIMES_100.search(column))
            if not scaled and value == number and number > 1:
                what = f"the fraction {column}"
            elif scaled and value == number / 100 and number >= 1:
                what = f"the percentage {column}"
            else:
                continue
            out.add(
                "percentage_scale_mismatch",
                "error",
                f"the question compares with {m.group('n')}%; the SQL compares {what} with"
                f" {f.values[0]}",
                m.group(0),
                f.text or f"{column} {f.op} {f.values[0]}",
                "filter_alignment",
            )
            return


#: "quantity x unit cost", "price * qty", "hours multiplied by rate": two factors of a
#: product ("how many times" is a count, and a lone "*" marks emphasis).
_PRODUCT = re.compile(
    r"\b(?P<a>[a-z][a-z_]{2,})\s+(?:x|×|\*|multiplied\s+by)\s+"
    r"(?P<b>[a-z][a-z_]{2,})(?:\s+(?P<c>[a-z][a-z_]{2,}))?"
)
#: A multiplication of two operands in an output as the spec renders it.
_MULTIPLIES = re.compile(r"[\w)]\s*\*\s*[\w(]")


def check_product(sql: Spec, out: FindingCollector, text: str) -> None:
    """A product of two named factors (see the module doc) that no output computes.

    >>> from stef.spec import Projection
    >>> stock = Spec(projections=[Projection("sum(i.quantity)", columns=["quantity"])])
    >>> out = FindingCollector()
    >>> check_product(stock, out, "Stock value (quantity x unit cost) per warehouse")
    >>> print(out.findings[0].message)
    the question computes quantity x unit cost; no output of the SQL multiplies
    """
    m = next(
        (
            m
            for m in _PRODUCT.finditer(text.casefold())
            if not {m.group("a"), m.group("b")} & QUESTION_FILLER_WORDS
        ),
        None,
    )
    if m is None or not sql.projections or sql.flags.get("select_star"):
        return
    if any(_MULTIPLIES.search(p.expr) for p in sql.projections):
        return
    factors = {w[:4] for w in re.findall(r"[a-z]+", m.group(0)) if len(w) >= 4}
    named = {w[:4] for c in sql.columns for w in re.findall(r"[a-z]+", c.casefold())}
    if len(factors - named) == 0:
        return  # every factor is a column: perhaps multiplied in a subquery or stored
    out.add(
        "product_missing",
        "warning",
        f"the question computes {m.group(0).strip()}; no output of the SQL multiplies",
        m.group(0).strip(),
        None,
        "aggregation",
    )

"""Rows the question keeps for what they lack, or keeps out, against SQL that negates nothing.

* "Products with zero units on hand", "musicals that do not have actors" answered by a
  SELECT with no condition, join or set operation at all: nothing keeps any row out
  (``filter_missing``). An inner join to the lacked thing's table is
  :func:`stef.align.states.check_never`'s.
* "Products out of stock" answered by ``quantity > 0``, "in stock" by ``quantity = 0``: the
  condition on the stock level keeps the other rows (``filter_wrong_operator``).
* "Total refunds in Q1 excluding test accounts" answered by SQL that negates nothing and
  whose conditions name nothing of "test accounts" and keep no value at all (only dates and
  numbers): nothing keeps the excluded rows out (``exclusion_missing``, a warning). A kept
  value (``status = 'completed'`` for "excluding cancelled orders") may be the complement,
  and is left alone; so is an amount taken off ("revenue excluding tax", "rep excluding
  the association bonus": a singular thing or an amount, or SQL that subtracts).

The general ``negation_missing`` (any negated word, any SQL without a negation) is too
loose to weigh without an enrichment; these checks read what is negated and where the SQL
leaves it out.
"""

from __future__ import annotations

import re

from stef.align.matching import SQL_NEGATING_OPS, name_words, none_left
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.request import singular
from stef.spec import Filter, Spec

#: Rows kept for what they lack: "have never placed an order", "who haven't made any
#: purchases", "with no orders", "with zero units", "without a subscription".
_LACKING = re.compile(
    r"\b(?:(?:have|has|had|did|do|does)\s+(?:never|not)|(?:have|has|had|did|do|does)n't"
    r"|never)\s+(?:yet\s+)?(?:been\s+)?(?P<v>[a-z]{3,})(?:\s+(?:an?|any|one|some)\b)?"
    r"(?:\s+(?P<n>[a-z]{3,}))?"
    r"|\b(?:with\s+no|with\s+zero|without(?:\s+any)?(?:\s+an?|\s+the)?)\s+(?P<m>[a-z]{3,})"
    r"|\bout\s+of\s+stock\b|\bsold\s+out\b"
)
#: "out of stock" against "in stock": what a stock level says of a row.
_STOCK = re.compile(r"\b(?P<out>out\s+of\s+stock|sold\s+out)\b|\b(?P<in>in\s+stock)\b")
#: Words of a column that holds a stock level.
_STOCK_WORDS = lx._words("stock quantity qty inventory units available onhand hand level")
#: "including customers with no orders" keeps both: ``outer_join_missing``'s case.
_KEEPING = re.compile(r"\b(?:including|include|even)\b[^.;?!]{0,40}$")
#: What rows are kept out of: "excluding test accounts", "not counting refunds".
_EXCLUDING = re.compile(
    r"\b(?:excluding|exclude[sd]?|not\s+counting|not\s+including|leaving\s+out)\s+"
    r"(?:the\s+|any\s+|all\s+)?(?P<w>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2})"
)
_STOP = lx._words(
    """the a an and or of in on at for to by from with that which who any all those ones
    rows records data"""
)
#: Amounts an "excluding" takes off a figure rather than rows it keeps out.
_AMOUNTS = lx._words(
    """taxes fees costs charges discounts bonuses commissions refunds returns tips duties
    surcharges rebates credits expenses"""
)


def _negates(sql: Spec) -> bool:
    """Does the SQL negate anything: NOT, ``<>``, ``IS NULL``, an outer join, EXCEPT, or a
    count held at nothing (``= 0``, ``< 1``)?"""
    if sql.flags.get("negation") or "except" in sql.set_operations:
        return True
    return any(f.op in SQL_NEGATING_OPS or none_left(f) for f in sql.filters)


def check_absence(sql: Spec, out: FindingCollector, question: str) -> None:
    """The checks of the module doc."""
    check_unconditioned(sql, out, question)
    check_exclusion(sql, out, question)
    check_stock(sql, out, question)


def _keeps_some(f: Filter) -> bool | None:
    """Does a condition on a stock level keep the rows that have some (``qty > 0``,
    ``>= 1``, ``<> 0``), or those that have none (``= 0``, ``<= 0``, ``< 1``)? None if
    neither."""
    value = f.values[0] if len(f.values) == 1 else ""
    if (f.op in (">", "!=") and value == "0") or (f.op == ">=" and value == "1"):
        return True
    return False if none_left(f) else None


def check_stock(sql: Spec, out: FindingCollector, question: str) -> None:
    """ "Products that are out of stock" answered by ``quantity > 0`` (or "in stock" by
    ``quantity = 0``): the condition on the stock level keeps the other rows
    (``filter_wrong_operator``).

    >>> out, some = FindingCollector(), Filter("quantity", ">", ("0",))
    >>> check_stock(Spec(filters=[some]), out, "List products out of stock")
    >>> print(out.findings[0].message)
    the question asks for rows out of stock; the SQL keeps those that have some (quantity > 0)
    """
    m = _STOCK.search(question.casefold())
    if m is None:
        return
    for f in sql.filters:
        words = {w.casefold() for w in name_words((f.column or "").rsplit(".", 1)[-1])}
        some = _keeps_some(f) if words & _STOCK_WORDS else None
        if some is None or some == bool(m.group("in")):
            continue
        kept = "that have some" if some else "that have none"
        out.add(
            "filter_wrong_operator",
            "error",
            f"the question asks for rows {m.group(0)}; the SQL keeps those {kept}"
            f" ({f.text or f'{f.column} {f.op} {f.values[0]}'})",
            m.group(0),
            f.text,
            "filter_alignment",
        )
        return


def check_unconditioned(sql: Spec, out: FindingCollector, question: str) -> None:
    """Rows kept for lacking a thing, answered by a SELECT with no condition at all (see
    the module doc).

    >>> out = FindingCollector()
    >>> check_unconditioned(Spec(tables=["inventory"]), out, "Products with zero units on hand")
    >>> print(out.findings[0].message)
    the question's 'with zero units' keeps some rows out; the SQL has no condition at all
    """
    if sql.filters or sql.joins or sql.set_operations or _negates(sql):
        return
    low = question.casefold()
    for m in _LACKING.finditer(low):
        if _KEEPING.search(low[: m.start()]):
            continue
        out.add(
            "filter_missing",
            "error",
            f"the question's {m.group(0).strip()!r} keeps some rows out; the SQL has no"
            " condition at all",
            m.group(0).strip(),
            None,
            "filter_alignment",
        )
        return


def _kept_value(f: Filter) -> bool:
    """Does a condition keep a value (a string, a flag), not a date or a number?

    >>> done, dated = Filter("status", "=", ("completed",)), Filter("d", ">=", ("2024-01-01",))
    >>> _kept_value(done), _kept_value(dated)
    (True, False)
    """
    if f.op in ("is", "is not"):
        return True
    for v in f.values:
        if not v or v[0].isdigit() or v[0] in "-+.":
            continue
        return True
    return not f.values


def check_exclusion(sql: Spec, out: FindingCollector, question: str) -> None:
    """Rows the question keeps out, answered by SQL that neither negates nor keeps a value
    (see the module doc).

    >>> from stef.spec import Filter
    >>> dated = Spec(filters=[Filter("created_at", ">=", ("2024-01-01",))])
    >>> out = FindingCollector()
    >>> check_exclusion(dated, out, "Total refunds in Q1 2024 excluding test accounts")
    >>> print(out.findings[0].message)
    the question excludes test accounts; the SQL negates nothing and no condition names them
    """
    m = _EXCLUDING.search(question.casefold())
    if m is None or _negates(sql):
        return
    words = [w for w in re.findall(r"[a-z]+", m.group("w")) if w not in _STOP]
    if not words or singular(words[-1]) == words[-1] or words[-1] in _AMOUNTS:
        return  # "excluding tax", "excluding fees": an amount taken off, not rows kept out
    if "sub" in (sql.flags.get("functions") or ()) or any(_kept_value(f) for f in sql.filters):
        return
    said = [singular(w) for w in words]
    for f in sql.filters:
        named = {singular(w) for w in name_words(f.column or "")}
        named |= {singular(w) for v in f.values for w in re.findall(r"[a-z]+", v.casefold())}
        if any(w[:4] == n[:4] for w in said for n in named if len(n) >= 3):
            return
    phrase = " ".join(w for w in m.group("w").split() if w not in _STOP)
    out.add(
        "exclusion_missing",
        "warning",
        f"the question excludes {phrase}; the SQL negates nothing and no condition names them",
        m.group(0),
        None,
        "negation",
    )

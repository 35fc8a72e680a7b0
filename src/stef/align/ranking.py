"""What a top-k ranks by, against what the question ranks by: a count or an attribute.

- "In which year did the most recent crime happen?" answered by ``GROUP BY year ORDER BY
  COUNT(*) DESC LIMIT 1`` ranks by how many rows each group holds where the question ranks
  by an attribute of each row (``rank_by_count``).
- "What are the top 3 highest support rates?" answered by ``SELECT support_rate … ORDER BY
  unsure_rate DESC LIMIT 3`` shows the ranked column and sorts by another one
  (``order_key_mismatch``).
- "Sort the workshops in alphabetical order of the venue" answered by ``ORDER BY date``
  (``order_key_mismatch``).
- "What is the most popular product category?" answered by ``ORDER BY price DESC LIMIT 1``
  ranks by an attribute where the question ranks by how often each one occurs
  (``rank_by_attribute``).

Both read the question's words and the SQL's sort keys only (no schema): a stored count
(``popularity``, ``num_orders``, ``views``) is taken as the frequency it names.
"""

from __future__ import annotations

import re

from stef.align.matching import name_words
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.request import singular
from stef.spec import Spec


def check_rankings(nl: Spec, sql: Spec, out: FindingCollector, question: str) -> None:
    """Every check of this module (see the module doc) on one question and its SQL."""
    check_rank_by_count(sql, out, question)
    check_rank_by_frequency(sql, out, question)
    check_rank_key(nl, sql, out)
    check_alphabetical(sql, out, question)


#: Superlatives of a row's own attribute (a time, a size, a price, a speed), which no count
#: of rows ranks: "the most recent crime", "the shortest person".
_OWN_ATTRIBUTE = re.compile(
    r"\b(?:shortest|tallest|longest|oldest|youngest|latest|earliest|newest|cheapest|heaviest"
    r"|lightest|fastest|slowest|(?:most|least)\s+expensive|most\s+recent(?:ly)?)\b"
)
_PLURAL_AFTER = re.compile(r"\s+[a-z]+s\b")
#: Words that make a question a count all the same ("the most common", "how many").
_COUNT_CUES = re.compile(
    r"\b(?:most|least|fewest)\s+(?:common(?:ly)?|popular|frequent(?:ly)?|often|times|number"
    r"|[a-z]+s\b)|\bhow\s+many\b|\bfrequen|\bcount\b|\bnumber\s+of\b|\bpopular|\bcommon"
)


def check_rank_by_count(sql: Spec, out: FindingCollector, question: str) -> None:
    """ "In which year did the most recent crime happen?" answered by ``GROUP BY year ORDER
    BY COUNT(*) DESC LIMIT 1``: the question ranks by a row's own attribute (a time, a
    size, a price, a speed) and the SQL's top-k ranks by how many rows each group holds
    (``rank_by_count``). Left alone where the question counts anyway ("the most common",
    "how many", "the most orders").

    >>> from stef.spec import OrderKey
    >>> out = FindingCollector()
    >>> key = OrderKey("count(*)", "desc", True, "COUNT(*) DESC")
    >>> check_rank_by_count(Spec(order_by=[key], limit=1), out, "Year of the most recent crime")
    >>> check_rank_by_count(Spec(order_by=[key], limit=1), out, "The most common recent crime")
    >>> [f.kind for f in out.findings]
    ['rank_by_count']
    """
    if sql.limit is None or not sql.order_by:
        return
    first = sql.order_by[0]
    if not first.is_aggregate or not first.key.startswith("count("):
        return
    low = question.casefold()
    m = _OWN_ATTRIBUTE.search(low)
    if m is None or _COUNT_CUES.search(low) or _PLURAL_AFTER.match(low, m.end()):
        return  # "the most recent posts" may ask how many recent ones
    out.add(
        "rank_by_count",
        "warning",
        f"the question ranks by {m.group(0)!r}, an attribute of each row; the SQL's top"
        f" {sql.limit} ranks by {first.text or first.key}, how many rows each group holds",
        m.group(0),
        first.text or first.key,
        "ordering",
    )


#: A question that ranks by how often something occurs: "the most common", "the most
#: popular", "ascending by frequency".
_FREQUENCY = re.compile(
    r"\b(?:most|least)\s+(?:common(?:ly)?|popular|frequent(?:ly)?|often)\b|\bfrequency\b"
)
#: Parts of a sort key's name that say it stores a frequency or a share of one.
_STORED_FREQUENCY = re.compile(
    r"percent|share|ratio|rate|popular|count|cnt|num|number|total|freq|times|views|visit"
    r"|download|play|sale|sold|vote|rank|score|rating|order|occur|usage|use|amount|quantity"
    r"|qty|sum",
    re.I,
)


def check_rank_by_frequency(sql: Spec, out: FindingCollector, question: str) -> None:
    """ "What is the most popular product category?" answered by ``SELECT category FROM
    products ORDER BY price DESC LIMIT 1``: the question ranks by how often each one occurs,
    the SQL sorts by plain columns and counts nothing anywhere (``rank_by_attribute``). A
    sort key named for a stored frequency (``popularity``, ``num_orders``) is left alone.

    >>> from stef.spec import OrderKey
    >>> out = FindingCollector()
    >>> price = OrderKey("price", "desc", False, "price DESC")
    >>> check_rank_by_frequency(Spec(order_by=[price], limit=1), out, "The most popular category")
    >>> views = OrderKey("views", "desc", False, "views DESC")
    >>> check_rank_by_frequency(Spec(order_by=[views], limit=1), out, "The most popular page")
    >>> [f.kind for f in out.findings]
    ['rank_by_attribute']
    """
    if not sql.order_by or sql.aggregations or sql.window_functions or sql.window_aggregations:
        return
    m = _FREQUENCY.search(question.casefold())
    if m is None or any(k.is_aggregate for k in sql.order_by):
        return
    if any(_STORED_FREQUENCY.search(k.key) for k in sql.order_by):
        return
    keys = ", ".join(k.text or k.key for k in sql.order_by)
    out.add(
        "rank_by_attribute",
        "warning",
        f"the question ranks by {m.group(0)!r}, how often each one occurs; the SQL sorts by"
        f" {keys} and counts nothing",
        m.group(0),
        keys,
        "ordering",
    )


#: The ranked noun phrase of a top-k: "top 3 highest support rates", "the greatest prices".
_RANKED_PHRASE = re.compile(
    r"\b(?:top|highest|lowest|greatest|largest|smallest|biggest|most|least|best|worst)"
    r"(?:\s+\d+)?(?:\s+(?:highest|lowest|greatest|largest|smallest|biggest))?"
    r"\s+(?P<p>[a-z]+(?:\s+[a-z]+){0,2})"
)


_RANK_WORDS = frozenset(
    [
        "top",
        "highest",
        "lowest",
        "greatest",
        "largest",
        "smallest",
        "biggest",
        "most",
        "least",
        "best",
        "worst",
    ]
)


def check_rank_key(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """ "What are the top 3 highest support rates?" answered by ``SELECT support_rate FROM
    candidate ORDER BY unsure_rate DESC LIMIT 3``: the ranked phrase (two words or more)
    names an output of the SQL in full, and the top-k sorts by a plain column that does not
    hold all its words (``order_key_mismatch``).

    >>> from stef.spec import OrderKey, Projection
    >>> asked = Spec(order_by=[OrderKey("rates", "desc", False, "top 3 highest support rates")])
    >>> sql = Spec(projections=[Projection("support_rate", None, ("support_rate",))],
    ...            order_by=[OrderKey("unsure_rate", "desc")], limit=3)
    >>> out = FindingCollector()
    >>> check_rank_key(asked, sql, out)
    >>> [f.message for f in out.findings]
    ["the question ranks 'support rates', which support_rate shows; the SQL sorts by unsure_rate"]
    """
    if not nl.order_by or not sql.order_by or sql.limit is None:
        return
    first = sql.order_by[0]
    if first.is_aggregate or "(" in first.key:
        return
    m = _RANKED_PHRASE.search(nl.order_by[0].text.casefold())
    if m is None:
        return
    said: list[str] = []
    for w in m.group("p").split():
        if w in _RANK_WORDS or w in ("of", "by", "in", "for", "and", "with"):
            break
        said.append(w)
    words = [singular(w) for w in said]
    if len(words) < 2:
        return  # one word tells no two columns apart

    def holds(name: str) -> bool:
        return set(words) <= {singular(w.casefold()) for w in name_words(name)}

    if holds(first.key):
        return
    shown = next(
        (c for p in sql.projections for c in (p.alias or "", *p.columns) if c and holds(c)), None
    )
    if shown is None:
        return
    out.add(
        "order_key_mismatch",
        "warning",
        f"the question ranks {' '.join(said)!r}, which {shown} shows; the SQL sorts by {first.key}",
        m.group(0),
        first.text or first.key,
        "ordering",
    )


#: Parts of a sort key's name that say it holds a date, a time or a number, which no
#: alphabetical order sorts by.
_NOT_TEXT_KEY = lx._words(
    """date dates time year years at count counts cnt num number amount price cost salary
    age score rating total budget size height weight length"""
)


def check_alphabetical(sql: Spec, out: FindingCollector, question: str) -> None:
    """"Sort the workshops in alphabetical order of the venue" answered by ``ORDER BY
    date``: the question sorts by text and the SQL's first sort key is named for a date, a
    time or a number (``order_key_mismatch``); an id may be text ("TR006") and is left alone.

    >>> from stef.spec import OrderKey
    >>> out = FindingCollector()
    >>> check_alphabetical(Spec(order_by=[OrderKey("date")]), out, "Sort them alphabetically")
    >>> check_alphabetical(Spec(order_by=[OrderKey("venue")]), out, "Sort them alphabetically")
    >>> [f.message for f in out.findings]
    ['the question sorts alphabetically; the SQL sorts by date, which is no text']
    """
    if not sql.order_by or "alphabetic" not in question.casefold():
        return
    first = sql.order_by[0]
    words = {w.casefold() for w in name_words(first.key)}
    if first.is_aggregate or "(" in first.key or not words & _NOT_TEXT_KEY:
        return  # ``country`` holds no count: whole words of the name
    out.add(
        "order_key_mismatch",
        "warning",
        f"the question sorts alphabetically; the SQL sorts by {first.key}, which is no text",
        "alphabetical",
        first.text or first.key,
        "ordering",
    )

"""What a top-k ranks by, against what the question ranks by: a count or an attribute.

- "In which year did the most recent crime happen?" answered by ``GROUP BY year ORDER BY
  COUNT(*) DESC LIMIT 1`` ranks by how many rows each group holds where the question ranks
  by an attribute of each row (``rank_by_count``).
- "What are the top 3 highest support rates?" answered by ``SELECT support_rate … ORDER BY
  unsure_rate DESC LIMIT 3`` shows the ranked column and sorts by another one
  (``order_key_mismatch``).
- "Sort the workshops in alphabetical order of the venue" answered by ``ORDER BY date``
  (``order_key_mismatch``).
- "List the height of people in descending order of height" answered by ``ORDER BY total``
  (``order_key_mismatch``).
- "What is the most popular product category?" answered by ``ORDER BY price DESC LIMIT 1``
  ranks by an attribute where the question ranks by how often each one occurs
  (``rank_by_attribute``).

Both read the question's words and the SQL's sort keys only (no schema): a stored count
(``popularity``, ``num_orders``, ``views``) is taken as the frequency it names.
"""

from __future__ import annotations

import re

from stef.align.matching import canon_col as canon
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
    check_label_rank(sql, out, question)
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
    r"\b(?:most|least)\s+(?:common(?:ly)?|popular|frequent(?:ly)?|often|numerous|prevalent)\b"
    r"|\bfrequency\b"
    # "the storm that affected the most regions", "the highest number of players"
    r"|\b(?:the\s+)(?:most|fewest)\s+(?P<n>[a-z]+s)\b"
    r"|\b(?:highest|largest|greatest|biggest|lowest|smallest|most|least|fewest)\s+(?:number|count)"
    r"\s+of\s+(?P<m>[a-z]+)"
)
#: Parts of a sort key's name that say it stores a frequency or a share of one.
_STORED_FREQUENCY = re.compile(
    r"percent|share|ratio|rate|popular|count|cnt|num|number|total|freq|times|views|visit"
    r"|download|play|sale|sold|vote|rank|score|rating|order|occur|usage|use|amount|quantity"
    r"|qty|sum",
    re.I,
)


#: Sort keys that hold no stored count of anything: a label, a date, a size of the row
#: itself ("the storm that affected the most regions" sorted by ``max_speed``).
_NOT_COUNT_KEY = lx._words("name title date time year speed age price cost height weight")


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
    noun = m.group("n") or m.group("m")
    if noun and (
        noun.endswith(("ous", "ss", "us", "is"))
        or not all(
            _NOT_COUNT_KEY.intersection(name_words(k.key.rsplit(".", 1)[-1])) for k in sql.order_by
        )
    ):
        return  # "the most famous"; "the most cards" may be a stored ``base_set_size``
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


#: A superlative that ranks by a measure of the row, which no name or title sorts by: "the
#: song with the lowest resolution", "the most expensive product" (the lexicon's
#: superlatives but "top", "maximum" and "minimum", and the speeds).
_MEASURE_RANKS = (frozenset(lx.SUPERLATIVES) - {"top", "maximum", "minimum"}) | {
    "fastest",
    "slowest",
}
_MEASURE_RANK = re.compile(rf"\b(?:{lx.alternation(_MEASURE_RANKS)})\b")


def check_label_rank(sql: Spec, out: FindingCollector, question: str) -> None:
    """ "Return the artist who produced the song with the lowest resolution" answered by
    ``ORDER BY song_name LIMIT 1``: the question's top-k ranks by a measure (a superlative)
    and the SQL's first sort key is a name or a title, which ranks rows alphabetically
    (``order_key_mismatch``). Left alone where the question sorts by a name itself
    ("alphabetical", "the first name", "by name").

    >>> from stef.spec import OrderKey
    >>> out = FindingCollector()
    >>> sql = Spec(order_by=[OrderKey("song_name", "asc")], limit=1)
    >>> check_label_rank(sql, out, "the song with the lowest resolution")
    >>> check_label_rank(sql, out, "the song with the lowest name alphabetically")
    >>> [f.message for f in out.findings]
    ["the question ranks by 'lowest', a measure; the SQL's top 1 sorts by song_name, a name"]
    """
    if sql.limit is None or not sql.order_by:
        return
    first = sql.order_by[0]
    words = name_words(first.key.rsplit(".", 1)[-1])
    if first.is_aggregate or "(" in first.key or not words:
        return
    if words[-1] not in ("name", "title"):
        _check_key_rank(sql, out, question, first.key, first.text)
        return
    low = question.casefold()
    m = _MEASURE_RANK.search(low)
    if (
        m is None
        or "alphabet" in low
        or re.search(r"\b(?:names?|titles?|first|last)\b", low[m.start() : m.end() + 30])
    ):
        return
    out.add(
        "order_key_mismatch",
        "warning",
        f"the question ranks by {m.group(0)!r}, a measure; the SQL's top {sql.limit} sorts by"
        f" {first.key}, a {words[-1]}",
        m.group(0),
        first.text or first.key,
        "ordering",
    )


#: Superlatives of time, which a label may rank by ("the latest year", "the oldest city").
_TIME_RANKS = frozenset({"earliest", "latest", "newest", "oldest", "youngest", "longest"})


def _check_key_rank(
    sql: Spec, out: FindingCollector, question: str, key: str, text: str | None
) -> None:
    """A top-k by a measure ("the city with the most customers") whose first sort key is the
    label the SQL groups by, beside an aggregate (``GROUP BY city ORDER BY city``: the
    alphabetically last city): ``order_key_mismatch``.

    >>> from stef.spec import Aggregation, OrderKey
    >>> sql = Spec(order_by=[OrderKey("city", "desc")], limit=1, group_by=["city"],
    ...            aggregations=[Aggregation("count", "*")])
    >>> out = FindingCollector()
    >>> _check_key_rank(sql, out, "Which city has the most customers?", "city", None)
    >>> print(out.findings[0].message)
    the question ranks by 'most', a measure; the SQL's top 1 sorts by city, the label it groups by
    """
    low = question.casefold()
    m = next(
        (
            m
            for m in _MEASURE_RANK.finditer(low)
            if m.group(0) not in _TIME_RANKS and not low.startswith(" recent", m.end())
        ),
        None,
    )
    if m is None or "alphabet" in low:
        return
    bare = key.rsplit(".", 1)[-1]
    if not sql.aggregations or all(g.rsplit(".", 1)[-1] != bare for g in sql.group_by):
        return
    if f" {bare.casefold()}" in f" {low[m.end() : m.end() + 40]}":
        return  # "the most city …": the question ranks by the key's own word
    out.add(
        "order_key_mismatch",
        "warning",
        f"the question ranks by {m.group(0)!r}, a measure; the SQL's top {sql.limit} sorts by"
        f" {key}, the label it groups by",
        m.group(0),
        text or key,
        "ordering",
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


#: A sort the question states by its key: "sorted by signup date", "in ascending order of
#: building stories".
_SORT_PHRASE = re.compile(
    r"(?:\b(?:sort(?:ed)?|order(?:ed)?|rank(?:ed)?|arrange[d]?|list(?:ed)?)\s+(?:them\s+)?"
    r"(?:(?:in\s+)?(?:ascending|descending|asc|desc|increasing|decreasing|alphabetical)\s+)?by"
    r"|\b(?:in\s+)?(?:(?:ascending|descending|increasing|decreasing)\s+)?order\s+of)\s+"
    r"(?:the\s+|their\s+|its\s+)?(?P<key>[a-z][a-z ]{1,40})"
)
#: Words of a sort phrase that a label column answers ("sorted by name", "alphabetically").
_LABEL_WORDS = frozenset("name names title titles alphabetical alphabetically id ids".split())  # noqa: SIM905
#: Words that end a stated sort key ("by height in descending order", "by date of birth").
_KEY_ENDS = frozenset("in and then with from for of descending ascending".split())  # noqa: SIM905


def _by_label(words: list[str]) -> bool:
    """Does a stated sort key end in a label ("document id", "name"): no count or measure?"""
    return bool(words) and words[-1] in _LABEL_WORDS and not _MEASURE_WORDS.intersection(words)


#: Words that make a stated sort key a measure ("number of ids", "total name count").
_MEASURE_WORDS = frozenset("number count total amount sum average".split())  # noqa: SIM905


def _stated_key(text: str) -> list[str]:
    """The words of a stated sort key, up to the first word that ends it ("height in
    descending order" → ``height``).

    >>> _stated_key("date of birth then name"), _stated_key("height")
    (['date'], ['height'])
    """
    words = text.split()
    cut = next((i for i, w in enumerate(words) if w in _KEY_ENDS), len(words))
    return words[:cut]


def _names(words: list[str], name: str) -> bool:
    """Does the column ``name`` hold every word of a stated sort key (their first four
    letters: "stories" in ``num_of_stories``, "signup" in ``signup_date``)?"""
    key = canon(name)
    return all(w[:4] in key for w in words if len(w) >= 3)


#: Heads of a stated sort key that any name may hold ("signup date" as ``created_date``).
_FREE_HEADS = frozenset("date time day year at on".split())  # noqa: SIM905
#: Words of a sort column's name that qualify no measure (``num_of_stories``).
_NOT_MODIFIERS = frozenset(
    "num number no total count cnt amount sum avg average of the per".split()  # noqa: SIM905
)


def _other_modifier(words: list[str], key: str, tables: list[str]) -> str | None:
    """The word of the sort column ``key`` that stands where the stated key has another
    modifier: the same head, a modifier the column lacks and a word the key never says
    ("room count" sorted by ``bathroom_count``: ``bathroom``). A modifier that names a table
    of the query owns the key ("building stories" as ``num_of_stories`` of ``buildings``).

    >>> _other_modifier(["room", "count"], "bathroom_count", ["apartments"])
    'bathroom'
    >>> _other_modifier(["building", "stories"], "num_of_stories", ["buildings"]) is None
    True
    """
    names = [singular(w.casefold()) for w in name_words(key)]
    said = [singular(w) for w in words if len(w) >= 3]
    if len(said) < 2 or len(names) < 2 or said[-1] != names[-1] or said[-1] in _FREE_HEADS:
        return None
    owners = {singular(w.casefold()) for t in tables for w in name_words(t)}
    missing = [
        w for w in said[:-1] if w not in owners and not any(n.startswith(w[:4]) for n in names)
    ]
    extra = [
        n
        for n in names[:-1]
        if n.isalpha() and len(n) >= 3 and n not in _NOT_MODIFIERS
        and not any(n.startswith(w[:4]) or w.startswith(n[:4]) for w in said)
    ]  # fmt: skip
    return extra[0] if missing and extra else None


def check_sort_key(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """The question states the key of its sort ("sorted by signup date") and the SQL sorts
    by a plain column that names none of its words (``order_key_mismatch``): a label (``ORDER
    BY name``), or another column where one of the SQL's own columns is the stated key ("in
    descending order of height" answered by ``SELECT height … ORDER BY total``). A sort by a
    measure or a date the SQL holds under no such name may be named anyhow (``created_at``
    for "signup date").

    >>> from stef.spec import OrderKey
    >>> asked = OrderKey("date", "asc", False, "sorted by signup date")
    >>> out = FindingCollector()
    >>> check_sort_key(Spec(order_by=[asked]), Spec(order_by=[OrderKey("name")]), out)
    >>> height = OrderKey("height", "desc", False, "in descending order of height")
    >>> sql = Spec(columns=["height", "total"], order_by=[OrderKey("total", "desc")])
    >>> out2 = FindingCollector()
    >>> check_sort_key(Spec(order_by=[height]), sql, out2)
    >>> for f in (*out.findings, *out2.findings):
    ...     print(f.message)
    the question sorts by 'signup date'; the SQL sorts by name
    the question sorts by 'height'; the SQL sorts by total, not by height
    """
    if not nl.order_by or not sql.order_by:
        return
    if any(f.kind == "order_key_mismatch" for f in out.findings):
        return  # said once: the sort's key read another way (:func:`check_rankings`)
    m = _SORT_PHRASE.search(nl.order_by[0].text.casefold())
    first = sql.order_by[0]
    if m is None:
        return
    words = _stated_key(m.group("key"))
    if first.is_aggregate and _by_label(words):
        said = " ".join(words)
        message = f"the question sorts by {said!r}, a label; the SQL sorts by {first.key}"
        out.add("order_key_mismatch", "warning", message, m.group(0), first.text, "ordering")
        return  # "Order by document id" answered by ORDER BY COUNT(*)
    if first.is_aggregate or "(" in first.key:
        return  # only a plain column; ``COUNT(DISTINCT course_name)`` is a measure
    if not words or _LABEL_WORDS.intersection(words):
        return
    key = canon(first.key)
    said = " ".join(words)
    if _names(words, first.key):
        other = _other_modifier(words, first.key, sql.tables)
        if other is not None:
            message = (
                f"the question sorts by {said!r}; the SQL sorts by {first.key}, named for"
                f" {other!r} instead"
            )
            sorted_by = first.text or first.key
            out.add("order_key_mismatch", "warning", message, m.group(0), sorted_by, "ordering")
        return
    if key.endswith(("name", "title")) or key == "id" or key.endswith("_id"):
        message = f"the question sorts by {said!r}; the SQL sorts by {first.key}"
    else:
        held = next((c for c in sql.columns if _names(words, c)), None)
        if held is None:
            return
        message = f"the question sorts by {said!r}; the SQL sorts by {first.key}, not by {held}"
    sorted_by = first.text or first.key
    out.add("order_key_mismatch", "warning", message, m.group(0), sorted_by, "ordering")


#: Between two stated sort keys: "by email address and phone number", "by age, then name".
_THEN = re.compile(r"\s*(?:,\s*)?\band\s+(?:then\s+)?(?:by\s+)?|\s*,?\s*\bthen\s+(?:by\s+)?")


def check_second_key(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """ "Ordered by email address and phone number" answered by ``ORDER BY email_address``
    alone, while the SQL holds ``phone_number``: the second stated key is not sorted by
    (``order_key_mismatch``). Only where the first key is the SQL's one sort key.

    >>> from stef.spec import OrderKey
    >>> text = "ordered by email address and phone number"
    >>> nl = Spec(order_by=[OrderKey("address", text=text), OrderKey("number", text=text)])
    >>> sql = Spec(columns=["email_address", "phone_number"],
    ...            order_by=[OrderKey("email_address", "asc")])
    >>> out = FindingCollector()
    >>> check_second_key(nl, sql, out)
    >>> print(out.findings[0].message)  # doctest: +NORMALIZE_WHITESPACE
    the question sorts by 'email address', then by 'phone number'; the SQL sorts by
    email_address only
    """
    if len(nl.order_by) < 2 or len(sql.order_by) != 1 or nl.order_by[1].text != nl.order_by[0].text:
        return
    if any(f.kind == "order_key_mismatch" for f in out.findings):
        return
    first = sql.order_by[0]
    m = _SORT_PHRASE.search(nl.order_by[0].text.casefold())
    if m is None or first.is_aggregate or "(" in first.key:
        return
    parts = _THEN.split(m.group("key"), maxsplit=1)
    if len(parts) != 2:
        return
    keys = [_stated_key(part) for part in parts]
    if not all(keys) or not _names(keys[0], first.key) or _names(keys[1], first.key):
        return
    held = next((c for c in sql.columns if c != first.key and _names(keys[1], c)), None)
    if held is None:
        return
    a, b = " ".join(keys[0]), " ".join(keys[1])
    out.add(
        "order_key_mismatch",
        "warning",
        f"the question sorts by {a!r}, then by {b!r}; the SQL sorts by {first.key} only",
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
    """ "Sort the workshops in alphabetical order of the venue" answered by ``ORDER BY
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

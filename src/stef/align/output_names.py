"""Which output of the SQL can a word of the question be: the names outputs answer to.

A request item ("the store name", "their ids") is answered by an output whose name holds
its word (:func:`word_matches`); :func:`output_names` lists the names a SQL's outputs answer
to and the outputs it computes; :func:`stored_output`, :func:`stored_statistic` and
:func:`named_output` say when a plain output stores what a computed item asks for
(``avg_price`` for "the average price"). Shared by the request checks of
:mod:`stef.align.intent` and the listed-rows check of :mod:`stef.align.subject`.

>>> from stef.spec import Projection, Spec
>>> sql = Spec(projections=[Projection("store_name", columns=("store_name",))])
>>> names, computed = output_names(sql)
>>> names, [word_matches(w, names[0]) for w in ("name", "store", "city")]
(['store_name'], [True, True, False])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from stef.align.join_keys import _words
from stef.align.matching import column_part, letters_in_order
from stef.nl.lexicon import AGGREGATE_WORDS
from stef.nl.request import singular
from stef.spec import Projection, Spec

#: Question words that a computed output answers (a COUNT, a ratio, an extreme).
_ARITHMETIC = re.compile(r"[-+*/]|\bcase\b")
_EXTREME = re.compile(
    r"\s*(?:min|max|listagg|string_agg|group_concat|array_agg|collect_list|collect_set)\s*\(",
    re.I,
)  # a row's value, or the values listed together: named like their column
#: Item words any output with a name answers ("name" is a first_name, a title …).
_NAME_LIKE = {"name": ("name", "title"), "id": ("id",)}


@lru_cache(maxsize=65536)
def word_matches(word: str, name: str) -> bool:
    """Does a question word name (part of) a schema name? ``id`` in ``cust_id``, ``name``
    in ``store_name``, ``rate`` in ``rates``, ``title`` in ``famoustitle``.

    >>> [word_matches(w, "StoreName") for w in ("name", "store", "city")]
    [True, True, False]
    """
    w = singular(word)
    low = name.casefold()
    for pattern in _NAME_LIKE.get(w, ()):
        if low.endswith(pattern) or f"{pattern}_" in low:
            return True
    for part in _words(low):
        if part == w or (len(w) >= 4 and len(part) >= 4 and part[:5] == w[:5]):
            return True
        if _abbreviates(part, w):
            return True
    return len(w) >= 4 and w in low.replace("_", "")


def _abbreviates(short: str, word: str) -> bool:
    """Is a name's word an abbreviation of a question word: three to five letters, the
    word's first two, then the rest of its letters in order (``dept`` of department,
    ``desc`` of description, ``qty`` of quantity; not ``date`` of department)?

    >>> [_abbreviates(a, b) for a, b in [("dept", "department"), ("date", "department")]]
    [True, False]
    """
    return 3 <= len(short) <= 5 and len(short) < len(word) and letters_in_order(short, word, 2)


#: "the products" listed by a product code (``sku``): said by the item's head only.
_PRODUCT_CODES = frozenset({"product", "item", "sku", "upc", "ean", "asin"})
#: Words for one attribute that a schema names otherwise: "the website" as ``url``, "the
#: coordinates" as ``lat, lng``, "the birthday" as ``dob``.
_ATTRIBUTE_WORDS = (
    frozenset({"website", "webpage", "homepage", "url", "weblink", "link"}),
    frozenset({"coordinate", "lat", "lng", "lon", "latitude", "longitude"}),
    frozenset({"birthday", "dob", "birthdate"}),
    frozenset({"email", "mail"}),
    frozenset({"phone", "telephone", "tel", "cellphone"}),
    frozenset({"disease", "illness", "diagnosis"}),
    frozenset({"sign", "symptom"}),
    frozenset({"content", "text", "body"}),
    _PRODUCT_CODES,
)


def attribute_word(word: str) -> bool:
    """Is ``word`` one of the attribute words an output may answer by another name?

    >>> attribute_word("coordinates"), attribute_word("location")
    (True, False)
    """
    return any(singular(word) in g for g in _ATTRIBUTE_WORDS)


def attribute_named(words: Sequence[str], name: str, question: str = "") -> bool:
    """Does a schema name hold another word for an attribute the item's words name: "website"
    answered by ``WebsiteUrl`` or ``url``, "coordinates" by ``lat``, "birthday" by ``dob``,
    "the date of birth" (in the ``question``) by ``birthday``, "the anti-nucleus antibody
    concentration" by its initials ``ANA``?

    >>> [attribute_named(["website"], n) for n in ("websiteurl", "url", "name")]
    [True, True, False]
    >>> attribute_named(["phone"], "hotel")
    False
    >>> attribute_named(["location", "coordinates"], "lng"), attribute_named(["birthday"], "dob")
    (True, True)
    >>> attribute_named(["date"], "birthday", "the date of birth of drivers")
    True
    >>> attribute_named(["anti-nucleus", "antibody", "concentration"], "ANA")
    True
    """
    if "date" in words and " date of birth" in f" {question.casefold()}":
        words = [*words, "birthday"]
    said = [  # a product named by its code only where it is the item itself, not a modifier
        g
        for g in _ATTRIBUTE_WORDS
        if any(singular(w) in g for w in (words if g != _PRODUCT_CODES else words[-1:]))
    ]
    if any(
        part == a or ((len(a) >= 4 or a == "url") and part.endswith(a))  # not "hotel" for tel
        for g in said
        for part in _words(name.casefold())
        for a in g
    ):
        return True
    parts = [p for w in words for p in w.split("-") if p]
    low = column_part(name)
    initials = "".join(p[0] for p in parts)
    return len(low) >= 3 and low.isalpha() and any(
        initials[:k] == low for k in range(3, len(initials) + 1)
    )


#: A CASE that shows a column or blanks it (``CASE WHEN LAG(k) OVER (…) = k THEN NULL ELSE k
#: END``: a repeated label left out) is that column.
_SHOWN_CASE = re.compile(r"case\b.*\bthen null else [a-z_][\w.]* end$", re.I | re.S)


def output_names(sql: Spec) -> tuple[list[str], list[Projection]]:
    """Names a plain output answers to (columns and aliases) and the computed outputs."""
    names: list[str] = []
    computed: list[Projection] = []
    carried = sql.flags.get("carried_columns") or ()
    if len(carried) == len(sql.projections):  # what a derived table or CTE computed them from
        names += [n for columns in carried for n in columns]
    for p in sql.projections:
        if p.is_aggregate or _ARITHMETIC.search(p.expr) or p.expr in sql.window_functions:
            computed.append(p)
            if _EXTREME.match(p.expr) or _SHOWN_CASE.match(p.expr):
                names += list(p.columns)  # MIN(date) is a date, LISTAGG(name) names
        else:
            names += list(p.columns)
        if p.alias:
            names.append(p.alias)
    return names, computed


#: Statistic words of a request item and the words a stored column of it is named with.
_STATISTIC_NAMES: dict[str, tuple[str, ...]] = {
    "average": ("average", "avg", "mean"), "avg": ("average", "avg", "mean"),
    "mean": ("average", "avg", "mean"), "total": ("total", "tot", "sum"),
    "sum": ("total", "tot", "sum"), "maximum": ("maximum", "max"), "max": ("maximum", "max"),
    "minimum": ("minimum", "min"), "min": ("minimum", "min"),
}  # fmt: skip


def _parts_abbreviate(rest: str, words: Sequence[str]) -> bool:
    """Is ``rest`` the run-together abbreviations of ``words``, in any order, two letters
    or more each, or a word's first four (``scrwrite`` of writing and score)? At most two
    words are tried."""
    if len(words) == 1:
        w = words[0]
        if len(rest) >= 4 and rest[:4] == w[:4]:
            return True  # ``write`` of writing
        return len(rest) >= 2 and (w.startswith(rest) or letters_in_order(rest, w, 2))
    if len(words) != 2 or len(rest) > 24:
        return False
    return any(
        _parts_abbreviate(rest[:i], [a]) and _parts_abbreviate(rest[i:], [b])
        for i in range(2, len(rest) - 1)
        for a, b in (words, words[::-1])
    )


def stored_statistic(words: Sequence[str], names: Sequence[str]) -> bool:
    """Is a computed item ("the average price", "total revenue") an output that stores the
    statistic under its name (``avg_price``, ``total_revenue``, ``avgscrwrite``), as a
    summary table does? Every other word of the item must be in the name.

    >>> stored_statistic(["average", "price"], ["category", "avg_price"])
    True
    >>> stored_statistic(["average", "writing", "score"], ["school", "avgscrwrite"])
    True
    >>> stored_statistic(["average", "price"], ["price"]), stored_statistic(["price"], ["avg"])
    (False, False)
    """
    said = [_STATISTIC_NAMES[w] for w in words if w in _STATISTIC_NAMES]
    content = [singular(w) for w in words if w not in _STATISTIC_NAMES and len(w) >= 3]
    if len(said) != 1 or not content:
        return False
    for name in names:
        parts = _words(name.casefold())
        if len(parts) > 1:
            if any(p in said[0] for p in parts) and all(
                any(word_matches(w, p) for p in parts) for w in content
            ):
                return True
            continue
        low = parts[0] if parts else ""
        stat = next((s for s in said[0] if low.startswith(s)), None)
        if stat is not None and _parts_abbreviate(low[len(stat) :], content):
            return True
    return False


#: Words that ask for a computation whatever they qualify ("total amount", "average rate");
#: "number" and "count" after a qualifier may be a stored attribute ("phone number", "view
#: count").
_COMPUTING_WORDS = AGGREGATE_WORDS - {"number", "no", "count"}
_STORED_HEADS = frozenset({"number", "count"})


def stored_output(words: Sequence[str], names: Sequence[str]) -> bool:
    """Is a computed-sounding item the name of a stored output ("defensive work rate" →
    ``defensive_work_rate``, "phone number" → ``phone``, "amount" → ``amount``)?

    >>> stored_output(["phone", "number"], ["phone"])
    True
    >>> stored_output(["total", "amount"], ["amount"])
    False
    >>> stored_output(["number"], ["views"]), stored_output(["view", "count"], ["views"])
    (False, True)
    """
    if any(w in _COMPUTING_WORDS for w in words):
        return False
    content = [w for w in words if len(w) >= 3 and w not in _STORED_HEADS]
    return bool(content) and all(any(word_matches(w, n) for n in names) for w in content)


def named_output(words: Sequence[str], names: Sequence[str]) -> bool:
    """Does one output's name hold every content word of an item, its computing word too
    ("mean temperature" as ``mean_temperature_f``)?

    >>> named_output(["mean", "temperature"], ["mean_temperature_f"])
    True
    >>> named_output(["mean", "humidity"], ["mean_temperature_f", "mean_dew_point_f"])
    False
    """
    content = [w for w in words if len(w) >= 3]
    return bool(content) and any(all(word_matches(w, n) for w in content) for n in names)

"""Conditions that cannot select what the question asks for: intent checks of the alignment.

- One column held equal to two different values in one AND chain (``year = 0 AND year =
  2010``): no row meets both, so the result is empty whatever the data.
- A LIKE pattern with no wildcard where the question asks for text that *contains* a word
  or a letter ("names containing 'ee'" as ``name LIKE 'ee'``): without ``%`` the pattern
  matches only the whole value, as ``=`` does; an ``=`` on the word a "contains the word"
  cue gives keeps only values equal to it.

>>> from stef.findings import FindingCollector
>>> from stef.spec import Filter, Spec
>>> out = FindingCollector()
>>> like = Filter("title", "like", ("universal",), 'Title LIKE "Universal"')
>>> check_like_cue("Films whose title contains the word Universal", Spec(filters=[like]), out)
>>> check_contradiction(Spec(flags={"contradiction": ["year = 0", "year = 2010"]}), out)
>>> [f.kind for f in out.findings]
['like_without_wildcard', 'contradicting_filters']
"""

from __future__ import annotations

import re

from stef.align.matching import float_value
from stef.findings import FindingCollector
from stef.spec import Spec

#: The stricter cue: "contains the word", "including the letter", "with the substring": the
#: value after it is a part of the text, never the whole value.
_PART_CUE = re.compile(
    r"\b(?:contain(?:s|ed|ing)?|includ(?:e|es|ed|ing))\s+(?:the\s+|a\s+)?(?:words?|letters?|"
    r"strings?|text|phrases?|substrings?|keywords?)\b|\b(?:with|having|ha(?:ve|s))\s+(?:the\s+|a\s+)?"
    r"(?:words?|letters?|substrings?|phrases?|keywords?)\b",
    re.I,
)
#: Nouns of a text a value is part of: "'Express' in their names", "address that contains NY".
_TEXT_NOUNS = (
    r"(?:names?|titles?|address(?:es)?|descriptions?|texts?|comments?|emails?|details?"
    r"|bod(?:y|ies)|notes?|locations?|messages?|summar(?:y|ies)|labels?)"
)
#: A value placed inside a text: "have 'Express' in their names", "with TN in the address",
#: "has 'ROY' in part";
#: a text noun that contains it: "a location that contains NY".
_IN_TEXT = re.compile(
    r"\b(?:has|have|having|with|contains?)\s+(?P<v>'[^']{1,40}'|\"[^\"]{1,40}\"|\w[\w-]{0,20})"
    rf"\s+(?:in|inside|within)\s+(?:(?:their|its|the|his|her)\s+(?:[a-z]+\s+)?{_TEXT_NOUNS}|part)\b"
    rf"|\b{_TEXT_NOUNS}\s+(?:that\s+|which\s+)?contain(?:s|ing)?\s+(?P<w>'[^']{{1,40}}'|\"[^\"]{{1,40}}\"|\w[\w-]{{0,20}})"
)
#: A question that asks for text containing something: "contains", and the stricter cues
#: ("including the word", "with the letter z", "having the substring").
_CONTAINS = re.compile(rf"\bcontain(?:s|ed|ing)?\b|{_PART_CUE.pattern}", re.I)


def check_like_cue(question: str, sql: Spec, out: FindingCollector) -> None:
    """A LIKE with no ``%`` or ``_`` under a "contains" cue (see the module doc); said once,
    not again where the filter alignment already calls its operator wrong."""
    if not question or (
        _CONTAINS.search(question) is None and not _IN_TEXT.search(question.casefold())
    ):
        return
    told = {f.sql for f in out.findings if f.kind == "filter_wrong_operator"}
    for f in sql.filters:
        if f.op != "like" or not f.values or f.text in told:
            continue
        value = f.values[0]
        if value and "%" not in value and "_" not in value:
            out.add(
                "like_without_wildcard",
                "error",
                f"the question asks for text that contains {value!r}; {f.text} has no '%', so "
                "it matches only values equal to it",
                None,
                f.text,
                "filter_alignment",
            )
            return
    _check_whole_value(question, sql, out)


def _check_whole_value(question: str, sql: Spec, out: FindingCollector) -> None:
    """An ``=`` or ``<>`` on the word a "contains the word" cue gives ("detail contains the
    word 'Latte'" as ``product_details = 'Latte'``): it keeps only values equal to the word
    (``filter_wrong_operator``); said once.

    >>> from stef.spec import Filter
    >>> eq = Filter("product_details", "=", ("latte",), "product_details = 'Latte'")
    >>> out = FindingCollector()
    >>> _check_whole_value("Which detail contains the word 'Latte'?", Spec(filters=[eq]), out)
    >>> eq = Filter("name", "=", ("express",), "name = 'Express'")
    >>> _check_whole_value("Trains with 'Express' in their names?", Spec(filters=[eq]), out)
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator', 'filter_wrong_operator']
    """
    low = question.casefold()
    windows = [low[m.end() : m.end() + 60] for m in _PART_CUE.finditer(low)]
    windows += [m.group("v") or m.group("w") for m in _IN_TEXT.finditer(low)]
    windows = windows[:20]  # a question states a handful; a hostile one thousands
    if not windows:
        return
    for f in sql.filters:
        if f.op not in ("=", "!=", "in", "not in"):
            continue
        for value in (v.casefold() for v in f.values if v):
            if not any(re.search(rf"(?<!\w){re.escape(value)}(?!\w)", w) for w in windows):
                continue
            out.add(
                "filter_wrong_operator",
                "error",
                f"the question asks for text that contains {value!r}; {f.text} keeps only"
                " values equal to it",
                value,
                f.text,
                "filter_alignment",
            )
            return


def check_contradiction(sql: Spec, out: FindingCollector) -> None:
    """One column held equal to two different values in one AND chain (see the module
    doc); the flag holds the two conditions as written."""
    pair = sql.flags.get("contradiction")
    if not pair:
        return
    out.add(
        "contradicting_filters",
        "error",
        f"{pair[0]} and {pair[1]} hold one column to two values at once: no row meets both",
        None,
        " AND ".join(pair),
        "filter_alignment",
    )


def check_range_bounds(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """A stated lower bound ("at least 200 feet") that the SQL writes only as the upper end
    of a BETWEEN (``height BETWEEN 20 AND 200``), or a stated upper bound only as its lower
    end: the range keeps the rows on the other side of it (``filter_wrong_operator``); said
    once, not again where the filter alignment already calls that condition wrong.

    >>> from stef.spec import Filter
    >>> nl = Spec(filters=[Filter(None, ">=", ("200",), "at least 200", "question")])
    >>> rng = Filter("height", "between", ("20", "200"), "height BETWEEN 20 AND 200")
    >>> sql = Spec(filters=[rng])
    >>> out = FindingCollector()
    >>> check_range_bounds(nl, sql, out)
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    """
    between = [  # an empty range (low above high) is empty_range's
        f for f in sql.filters if f.op == "between" and len(f.values) == 2 and _ascending(f.values)
    ]
    if not between:
        return
    told = {f.sql for f in out.findings if f.kind == "filter_wrong_operator"}
    for req in nl.filters:
        if req.op not in (">", ">=", "<", "<=") or len(req.values) != 1 or req.clause != "question":
            continue  # a bound the question states (a hint's "normal range" is a definition)
        v, lower = req.values[0], req.op in (">", ">=")
        if any(v in f.values for f in sql.filters if f.op != "between"):
            continue  # the number is also compared on its own
        for f in between:
            if f.values[1 if lower else 0] == v and f.values[0 if lower else 1] != v:
                if f.text in told:
                    return
                out.add(
                    "filter_wrong_operator",
                    "error",
                    f"question asks {req.op} {v} ({req.text!r}); {f.text} "
                    f"{'ends' if lower else 'starts'} at it, keeping the rows on the other side",
                    req.text,
                    f.text,
                    "filter_alignment",
                )
                return


def _ascending(values: tuple[str, ...]) -> bool:
    """Are a BETWEEN's two bounds numbers, low then high?"""
    low, high = (float_value(v) for v in values)
    return low is not None and high is not None and low <= high

"""What a question asks to get back: the items of its request, read from its phrasing.

"What is the id and name of the staff who …" asks for two items, ``id`` and ``name``;
"List out the short name of the team" asks for ``short name``; "How many cards …? List
out the id of those cards." asks for a count and for ``id``. Each item is the noun
phrase after a request opener ("what is the", "list", "show", "give", "indicate" …), up
to the first word that starts a qualifier ("of", "who", "with" …), split on "and" and
commas. The alignment checks that every item has a SELECT output that can be it.

Deterministic and schema-free: an item is words, not a column, so only a lexical overlap
between the item and the selected column names is checked (see
:func:`stef.align.intent.check_requests`).

>>> items = requested_items("What is the id and name of the staff?")
>>> [(i.text, i.head, i.aggregate) for i in items]
[('id', 'id', False), ('name', 'name', False)]
>>> [i.text for i in requested_items("How many cards are red? List out the id of those cards.")]
['id']
>>> [(i.text, i.aggregate) for i in requested_items("Find the average age of students.")]
[('average age', True)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from stef.nl import lexicon as lx
from stef.spec import Projection

#: Openers after which the request's noun phrase starts.
_OPENER = re.compile(
    r"(?:^|[.?!;]\s*|\b(?:and|also|then|please)\s+)"
    r"(?:(?:what|which)\s+(?:is|are|was|were|'s)"
    r"|(?:list|show|give|find|return|display|indicate|state|provide|tell|identify|mention"
    r"|include|report|retrieve|get|calculate|compute|name)"
    r"(?:\s+(?:out|down|me|us|all|both|each|every))*)"
    r"\s+(?:(?:the|their|its|his|her|all|all of the|each|every|both|any|a|an)\s+)*"
)


_WORD = re.compile(r"[a-z][a-z0-9'\-]*|\d")
_SPLIT = re.compile(r"\s*(?:,|\band\b|&|/)\s*")
_MAX_WORDS = 4


@dataclass(frozen=True)
class RequestedItem:
    """One thing the question asks to get back.

    ``words`` are its content words (fillers dropped), ``head`` the last of them (the
    noun the item is about), ``aggregate`` whether it names a computed value.
    """

    text: str
    words: tuple[str, ...]
    head: str
    aggregate: bool


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """A crude singular, enough to compare a question's nouns with column names
    (memoised: the alignment asks for the same words many times).

    >>> [singular(w) for w in ("names", "cities", "classes", "status", "ids")]
    ['name', 'city', 'class', 'status', 'id']
    """
    if word == "ids":
        return "id"
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


#: "no. of districts": the abbreviation of "number of", not the end of a sentence.
_NUMBER_OF = re.compile(r"\bno\.\s+of\b")


@lru_cache(maxsize=8192)
def requested_items(question: str) -> tuple[RequestedItem, ...]:
    """The items ``question`` asks to get back, in reading order (see the module doc)."""
    low = _NUMBER_OF.sub("number of", question.casefold().replace("’", "'"))
    items: list[RequestedItem] = []
    seen: set[str] = set()
    for m in _OPENER.finditer(low):
        words: list[str] = []
        prev_end = m.end()
        for w in _WORD.finditer(low, m.end()):
            between = low[prev_end : w.start()]
            if any(ch in between for ch in ".?!;:()'\"") or w.group(0).isdigit():
                break  # a sentence ends, or a value starts
            if "," in between and words:
                words.append(",")
            word = w.group(0).rstrip("'s") if w.group(0).endswith("'s") else w.group(0)
            if word in lx.REQUEST_STOPS and word != "and":
                break
            if word == "and" and not words:
                break
            if words and len(word) >= 4 and word.endswith("ed") and not word.endswith("eed"):
                break  # "the elements associated with …": a participle starts a qualifier
            words.append(word if word != "and" else ",")
            prev_end = w.end()
            if len(words) > _MAX_WORDS * 3:
                break
        phrase = " ".join(words).replace(" ,", ",")
        for part in _SPLIT.split(phrase):
            content = tuple(w for w in part.split() if w not in lx.REQUEST_FILLERS)
            if not content or len(content) > _MAX_WORDS or content[-1] in lx.REQUEST_VAGUE:
                continue
            if "or" in content:
                continue  # "free or reduced price meals": one of two, not checkable
            text = " ".join(content)
            if text in seen:
                continue
            seen.add(text)
            items.append(
                RequestedItem(
                    text=text,
                    words=content,
                    head=singular(content[-1]),
                    aggregate=any(w in lx.REQUEST_COMPUTED_WORDS for w in content),
                )
            )
    return tuple(items)


def request_projections(question: str) -> list[Projection]:
    """The NL spec's ``projections``: one per requested item, its content words as
    ``columns`` and ``is_aggregate`` for a computed item.

    >>> [(p.expr, p.columns) for p in request_projections("Give me their names and ids.")]
    [('names', ('names',)), ('ids', ('ids',))]
    """
    return [
        Projection(i.text, None, i.words, i.aggregate, i.text) for i in requested_items(question)
    ]

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
from dataclasses import dataclass, replace
from functools import lru_cache

from stef.nl import lexicon as lx
from stef.nl.words import TEXT_CACHE_SIZE
from stef.spec import Projection

#: Openers after which the request's noun phrase starts.
_OPENER = re.compile(
    r"(?:(?:^|[.?!;]\s*|\b(?:and|also|then|please)\s+)"
    r"(?:(?:what|which)\s+(?:is|are|was|were|'s)"
    r"|(?:list|show|give|find|return|display|indicate|state|provide|tell|identify|mention"
    r"|include|report|retrieve|get|calculate|compute|name)"
    r"(?:\s+(?:out|down|me|us|all|both|each|every))*)"
    # after a leading qualifier: "For each course, list its name, …" (verbs that are no noun)
    r"|,\s*(?:list|show|give|find|return|display|provide|retrieve)(?:\s+(?:me|us|all))*"
    r"|,\s*(?:state|(?:what|which)\s+(?:is|are|was|were))(?=\s+(?:the|their|its)\b))"
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


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _opener_ends(low: str) -> tuple[int, ...]:
    """Where each request opener (:data:`_OPENER`) of a case-folded text ends, in reading
    order (memoised: :func:`requested_items` and :func:`enumeration_size` read the same
    question, most often as the same text).

    >>> _opener_ends("list the name, and show the city")
    (9, 28)
    """
    return tuple(m.end() for m in _OPENER.finditer(low))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def requested_items(question: str) -> tuple[RequestedItem, ...]:
    """The items ``question`` asks to get back, in reading order (see the module doc)."""
    low = question.casefold().replace("’", "'")
    if "no." in low:  # what every _NUMBER_OF match holds
        low = _NUMBER_OF.sub("number of", low)
    items: list[RequestedItem] = []
    seen: set[str] = set()
    for start in _opener_ends(low):
        words: list[str] = []
        prev_end = start
        for w in _WORD.finditer(low, start):
            between = low[prev_end : w.start()]
            if any(map(between.__contains__, ".?!;:()'\"")) or w.group(0).isdigit():
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
    return tuple(_share_heads(items))


#: Modifiers that share the noun of the next item ("the first and last name": two names).
_SHARED_HEAD_MODIFIERS = lx._words(
    """first last middle given family start end starting ending beginning opening closing
    arrival departure home away minimum maximum min max lowest highest earliest latest"""
)


def _share_heads(items: list[RequestedItem]) -> list[RequestedItem]:
    """A lone modifier followed by an item that ends on a noun takes that noun: "the first
    and last name" asks for a first name and a last name, "the start and end dates" for
    two dates.

    >>> [i.text for i in requested_items("What is the first and last name of each driver?")]
    ['first name', 'last name']
    """
    out = list(items)
    for k, item in enumerate(out[:-1]):
        nxt = out[k + 1]
        if len(item.words) == 1 and item.words[0] in _SHARED_HEAD_MODIFIERS and len(nxt.words) > 1:
            words = (item.words[0], nxt.words[-1])
            out[k] = replace(item, text=" ".join(words), words=words, head=nxt.head)
    return out


#: Words that open a segment which is no item of the list: a qualifier, an order, a value.
_SEGMENT_STOPS = lx._words(
    """sorted ordered grouped ranked order sort group rank ordering sorting ascending
    descending otherwise known where which who whom whose that
    if when whether excluding except for in with by from on at respectively please then
    than to so such limited only showing display displayed"""
)
#: Words that lead a segment of the list without being part of its item.
_SEGMENT_LEADS = lx._words("and also plus as well the their its his her a an each every both")
#: Words after which a segment's item is qualified: an "and" past one of them is no split.
_QUALIFIERS = lx._words("of for who whom whose that which where with in from by on at than between")
_ENDS_LIST = _SEGMENT_STOPS - {"only"}
#: A lead that opens the list inside a request's first segment ("… with their names, …").
_WITH_THEIR = re.compile(r"\b(?:along\s+)?with\s+(?:their|its)\s+", re.IGNORECASE)
_SENTENCE = re.compile(r"[.?!;:]")


def _named_with_acronym(words: list[str]) -> bool:
    """``DLC key``, ``ISBN numbers``: a capitalised word and lower-case nouns only.

    >>> _named_with_acronym(["HR", "department", "name"]), _named_with_acronym(["New", "York"])
    (True, False)
    """
    return len(words) > 1 and all(w.isalpha() and w.islower() for w in words[1:])


def _segment_items(segment: str) -> int | None:
    """Items one comma-separated segment of a request lists (its "and"s before any
    qualifier split it); ``None`` when the segment ends the list (a qualifier, an order, a
    value: capitalised, quoted or a number)."""
    words = segment.split()
    while words and (words[0].casefold() in _SEGMENT_LEADS or words[0].casefold() == "along"):
        words = words[1:]
        if words and words[0].casefold() in {"with", "as"} and len(words) > 1:
            words = words[1:]  # "along with", "as well as"
    if not words:
        return 0
    first = words[0]
    if first.casefold() == "whether":
        return 1  # "whether the term is current or not": one yes/no output
    if first.casefold() in _SEGMENT_STOPS:
        return None
    if not first[:1].islower() and not _named_with_acronym(words):
        return None  # a value ("Boston"), not an item named with one ("DLC key", "HR name")
    items, qualifiers = 1, set[str]()
    for i, w in enumerate(words[1:], 1):
        low = w.casefold()
        if low in _QUALIFIERS:
            qualifiers.add(low)
        elif low == "and" and (
            not qualifiers or (qualifiers == {"of"} and _computed_next(words[i:]))
        ):
            # "the name of the list and the total number of its members": a computed item
            # led by its article after an "of" (and no other qualifier) is a new item;
            # "students and teachers" is not
            items, qualifiers = items + 1, set[str]()
    return items


def _computed_next(words: list[str]) -> bool:
    """Does ``and the <computed word>`` start ``words`` ("and the total number of …")?

    >>> _computed_next("and the number of rooms".split()), _computed_next("and the city".split())
    (True, False)
    """
    low = [w.casefold() for w in words[:3]]
    return len(low) == 3 and low[1] in _ITEM_ARTICLES and low[2] in lx.REQUEST_COMPUTED_WORDS


#: Articles that lead a new item of a request's list ("…, the number of faculty").
_ITEM_ARTICLES = frozenset({"the", "their", "its"})


def _resumes(words: list[str]) -> bool:
    """Does a segment past a qualified item start a new item of the list: an article and a
    lower-case noun, or a computed word ("number of …"), after an optional "and" ("and the
    number of courses", "and number of tenured faculty")?

    >>> _resumes("and the number of courses".split()), _resumes("department and level".split())
    (True, False)
    >>> _resumes("and number of tenured faculty".split())
    True
    """
    low = [w.casefold() for w in words[:3]]
    if low[:1] == ["and"]:
        low, words = low[1:], words[1:]
    if len(low) >= 2 and low[0] in lx.REQUEST_COMPUTED_WORDS and low[1] == "of":
        return True
    return (
        len(low) >= 2
        and low[0] in _ITEM_ARTICLES
        and words[1][:1].islower()
        and low[1] not in _SEGMENT_STOPS
    )


def _ends_list(words: list[str]) -> bool:
    """Does a word of a segment's item start a qualifier whose commas the list's are not
    ("for each school, department")? An item's own "for all …" does not ("square footage
    for all rooms, total number of floors").

    >>> _ends_list("code for each school".split()), _ends_list("area for all rooms".split())
    (True, False)
    """
    low = [w.casefold() for w in words]
    return any(
        w in _ENDS_LIST and not (w == "for" and low[i + 1 : i + 2] == ["all"])
        for i, w in enumerate(low)
    )


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def enumeration_size(question: str) -> int:
    """How many items the longest list of one request opener asks to get back (two or
    more), else 0: ``show the name, city and state`` lists 3; a qualifier, an order or a
    list of values ends the list (memoised, as :func:`requested_items`).

    >>> enumeration_size("Show the name, city, and state of each store, sorted by name.")
    3
    >>> enumeration_size("List the name and floor of the building with the largest floor.")
    2
    >>> enumeration_size("List students who live in Boston, Cambridge, and Somerville.")
    0
    >>> enumeration_size("What is the number of students and teachers?")
    0
    >>> enumeration_size("What is the code, name and total for each school, department, and level?")
    3
    >>> enumeration_size("Retrieve the subjects, including their titles, categories and fees.")
    3
    >>> enumeration_size("For each term, list the code, whether it is current or not, and the fee.")
    3
    >>> enumeration_size("Show courses offered in fall, including the DLC key, title and fee.")
    3
    >>> enumeration_size("List all buildings with their names, heights, cities, ordered by name.")
    3
    >>> enumeration_size("For each group, state the type, the number of rooms, and the area.")
    3
    >>> enumeration_size("What is the code, area for all rooms, number of floors, and owner?")
    4
    """
    best = 0
    for start in _opener_ends(question.casefold()):
        end = _SENTENCE.search(question, start)
        clause = question[start : end.start() if end else len(question)]
        count, ended, qualified = 0, False, False
        for n, segment in enumerate(clause.split(",")):
            words = segment.split()
            if words and words[0].casefold() in {"including", "namely"}:
                # "the details, including X, Y": the list starts again, even past a qualifier
                count, ended, segment = 0, False, " ".join(words[1:])
            elif n == 0 and (lead := _WITH_THEIR.search(segment)):
                # "List all buildings with their names, numbers, …": the list starts there
                count, ended, segment = 0, False, segment[lead.end() :]
            elif qualified and _resumes(words):
                # "the name of lists with ten members, the number of faculty, …": an item
                # led by its article after a qualified item takes the list up again
                ended = False
            if ended:
                continue
            items = _segment_items(segment)
            if items is None:
                ended, qualified = True, False
                continue
            count += items
            # later commas belong to a qualifier ("for each school, department"), not to an
            # item's own ("square footage for all rooms, total number of floors")
            ended = qualified = _ends_list(segment.split()[1:])
        best = max(best, count)
    return best if best >= 2 else 0


def request_projections(question: str) -> list[Projection]:
    """The NL spec's ``projections``: one per requested item, its content words as
    ``columns`` and ``is_aggregate`` for a computed item.

    >>> [(p.expr, p.columns) for p in request_projections("Give me their names and ids.")]
    [('names', ('names',)), ('ids', ('ids',))]
    """
    return [
        Projection(i.text, None, i.words, i.aggregate, i.text) for i in requested_items(question)
    ]

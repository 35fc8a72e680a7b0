"""Values a question gives an attribute by name: "the python tag", "the History department",
"products in category Electronics", "questions tagged with Ruby".

An attribute noun (:data:`ATTRIBUTES`: tag, badge, category, department, plan, …) next to a
value word says which rows the question wants, whatever the value's case: "users on the pro
plan" keeps the rows whose plan is pro. :func:`stef.align.attributes.check_attribute_values`
reports such a value that nothing of the SQL holds.

Two phrasings are read:

* the value before the noun, after an article or a preposition: "in the Statistics
  department", "with java tag", "for arena league" — where the noun ends its phrase (a
  preposition, a verb of a clause, punctuation or the end follows): "the border color of
  the card" asks for an attribute, "the football league name" names a column;
* the value after the noun, after a preposition: "in category Electronics", "tagged with
  ruby", "of status Pending" — capitalised, quoted, or after a tag; or after a title's
  colon: "Badge: Scholar, by month"; and a tag before "tagged": "data.table tagged
  questions".

A value word is none of the words that qualify a noun without naming a value (articles,
quantifiers, "same", "given", "top"…), no number, no participle and no superlative ("the
hosting country", "the busiest city"). Deterministic and schema-free.

>>> [(a.value, a.attribute) for a in attribute_values("Give the student in the History department")]
[('history', 'department')]
>>> [(a.value, a.attribute) for a in attribute_values("Most voted questions tagged with Ruby")]
[('ruby', 'tag')]
>>> attribute_values("What is the border color of the card?"), attribute_values("each department")
((), ())
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from stef.nl import lexicon as lx
from stef.nl.request import singular
from stef.nl.words import TEXT_CACHE_SIZE

#: Nouns of an attribute whose values are names (the singular and its plural).
_NOUNS = lx._words(
    """tag badge category department team league division plan tier segment channel
    language platform genre brand region country city county district priority currency
    gender colour color campaign industry sector"""
)
ATTRIBUTES = _NOUNS | frozenset(
    {n + "s" for n in _NOUNS if not n.endswith("y")}
    | {n[:-1] + "ies" for n in _NOUNS if n.endswith("y")}
)

#: Words that qualify an attribute noun without naming a value of it.
_NOT_VALUES = lx._words(
    """the a an this that these those each every any all some no given specific certain
    particular single one two three same different other another own their its his her
    our my your which what whose whichever top most least more less popular main new old
    first last primary secondary highest lowest largest smallest biggest best worst average
    total overall entire whole respective corresponding such current previous next parent
    child sub multiple several many few various both either neither only unique distinct
    specified selected said above below following there per by of in on for to with from at
    as and or not has have had is are was were be been do does did they them it he she we
    you i home away host favourite favorite preferred default departure arrival origin
    destination birth billing mailing source target start end contact"""
)
#: Words after an attribute noun that end its phrase: the noun is the phrase's head ("of"
#: is not one: "the border color of the card" asks for the attribute).
_ENDS = lx._words(
    """with in and or that who which whose for to at on by from is are was were has have
    had as than where when"""
)
#: Leads of the value-first phrasing ("in the Statistics department", "with java tag").
_LEADS = lx._words("the a an with in for of from on under into")

_TOKEN = re.compile(r"[A-Za-z][\w#+.'\-]*[\w#+]|[A-Za-z]|\d[\w.]*|[\"'\[\]]|[^\s\w]")
#: An attribute noun, anywhere: the one search that rules most questions out.
_ANY = re.compile(rf"\b(?:tagged|{lx.alternation(ATTRIBUTES)})\b", re.IGNORECASE)


@dataclass(frozen=True)
class AttributeValue:
    """A value the question gives an attribute: ``value`` (case-folded), ``attribute`` (the
    noun, singular) and ``text`` (the phrase as written)."""

    value: str
    attribute: str
    text: str


def _singular(noun: str) -> str:
    """The noun's singular ("tagged" names a tag).

    >>> _singular("categories"), _singular("tags"), _singular("tagged")
    ('category', 'tag', 'tag')
    """
    return "tag" if noun == "tagged" else singular(noun)


def _is_value(word: str) -> bool:
    """Can ``word`` name a value: no qualifier, number, participle or superlative (a
    capitalised word may end like one: "the Yearling badge")?

    >>> [_is_value(w) for w in ("python", "History", "c#", "hosting", "busiest", "2010")]
    [True, True, True, False, False, False]
    """
    low = word.casefold()
    if len(word) >= 2 and word.isalpha() and word.isupper():
        return True  # an acronym: "the IT department", "whose title is IT Staff"
    if not word[:1].isalpha() or low in _NOT_VALUES or low in ATTRIBUTES:
        return False
    return word[:1].isupper() or not (
        (low.endswith("ed") and len(low) > 4)
        or (low.endswith("ing") and len(low) > 5)
        or (low.endswith("est") and len(low) > 5)
    )


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def attribute_values(question: str) -> tuple[AttributeValue, ...]:
    """The values ``question`` gives an attribute by name (see the module doc), each once,
    in reading order.

    >>> [a.text for a in attribute_values("How many users are on the pro plan?")]
    ['pro plan']
    >>> [a.text for a in attribute_values("List products in category Electronics.")]
    ['category Electronics']
    >>> attribute_values("Which department has the most students?")
    ()
    >>> [(a.value, a.attribute) for a in attribute_values("List users whose role is admin.")]
    [('admin', 'role')]
    """
    named = _ANY.search(question) is not None
    if not named and _WHOSE_ANY.search(question) is None:
        return ()
    toks = [m.group(0) for m in _TOKEN.finditer(question)]
    low = [t.casefold() for t in toks]
    found: list[AttributeValue] = []
    seen: set[str] = set()
    for value, attribute, text in _whose(toks, low):
        if value.casefold() not in seen:
            seen.add(value.casefold())
            found.append(AttributeValue(value.casefold(), attribute, text))
    for i, word in enumerate(low if named else ()):
        if word not in ATTRIBUTES and word != "tagged":
            continue
        attribute = _singular(word)
        for value, text in (*_before_listed(toks, low, i), _after(toks, low, i)):
            if value and value.casefold() not in seen:
                seen.add(value.casefold())
                found.append(AttributeValue(value.casefold(), attribute, text))
    return tuple(found)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def attribute_nouns(question: str) -> frozenset[str]:
    """The attribute nouns ``question`` names, valued or not, singular.

    >>> sorted(attribute_nouns("Employees whose title is IT Staff from each city"))
    ['city']
    """
    return frozenset(_singular(m.group(0).casefold()) for m in _ANY.finditer(question))


def _before(toks: list[str], low: list[str], i: int) -> tuple[str, str]:
    """The value before the noun at ``i`` ("the python tag", "the [python] tag"), or empty
    strings."""
    k = i - 1
    quoted = 1 if k >= 2 and toks[k] in ("'", '"', "]") and toks[k - 2] in ("'", '"', "[") else 0
    k -= quoted  # the value, inside its quotes
    lead = k - 1 - quoted
    if low[i] == "tagged":
        return _tagged_before(toks, low, i)
    if lead < 0 or low[lead] not in _LEADS:
        return "", ""
    nxt = low[i + 1] if i + 1 < len(low) else ""
    if (nxt[:1].isalnum() and nxt not in _ENDS) or nxt == "'" or low[i].endswith("'s"):
        return "", ""  # "the football league name", "the border color of the card", "the
        # functional languages' tags": the noun qualifies another
    if not _is_value(toks[k]):
        return "", ""
    return toks[k], f"{toks[k]} {toks[i]}"


def _tagged_before(toks: list[str], low: list[str], i: int) -> tuple[str, str]:
    """The tag before "tagged" and the rows it tags ("data.table tagged questions"), or
    empty strings ("questions tagged …" reads the value after it).

    >>> toks = "data.table tagged questions after 2012".split()
    >>> _tagged_before(toks, toks, 1)
    ('data.table', 'data.table tagged')
    >>> [_tagged_before(t.split(), t.split(), 2) for t in ("users who tagged posts",
    ...                                                   "all questions tagged python")]
    [('', ''), ('', '')]
    """
    nxt = low[i + 1] if i + 1 < len(low) else ""
    if i < 1 or not nxt.isalpha() or len(nxt) < 4 or not nxt.endswith("s") or nxt in _ENDS:
        return "", ""  # "questions tagged python": the value comes after
    word = low[i - 1]
    if word in _ENDS or word in lx.REQUEST_STOPS or not _is_value(toks[i - 1]):
        return "", ""
    return toks[i - 1], f"{toks[i - 1]} {toks[i]}"


def _before_listed(toks: list[str], low: list[str], i: int) -> list[tuple[str, str]]:
    """The values before the noun at ``i``: one ("the python tag"), or two joined by "and"
    or "or" ("in the biology and chemistry department", "on the pro or enterprise plan"),
    the first after the lead the one value needs.

    >>> toks = "courses in the biology and chemistry department".split()
    >>> _before_listed(toks, toks, 6)
    [('chemistry', 'chemistry department'), ('biology', 'biology department')]
    """
    k = i - 1
    if k < 3 or low[k - 1] not in ("and", "or") or low[k - 3] not in _LEADS:
        return [_before(toks, low, i)]
    nxt = low[i + 1] if i + 1 < len(low) else ""
    if (nxt[:1].isalnum() and nxt not in _ENDS) or not (
        _is_value(toks[k]) and _is_value(toks[k - 2])
    ):
        return [("", "")]  # "the home and away team names": the noun qualifies another
    return [(toks[k], f"{toks[k]} {toks[i]}"), (toks[k - 2], f"{toks[k - 2]} {toks[i]}")]


def _after(toks: list[str], low: list[str], i: int) -> tuple[str, str]:
    """The value after the noun at ``i`` ("in category Electronics", "tagged with ruby",
    "with the tag 'python'"), or empty strings."""
    tag = low[i] in ("tagged", "tag", "tags")
    if toks[i][:1].isupper() and low[i + 1 : i + 2] == [":"]:
        return _labelled(toks, i)  # a title's "Badge: Scholar, by month"
    if low[i] != "tagged" and (i < 1 or low[i - 1] not in ("with", "in", "of", "the")):
        return "", ""
    j = i + 1
    if low[i] == "tagged" and _tagged_before(toks, low, i)[0]:
        return "", ""  # "python tagged questions": the questions are what is tagged
    if low[i] == "tagged" and j < len(low) and low[j] in ("with", "as"):
        j += 1
    quoted = 1 if j < len(toks) and toks[j] in ("'", '"', "[") else 0
    j += quoted
    if j >= len(toks) or not _is_value(toks[j]):
        return "", ""
    value = toks[j]
    nxt = low[j + 1] if j + 1 < len(low) else ""
    if not (quoted or tag or value[:1].isupper()) or (nxt[:1].isalnum() and nxt not in _ENDS):
        return "", ""  # "in category order", "with status changes": no value
    return value, " ".join(toks[i : j + 1 + quoted])


def _labelled(toks: list[str], i: int) -> tuple[str, str]:
    """The capitalised (or quoted) value after "<Attribute>:" ("Badge: Scholar", "Tag:
    'python'"), or empty strings.

    >>> _labelled("Badge : Scholar , by month".split(), 0)
    ('Scholar', 'Badge : Scholar')
    >>> _labelled("Category : all of them".split(), 0)
    ('', '')
    """
    j = i + 2
    quoted = 1 if j < len(toks) and toks[j] in ("'", '"') else 0
    j += quoted
    if j >= len(toks) or not _is_value(toks[j]) or not (quoted or toks[j][:1].isupper()):
        return "", ""
    return toks[j], " ".join(toks[i : j + 1 + quoted])


#: "whose role is admin", "where the status is 'pending'": a value given its attribute.
_WHOSE_ANY = re.compile(
    r"\b(?:whose|where)\s+(?:the\s+)?[a-z]+\s+(?:is|are|was|were|equals)\s", re.I
)
#: Words after "is" that compare or qualify rather than name a value.
_NO_VALUE_AFTER_IS = lx._words(
    """not null empty missing unknown above below over under greater less more fewer higher
    lower larger smaller bigger between within at before after equal same different
    like than set known available defined blank"""
)


def _whose(toks: list[str], low: list[str]) -> list[tuple[str, str, str]]:
    """``(value, attribute, text)`` of each "whose <attribute> is <value>" (or "where the
    <attribute> is …"): one word or a quoted one that ends its phrase.

    >>> toks = "Who is the oldest person whose job is student ?".split()
    >>> _whose(toks, [t.casefold() for t in toks])
    [('student', 'job', 'job is student')]
    >>> toks = "songs whose genre is modern or language is English".split()
    >>> [v for v, _, _ in _whose(toks, [t.casefold() for t in toks])]
    ['modern', 'English']
    >>> toks = "employees whose title is IT Staff from each city".split()
    >>> [v for v, _, _ in _whose(toks, [t.casefold() for t in toks])]
    ['IT Staff']
    >>> toks = "users whose salary is higher than 5".split()
    >>> _whose(toks, [t.casefold() for t in toks])
    []
    """
    found: list[tuple[str, str, str]] = []
    for i, word in enumerate(low):
        if word not in ("whose", "where"):
            continue
        j = i + 1 + (1 if low[i + 1 : i + 2] == ["the"] else 0)
        while (item := _attribute_is(toks, low, j)) is not None:
            found.append(item[:3])
            after = item[3]  # "whose genre is modern or language is English": one more
            if after + 1 >= len(low) or low[after] not in ("or", "and"):
                break
            j = after + 1 + (1 if low[after + 1] in ("the", "whose") else 0)
    return found


def _attribute_is(toks: list[str], low: list[str], j: int) -> tuple[str, str, str, int] | None:
    """``(value, attribute, text, end)`` of "<attribute> is <value>" at token ``j``, where
    ``end`` is the token after it; ``None`` where no such phrase starts there."""
    if j + 2 >= len(low) or not toks[j].isalpha() or not toks[j].islower():
        return None  # "where Spanish is spoken": a value, no attribute
    if low[j] in _NOT_VALUES or low[j + 1] not in ("is", "are", "was", "were", "equals"):
        return None
    k = j + 2
    quoted = 1 if toks[k] in ("'", '"') else 0
    k += quoted
    if k >= len(toks) or low[k] in _NO_VALUE_AFTER_IS or not _is_value(toks[k]):
        return None
    last = k  # a capitalised name runs on: "whose title is IT Staff"
    while last + 1 < min(len(toks), k + 4) and toks[k][:1].isupper() and _capital(toks[last + 1]):
        last += 1
    end = last + 1 + quoted
    nxt = low[end] if end < len(low) else ""
    if (nxt[:1].isalnum() and nxt not in _ENDS) or nxt == "than":
        return None  # "whose name is John Smith's", "whose age is older than": no value
    value = " ".join(toks[k : last + 1])
    return value, singular(low[j]), " ".join(toks[j : last + 1]), end


def _capital(token: str) -> bool:
    """Does ``token`` go on a capitalised name ("Staff" in "IT Staff"), not a new clause?"""
    return token[:1].isupper() and token.casefold() not in _ENDS

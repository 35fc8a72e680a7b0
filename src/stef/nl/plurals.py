"""Is a superlative's subject or target plural? A plural ranks a list ("which schools have
the highest scores", "top users"); a singular asks for one row ("which city has the most
customers": the most *customers* is a count, the *city* is one).
"""

from __future__ import annotations

import re

from stef.nl import lexicon as lx
from stef.nl.words import _is_plural

_SUBJECT_VERB = re.compile(
    r"^\W*(?:(?:please\s+)?(?:list|name|show|give|find|provide|state)\s+)?(?:which|what)\s+"
    r"(?P<np>(?:[\w\-]+\s+){0,4}?)(?P<v>has|have|is|are|was|were|does|do|did|had)\b"
)


#: The two words after a leading "which"/"what" (a noun, a verb: "which customers spent"),
#: past one modifier of a plural noun ("which product categories grew").
_WHICH_NOUNS = re.compile(
    r"^\W*(?:which|what)\s+(?:[a-z\-]+\s+(?=[a-z\-]+s\s))?(?P<a>[a-z\-]+)\s+(?P<b>[a-z\-]+)\b"
)
#: Past forms of verbs a ranked plural subject takes ("which categories grew the most").
_PAST = frozenset("grew got gave took made ran rose fell saw wrote came went had did".split())  # noqa: SIM905


_WITH_BEFORE = re.compile(
    r"([a-z\-]+)\s+(?:with|having|who|that|which|whose|where)\s+(?:\w+\s+){0,3}$"
)


_LIST_HEAD = re.compile(
    r"^\W*(?:list|name|show|give|find|provide|state|what\s+are)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?"
    r"(?P<np>(?:[\w\-]+\s+){0,2}[\w\-]+)"
)


def plural_head(target: str, raw: str = "") -> bool:
    """Is the superlative's target a plural noun (``top users``, ``highest bounties``, an
    acronym's plural as written in ``raw``: ``top selling SKUs``)? Such a question ranks a
    list; it does not ask for one row.

    >>> plural_head("users from india"), plural_head("salary"), plural_head("")
    (True, False, False)
    >>> plural_head("selling skus", " selling SKUs"), plural_head("selling skus")
    (True, False)
    """
    words = target.split()
    if not words:
        return False
    head = next((w for w in words if w in {"of", "from", "in", "by", "for", "with"}), None)
    first = words[: words.index(head)] if head else words
    if first and raw and first[-1].endswith("s"):
        written = raw.split()[len(first) - 1 : len(first)]
        if written and _ACRONYM_PLURAL.fullmatch(written[0].strip(",.?!;:")):
            return True
    return bool(first) and _is_plural(first[-1])


#: An acronym in the plural: ``SKUs``, ``KPIs``, ``URLs``.
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")


_PHRASE_ENDS = lx._words(
    "of in on at for from to by with and or than that which who whom is are was were"
)


def plural_after(low: str, end: int) -> bool:
    """Is there a plural noun among the few words after ``end``, before the phrase ends
    (``top SO users``, ``top C++ users``: a ranked list, whatever names come between)?

    >>> plural_after("top so users from kz", 3), plural_after("top scorer of the team", 3)
    (True, False)
    """
    for raw in low[end:].split()[:4]:
        w = raw.strip(",.?!;:()\"'")
        if w in _PHRASE_ENDS:
            return False
        if _is_plural(w):
            return True
    return False


def plural_subject(low: str, sup_start: int) -> bool:
    """Does a superlative rank a plural subject (``which schools have the highest``)?"""
    m = _SUBJECT_VERB.match(low)
    if m and m.end() <= sup_start:
        v = m.group("v")
        if v in {"has", "is", "was", "does"}:
            return False
        if v in {"have", "are", "were", "do"}:
            return True
        words = m.group("np").split()
        return bool(words) and _is_plural(words[-1])
    lead = _WHICH_NOUNS.match(low)
    if lead and lead.end() <= sup_start:  # "which customers spent the most"
        a, b = lead.group("a"), lead.group("b")
        if _is_plural(a) and (b.endswith("ed") or b in lx.IRREGULAR_PARTICIPLES or b in _PAST):
            return True
    w = _WITH_BEFORE.search(low[max(0, sup_start - 80) : sup_start])
    if w:
        return _is_plural(w.group(1))
    head = _LIST_HEAD.match(low)
    if head:
        last = head.group("np").split()[-1]
        return last not in {"name", "id", "title"} and _is_plural(last)
    return False


def singular_subject(low: str, sup_start: int) -> bool:
    """Does a superlative rank a singular subject the question names before it ("which city
    has the most customers", "the store with the fewest returns")?

    >>> singular_subject("which city has the most customers", 15)
    True
    >>> singular_subject("which cities have the most customers", 18)
    False
    >>> singular_subject("the store with the fewest returns", 15), singular_subject("top", 0)
    (True, False)
    """
    m = _SUBJECT_VERB.match(low)
    if m and m.end() <= sup_start:
        v = m.group("v")
        if v in {"has", "is", "was", "does"}:
            return True
        words = m.group("np").split()
        return v not in {"have", "are", "were", "do"} and bool(words) and not _is_plural(words[-1])
    w = _WITH_BEFORE.search(low[max(0, sup_start - 80) : sup_start])
    return w is not None and not _is_plural(w.group(1)) and w.group(1) not in _NOT_SUBJECTS


#: Words before "with"/"who" that name no subject ("one with the most", "those with").
_NOT_SUBJECTS = frozenset({"one", "ones", "those", "these", "them", "it", "and", "or"})

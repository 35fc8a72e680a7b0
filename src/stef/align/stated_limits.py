"""Does the question state a LIMIT it never calls a top-k: the number in words ("list down
two molecule ids" for ``LIMIT 2``), or one row picked among the rows it names ("Which player
is older, Aaron Lennon or Abdelaziz Barrada?" for ``LIMIT 1``)? Read by
:func:`stef.align.order.check_order_limit` before it calls a LIMIT unexpected.

>>> limit_stated("Which card costs more, Serra Angel or Shrine Keeper?", 1)
True
"""

from __future__ import annotations

import re

from stef.nl import lexicon as lx

#: A choice between named rows by a comparative: "Which player is older, Aaron Lennon or
#: Abdelaziz Barrada?" asks for one of them (see :func:`_choice`).
_WH = re.compile(r"\b(?:which|who|what)\b", re.I)
_COMPARATIVE = re.compile(
    r"\b(?:more|less|fewer|higher|lower|older|younger|bigger|smaller|larger|greater|longer|"
    r"shorter|taller|heavier|lighter|faster|slower|better|worse|earlier|later|cheaper|richer)\b",
    re.I,
)
_OR = re.compile(r"\bor\b", re.I)
_SENTENCE_END = re.compile(r"[.?!]")


def _choice(question: str) -> bool:
    """Does a sentence ask "which/who/what … <comparative> …, A or B": a comparative after
    the question word, then a comma, then "or" before any other comma? One pass over each
    sentence (no backtracking regex: the text may be long).

    >>> _choice("Which card costs more converted mana, Serra Angel or Shrine Keeper?")
    True
    >>> _choice("Which players are older than 30, or younger than 20?"), _choice("A, B or C")
    (True, False)
    """
    for sentence in _SENTENCE_END.split(question):
        wh = _WH.search(sentence)
        cmp = _COMPARATIVE.search(sentence, wh.end()) if wh else None
        comma = sentence.find(",", cmp.end()) if cmp else -1
        while comma >= 0:
            nxt = sentence.find(",", comma + 1)
            stop = nxt if nxt >= 0 else len(sentence)
            if _OR.search(sentence, comma + 1, stop):
                return True
            comma = nxt
    return False


def limit_stated(question: str, limit: int | None) -> bool:
    """Does the question state the LIMIT's number in words ("list down two molecule ids"
    for LIMIT 2) or, for LIMIT 1, ask to choose one of the rows it names?

    >>> limit_stated("List down two molecule ids of carbon molecules.", 2)
    True
    >>> limit_stated("Which player is older, Aaron Lennon or Abdelaziz Barrada?", 1)
    True
    >>> limit_stated("List the molecule ids of carbon molecules.", 2)
    False
    """
    if limit is None:
        return False
    words = set(_WORD.findall(question.casefold()))
    if limit > 1 and any(lx.NUMBER_WORDS.get(w) == limit for w in words):  # "only one …"
        return True
    return limit == 1 and _choice(question)


_WORD = re.compile(r"[a-z]+")

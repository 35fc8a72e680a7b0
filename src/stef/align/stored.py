"""Columns that store an aggregate already: ``answercount`` is a count, ``avgscrmath`` an
average, ``numtsttakr`` a number of test takers. A question's aggregate may be answered by
reading such a column instead of computing it (see :mod:`stef.align.aggregation`), and a
question that asks for the figure is answered by showing it (:mod:`stef.align.shown`).
"""

from __future__ import annotations

import re

from stef.align.matching import canon_col
from stef.nl.request import singular
from stef.spec import Spec

#: Name parts of a column that holds an aggregate already (``avgscrmath``, ``answercount``,
#: ``basesetsize``, ``numtsttakr``), by the function it stands for.
STORED_AGGREGATES = {
    "avg": re.compile(r"avg|average|mean"),
    # not the "count" of account_id, discount, country or county
    "count": re.compile(r"(?<!ac)(?<!dis)count(?![ry])|cnt|size|total|^num(?!ber$)"),
    "sum": re.compile(r"total|sum"),
    "max": re.compile(r"^max|max_|highest"),
    "min": re.compile(r"^min|min_|lowest"),
}


def stored_aggregate(func: str, sql: Spec, noun: str | None = None, text: str = "") -> str | None:
    """An output or sort column whose name says it stores ``func`` already ("the highest
    average score" as ``ORDER BY avgscrmath``), else None. With the ``noun`` a count asks
    for and the question's searchable ``text``, a stored count of something else does not
    stand for it: "the number of answers" is not ``viewcount``.

    >>> from stef.spec import OrderKey, Projection
    >>> stored_aggregate("avg", Spec(order_by=[OrderKey("avgscrmath", "desc")]))
    'avgscrmath'
    >>> stored_aggregate("count", Spec(projections=[Projection("number", columns=("number",))]))
    >>> views = Spec(projections=[Projection("viewcount", columns=("viewcount",))])
    >>> stored_aggregate("count", views), stored_aggregate("count", views, "answers", " answers ")
    ('viewcount', None)
    >>> stored_aggregate("count", Spec(columns=[], order_by=[OrderKey("answercount", "desc")]),
    ...                   "answers", " number of answers ")
    'answercount'
    """
    names = [c for p in sql.projections if not p.is_aggregate for c in p.columns]
    names += [o.key for o in sql.order_by if not o.is_aggregate]
    return stored_name(func, names, noun, text)


def stored_name(
    func: str, names: list[str], noun: str | None = None, text: str = ""
) -> str | None:
    """The first of ``names`` that says it stores ``func`` already (for a count, of the
    ``noun`` :func:`stored_aggregate` takes), else None. The "count" of ``account_id``,
    ``discount``, ``country`` or ``county`` is none.

    >>> stored_name("count", ["account_id", "country", "AnswerCount"])
    'AnswerCount'
    """
    pattern = STORED_AGGREGATES.get(func)
    if pattern is None:
        return None
    for n in names:
        if not pattern.search(canon_col(n)):
            continue
        if noun is None or _stored_for(pattern.sub(" ", n.casefold()), noun, text):
            return n
    return None


def _stored_for(rest: str, noun: str, text: str) -> bool:
    """Does a stored count whose name is ``rest`` besides its count part count ``noun``?
    Yes when nothing is left (``total``), when the rest names the noun (``answer`` of
    ``answercount``), or when the question writes each of its words: as is, glued, shortened
    or as initials (``base set`` of ``basesetsize``, ``test takers`` of ``numtsttakr``,
    ``free or reduced price meal`` of ``frpm count``).

    >>> _stored_for("view", "answers", " number of answers "), _stored_for("", "users", "")
    (False, True)
    >>> _stored_for("baseset", "cards", " number of cards in the base set ")
    True
    >>> _stored_for("tsttakr", "sat", " the number of sat test takers ")
    True
    >>> _stored_for("frpm (k-12)", "meal", " free or reduced price meal count ")
    True
    """
    parts = [w for w in re.findall(r"[a-z]+", rest) if len(w) >= 3]
    if not parts:
        return True
    head = singular(noun.casefold())
    if any(head[:4] in w or w[:4] in head for w in parts):
        return True
    glued = text.replace(" ", "")
    content = [w for w in text.split() if w not in ("or", "and", "of", "the")]
    return all(part in glued or _shortened(part, content) for part in parts)


def _shortened(part: str, content: list[str]) -> bool:
    """Is a name's word the initials of a run of the question's content words (``frpm``),
    or shortened from one or two of them (``tsttakr``)?"""
    for i, w in enumerate(content):
        if not w.startswith(part[0]):
            continue
        if "".join(x[0] for x in content[i : i + len(part)]) == part:
            return True
        letters = iter("".join(content[i : i + 2]))
        if all(ch in letters for ch in part[1:]) and len(part) >= 4:
            return True
    return False

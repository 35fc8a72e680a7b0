"""Are the rows a title-style question lists told apart by an output?

"Top users from the Philippines" over ``users`` needs a user's id, name or a column named
for users, not only their reputation (``projection_subject_missing``); see
:func:`check_subject`.
"""

from __future__ import annotations

import re

from stef.align.formats import descriptive
from stef.align.join_keys import _id_like
from stef.align.output_names import output_names, word_matches
from stef.findings import FindingCollector
from stef.nl.request import singular
from stef.spec import Spec

#: The entity a title-style question lists, first: "Top 20 users in Tunisia", "Newest
#: users with reputation > 10k", "List of posts with edits …", "Questions with two answers".
#: Words that rank a title's rows ("Top 20 …", "Latest …").
_RANKS = r"top|first|last|latest|newest|oldest|best|worst"
_SUBJECT = re.compile(
    rf"^\W*(?:(?:the\s+|my\s+)?(?:(?:{_RANKS}|recent)"
    r"(?:\s+\d+)?|list\s+of|all|find(?:\s+all)?|show(?:\s+all)?|get(?:\s+all)?)\s+)*"
    r"(?:the\s+)?(?P<noun>[a-z]{3,}s)\b",
    re.I,
)
#: A ranked title's noun after up to three modifiers: "Top 20 most viewed posts", "Top SO Users".
_RANKED_SUBJECT = re.compile(
    # a capitalised site or topic may come first: "Stackoverflow Top 100 users"
    rf"^\W*(?:(?-i:[A-Z][\w.#+-]*)\s+)?(?:the\s+)?(?:{_RANKS})(?:\s+\d+)?\s+"
    r"(?:(?!(?:of|for|with|in|by|from|and|or|per|on|at|to|the|a|an)\b)[A-Za-z][\w'-]*\s+){0,3}?"
    r"(?P<noun>[a-z]{3,}s)\b",
    re.I,
)


#: A listing verb's noun after up to three modifiers: "Show stupid posts", "Find unanswered
#: questions", a description's "Lists the most commonly used tags" (the verb is required: a
#: title's first words alone may be its topic; an imperative "List …" names its items).
_LISTED_SUBJECT = re.compile(
    r"^\W*(?:find|show|get|search|(?:find|show|get|list|display|return)s|searches|identifies)"
    r"(?:\s+all)?\s+"
    r"(?:the\s+|my\s+)?(?:\d+\s+)?"
    r"(?:(?!(?:of|for|with|in|by|from|and|or|per|on|at|to|the|a|an|that|which|who|whose|where|"
    r"when|all)\b)[A-Za-z][\w'-]*\s+){0,3}?(?P<noun>[a-z]{3,}s)\b",
    re.I,
)


_SUBJECTS = (_SUBJECT, _RANKED_SUBJECT, _LISTED_SUBJECT)


#: The outputs a title names itself: "(body only)", "(titles only)", "only the title".
_ONLY = re.compile(
    r"\((?P<item>[a-z]+)\s+only\)|\bonly\s+(?:the|their)\s+(?P<other>[a-z]+)", re.I
)


def check_subject(question: str, sql: Spec, out: FindingCollector) -> None:
    """The rows a title-style question lists are told apart by an output: "Top users from
    the Philippines" over ``users`` needs a user's id, name or a column named for users, not
    only their reputation. Skipped when the SQL groups or aggregates (its rows are groups)
    or selects ``*``, and when the entity names no table of the SQL.

    >>> from stef.spec import Projection
    >>> out = FindingCollector()
    >>> sql = Spec(projections=[Projection("reputation", None, ("reputation",))], tables=["users"])
    >>> check_subject("Top users from the Philippines", sql, out)
    >>> check_subject("Top 500 most active SO users", sql, out)
    >>> check_subject("Show inactive users (no posts)", sql, out)
    >>> [f.kind for f in out.findings]
    ['projection_subject_missing', 'projection_subject_missing', 'projection_subject_missing']
    """
    if not sql.projections or sql.flags.get("select_star") or sql.group_by:
        return
    if any(p.is_aggregate for p in sql.projections):
        return
    # the first reading whose entity names a table of the SQL ("Lists …" is no entity)
    found = (
        (m, singular(m.group("noun").casefold())) for rx in _SUBJECTS if (m := rx.match(question))
    )
    tabled = ((m, h) for m, h in found if any(word_matches(h, t) for t in sql.tables))
    m, head = next(tabled, (None, ""))
    if m is None:
        return
    names, _ = output_names(sql)
    only = _ONLY.search(question)
    said = (only.group("item") or only.group("other") or "").casefold() if only else ""
    if said and any(word_matches(singular(said), n) for n in names):
        return  # "Top 5000 Java posts (body only)": the outputs the question names
    alone = len(sql.tables) == 1  # a text column is then the listed rows' own
    if any(
        (word_matches(head, n) and not _id_like(n))  # an id must be the rows' own
        or _own_id(n, head)
        or descriptive(n)
        or (alone and _own_text(n))
        for n in names
    ):
        return
    out.add(
        "projection_subject_missing",
        "warning",
        f"the question lists {m.group('noun')}; no output tells them apart (an id, a name or a "
        f"column named for {m.group('noun')})",
        m.group("noun"),
        ", ".join(p.text or p.expr for p in sql.projections),
        "request",
    )


def _own_text(name: str) -> bool:
    """Does a column hold a row's own text (a comment's ``text``, a post's ``body``) or its
    own code (a product's ``sku``), which tells rows apart as a title does (read only when
    the SQL reads one table)?"""
    return name.casefold().rsplit(".", 1)[-1].endswith(_OWN_TEXT)


_OWN_TEXT = ("text", "body", "content", "message", "description", "sku")


def _own_id(name: str, head: str) -> bool:
    """Is ``name`` an id that tells the listed ``head`` entities apart: ``id``, ``post_id``
    or ``OwnerUserId`` for users, not another entity's (``PostTypeId``, ``ParentId`` for
    posts)?

    >>> _own_id("id", "post"), _own_id("PostId", "post"), _own_id("owneruserid", "user")
    (True, True, True)
    >>> _own_id("posttypeid", "post"), _own_id("parentid", "post"), _own_id("name", "post")
    (False, False, False)
    """
    if not _id_like(name):
        return False
    stem = name.casefold().rsplit(".", 1)[-1].removesuffix("id").rstrip("_")
    return stem == "" or stem.endswith(head)

"""A value the question names that the SQL holds without writing it as a filter value.

A capitalised or code-like value the question names and no filter, literal or name of the
SQL holds is reported as ``value_unmatched``. Some such values are applied all the same,
in ways a schema-less reading can still see:

* bound to a run-time parameter on a column the question's next word names ("the Toys
  category" as ``category = :category``);
* applied as a code of a column the question's next word names ("the Sales department" as
  ``dept_id = 3``; the code cannot be read without the schema);
* one letter and a number read as a code of a column named from that letter ("P1
  incidents" as ``priority = 1``);
* another spelling of a literal: a city's other name ("Bombay" for ``'Mumbai'``), the
  same words misspelt ("Noth America" for ``'North America'``), a term code's tag ("2023
  Fall" as ``'2023FA'``), or a day of the year after an event's name ("Black Friday 2023"
  as ``'2023-11-24'``);
* a place after a comma that qualifies the value before it ("Kolkata, India").

Each is answered with an ``info`` finding; nothing here says the value is applied right.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from stef.align.matching import (
    canon_col,
    is_parameter,
    letters_in_order,
    name_words,
    text_mentions,
)
from stef.nl.places import same_city, stated_place
from stef.nl.request import singular
from stef.spec import Filter, Spec

_WORD = re.compile(r"[a-z][a-z0-9]+")
#: A code of digits and a short tag (``2023fa``), and a date literal.
_TAGGED = re.compile(r"\d{2,4}([a-z]{2,3})")
_DATE = re.compile(r"(?:19|20)\d\d-\d\d-\d\d")
#: How alike a misspelt value and a literal must be (``SequenceMatcher.ratio``).
_MISSPELT = 0.88


def held_otherwise(value: str, sql: Spec, text: str) -> str | None:
    """Where the SQL holds ``value`` (case-folded) other than as a filter value, described for
    a message, or None (see the module doc). ``text`` is the question (and its hints).

    >>> from stef.spec import Filter
    >>> param = Filter("category", "=", (":category",), "category = :category")
    >>> held_otherwise("toys", Spec(filters=[param]), "Average price in the Toys category")
    'parameter category = :category'
    >>> code = Filter("dept_id", "=", ("3",), "e.dept_id = 3")
    >>> held_otherwise("sales", Spec(filters=[code]), "Employees in the Sales department")
    'code e.dept_id = 3'
    >>> held_otherwise("p1", Spec(filters=[Filter("priority", "=", ("1",), "priority = 1")]), "")
    'code priority = 1'
    >>> held_otherwise("noth america", Spec(literals=["north america"]), "")
    "literal 'north america'"
    >>> held_otherwise("sales", Spec(filters=[code]), "Employees in Sales") is None
    True
    >>> voted = Filter("votetypeid", "=", ("2",), "VoteTypeId = 2")
    >>> held_otherwise("css", Spec(filters=[voted]), "Top 20 voted CSS answers") is None
    True
    """
    low = text.casefold()
    at = low.find(value)
    near = _neighbours(value, low, at)
    letter = re.fullmatch(r"([a-z])(\d+)", value)
    for f in sql.filters:
        if not f.column or f.op not in ("=", "in") or not f.values:
            continue
        if near and all(is_parameter(v) for v in f.values) and _names(f.column, near):
            return f"parameter {f.text or f.column}"
        coded = all(v.isdigit() or len(v) <= 3 for v in f.values)
        if near and coded and not all(map(is_parameter, f.values)) and _names(f.column, near):
            return f"code {f.text or f.column}"
        if letter and letter.group(2) in f.values and canon_col(f.column)[:1] == letter.group(1):
            return f"code {f.text or f.column}"
    year = re.match(r"\s+((?:19|20)\d\d)\b", low[at + len(value) :]) if at >= 0 else None
    for lit in sql.literals:
        plain = lit.strip("%_ ").casefold()
        if len(value) >= 5 and len(plain) >= 5 and _alike(value, plain):
            return f"literal {plain!r}"
        if same_city(value, plain) or same_city(plain, value):
            return f"literal {plain!r}"
        tagged = _TAGGED.fullmatch(plain)  # a term code: '2023FA' for "2023 Fall"
        if tagged and value.startswith(tagged.group(1)):
            return f"literal {plain!r}"
        if year and _DATE.match(plain) and plain.startswith(year.group(1)):
            return f"literal {plain!r} (a day of that year)"  # "Black Friday 2023"
    if at > 0 and low[:at].rstrip().endswith(",") and stated_place((value,), value):
        return "the place before it (a qualifier after a comma)"
    return None


#: A code: letters then digits ("tr001", "b737"), or digits then letters.
_CODE = re.compile(r"([a-z]+)(\d+)|(\d+)([a-z]+)")


def other_code(value: str, sql: Spec) -> str | None:
    """The SQL equality that compares another code of the same form as the question's
    ``value`` (case-folded): "molecule TR001" as ``molecule_id = 'TR005'``, the same letters
    and as many digits, but other ones. None where there is none.

    >>> from stef.spec import Filter
    >>> f = Filter("molecule_id", "=", ("tr005",), "molecule_id = 'TR005'")
    >>> other_code("tr001", Spec(filters=[f])), other_code("tr0011", Spec(filters=[f]))
    ("molecule_id = 'TR005'", None)
    """
    shape = _CODE.fullmatch(value)
    if shape is None or len(value) < 4:
        return None
    letters = shape.group(1) or shape.group(4)
    for f in sql.filters:
        if f.op not in ("=", "in") or value in f.values:
            continue
        for v in f.values:
            got = _CODE.fullmatch(v.casefold())
            if got and len(v) == len(value) and (got.group(1) or got.group(4)) == letters:
                return f.text or f"{f.column} = {v!r}"
    return None


#: Kept values that are states or flags, often an extra condition of correct SQL.
_STATE_VALUES = frozenset(
    {"active", "inactive", "true", "false", "yes", "no", "y", "n", "open", "closed", "done"}
    | {"completed", "complete", "paid", "pending", "approved", "valid", "enabled", "live"}
)


#: Columns of free text, whose LIKE patterns search content rather than keep a value.
_FREE_TEXT = frozenset(
    {"body", "text", "content", "comment", "comments", "title", "description", "message"}
    | {"summary", "note", "notes", "html", "markdown"}
)


def abbreviates(short: str, long: str) -> bool:
    """Is ``short`` (two to five letters) an abbreviation of ``long``: its initials, or its
    letters in order from the first ("LDN" for London, "NYC" for New York City)?

    >>> abbreviates("ldn", "london"), abbreviates("nyc", "new york city"), abbreviates("ny", "ca")
    (True, True, False)
    """
    s, w = short.casefold().replace(" ", ""), long.casefold()
    if not 2 <= len(s) <= 5 or len(s) >= len(w.replace(" ", "")):
        return False
    initials = "".join(p[0] for p in w.split() if p)
    return initials == s or letters_in_order(s, w.replace(" ", ""))


def _may_name(value: str, kept: str) -> bool:
    """May the SQL's ``kept`` value be another way to write the question's ``value``: an
    abbreviation ("US" for ``United States``, "LA" for ``Los Angeles``), a word of the same
    stem ("Italian" for ``Italy``), or the same city?

    >>> _may_name("us", "united states"), _may_name("italian", "italy")
    (True, True)
    >>> _may_name("google", "facebook")
    False
    """
    v, k = value.casefold(), kept.strip("%_ ").casefold()
    initials = "".join(w[0] for w in k.split() if w)
    firsts = (v.split() or [""])[0], (k.split() or [""])[0]
    return (
        SequenceMatcher(None, *firsts).ratio() >= 0.75  # "Faifaix County": FAIRFAX CO SCHS
        or letters_in_order(v.replace(" ", ""), k.replace(" ", ""))
        or v[:4] == k[:4]
        or (len(v) <= 4 and initials.startswith(v))
        or same_city(v, k)
    )


def other_value(
    value: str, sql: Spec, text: str, matched: list[tuple[Filter, Filter]]
) -> str | None:
    """The one SQL condition that keeps a word-like string value the question (``text``, as
    :func:`stef.align.matching.searchable` gives it) never names, not even in the plural,
    and that may not write ``value`` otherwise (:func:`_may_name`), where that value of the
    question is held nowhere: "signed up via Google" as ``signup_method =
    'facebook'``. A state or flag (``status = 'completed'``), a condition another value
    of the question matched, a search of free text (``body LIKE '%img%'``), an IN list of
    more than two (the members of a kind the question names: "RDBMS") or two such
    conditions say nothing.

    >>> f = Filter("signup_method", "=", ("facebook",), "signup_method = 'facebook'")
    >>> other_value("google", Spec(filters=[f]), " users signed up via google ", [])
    "signup_method = 'facebook'"
    >>> other_value("google", Spec(filters=[f]), " users on facebook or google ", [])
    """
    if len(value) < 3:
        return None  # "VA", "UK": too short to tell another value from another spelling
    used = {id(f) for _, f in matched}
    said = {singular(w)[:5] for w in text.split()}
    found = [
        f
        for f in sql.filters
        if f.op in ("=", "in", "like")
        and id(f) not in used
        and f.clause in ("where", "having", "join")
        and 0 < len(f.values) <= 2  # a longer IN list: the members of a named kind
        and _FREE_TEXT.isdisjoint(name_words((f.column or "").rsplit(".", 1)[-1].casefold()))
        and all(
            singular(v.strip("%_ ").casefold())[:5] not in said
            for v in f.values
        )
        and all(
            len(v.strip("%_ ")) >= 3
            and v.strip("%_ ").replace(" ", "").isalpha()
            and v.strip("%_ ") not in _STATE_VALUES
            and not text_mentions(v, text)
            and not _may_name(value, v)
            for v in f.values
        )
    ]
    if len(found) != 1:
        return None
    return found[0].text or f"{found[0].column} = {found[0].values[0]!r}"


def _neighbours(value: str, low: str, i: int) -> set[str]:
    """The words just before and just after ``value``, found at ``i`` in ``low`` (articles
    skipped)."""
    if i < 0:
        return set()
    before = [w for w in _WORD.findall(low[max(0, i - 30) : i]) if w not in ("the", "a", "an")]
    after = _WORD.findall(low[i + len(value) : i + len(value) + 30])
    # a verb's form is no attribute of the value: "voted CSS answers" (VoteTypeId = 2)
    return {w for w in (before[-1:] + after[:1]) if len(w) >= 3 and not w.endswith("ed")}


def _names(column: str, words: set[str]) -> bool:
    """Does the column's name say one of ``words`` (a word of it begins like one, or
    abbreviates it: ``dept`` for department)?

    >>> _names("dept_id", {"department"}), _names("category", {"categories"}), _names("x", {"y"})
    (True, True, False)
    """
    parts = [p for p in name_words(column) if p not in ("id", "code", "key", "no", "num")]
    for w in words:
        for p in parts:
            if p[:4] == w[:4] and len(p) >= 3:
                return True
            if 3 <= len(p) <= 5 and len(p) < len(w) and letters_in_order(p, w, 2):
                return True
    return False


def _alike(a: str, b: str) -> bool:
    """Two spellings of one value: the same number of words, alike letter for letter."""
    return len(a.split()) == len(b.split()) and SequenceMatcher(None, a, b).ratio() >= _MISSPELT

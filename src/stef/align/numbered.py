"""Is a numbered thing's number compared with a column named for it? An intent check.

"Who advises student 1004?" names a student by number; SQL that answers it with
``Major = 1004`` finds the number in a column that names neither a student nor any
number of one. Without a schema the column cannot be looked up, but its name can be
read: a column that answers "student 1004" shares a word with "student" (``student_id``,
``StuID``), abbreviates it (``DNO`` for "department number"), or is a key or a number
column of it. A column named for something else (``Major``, ``Building``,
``subscription_type``) is the value put on the wrong column.

>>> from stef.findings import FindingCollector
>>> from stef.spec import Filter, Spec
>>> nl = Spec(filters=[Filter(None, "=", ("1004",), "student 1004", "question")])
>>> sql = Spec(filters=[Filter("major", "=", ("1004",), "Major = 1004")])
>>> out = FindingCollector()
>>> check_numbered_attributes("Who advises student 1004?", nl, sql, out)
>>> [f.message for f in out.findings]
["the question's 'student 1004' names a student by its number; the SQL compares major with 1004"]
"""

from __future__ import annotations

import re

from stef.align.matching import canon_col, name_words
from stef.findings import FindingCollector
from stef.nl.lexicon import _words
from stef.spec import Spec

#: "student 1004", "room 268", "zip code 94103": a noun, then the number that names one.
_NUMBERED = re.compile(r"(?P<word>[a-z]{3,}) (?P<n>\d+)")
#: Words before a number that name no thing the number is of.
_NOT_THINGS = _words(
    """in of from since before after by to at on than year years and or exactly only top
    first last over under about around least most nearly almost with within per every each
    all any the page step round level grade for during until till through between versus
    like into near is are was were been has have had including excluding except"""
)
#: Date-part functions: a number they are compared with is a year or a month, which names
#: no thing by its number ("revenue for 2024" as ``EXTRACT(YEAR FROM d) = 2024``).
_DATE_PARTS = frozenset({"year", "month", "day", "quarter", "week", "strftime", "extract"})
#: Words that name an identifying number, which an id or number column holds.
_NUMBER_WORDS = frozenset({"number", "no", "num", "code", "id"})
_KEYS = re.compile(r"(?:^|_)(?:id|no|num|nbr|number|code|key)$|(?<=[a-z])(?:id|no|num)$")
#: Key columns named for no table: the key of whichever table the column belongs to.
_BARE_KEYS = frozenset({"id", "no", "num", "number", "code", "key"})
#: Keys that point at another row of the same table, whatever thing that row is: a
#: ``ParentId`` holds the number of a post's question as a ``parent_id`` holds a category's.
_SELF_KEYS = re.compile(r"^(?:parent|ancestor|root)_?(?:id|key|no)$")
#: How far back the thing's other words may reach ("zip code 94103", "Branch location 1").
_BEFORE = 2


def _related(word: str, column: str, abbreviated: bool = True) -> bool:
    """May ``column`` hold the number of a ``word`` (a word of its name begins like it or
    holds it, an ``abbreviated`` name holds its initial, a key column answers "number")?

    >>> _related("department", "dno"), _related("student", "stuid"), _related("code", "soc")
    (True, True, True)
    >>> _related("number", "flno"), _related("user", "id"), _related("student", "major")
    (True, True, False)
    >>> _related("question", "ParentId"), _related("question", "parent_name")
    (True, False)
    """
    canon = canon_col(column)
    if canon in _BARE_KEYS or _SELF_KEYS.match(canon):
        return True  # u.Id = 1387233 for "user 1387233": a table's own key, of any table
    for part in [*name_words(column), canon]:
        if part and (part[:3] == word[:3] or word in part or part in word):
            return True
    compact = canon.replace("_", "")
    if abbreviated and len(compact) <= 5 and word[0] in compact:
        return True  # DNO for department number, SOC for school ownership code
    return word in _NUMBER_WORDS and _KEYS.search(compact) is not None


def check_numbered_attributes(question: str, nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """``filter_number_column``: the number of a thing the question names ("student 1004")
    compared only with columns whose names tie it to neither that thing nor the words just
    before it (see the module doc); and a year compared with a key or a label
    (:func:`check_year_columns`)."""
    check_year_columns(nl, sql, out)
    low = question.casefold()
    for f in nl.filters:
        if f.column is not None or f.op != "=" or len(f.values) != 1 or f.clause != "question":
            continue
        m = _NUMBERED.fullmatch(f.text.casefold())
        if m is None or (word := m.group("word")) in _NOT_THINGS or word.endswith(("ed", "en")):
            continue
        compared = [
            s
            for s in sql.filters
            if s.values == f.values and s.column and s.op == "=" and s.func not in _DATE_PARTS
        ]
        if not compared:
            continue
        at = low.find(f.text.casefold())
        before = re.findall(r"[a-z]{3,}", low[max(0, at - 25) : at])[-_BEFORE:] if at > 0 else []
        columns = [s.column or "" for s in compared]
        if any(_related(word, c) or any(_related(w, c, False) for w in before) for c in columns):
            continue
        s = compared[0]
        out.add(
            "filter_number_column",
            "error",
            f"the question's {f.text!r} names a {word} by its number; the SQL compares "
            f"{s.column} with {f.values[0]}",
            f.text,
            s.text,
            "filter_alignment",
        )
        return


#: Columns that hold a key, a reference or a label: no year is stored in them.
_NOT_YEARS = re.compile(
    r"(?:^|_)(?:id|ref|code|key|name|title|no|num|count)$|(?<=[a-z])(?:id|ref)$"
)


_YEAR_OPS = frozenset({"=", ">", ">=", "<", "<="})
#: Words of a column that holds a measure, never a year (``regional_population``).
_MEASURE_COLUMN = re.compile(
    r"population|amount|price|salary|budget|revenue|sales|weight|height|capacity|rating"
    r"|score|balance|cost|income|profit"
)
#: Words of a column that may hold a year or a date beside a measure (``score_year``).
_TIME_WORD = re.compile(r"year|date|time|day|month|season|period|_at$|_on$")


def check_year_columns(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """A year the question states ("the races in the year 2017") compared by the SQL, as a
    plain equality, with a column named for a key, a reference or a label
    (``circuitRef = 2017``): ``filter_wrong_column``, a warning.

    >>> from stef.spec import Filter
    >>> nl = Spec(filters=[Filter(None, "=", ("2017",), "2017", "question", func="year")])
    >>> sql = Spec(filters=[Filter("circuitref", "=", ("2017",), "circuitRef = 2017")])
    >>> out = FindingCollector()
    >>> check_year_columns(nl, sql, out)
    >>> [f.message for f in out.findings]
    ['the question states the year 2017; the SQL compares circuitref, a key or a label, with it']
    >>> sql = Spec(filters=[Filter("regional_population", ">", ("2010",), "pop > 2010")])
    >>> nl = Spec(filters=[Filter(None, ">", ("2010",), "after 2010", "question", func="year")])
    >>> check_year_columns(nl, sql, out)
    >>> out.findings[-1].message.endswith("regional_population, a measure, with it")
    True
    """
    years = {v for f in nl.filters if f.func == "year" for v in f.values}
    for s in sql.filters:
        column = canon_col(s.column or "")
        if s.op not in _YEAR_OPS or s.func or not column or not years.intersection(s.values):
            continue
        if _MEASURE_COLUMN.search(column) is not None and _TIME_WORD.search(column) is None:
            what = "a measure"  # "host cities after 2010" as ``regional_population > 2010``
        elif s.op == "=" and _NOT_YEARS.search(column) is not None:
            what = "a key or a label"
        else:
            continue
        out.add(
            "filter_wrong_column",
            "warning",
            f"the question states the year {s.values[0]}; the SQL compares {s.column}, {what},"
            " with it",
            s.values[0],
            s.text,
            "filter_alignment",
        )
        return

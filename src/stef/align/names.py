"""Names the SQL holds only in part: "Mike Larson" answered by ``first_name = 'Mike'`` alone.

A value matches a literal that holds some of its words ("Alameda County" is answered by
``county_name = 'Alameda'``), which is right for a place and its generic noun and wrong for a
person: "the schools run by Mike Larson" filtered on ``first_name = 'Mike'`` keeps every
Mike. :func:`check_partial_names` reports a two-word name the question capitalises whose SQL
filter holds one word alone while the other word is nowhere in the SQL.

>>> from stef.spec import Filter, Spec
>>> nl = Spec(filters=[Filter(None, "=", ("mike larson",), "Mike Larson", "question")])
>>> sql = Spec(filters=[Filter("first_name", "=", ("mike",))], columns=["first_name"])
>>> out = FindingCollector()
>>> check_partial_names(nl, sql, out, "Which school does Mike Larson run?")
>>> [f.message for f in out.findings] == [
...     "the question names Mike Larson; the SQL compares first_name with 'mike' alone and "
...     "holds 'larson' nowhere"
... ]
True
"""

from __future__ import annotations

from difflib import SequenceMatcher

from stef.align.matching import canon_col
from stef.findings import FindingCollector
from stef.spec import Filter, Spec

#: Operators with which a filter holds its value whole.
_EQUALITY = frozenset({"=", "in"})


def check_partial_names(nl: Spec, sql: Spec, out: FindingCollector, question: str) -> None:
    """Each two-word name of the question (both words capitalised) that a SQL equality holds
    by one word alone, the other being in no literal, column or table of the SQL (nor a
    spelling close to one: the question may misspell the name the data holds)."""
    if not question or not sql.filters:
        return
    for f in nl.filters:
        if f.op != "=" or f.clause != "question":
            continue
        for value in f.values:
            words = value.split()
            if len(words) != 2 or not all(w.isalpha() for w in words):
                continue
            shown = _as_written(question, value)
            if shown is None:
                continue
            for s in sql.filters:
                kept = [v for v in s.values if v in words] if s.op in _EQUALITY else []
                if len(kept) != 1:
                    continue
                other = words[1] if kept[0] == words[0] else words[0]
                if not _anywhere(other, sql):
                    out.add(
                        "name_partly_filtered",
                        "error",
                        f"the question names {shown}; the SQL compares {s.column} with "
                        f"{kept[0]!r} alone and holds {other!r} nowhere",
                        shown,
                        s.text or None,
                        "filter_alignment",
                    )
                elif (split := _split_name(s.column, other, sql)) is not None:
                    out.add(
                        "filter_wrong_column",
                        "warning",
                        f"the question names {shown}; the SQL compares {s.column} with "
                        f"{kept[0]!r} and {split.column} with {other!r}, a column of no name",
                        shown,
                        split.text or None,
                        "filter_alignment",
                    )
                break


#: Words of a column that holds (part of) a person's name.
_NAME_WORDS = ("name", "first", "last", "surname", "given", "family", "fname", "lname")


def _split_name(column: str | None, other: str, sql: Spec) -> Filter | None:
    """The filter that compares the rest of a person's name with a column named for no name
    ("Maya Mclean" as ``first_name = 'Maya' AND city = 'Mclean'``), when the first part is
    compared with a column named for one."""
    if not _holds_name(column):
        return None
    for f in sql.filters:
        if f.op in _EQUALITY and other in f.values and f.column and not _holds_name(f.column):
            return f
    return None


def _holds_name(column: str | None) -> bool:
    """Is ``column`` named for (part of) a person's name (``first_name``, ``LName``)?"""
    return bool(column) and any(w in canon_col(column or "") for w in _NAME_WORDS)


def _as_written(question: str, value: str) -> str | None:
    """The value as the question writes it, when each of its words starts with a capital."""
    at = question.casefold().find(value)
    if at < 0:
        return None
    shown = question[at : at + len(value)]
    return shown if all(w[:1].isupper() for w in shown.split()) else None


def _anywhere(word: str, sql: Spec) -> bool:
    """Does the SQL hold ``word`` (or a spelling close to it) in a literal, or in the name of a
    column or table?"""
    names = " ".join(canon_col(n) for n in (*sql.columns, *sql.tables))
    if word in names:
        return True
    held = set(names.split())  # a column named for the word, misspelled ("Napa Country")
    held |= {w for f in sql.filters for v in f.values for w in v.casefold().split()}
    held |= {w for lit in sql.literals for w in lit.casefold().split()}
    return any(w == word or _close(w, word) for w in held)


def _close(a: str, b: str) -> bool:
    """Two spellings of one name ("Luca" for "Lucas", "Ryan" for "Rylan")?

    >>> _close("lucas", "luca"), _close("rylan", "ryan"), _close("dante", "alvarez")
    (True, True, False)
    """
    return SequenceMatcher(None, a, b).ratio() >= 0.75

"""The whole a share is taken over: "the percentage of female patients who were born after
1930" is the share of the female patients born after 1930, so "female" restricts the whole
(a WHERE condition) and the part alike. A SQL that tests the whole's condition only inside
the part's ``CASE`` (``SUM(IIF(sex = 'F', 1, 0)) * 100 / COUNT(id)``) divides by every row
and answers another share: ``share_whole_in_part``.

The whole's words are the modifiers before the noun that follows "percentage of", when a
relative clause or a verb ("who", "that", "were", "had" …) says what the part is; a
modifier holds a SQL condition when a hint defines it ("female refers to Sex = 'F'"), the
condition compares a column with it (``nationality = 'Japanese'``), or the column is named
for the state it names (``sex`` or ``gender`` for "female", :data:`stef.nl.states.STATES`).

>>> from stef.spec import Filter, Spec
>>> out = FindingCollector()
>>> sql = Spec(filters=[Filter("sex", "=", ("f",), "sex = 'F'", clause="case")],
...            flags={"division": True})
>>> nl = Spec(filters=[Filter("sex", "=", ("f",), "Sex = 'F'", clause="enriched")])
>>> check_shares(nl, sql, out, "What is the percentage of female patients who were born after"
...              " 1930?", "female refers to Sex = 'F'")
>>> [f.kind for f in out.findings]
['share_whole_in_part']
"""

from __future__ import annotations

import re

from stef.align.matching import HINT_CLAUSE, canon_col, column_part
from stef.findings import FindingCollector
from stef.nl.states import STATES
from stef.spec import Filter, Spec

#: "the percentage of", "what proportion of all": the whole's noun phrase follows.
_SHARE_OF = re.compile(
    r"\b(?:percentage|percent|proportion|share)\s+of\s+(?:the\s+|all\s+(?:the\s+)?)?", re.I
)
#: Words that end the whole's noun phrase and start what its part is.
_PART_MARKERS = frozenset(
    {"who", "that", "which", "whose", "were", "was", "are", "is", "have", "has", "had"}
)
_WORD = re.compile(r"[A-Za-z][\w'-]*")
#: Words of a hint clause that lead from its phrase to its definition.
_DEFINES = re.compile(r"\s+(?:refers?\s+to|means?|stands?\s+for|is|are)(?:\s+|$)", re.I)


def whole_modifiers(question: str) -> list[str]:
    """The modifiers of the whole a share question names, before its noun and a part that
    follows ("female" in "the percentage of female patient were born after 1930"); none
    when nothing says what the part is ("the percentage of female patients").

    >>> whole_modifiers("What is the percentage of female patient were born after 1930?")
    ['female']
    >>> whole_modifiers("What is the percentage of female patients?")
    []
    """
    found: list[str] = []
    for m in _SHARE_OF.finditer(question):
        words = [w.group(0) for w in _WORD.finditer(question, m.end(), m.end() + 60)][:5]
        low = [w.casefold() for w in words]
        ends = [i for i, w in enumerate(low) if w in _PART_MARKERS]
        if ends and ends[0] >= 2:
            found += low[: ends[0] - 1]  # the words before the noun
    return found


#: "among all …", "for all …": a clause that names the whole ("for all accounts opened in
#: 1993"), up to its comma or the sentence's end.
_SHARE_WORD = re.compile(r"\b(?:percentage|percent|proportion)\b", re.I)
_ALL_OF = re.compile(r"\b(?:among|for|of)\s+all\b", re.I)
_CLAUSE_END = re.compile(r"[,;?!]|\.(?:\s|$)")
_VALUE = re.compile(r"'([^']{1,60})'|\b(\d{2,})\b|(?<!^)(?<![.?!]\s)\b([A-Z][a-z]+)\b")


def whole_values(question: str) -> list[str]:
    """Values a clause naming a share's whole states ("1993" in "the percentage of accounts
    from 'Decin' district for all accounts are opened in 1993"), case-folded.

    >>> whole_values("The percentage of account from 'Decin' for all accounts opened in 1993.")
    ['1993']
    >>> whole_values("Among all posts by Sam, identify the percentage with a score above 50.")
    ['sam']
    """
    if not _SHARE_WORD.search(question):
        return []
    found: list[str] = []
    for m in _ALL_OF.finditer(question):
        end = _CLAUSE_END.search(question, m.end(), m.end() + 120)  # bounded: no rescans
        clause = question[m.end() : end.start() if end else m.end() + 120]
        for v in _VALUE.finditer(clause):
            found.append((v.group(1) or v.group(2) or v.group(3)).casefold())
    return found


def _hint_phrase(f: Filter, enriched: str) -> str:
    """The phrase a hint defines a filter for ("female" in "female refers to Sex = 'F'").

    >>> _hint_phrase(Filter("sex", "=", ("f",), "Sex = 'F'"), "female refers to Sex = 'F'")
    'female'
    """
    text = f.text.casefold()
    for clause in HINT_CLAUSE.split(enriched):
        low = clause.casefold()
        if text and text in low:
            head = _DEFINES.split(low[: low.index(text)].strip(), maxsplit=1)[0]
            return " ".join(head.split())
    return ""


def _held_by(word: str, nl: Spec, sql: Spec, enriched: str) -> list[Filter]:
    """The SQL conditions that hold a whole's modifier: the hint's filter for it, a
    condition comparing a column with it, or one on a column named for its state."""
    hinted = [
        f
        for f in nl.filters
        if f.clause == "enriched" and f.column and _hint_phrase(f, enriched) == word
    ]
    out: list[Filter] = []
    for s in sql.filters:
        if not s.column or s.op not in ("=", "in", "like"):
            continue
        by_hint = any(
            canon_col(h.column or "") == canon_col(s.column) and h.values == s.values
            for h in hinted
        )
        stated = any(_holds(v, word) for v in s.values)
        if by_hint or stated or any(stem in column_part(s.column) for stem in STATES.get(word, ())):
            out.append(s)  # a hint's filter; the value itself; "female" as sex = 'F'
    return out


def _holds(value: str, word: str) -> bool:
    """Does a SQL value hold a stated word: itself, or a year's pattern (``'1993%'``)?

    >>> _holds("1993%", "1993"), _holds("decin", "decin"), _holds("19930", "1993")
    (True, True, False)
    """
    return value == word or (word.isdigit() and value.rstrip("%") == word)


def check_shares(
    nl: Spec, sql: Spec, out: FindingCollector, question: str, enriched: str | None
) -> None:
    """``share_whole_in_part`` where the whole's condition is tested only in the part."""
    if not sql.flags.get("division"):
        return
    for word in (*whole_modifiers(question), *whole_values(question)):
        held = _held_by(word, nl, sql, enriched or "")
        if held and all(f.clause == "case" for f in held):
            out.add(
                "share_whole_in_part",
                "warning",
                f"the question takes the share among {word!r} rows; the SQL tests"
                f" {held[0].text} only in the part, so it divides by every row",
                word,
                held[0].text,
                "structure",
            )
            return

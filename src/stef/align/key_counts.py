"""What a count question counts, and a plain COUNT of a key that counts other rows.

"How many molecules …" counted as ``COUNT(m.molecule_id)`` over ``molecule`` joined to the
atoms that refer to it counts each molecule once per atom (``count_fanout``);
``COUNT(molecule_id) FROM bond`` counts the bonds that name a molecule
(``count_foreign_key``). The SQL side (which COUNT counts which key, and how) is
:mod:`stef.sql.keys`; here the question says what it counts: the noun after "how many" or
"number of", or, where "how many" is followed by a verb ("In the non-carcinogenic
molecules, how many contain chlorine atoms?", "Among the sets …, how many of them …"), the
nouns of the clause before it.

>>> from stef.findings import FindingCollector
>>> from stef.spec import Aggregation, Spec
>>> nl = Spec(aggregations=[Aggregation("count", None, False, "how many")])
>>> sql = Spec(flags={"key_counts": [["COUNT(m.molecule_id)", "molecule", "joined"]]})
>>> out = FindingCollector()
>>> check_key_counts(nl, sql, out, "in the molecules with triple bonds, how many are toxic?")
>>> [f.kind for f in out.findings]
['count_fanout']
"""

from __future__ import annotations

import re

from stef.findings import FindingCollector
from stef.nl.request import singular
from stef.spec import Spec

_ARTICLES = frozenset({"the", "a", "an", "all", "total"})

#: "how many" followed by a verb or "of them": what it counts was named before it.
_HOW_MANY_VERB = re.compile(
    r"\bhow\s+many\s+(?:of\s+(?:them|these|those)|are|is|were|was|have|has|had|do|does|did"
    r"|can|could|will|would|contain(?:s|ed)?|include[sd]?)\b"
)
#: A count of users by its name: "daily active users", "MAU", "monthly active customers".
_ACTIVE = re.compile(
    r"\b(?:(?:daily|weekly|monthly|yearly|annual)\s+active\s+(?P<n>users|customers|accounts"
    r"|members|players|subscribers)|[dwm]aus?)\b"
)
#: Where the clause before "how many" starts: the text's start or a sentence's end.
_SENTENCE_END = re.compile(r"[.?!;]\s")
_WORD = re.compile(r"[a-z][a-z-]{2,}")


def counted_noun(text: str) -> str | None:
    """The noun "how many" or "number of" counts (``how many adults`` → ``adults``).

    >>> counted_noun("How many adults"), counted_noun("number of kids"), counted_noun("all")
    ('adults', 'kids', None)
    >>> counted_noun("Answer count")
    'answer'
    """
    words = text.casefold().split()
    for lead in ("many", "of"):
        if lead in words and words.index(lead) + 1 < len(words):
            return words[words.index(lead) + 1].strip(",.?!;:")
    if len(words) >= 2 and words[-1] == "count":
        return words[-2]
    return None


def antecedent_nouns(text: str) -> set[str]:
    """The nouns (singular) of the clause before a "how many" that a verb follows, the things
    it counts ("In the molecule containing sodium atoms, how many are …" → molecule, sodium,
    atom); empty when "how many" names its noun.

    >>> sorted(antecedent_nouns("Among the sets in the block, how many of them have a name?"))
    ['among', 'block', 'set', 'the']
    >>> antecedent_nouns("How many sets have a name?")
    set()
    """
    low = text.casefold()
    m = _HOW_MANY_VERB.search(low)
    if m is None:
        return set()
    start = max((e.end() for e in _SENTENCE_END.finditer(low, 0, m.start())), default=0)
    return {singular(w) for w in _WORD.findall(low, start, m.start())}


def check_key_counts(nl: Spec, sql: Spec, out: FindingCollector, text: str = "") -> None:
    """ "How many molecules" counted as a plain COUNT of a key whose rows are not the
    molecules': the molecule's own key joined to the atoms that refer to it
    (``count_fanout``, once per atom), or another table's key that names it
    (``count_foreign_key``, the bonds that name one); see :mod:`stef.sql.keys`. ``text``:
    the question (and hints), whose clause before a "how many are …" names what it counts."""
    keyed = sql.flags.get("key_counts")
    if not keyed:
        return
    nouns = {
        singular(n)
        for na in nl.aggregations
        if na.func == "count" and not na.distinct  # a distinct count is the distinct checks'
        for n in (counted_noun(na.text), _last_word(na.text))
        if n is not None
    }
    heads = {
        singular(h)
        for na in nl.aggregations
        if na.func == "count" and not na.distinct and (h := _counted_head(na.text))
    }
    if any(na.func == "count" and not na.distinct for na in nl.aggregations):
        nouns |= antecedent_nouns(text)
    if (active := _ACTIVE.search(text.casefold())) is not None:  # "monthly active users"
        nouns.add(singular(active.group("n") or "users"))
    for count, entity, habit in keyed:
        if entity not in (heads if habit == "rows" else nouns):
            continue  # COUNT(*) over a join: only the very noun counted ("order items" no order)
        if habit in ("joined", "rows"):
            kind, why = "count_fanout", f"counts each {entity} once per row joined to it"
        else:
            kind, why = "count_foreign_key", f"counts the rows that name a {entity}, not {entity}s"
        out.add(
            kind,
            "warning",
            f"the question counts {entity}s; {count} {why} (no DISTINCT)",
            entity,
            count,
            "aggregation",
        )
        return


def _counted_head(text: str) -> str | None:
    """The head noun of what "how many" or "number of" counts: of the two words after it,
    the last plural one ("number of order items" → ``items``, "how many French
    constructors" → ``constructors``, "number of user by" → ``user``).

    >>> _counted_head("Number of order items"), _counted_head("How many students attend course")
    ('items', 'students')
    """
    words = [w.strip(",.?!;:'") for w in text.casefold().split()]
    lead = max((i for i, w in enumerate(words) if w in ("many", "of")), default=-1)
    if lead < 0:
        return None
    after = [w for w in words[lead + 1 :] if w not in _ARTICLES][:2]
    plural = [w for w in after if w.endswith("s") and not w.endswith("ss")]
    return plural[-1] if plural else (after[0] if after else None)


def _last_word(text: str) -> str | None:
    """The last word of a count's phrase, the noun its modifiers lead to ("How many French
    constructors" counts constructors).

    >>> _last_word("How many French constructors"), _last_word("")
    ('constructors', None)
    """
    words = text.casefold().split()
    return words[-1].strip(",.?!;:") if words else None

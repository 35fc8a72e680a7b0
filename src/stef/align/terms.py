"""Question terms the SQL leaves unexplained: content words of the question that no name
or literal of the SQL accounts for (``question_term_unexplained``), and the ones a clause
of the enriched question explains (``question_term_via_hint``). :func:`check_question_terms`
is one of :mod:`stef.align.intent`'s checks; :class:`_Vocabulary` also tells the request
checks which words the SQL accounts for.

>>> from stef.spec import Spec
>>> question_terms_unexplained("Which stores sell bicycles?", Spec(tables=["stores"]))
['sell', 'bicycles']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from stef.align.formats import NAME_WORDS
from stef.align.matching import HINT_CLAUSE
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.lexicon import AGGREGATE_WORDS, QUESTION_FILLER_WORDS
from stef.nl.request import singular
from stef.nl.states import state_words
from stef.nl.words import TEXT_CACHE_SIZE
from stef.spec import Spec

QUESTION_WORD = re.compile(r"[a-z][a-z]+")
_ASCII_NON_LETTER = {c: " " for c in range(128) if not "a" <= chr(c) <= "z"}


def question_words(low: str) -> list[str]:
    """``QUESTION_WORD.findall(low)``: on ASCII text the runs of ``[a-z]`` of two letters
    or more, by ``str.translate`` and ``str.split`` (docs/performance.md, session 17).

    >>> question_words("how's the a-b tax2 don't")
    ['how', 'the', 'tax', 'don']
    """
    if low.isascii():
        return [w for w in low.translate(_ASCII_NON_LETTER).split() if len(w) > 1]
    return QUESTION_WORD.findall(low)
#: Past participles ("placed", "opened"): verbs of the question, rarely a schema term.
_VERB_FORM = re.compile(r"..[^e]ed$")
#: At most this many unexplained question terms are reported (more add nothing).
MAX_TERMS = 3


@lru_cache(maxsize=16384)
def _name_vocabulary(name: str) -> tuple[str, ...]:
    """One name's vocabulary words: the name run together, then its words (singular).
    Memoised: the same schema names come back record after record."""
    low = name.casefold()
    return (NAME_WORDS.sub("", low), *(singular(w) for w in NAME_WORDS.split(low) if w))


class _Vocabulary:
    """The words of the SQL's names and literals (singular), to account for question words.

    A word is accounted for when a vocabulary word is it (singular), shares its first
    five letters, or (four letters or more) the words run together contain it.
    """

    def __init__(self, names: Sequence[str]) -> None:
        vocab: set[str] = set()
        for n in names:
            vocab.update(_name_vocabulary(n))
        vocab.discard("")
        self.words = vocab
        self.blob = " ".join(vocab)
        self.prefixes = {v[:5] for v in vocab if len(v) >= 4}

    @classmethod
    def of(
        cls,
        sql: Spec,
        synonyms: Mapping[str, Sequence[str]] | None = None,
        context: Sequence[str] = (),
    ) -> tuple[_Vocabulary, _Vocabulary]:
        """The vocabulary of the SQL's columns, tables, literals and output aliases (and of
        the rules' ``context`` terms, which need no name of the SQL), and the same with the
        rules' synonyms of the columns it uses (``"amount": ["revenue"]``) — one object
        when no synonym applies."""
        names = [
            *sql.columns,
            *sql.tables,
            *sql.literals,
            *(p.alias or "" for p in sql.projections),
            *context,
        ]
        used = {c.casefold() for c in sql.columns}
        extra = [
            alt
            for column, alternatives in (synonyms or {}).items()
            if column.casefold() in used
            for alt in alternatives
        ]
        base = cls(names)
        return base, (cls([*names, *extra]) if extra else base)

    def accounts(self, word: str) -> bool:
        s = singular(word)
        return s in self.words or s[:5] in self.prefixes or (len(s) >= 4 and s in self.blob)


def question_terms_unexplained(
    question: str, sql: Spec, synonyms: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    """Content words of the question that no name or literal of the SQL accounts for
    (nor a used column's synonym in the rules; see :class:`_Vocabulary`).

    >>> from stef.spec import Spec
    >>> sql = Spec(columns=["count"], tables=["allergy_type"])
    >>> question_terms_unexplained("What is the total number of students?", sql)
    ['students']
    >>> question_terms_unexplained("How many allergy types are there?", sql)
    []
    """
    return _unexplained(question, _Vocabulary.of(sql, synonyms)[1])


#: Two question words run together must be this long to match a name ("gas station" in
#: ``gasstationid``), so that short pairs do not match by chance.
_COMPOUND_MIN = 7


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _question_words(question: str) -> tuple[str, ...]:
    return tuple(question_words(question.casefold().replace("n't", " not")))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _question_terms(question: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The question's words and the indexes of those that may be terms: three letters or
    more, no filler, no verb form in ``-ed`` (memoised per question).

    >>> _question_terms("Which stations reported the sales?")
    (('which', 'stations', 'reported', 'the', 'sales'), (1, 4))
    >>> _question_terms("sales last quarter")[1]
    (0,)
    """
    words = _question_words(question)
    return words, tuple(
        i
        for i, w in enumerate(words)
        if not (len(w) < 3 or w in QUESTION_FILLER_WORDS or _verb_form(w))
        # "last month", "this quarter": a period the date checks read, no schema term
        and not (w in lx.TIME_UNITS and i and words[i - 1] in lx.RELATIVE_DATE_WORDS)
    )


#: Amounts a SUM or an AVG answers whatever its column is named ("revenue" as SUM(amount));
#: "spend" is as often the verb ("members who spend the most").
_SUMMED = lx.MEASURE_NOUNS - {"spend", "spending"}


def _verb_form(word: str) -> bool:
    """``_VERB_FORM.search(word)`` for a word of letters (no line break): five letters or
    more, ending in "ed" after a letter other than "e", without the engine's search."""
    return len(word) >= 5 and word.endswith("ed") and word[-3] != "e"


def _unexplained(question: str, vocab: _Vocabulary) -> list[str]:
    """Question words ``vocab`` does not account for, alone or run together with a
    neighbour (``gas station`` → ``gasstationid``).

    >>> _unexplained("Which gas station sells most?", _Vocabulary(["gasstationid"]))
    ['sells']
    """
    out: list[str] = []
    words, candidates = _question_terms(question)
    for i in candidates:
        w = words[i]
        if w in out:
            continue
        if vocab.accounts(w):
            continue
        pairs = (words[j] + words[j + 1] for j in (i - 1, i) if 0 <= j < len(words) - 1)
        if not any(len(p) >= _COMPOUND_MIN and p in vocab.blob for p in pairs):
            out.append(w)
    return out


#: A capitalised name written with underscores ("Student_Club", "Formula_1").
_NAME_TOKEN = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")

#: A word of an enrichment clause; names there may hold digits (``A13``).
_CLAUSE_WORD = re.compile(r"[a-z][a-z0-9]+")


def hinted_terms(terms: Sequence[str], enriched: str | None, vocab: _Vocabulary) -> set[str]:
    """The terms that a clause of the enriched question links to the SQL (``vocab``):
    the clause holds the term and names something the SQL uses ("revenue = SUM(amount)")."""
    if not enriched or not terms:
        return set()
    out: set[str] = set()
    for words in _clause_words(enriched):
        if any(vocab.accounts(w) for w in words):
            held = {singular(w) for w in words}
            out |= {t for t in terms if singular(t) in held}
    return out


#: What marks an enriched question as hints about the schema ("X refers to Y", "X = 1",
#: "'Vice President' is a position of …", "A2 contains …"), not a restated question.
_HINT_MARKS = re.compile(
    r"\brefers?\s+to\b|\bmeans\b|\bmean\s+(?:that|the\s+same)\b|\bstands?\s+for\b"
    r"|\bmapp?s?\s+to\b|[;=<>]|\w\(|\(\w+\)|\b(?:is|are)\s+(?:the|a|an|one|synonyms?)\b"
    r"|\bcontains?\b|\bcomputed\b"
    r"|\brepresent(?:s|ed)?\b",
    re.IGNORECASE,
)


def restates(question: str, enriched: str | None) -> bool:
    """Does ``enriched`` restate ``question``: no hint about the schema in it
    (:data:`_HINT_MARKS`), and at least as much said (no fewer content words)? A note shorter
    than the question ("'2012/8/25' can be represented by '2012-08-25'") restates nothing.

    >>> restates("who are my best customers", "Top 10 customers ranked by total order amount")
    True
    >>> restates("who are my best customers", "best refers to MAX(amount)")
    False
    >>> restates("headcount by dept", "Number of current (not terminated) employees per department")
    True
    >>> restates("what's the avg basket size", "Average number of items per order")
    True
    """
    if not enriched or _HINT_MARKS.search(enriched):
        return False
    said = sum(len(words) for words in _clause_words(enriched))
    # the aggregate it names counts too ("Average number of items per order" restates "avg
    # basket size")
    said += sum(1 for w in _CLAUSE_WORD.findall(enriched.casefold()) if w in AGGREGATE_WORDS)
    asked = [w for w in question_words(question.casefold()) if w not in QUESTION_FILLER_WORDS]
    return said >= max(len(asked) - 1, 2)  # a restatement may say it in one word fewer


#: The end of a text's first sentence ("… imgur.com\". Useful for …").
_FIRST_SENTENCE = re.compile(r"(?<=[.!?\"'])\s+(?=[A-Z])")


def restatement_lead(question: str, enriched: str | None) -> str | None:
    """The first sentence of an enriched question that restates ``question``
    (:func:`restates`): what the agent asks besides the question (its values, its states);
    the later sentences are commentary. None where the enrichment is hints or absent.

    >>> restatement_lead("overdue invoices", "Unpaid invoices. Ignore credit notes.")
    'Unpaid invoices.'
    >>> restatement_lead("overdue invoices", "unpaid refers to paid = 0") is None
    True
    """
    if not enriched or not restates(question, enriched):
        return None
    lead: str = _FIRST_SENTENCE.split(enriched.strip(), 1)[0]
    return lead


def restated_away(terms: Sequence[str], question: str, enriched: str | None) -> set[str]:
    """The terms an enriched question that restates the question (:func:`restates`) leaves
    out: the agent read "my best customers" as "the 10 customers with the highest total order
    amount", and the SQL answers that reading, which the enrichment checks judge; the word
    itself is no schema term left unlinked.

    >>> q = "who are my best customers"
    >>> top = "Top 10 customers ranked by total order amount"
    >>> sorted(restated_away(["best", "customers"], q, top))
    ['best']
    >>> restated_away(["best"], q, "best refers to MAX(amount)"), restated_away(["best"], q, None)
    (set(), set())
    """
    if not terms or not restates(question, enriched):
        return set()
    held = {singular(w) for words in _clause_words(enriched or "") for w in words}
    return {t for t in terms if singular(t) not in held}


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _clause_words(enriched: str) -> tuple[tuple[str, ...], ...]:
    """The words of each clause of an enriched question, less the question fillers."""
    return tuple(
        tuple(
            w
            for w in _CLAUSE_WORD.findall(clause.replace("n't", " not"))
            if w not in QUESTION_FILLER_WORDS
        )
        for clause in HINT_CLAUSE.split(enriched.casefold())
    )


def _answered_states(question: str, sql: Spec) -> set[str]:
    """The state words of ``question`` whose state a name or literal of the SQL holds
    (:func:`stef.nl.states.state_words`: "open" is answered by ``'closed_won'`` kept out,
    ``closed_at IS NULL``, ``status = 'open'``).

    >>> _answered_states("open opportunities", Spec(literals=["closed_won"]))
    {'open'}
    """
    states = state_words(question)
    if not states:
        return set()
    names = " ".join([*sql.columns, *sql.tables, *sql.literals]).casefold()
    return {s.word for s in states if any(stem in names for stem in s.stems)}


def check_question_terms(
    question: str,
    sql: Spec,
    out: FindingCollector,
    enriched: str | None = None,
    synonyms: Mapping[str, Sequence[str]] | None = None,
    context: Sequence[str] = (),
) -> None:
    """Question terms the SQL never touches: the lexical side of schema linking (a
    question about students answered from ``allergy_type``). A term that only the
    enriched question's hints link to the SQL is noted apart (``info``): the hint
    explains it, though in labelled data such queries still go wrong more often. The
    rules' ``context`` terms (the application's own names) are never unexplained."""
    base, with_synonyms = _Vocabulary.of(sql, synonyms, context)
    terms = _unexplained(question, with_synonyms)
    if "_" in question:  # "the Student_Club", "a Formula_1 race": a name, not schema terms
        named = {w.casefold() for t in _NAME_TOKEN.findall(question) for w in t.split("_")}
        terms = [t for t in terms if t not in named and singular(t) not in named]
    if any(a.func in ("sum", "avg") for a in sql.aggregations):
        terms = [t for t in terms if t not in _SUMMED]  # "revenue" as SUM(amount)
    hinted = hinted_terms(terms, enriched, base)
    if terms and (answered := _answered_states(question, sql) - hinted):
        terms = [t for t in terms if t not in answered]  # "open" as stage NOT IN ('closed…')
    restated = restated_away(terms, question, enriched)
    if restated:  # a state the restatement drops ("churned" as "signed up") stays unexplained
        restated -= {s.word for s in state_words(question)}
    for w in [t for t in terms if t in restated][:MAX_TERMS]:
        out.add(
            "question_term_restated",
            "info",
            f"the enriched question restates the question without {w!r}; the SQL answers"
            " the restatement",
            w,
            None,
            "schema_linking",
        )
    for w in [t for t in terms if t not in hinted and t not in restated][:MAX_TERMS]:
        out.add(
            "question_term_unexplained",
            "warning",
            f"the question's {w!r} matches no column, table or value of the SQL",
            w,
            None,
            "schema_linking",
        )
    for w in [t for t in terms if t in hinted][:MAX_TERMS]:
        out.add(
            "question_term_via_hint",
            "info",
            f"the question's {w!r} reaches the SQL only through the enriched question's hints",
            w,
            None,
            "schema_linking",
        )

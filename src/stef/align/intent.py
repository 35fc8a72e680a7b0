"""Does the SQL do what the question's phrasing demands? Intent checks of the alignment.

Each check compares one cue of the question (what it asks to get back, a negation, a
count) or one structural habit of correct SQL (keys that refer to each other, tables the
question names) with the SQL spec, and reports a typed finding with the evidence. They
are pure functions of the two specs and the question's words; :func:`stef.align.filters.align`
calls :func:`check_intent` and the judge weighs the findings.

>>> from stef.spec import Projection, Spec
>>> nl = Spec(projections=[Projection("id", columns=("id",), text="id")])
>>> sql = Spec(projections=[Projection("name", columns=("name",))], tables=["staff"])
>>> from stef.findings import FindingCollector
>>> out = FindingCollector()
>>> check_intent(nl, sql, out, lambda name: True)
>>> [f.kind for f in out.findings]
['projection_request_missing']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from stef.align.formats import NAME_WORDS, check_ranges, check_value_formats, descriptive
from stef.align.matching import HINT_CLAUSE
from stef.findings import FindingCollector
from stef.nl.lexicon import (
    AGGREGATE_WORDS,
    QUESTION_FILLER_WORDS,
    REQUEST_GENERIC_HEADS,
    SUPERLATIVES,
)
from stef.nl.request import enumeration_size, singular
from stef.nl.words import TEXT_CACHE_SIZE
from stef.spec import Projection, Spec

#: A check that a schema name is named by the question (``stef.align.matching.name_mentioned``).
Mentioned = Callable[[str], bool]

_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_ ]*")
#: Question words that a computed output answers (a COUNT, a ratio, an extreme).
_ARITHMETIC = re.compile(r"[-+*/]|\bcase\b")
_EXTREME = re.compile(r"\s*(?:min|max)\s*\(", re.I)
#: Item words any output with a name answers ("name" is a first_name, a title …).
_NAME_LIKE = {"name": ("name", "title"), "id": ("id",)}

SQL_NEGATING_OPS = frozenset({"!=", "not in", "not like", "not between", "is null", "not exists"})


@lru_cache(maxsize=16384)
def _words(name: str) -> tuple[str, ...]:
    """The words of a schema name, singular (memoised: names come back with every record).

    >>> _words("Store_Names")
    ('store', 'name')
    """
    return tuple(singular(w) for w in NAME_WORDS.split(name.casefold()) if w)


@lru_cache(maxsize=65536)
def _word_matches(word: str, name: str) -> bool:
    """Does a question word name (part of) a schema name? ``id`` in ``cust_id``, ``name``
    in ``store_name``, ``rate`` in ``rates``, ``title`` in ``famoustitle``.

    >>> [_word_matches(w, "StoreName") for w in ("name", "store", "city")]
    [True, True, False]
    """
    w = singular(word)
    low = name.casefold()
    for pattern in _NAME_LIKE.get(w, ()):
        if low.endswith(pattern) or f"{pattern}_" in low:
            return True
    for part in _words(low):
        if part == w or (len(w) >= 4 and len(part) >= 4 and part[:5] == w[:5]):
            return True
    return len(w) >= 4 and w in low.replace("_", "")


def _outputs(sql: Spec) -> tuple[list[str], list[Projection]]:
    """Names a plain output answers to (columns and aliases) and the computed outputs."""
    names: list[str] = []
    computed: list[Projection] = []
    for p in sql.projections:
        if p.is_aggregate or _ARITHMETIC.search(p.expr):
            computed.append(p)
            if _EXTREME.match(p.expr):  # MIN(date) is a date
                names += list(p.columns)
        else:
            names += list(p.columns)
        if p.alias:
            names.append(p.alias)
    return names, computed


def check_requests(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """Every item the question asks to get back has an output that can be it.

    A plain item ("the id", "their names") needs a plain output whose name shares its
    head noun; a computed item ("the number of …", "the average age") needs a computed
    output (or an ORDER BY … LIMIT for an extreme); ``SELECT *`` answers everything. An
    item whose head matches but whose other words name no output, table, column or value
    of the SQL ("support rate" answered by ``unsure_rate``) is partly answered.
    """
    if not nl.projections or not sql.projections or sql.flags.get("select_star"):
        return
    names, computed = _outputs(sql)
    vocab: list[_Vocabulary] = []  # built when first needed (most items never need it)

    def accounted(word: str) -> bool:
        if not vocab:
            vocab.append(_Vocabulary.of(sql)[0])
        return vocab[0].accounts(word)

    ranked = bool(sql.order_by) and sql.limit is not None
    outputs = ", ".join(p.text or p.expr for p in sql.projections)

    def missing(item: Projection, why: str) -> None:
        message = f"the question asks for {item.text!r}; {why}"
        out.add("projection_request_missing", "warning", message, item.text, outputs, "request")

    for item in nl.projections:
        # a value the SQL filters on names whose item it is ("Aaron Doran's potential")
        words = [w for w in item.columns if not _is_value_word(w, sql)] or list(item.columns)
        if not words:
            continue
        head = words[-1]
        if item.is_aggregate:
            if computed or ranked or sql.aggregations or _stored(words, names):
                continue
            extreme = any(w in SUPERLATIVES or w in ("top", "bottom") for w in words)
            if extreme and any(_word_matches(w, n) for w in words for n in names):
                continue  # "the most popular name": the name itself answers
            missing(item, "no output computes it")
            continue
        heads = [n for n in names if _word_matches(head, n)]
        if not heads and head in REQUEST_GENERIC_HEADS and len(words) > 1:
            heads = [n for n in names if any(_word_matches(w, n) for w in words[:-1])]
        if not heads and singular(head) in ("name", "title"):
            heads = [n for n in names if not _id_like(n)]
        if not heads and len(words) == 1 and any(_word_matches(head, t) for t in sql.tables):
            continue  # "list the circuits": the rows of the table it names
        if not heads and _rows_answered(item, nl, sql):
            continue
        if not heads:
            missing(item, "no output is named like it")
            continue
        if any(_id_like(n) for n in heads) and any(_word_matches(head, t) for t in sql.tables):
            continue  # "unanswered posts" listed by their ids: the modifiers pick the rows
        others = [
            w
            for w in (x.rstrip("'") for x in words[:-1])
            if len(w) >= 3
            and not any(_word_matches(w, n) for n in names)
            and not any(_word_matches(w, t) for t in sql.tables)
            and not accounted(w)  # a value or another name ("the Italian flavor text")
        ]
        if others:
            out.add(
                "projection_request_partial",
                "warning",
                f"the question asks for {item.text!r}; the output {heads[0]!r} does not say "
                f"{' '.join(others)!r}",
                item.text,
                heads[0],
                "request",
            )


#: Output-name words that point at a row rather than describe it (``[Post Link]``,
#: ``user_url``).
_ROW_POINTERS = ("link", "url")


def _points_at_rows(name: str) -> bool:
    """Does an output point at its rows (``[Post Link]``, ``profile_url``)? A name or an id
    is an attribute a question asks for by name ("the names of customers")."""
    return name.casefold().endswith(_ROW_POINTERS)


def _rows_answered(item: Projection, nl: Spec, sql: Spec) -> bool:
    """Is an item no output names still answered? The one thing a request asks for, in
    the plural ("Find YouTube videos in answers"), is the rows themselves, which an
    output that identifies them answers (``Id AS [Post Link]``).

    >>> sql = Spec(projections=[Projection("p.id", alias="Post Link", columns=("id",))])
    >>> one = Projection("videos", columns=("youtube", "videos"), text="youtube videos")
    >>> _rows_answered(one, Spec(projections=[one]), sql)
    True
    """
    head = item.columns[-1] if item.columns else ""
    alone = len(nl.projections) == 1 and head.endswith("s") and not item.is_aggregate
    return alone and any(
        _points_at_rows(n) for p in sql.projections for n in (p.alias, *p.columns) if n
    )


def check_enumeration(question: str, sql: Spec, out: FindingCollector) -> None:
    """A question that lists the items to return ("show the name, city and state") needs at
    least that many outputs: ``projection_count_short`` when the SQL returns fewer.

    >>> out = FindingCollector()
    >>> sql = Spec(projections=[Projection("name", columns=("name",))])
    >>> check_enumeration("Show the name, city and state of each store.", sql, out)
    >>> [f.message for f in out.findings]
    ['the question lists 3 items to return; the SQL returns 1 column(s)']
    """
    if not sql.projections or sql.flags.get("select_star"):
        return
    n = enumeration_size(question)
    if len(sql.projections) < n:
        out.add(
            "projection_count_short",
            "warning",
            f"the question lists {n} items to return; the SQL returns "
            f"{len(sql.projections)} column(s)",
            question,
            ", ".join(p.text or p.expr for p in sql.projections),
            "request",
        )


#: Words that ask for a computation whatever they qualify ("total amount", "average rate");
#: "number" and "count" after a qualifier may be a stored attribute ("phone number", "view
#: count").
_COMPUTING_WORDS = AGGREGATE_WORDS - {"number", "no", "count"}
_STORED_HEADS = frozenset({"number", "count"})


def _stored(words: Sequence[str], names: Sequence[str]) -> bool:
    """Is a computed-sounding item the name of a stored output ("defensive work rate" →
    ``defensive_work_rate``, "phone number" → ``phone``, "amount" → ``amount``)?

    >>> _stored(["phone", "number"], ["phone"]), _stored(["total", "amount"], ["amount"])
    (True, False)
    >>> _stored(["number"], ["views"]), _stored(["view", "count"], ["views"])
    (False, True)
    """
    if any(w in _COMPUTING_WORDS for w in words):
        return False
    content = [w for w in words if len(w) >= 3 and w not in _STORED_HEADS]
    return bool(content) and all(any(_word_matches(w, n) for n in names) for w in content)


def _is_value_word(word: str, sql: Spec) -> bool:
    """Is ``word`` a word of a string value of the SQL ('Aaron Doran')?"""
    w = word.rstrip("'")
    return len(w) >= 3 and any(w in _value_words(v) for v in sql.literals)


@lru_cache(maxsize=16384)
def _value_words(value: str) -> tuple[str, ...]:
    """``NAME_WORDS.split(value)`` (memoised), e.g. ``('aaron', 'doran')``."""
    return tuple(NAME_WORDS.split(value))


#: A negation word, and an enrichment clause that defines one ("doesn't have comments
#: refers to CommentCount = 0"); "… or not?" asks a yes/no question, negating nothing.
_NEGATION = re.compile(r"\b(?:not|no|never|without|except|excluding|none)\b|n't\b")
_DEFINES = re.compile(r"\brefers?\s+to\b|\bmeans?\b|\bmapps?\s+to\b|=|\bis\s+when\b")
_OR_NOT = re.compile(r"\bor\s+not\b")


def negation_defined(enriched: str | None) -> bool:
    """Does a clause of the enriched question say what a negated phrase means?

    >>> negation_defined("Doesn't have comments refers to CommentCount = 0")
    True
    >>> negation_defined("female refers to sex = 'F'; not active"), negation_defined(None)
    (False, False)
    """
    return any(
        _NEGATION.search(c) and _DEFINES.search(c)
        for c in HINT_CLAUSE.split((enriched or "").casefold())
    )


def check_negation(
    nl: Spec, sql: Spec, out: FindingCollector, question: str = "", enriched: str | None = None
) -> None:
    """A negated question ("who have never …", "without …") answered by SQL with no
    NOT, ``<>``, ``IS NULL``, EXCEPT or outer join — unless the enriched question says what
    the negation means (its condition then stands for it) or the question only asks
    "… or not?"."""
    if not nl.flags.get("negation") or sql.flags.get("negation"):
        return
    if any(f.op in SQL_NEGATING_OPS for f in sql.filters):
        return
    if negation_defined(enriched) or (
        _OR_NOT.search(question.casefold()) and len(_NEGATION.findall(question.casefold())) == 1
    ):
        return
    out.add(
        "negation_missing",
        "warning",
        "the question is negated; the SQL has no NOT, <>, IS NULL, EXCEPT or outer join",
        None,
        None,
        "negation",
    )


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
    rf"^\W*(?:the\s+)?(?:{_RANKS})(?:\s+\d+)?\s+"
    r"(?:(?!(?:of|for|with|in|by|from|and|or|per|on|at|to|the|a|an)\b)[A-Za-z][\w'-]*\s+){0,3}?"
    r"(?P<noun>[a-z]{3,}s)\b",
    re.I,
)


#: A listing verb's noun after up to two modifiers: "Show stupid posts", "Find unanswered
#: questions" (the verb is required: a title's first words alone may be its topic).
_LISTED_SUBJECT = re.compile(
    r"^\W*(?:find|show|get)(?:\s+all)?\s+(?:the\s+|my\s+)?"
    r"(?:(?!(?:of|for|with|in|by|from|and|or|per|on|at|to|the|a|an|that|which|who|all)\b)"
    r"[A-Za-z][\w'-]*\s+){1,2}?(?P<noun>[a-z]{3,}s)\b",
    re.I,
)


_SUBJECTS = (_SUBJECT, _RANKED_SUBJECT, _LISTED_SUBJECT)


def check_subject(question: str, sql: Spec, out: FindingCollector) -> None:
    """The rows a title-style question lists are told apart by an output: "Top users from
    the Philippines" over ``users`` needs a user's id, name or a column named for users, not
    only their reputation. Skipped when the SQL groups or aggregates (its rows are groups)
    or selects ``*``, and when the entity names no table of the SQL.

    >>> from stef.findings import FindingCollector
    >>> out = FindingCollector()
    >>> sql = Spec(projections=[Projection("reputation", None, ("reputation",))], tables=["users"])
    >>> check_subject("Top users from the Philippines", sql, out)
    >>> check_subject("Top 500 most active SO users", sql, out)
    >>> check_subject("Show inactive users (no posts)", sql, out)
    >>> [f.kind for f in out.findings]
    ['projection_subject_missing', 'projection_subject_missing', 'projection_subject_missing']
    """
    m = next((m for rx in _SUBJECTS if (m := rx.match(question))), None)
    if m is None or not sql.projections or sql.flags.get("select_star") or sql.group_by:
        return
    if any(p.is_aggregate for p in sql.projections):
        return
    head = singular(m.group("noun").casefold())
    if not any(_word_matches(head, t) for t in sql.tables):
        return
    names, _ = _outputs(sql)
    if any(_word_matches(head, n) or _id_like(n) or descriptive(n) for n in names):
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


def _id_like(name: str) -> bool:
    low = name.casefold()
    return low == "id" or low.endswith("id")


def _word_set(name: str) -> set[str]:
    """The words of three letters or more of a lower-case name, ``id`` aside."""
    return {w for w in _words(name) if len(w) >= 3 and w != "id"}


def _share_a_word(a: str, b: str) -> bool:
    """Do two lower-case names share a word of three letters or more (``id`` aside), or
    does one hold the other?"""
    return bool(_word_set(a) & _word_set(b)) or a in b or b in a


def keys_related(a: str, b: str) -> bool:
    """Could two key columns refer to each other? An id never refers to a name or a
    title; two other columns must share a word (``link_to_major`` = ``major_id``).

    >>> keys_related("name", "musical_id"), keys_related("stuid", "stu_id")
    (False, True)
    >>> keys_related("cust_name", "cust_id"), keys_related("link_to_major", "major_id")
    (False, True)
    >>> keys_related("city", "city_name"), keys_related("owner", "breed_code")
    (True, False)
    """
    ca, cb = a.casefold(), b.casefold()
    if ca == cb:
        return True
    ida, idb = _id_like(ca), _id_like(cb)
    if (ida and descriptive(cb)) or (idb and descriptive(ca)):
        return False
    if ida and idb:
        return True
    return _share_a_word(ca, cb) or ida != idb


def _own_key(column: str, table: str) -> bool:
    """Is ``column`` the key a table names itself by (``id``, ``event_id`` in ``event``)?

    >>> _own_key("event_id", "event"), _own_key("matchid", "matches"), _own_key("userid", "posts")
    (True, True, False)
    """
    c = column.casefold()
    t = NAME_WORDS.sub("", table.casefold())
    return c == "id" or NAME_WORDS.sub("", c) in (t + "id", singular(t) + "id")


def join_keys_related(left: str, right: str, tables: Sequence[str]) -> bool:
    """Could ``tables[0].left = tables[1].right`` link a row to the row it refers to?
    Besides :func:`keys_related`, two differently named ids link only when they share a
    word or one is its table's own key and the other names that table
    (``cardkingdomid`` = ``mcmid`` does not).

    >>> join_keys_related("cardkingdomid", "mcmid", ["cards", "sets"])
    False
    >>> join_keys_related("id", "team_api_id", ["team", "match"])
    True

    An own key links only to a key that names its table: neither ``client.client_id =
    loan.account_id`` nor two tables' own keys (``client.client_id = loan.loan_id``) do.

    >>> join_keys_related("client_id", "account_id", ["client", "loan"])
    False
    >>> join_keys_related("client_id", "loan_id", ["client", "loan"])
    False
    >>> join_keys_related("id", "userid", ["posts", "badges"])
    False
    """
    if not keys_related(left, right):
        return False
    a, b = left.casefold(), right.casefold()
    if a == b or not (_id_like(a) and _id_like(b)):
        return True
    own_a, own_b = _own_key(a, tables[0]), _own_key(b, tables[1])
    if not (own_a or own_b):
        return _share_a_word(a, b)
    return (
        (own_a and _names_table(b, tables[0]))
        or (own_b and _names_table(a, tables[1]))
        or bool(_word_set(a) & _word_set(b))
    )


def _names_table(key: str, table: str) -> bool:
    """Does a key column name ``table`` (``owneruserid`` → ``users``, ``hero_id`` →
    ``superhero``), so that it may refer to that table's own key?

    >>> _names_table("owneruserid", "users"), _names_table("account_id", "client")
    (True, False)
    """
    stem = NAME_WORDS.sub("", re.sub(r"_?id$", "", key.casefold()))
    name = NAME_WORDS.sub("", table.casefold())
    if _share_a_word(key.casefold(), table.casefold()):
        return True
    return len(stem) >= 3 and (stem in name or name in stem or singular(name) in stem)


def check_keys(sql: Spec, out: FindingCollector) -> None:
    """``x IN (SELECT y …)`` and join conditions whose two columns cannot refer to each
    other (an id compared with a name, two unrelated ids); and two tables joined on
    their own ``id`` columns, which links rows only when one table extends the other."""
    for outer, inner in sql.flags.get("in_subquery_keys") or ():
        if not keys_related(outer, inner):
            out.add(
                "key_pair_mismatch",
                "warning",
                f"{outer} IN (SELECT {inner} …) compares columns that cannot refer to each other",
                None,
                f"{outer} IN (SELECT {inner} …)",
                "structure",
            )
    for j in sql.joins:
        tables = j.get("tables") or []
        left, right = j.get("left") or "", j.get("right") or ""
        if len(tables) != 2 or tables[0] == tables[1] or not left or not right:
            continue
        text = f"{tables[0]}.{left} = {tables[1]}.{right}"
        if not join_keys_related(left, right, tables):
            out.add(
                "key_pair_mismatch",
                "warning",
                f"{text} joins columns that cannot refer to each other",
                None,
                text,
                "structure",
            )
        elif left.casefold() == right.casefold() == "id":
            out.add(
                "join_on_own_ids",
                "warning",
                f"{text} joins two tables on their own ids",
                None,
                text,
                "structure",
            )


def check_tables(sql: Spec, out: FindingCollector, mentioned: Mentioned) -> None:
    """A query none of whose tables the question names."""
    if not sql.tables or any(mentioned(t) for t in sql.tables):
        return
    out.add(
        "tables_unexplained",
        "warning",
        f"the question names none of the tables ({', '.join(sql.tables)})",
        None,
        ", ".join(sql.tables),
        "schema_linking",
    )


def check_order_columns(sql: Spec, out: FindingCollector, mentioned: Mentioned) -> None:
    """ORDER BY columns the question never names."""
    for o in sql.order_by:
        if o.is_aggregate or not _PLAIN_NAME.fullmatch(o.key) or mentioned(o.key):
            continue
        out.add(
            "order_column_unexplained",
            "warning",
            f"ordering column {o.key!r} is named nowhere in the question or its enrichment",
            None,
            o.text or o.key,
            "schema_linking",
        )


_QUESTION_WORD = re.compile(r"[a-z][a-z]+")
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
        cls, sql: Spec, synonyms: Mapping[str, Sequence[str]] | None = None
    ) -> tuple[_Vocabulary, _Vocabulary]:
        """The vocabulary of the SQL's columns, tables, literals and output aliases, and
        the same with the rules' synonyms of the columns it uses (``"amount":
        ["revenue"]``) — one object when no synonym applies."""
        names = [
            *sql.columns,
            *sql.tables,
            *sql.literals,
            *(p.alias or "" for p in sql.projections),
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
    return tuple(_QUESTION_WORD.findall(question.casefold().replace("n't", " not")))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _question_terms(question: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The question's words and the indexes of those that may be terms: three letters or
    more, no filler, no verb form in ``-ed`` (memoised per question).

    >>> _question_terms("Which stations reported the sales?")
    (('which', 'stations', 'reported', 'the', 'sales'), (1, 4))
    """
    words = _question_words(question)
    return words, tuple(
        i
        for i, w in enumerate(words)
        if not (len(w) < 3 or w in QUESTION_FILLER_WORDS or _VERB_FORM.search(w))
    )


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


def check_question_terms(
    question: str,
    sql: Spec,
    out: FindingCollector,
    enriched: str | None = None,
    synonyms: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """Question terms the SQL never touches: the lexical side of schema linking (a
    question about students answered from ``allergy_type``). A term that only the
    enriched question's hints link to the SQL is noted apart (``info``): the hint
    explains it, though in labelled data such queries still go wrong more often."""
    base, with_synonyms = _Vocabulary.of(sql, synonyms)
    terms = _unexplained(question, with_synonyms)
    hinted = hinted_terms(terms, enriched, base)
    for w in [t for t in terms if t not in hinted][:MAX_TERMS]:
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


def check_group_columns(sql: Spec, out: FindingCollector, mentioned: Mentioned) -> None:
    """GROUP BY columns the question never names and no output shows (grouping by
    ``patient`` to find the nurse with the most appointments)."""
    shown = {c for p in sql.projections for c in p.columns}
    for key in sql.group_by:
        if not _PLAIN_NAME.fullmatch(key) or key in shown or _id_like(key) or mentioned(key):
            continue
        out.add(
            "group_column_unexplained",
            "warning",
            f"grouping column {key!r} is neither selected nor named by the question",
            None,
            key,
            "schema_linking",
        )


def check_duplicate_filters(sql: Spec, out: FindingCollector) -> None:
    """The same condition written twice in one SELECT (``year = 2002 AND year = 2002``): a
    slip that usually stands where another condition should be. The SQL spec says which
    (``flags.duplicate_condition``): the same range in two CTEs is no slip."""
    if sql.flags.get("identical_set_sides"):
        return  # both sides of a set operation repeat each other's conditions
    text = sql.flags.get("duplicate_condition")
    if text:
        out.add(
            "filter_duplicate",
            "warning",
            f"the condition {text!r} is written twice",
            None,
            text,
            "structure",
        )


_ID_WORDS = frozenset(
    ("id", "ids", "identifier", "identifiers", "code", "codes", "number", "numbers", "key", "no")
)


def check_id_only_outputs(nl: Spec, sql: Spec, out: FindingCollector, question: str) -> None:
    """Every output is an id (``SELECT league.id``) though the question never asks for
    an id or code: a list of things usually wants their names."""
    if not sql.projections or sql.flags.get("select_star"):
        return
    if any(
        p.is_aggregate or len(p.columns) != 1 or not _id_like(p.columns[0]) for p in sql.projections
    ):
        return
    if _ID_WORDS & set(_QUESTION_WORD.findall(question.casefold())):
        return
    out.add(
        "projection_id_only",
        "warning",
        "the SQL returns only ids; the question never asks for an id",
        None,
        ", ".join(p.text or p.expr for p in sql.projections),
        "request",
    )


def check_intent(
    nl: Spec,
    sql: Spec,
    out: FindingCollector,
    mentioned: Mentioned,
    question: str = "",
    enriched: str | None = None,
    synonyms: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """Run every intent check (see the module doc)."""
    if question:
        check_question_terms(question, sql, out, enriched, synonyms)
        check_id_only_outputs(nl, sql, out, question)
    check_requests(nl, sql, out)
    if question:
        check_subject(question, sql, out)
        check_enumeration(question, sql, out)
    check_negation(nl, sql, out, question, enriched)
    check_keys(sql, out)
    check_tables(sql, out, mentioned)
    check_order_columns(sql, out, mentioned)
    check_group_columns(sql, out, mentioned)
    check_duplicate_filters(sql, out)
    check_value_formats(sql, out)
    check_ranges(sql, out)

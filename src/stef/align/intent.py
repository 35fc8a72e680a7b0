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

from stef.align.absence import check_absence
from stef.align.formats import (
    _DATE_NAME,
    NAME_WORDS,
    check_ranges,
    check_value_formats,
    descriptive,
)
from stef.align.impossible import check_contradiction, check_like_cue, check_range_bounds
from stef.align.join_keys import _id_like, check_keys
from stef.align.matching import (
    HINT_CLAUSE,
    SQL_NEGATING_OPS,
    canon_col,
    float_value,
    none_left,
    pinned_columns,
    quoted_terms,
)
from stef.align.measures import DEVIATIONS, VARIANCES
from stef.align.names import check_partial_names
from stef.align.negated import check_negated_values
from stef.align.numbered import check_numbered_attributes
from stef.align.output_names import (
    attribute_named,
    attribute_word,
    named_output,
    output_names,
    stored_output,
    stored_statistic,
    word_matches,
)
from stef.align.rows import (
    check_counted_rows,
    check_grouped_counts,
    check_outer_join,
    check_two_counts,
)
from stef.align.shown import check_rank_shown
from stef.align.subject import check_subject
from stef.align.terms import _Vocabulary, check_question_terms, question_words
from stef.findings import FindingCollector
from stef.nl.lexicon import (
    MEASURE_NOUNS,
    REQUEST_GENERIC_HEADS,
    SUPERLATIVES,
)
from stef.nl.request import enumeration_size, singular
from stef.spec import Projection, Spec

#: A check that a schema name is named by the question (``stef.align.matching.name_mentioned``).
Mentioned = Callable[[str], bool]

_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_ ]*")



def check_requests(
    nl: Spec, sql: Spec, out: FindingCollector, enriched: str | None = None, question: str = ""
) -> None:
    """Every item the question asks to get back has an output that can be it.

    A plain item ("the id", "their names") needs a plain output whose name shares its
    head noun; a computed item ("the number of …", "the average age") needs a computed
    output (or an ORDER BY … LIMIT for an extreme); ``SELECT *`` answers everything. An
    item whose head matches but whose other words name no output, table, column or value
    of the SQL ("support rate" answered by ``unsure_rate``) is partly answered.
    """
    if not nl.projections or not sql.projections or sql.flags.get("select_star"):
        return
    names, computed = output_names(sql)
    vocab: list[_Vocabulary] = []  # built when first needed (most items never need it)

    def accounted(word: str) -> bool:
        if not vocab:
            vocab.append(_Vocabulary.of(sql)[0])
        return vocab[0].accounts(word)

    ranked = _ranked(sql)
    labelled = _labelled_by_case(sql, question)  # a CASE output writes labels it quotes
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
        if _statistic_computed(words, sql):
            continue  # "the standard deviation of the score" as STDEV(score)
        listed = _frequency_listed(words)
        if listed:
            words, head = listed, listed[-1]  # "the most common cloud covers": the covers
        elif item.is_aggregate:
            if not computed and not _computed_answered(
                item, words, sql, names, ranked, enriched, question
            ):
                missing(item, "no output computes it")
            continue
        heads = [n for n in names if word_matches(head, n)]
        if not heads:  # "the website" as ``url``, "the coordinates" as ``lat, lng``
            heads = [n for n in names if attribute_named(words, n, question)]
        if not heads and head in REQUEST_GENERIC_HEADS and len(words) > 1:
            heads = [n for n in names if any(word_matches(w, n) for w in words[:-1])]
        if not heads and head in _KEY_HEADS and len(words) > 1:
            heads = _key_outputs(words, names)
        if not heads and singular(head) in ("name", "title"):  # a date names nothing
            heads = [n for n in names if not _id_like(n) and not _DATE_NAME.search(n.casefold())]
            if len(words) > 1 and not any(_owner_said(words[:-1], n) for n in names):
                heads = []  # "the school's name" as ``phone, ext``: nothing names the school
        if not heads and _table_rows(words, head, names, sql):
            continue  # "list the circuits" (by their names): the rows of the table it names
        hinted = [*names, *(c for p in computed for c in p.columns)]  # or a formula's column
        if not heads and (_rows_answered(item, nl, sql) or _hinted_output(item, hinted, enriched)):
            continue
        if not heads and (labelled or _measure(item, question, nl, sql)):
            continue  # a CASE output's labels; "revenue by quarter" as SUM(amount)
        if not heads:
            missing(item, "no output is named like it")
            continue
        if any(_id_like(n) for n in heads) and any(word_matches(head, t) for t in sql.tables):
            continue  # "unanswered posts" listed by their ids: the modifiers pick the rows
        others = [w for w in _modifiers(words, heads, names, sql) if not accounted(w)]
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


def _computed_answered(
    item: Projection,
    words: Sequence[str],
    sql: Spec,
    names: Sequence[str],
    ranked: bool,
    enriched: str | None,
    question: str = "",
) -> bool:
    """Is a computed item no output computes answered otherwise: by a ranking (an extreme),
    a carried or stored figure, an output a hint names, a stored column named for it, or a
    name that is itself the answer ("the most popular name")?"""
    extreme = any(w in SUPERLATIVES or w in ("top", "bottom") for w in words)
    if (ranked and extreme) or _carried(sql) or stored_output(words, names):
        return True
    if _stored_count(words, question, names, sql) or stored_statistic(words, names):
        return True  # "the number of kids" as ``Kids``, "the average price" as ``avg_price``
    if _hinted_output(item, names, enriched, formulas=False):
        return True  # "A15 contains the number of crimes": the hint names the output
    if ranked and named_output(words, names):
        return True  # "mean temperature" as a stored mean_temperature_f
    return extreme and any(word_matches(w, n) for w in words for n in names)


#: Superlatives of frequency: "the most common X" lists X, ranked by how often it occurs.
_FREQUENCY = frozenset({"common", "frequent", "popular"})
_KIND_WORDS = frozenset({"type", "types", "kind", "kinds", "sort", "sorts", "category"})


def _frequency_listed(words: Sequence[str]) -> list[str]:
    """The words of what a frequency superlative lists ("most common cloud covers" →
    ``cloud covers``), else empty.

    >>> _frequency_listed(("most", "common", "cloud", "covers")), _frequency_listed(("top",))
    (['cloud', 'covers'], [])
    """
    if not _FREQUENCY.intersection(words) or not {"most", "least"}.intersection(words):
        return []
    last = max(i for i, w in enumerate(words) if w in _FREQUENCY)
    listed = list(words[last + 1 :])
    # "the most common type (of grade span)": the kind word leaves the thing to its "of"
    return [] if set(listed) <= _KIND_WORDS else listed


#: Words of a statistic and the SQL functions (sqlglot's names, lower case) that compute it.
_STATISTICS: dict[str, frozenset[str]] = {
    "deviation": DEVIATIONS,
    "stddev": DEVIATIONS,
    "stdev": DEVIATIONS,
    "variance": VARIANCES,
    "median": frozenset(
        {"median", "percentilecont", "percentiledisc", "approxquantile", "quantile"}
    ),
}


def _statistic_computed(words: Sequence[str], sql: Spec) -> bool:
    """Does an item name a statistic ("standard deviation", "variance", "median") that a
    function of the SQL computes?

    >>> _statistic_computed(("standard", "deviation"), Spec(flags={"functions": ["stddev"]}))
    True
    >>> _statistic_computed(("variance",), Spec(flags={"functions": ["avg"]}))
    False
    """
    functions = sql.flags.get("functions") or ()
    return any(f in functions for w in words for f in _STATISTICS.get(w, ()))


#: Heads of an item that ask for a key, which any key column named for its thing answers.
_KEY_HEADS = frozenset({"key", "id"})


def _keyed(name: str) -> bool:
    """Is an output named as a key (``building_id``, ``FLOOR_KEY``, ``dept_code``)?"""
    return _id_like(name) or canon_col(name).endswith(("key", "code"))


def _key_outputs(words: Sequence[str], names: Sequence[str]) -> list[str]:
    """The outputs that answer an asked key of something ("building key", "each physician's
    id"): a key named for it (``building_id``), else a column named for the row the key
    refers to (``physician``).

    >>> _key_outputs(["building", "key"], ["building_id", "physician"])
    ['building_id']
    >>> _key_outputs(["physician", "id"], ["physician", "department"])
    ['physician']
    """
    heads = [n for n in names if _keyed(n) and any(word_matches(w, n) for w in words[:-1])]
    if heads:
        return heads
    owners = {singular(w) for w in words[:-1]}
    return [n for n in names if singular(canon_col(n)) in owners]


#: Modifiers a HAVING (``COUNT(*) > 1``) expresses: "duplicate email addresses".
_REPEATED = frozenset({"duplicate", "duplicated", "repeated"})


def _modifiers(
    words: Sequence[str], heads: Sequence[str], names: Sequence[str], sql: Spec
) -> list[str]:
    """The words before an item's head that neither its output nor another name, table or
    HAVING of the SQL says (a value or another name is checked by the caller)."""
    head = words[-1]
    return [
        w
        for w in (x.rstrip("'") for x in words[:-1])
        if len(w) >= 3
        and not attribute_word(w)  # "the location coordinates" as ``lat``
        and not any(word_matches(w, n) for n in names)
        and not any(word_matches(w, t) for t in sql.tables)
        and not any(_initial_of(w, n, head) for n in heads)
        and not (w in _REPEATED and any(f.clause == "having" for f in sql.filters))
    ]


def _ranked(sql: Spec) -> bool:
    """Does the SQL keep the first rows of a ranking: a sorted LIMIT, or a ranking window
    cut to its first rows (``QUALIFY ROW_NUMBER() OVER (…) = 1``)?

    >>> from stef.spec import OrderKey
    >>> _ranked(Spec(order_by=[OrderKey("d", "desc")], limit=1)), _ranked(Spec())
    (True, False)
    """
    return (bool(sql.order_by) and sql.limit is not None) or bool(sql.flags.get("rank_cuts"))


def _carried(sql: Spec) -> bool:
    """May an aggregate reach the outputs through a CTE or subquery? An aggregate of the
    outer query that only sorts or filters (``ORDER BY COUNT(*)``) outputs no number, but
    one computed in a CTE (grouped, or over a window) comes out under a plain name
    (``num_materials``).

    >>> from stef.spec import Aggregation
    >>> count = [Aggregation("count", None, False, "COUNT(*)")]
    >>> _carried(Spec(aggregations=count)), _carried(Spec(aggregations=count, ctes=1))
    (False, True)
    """
    return bool(sql.aggregations or sql.window_aggregations) and bool(sql.ctes or sql.subqueries)


def _initial_of(word: str, name: str, head: str) -> bool:
    """Does ``name`` spell ``word`` by its first letters before the item's ``head``
    (``fname`` for the first name, ``lname`` for the last name)?

    >>> _initial_of("first", "fname", "name"), _initial_of("last", "fname", "name")
    (True, False)
    """
    low = canon_col(name)
    stem = singular(head)
    if not low.endswith(stem) or len(low) == len(stem):
        return False
    return word.startswith(low[: -len(stem)])


#: Output-name words that point at a row rather than describe it (``[Post Link]``,
#: ``user_url``).
_ROW_POINTERS = ("link", "url")


def _points_at_rows(name: str) -> bool:
    """Does an output point at its rows (``[Post Link]``, ``profile_url``)? A name or an id
    is an attribute a question asks for by name ("the names of customers")."""
    return name.casefold().endswith(_ROW_POINTERS)


def _rows_answered(item: Projection, nl: Spec, sql: Spec) -> bool:
    """Is an item no output names still answered? The one thing a request asks for ("Find
    YouTube videos in answers", "Find the first question"), or the first of a list when
    plural ("list answers and score"), is the rows themselves, which an output that links
    to them answers (``Id AS [Post Link]``).

    >>> sql = Spec(projections=[Projection("p.id", alias="Post Link", columns=("id",))])
    >>> one = Projection("videos", columns=("youtube", "videos"), text="youtube videos")
    >>> _rows_answered(one, Spec(projections=[one]), sql)
    True
    """
    first = item is nl.projections[0] and len(item.columns) == 1 and item.expr.endswith("s")
    alone = (len(nl.projections) == 1 or first) and not item.is_aggregate  # "answers and score"
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


#: "the number of kids", "the amount of RAM": a figure named by what it counts.
_COUNT_OF = re.compile(r"\b(?:number|amount|count)\s+of\s+(?:the\s+)?([a-z][a-z_-]+)")


def _stored_count(words: Sequence[str], question: str, names: Sequence[str], sql: Spec) -> bool:
    """Is "the number of X" a stored count: an output named for what it counts (``Kids``,
    ``number_deaths``, ``room_count``), in a SQL that neither groups nor aggregates?

    >>> _stored_count(["number"], "Find the number of kids in room 5.", ["kids"], Spec())
    True
    >>> _stored_count(["number"], "Find the number of kids in room 5.", ["kid_id"], Spec())
    False
    >>> _stored_count(["amount"], "the amount of donation", ["donator_name"], Spec())
    False
    """
    if tuple(words) not in (("number",), ("amount",), ("count",)):
        return False
    if sql.group_by or sql.aggregations:
        return False
    nouns = [m.group(1) for m in _COUNT_OF.finditer(question.casefold())]
    return any(
        word_matches(n, name) and not (_id_like(name) or descriptive(name))
        for n in nouns
        for name in names
    )


def _table_rows(words: Sequence[str], head: str, names: Sequence[str], sql: Spec) -> bool:
    """Is an item the rows of a table the SQL reads: its one word names the table ("list
    the circuits"), or its plural head does and an output names or identifies the rows
    ("the planned nuclear power plants" as ``Name``, "inactive users" as ``id``), or a
    plural item is listed by the own ``id`` of the one table the SQL reads?"""
    plural = words[-1].endswith("s")  # ``head`` is the singular
    if not any(word_matches(head, t) for t in sql.tables):
        # the one table the SQL reads, listed by its own key ("premium subscribers" as id)
        alone = len(words) <= 3 and head not in REQUEST_GENERIC_HEADS and len(names) <= 3
        one = len(sql.tables) == 1 and any(n.casefold() == "id" for n in names)
        return singular(words[-1]) != words[-1] and alone and one
    return len(words) == 1 or (plural and any(descriptive(n) or _id_like(n) for n in names))


def _hinted_output(
    item: Projection, names: Sequence[str], enriched: str | None, formulas: bool = True
) -> bool:
    """Does a clause of the enriched question say which output the item is ("final score
    refers to home_team_goal")? Without ``formulas``, a clause that writes a computation
    ("… refers to SUBTRACT(jumping …)") says the item is computed, not an output.

    >>> item = Projection("final score", columns=("final", "score"), text="final score")
    >>> _hinted_output(item, ["home_team_goal"], "final score refers to home_team_goal")
    True
    >>> _hinted_output(item, ["goal"], "final score = SUBTRACT(goal, own)", formulas=False)
    False
    """
    if not enriched or not item.text:
        return False
    text = item.text.casefold()
    return any(
        text in clause
        and (formulas or "(" not in clause)
        and any(n.casefold() in clause for n in names if len(n) >= 3)
        for clause in HINT_CLAUSE.split(enriched.casefold())
    )


def _labelled_by_case(sql: Spec, question: str) -> bool:
    """Does a CASE output write a label the question quotes ("list the current status
    ('CURRENT' if yes and 'NON-CURRENT' otherwise)")? Such an output is the item the
    question describes, whatever its alias.

    >>> sql = Spec(projections=[Projection("case when c = 1 then 'CURRENT' end", alias="a")],
    ...            literals=["CURRENT"])
    >>> _labelled_by_case(sql, "the status ('CURRENT' if yes)")
    True
    """
    if not question or not any("case" in p.expr.casefold() for p in sql.projections):
        return False
    quoted = quoted_terms(question, backquoted=False)
    return any(lit.casefold() in quoted for lit in sql.literals)


def _measure(item: Projection, question: str, nl: Spec, sql: Spec) -> bool:
    """A measure the question asks for ("the revenue of the Pro plan") or asks per group
    ("revenue by product line") that an aggregate output computes under another name
    (``SUM(amount)``): an aggregate output no computed item of the question claims. Per
    group, any item but names, ids and the keys (an item named after the grouping cue);
    with no grouping, an amount's noun (:data:`stef.nl.lexicon.MEASURE_NOUNS`).

    >>> from stef.spec import Projection
    >>> sql = Spec(projections=[Projection("line"), Projection("sum(amount)", is_aggregate=True)],
    ...            group_by=["line"])
    >>> revenue = Projection("revenue", text="revenue", columns=("revenue",))
    >>> _measure(revenue, "show revenue by product line", Spec(), sql)
    True
    >>> _measure(revenue, "show revenue and product line", Spec(), sql)
    False
    >>> total = Spec(projections=[Projection("sum(amount)", is_aggregate=True)])
    >>> _measure(revenue, "what is the revenue of the pro plan", Spec(), total)
    True
    """
    head = singular(item.columns[-1]) if item.columns else ""
    if head in ("", "name", "title", "id") or _id_like(head):
        return False
    if not sql.group_by and item.columns[-1] not in MEASURE_NOUNS:
        return False
    low = question.casefold()
    at = low.find(item.text.casefold()) if item.text else -1
    cue = _GROUP_CUE.search(low, at + len(item.text or "")) if at >= 0 else None
    if sql.group_by and (cue is None or head in low[cue.end() :]):
        return False
    asked = max(sum(i.is_aggregate for i in nl.projections), len(nl.aggregations))
    free, unnamed = _unclaimed(item, nl, sql)
    if any(word_matches(head, c) for p in free for c in p.columns):
        return True  # "unique visitors" as COUNT(DISTINCT visitor_id) AS uv
    return len(free) > asked + unnamed


def _unclaimed(item: Projection, nl: Spec, sql: Spec) -> tuple[list[Projection], int]:
    """The aggregate outputs no other plain item of the question claims (by the output's
    alias or the column it aggregates), and how many other plain items claim none and are
    named by no output: in "revenue, page views and visitors by month", ``SUM(amount) AS
    revenue`` and ``COUNT(DISTINCT visitor_id) AS uv`` answer their own items and none is
    left for "page views".

    >>> sql = Spec(projections=[Projection("sum(a)", "revenue", is_aggregate=True),
    ...                         Projection("count(*)", "n", is_aggregate=True)])
    >>> items = [Projection(w, text=w, columns=(w,)) for w in ("revenue", "views", "visits")]
    >>> free, unnamed = _unclaimed(items[1], Spec(projections=items), sql)
    >>> [p.alias for p in free], unnamed
    (['n'], 1)
    """
    names = output_names(sql)[0]
    aggregates = [p for p in sql.projections if p.is_aggregate]
    claimed: set[int] = set()
    unnamed = 0
    for other in nl.projections:
        if other is item or other.is_aggregate or not other.columns:
            continue
        head = singular(other.columns[-1])
        took = [
            k
            for k, p in enumerate(aggregates)
            if any(word_matches(head, n) for n in ((p.alias or ""), *p.columns) if n)
        ]
        claimed.update(took)
        if not took and not any(word_matches(head, n) for n in names):
            unnamed += 1
    return [p for k, p in enumerate(aggregates) if k not in claimed], unnamed


_GROUP_CUE = re.compile(r"\b(?:by|per|for each|for every)\b")


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
#: A negating prefix a hint defines a state with ("non-carcinogenic").
_NON = re.compile(r"\bnon-?[a-z]")


def negation_defined(enriched: str | None) -> bool:
    """Does a clause of the enriched question say what a negated phrase means?

    >>> negation_defined("Doesn't have comments refers to CommentCount = 0")
    True
    >>> negation_defined("female refers to sex = 'F'; not active"), negation_defined(None)
    (False, False)
    >>> negation_defined("label = '-' means molecules are non-carcinogenic")
    True
    """
    return any(
        (_NEGATION.search(c) or _NON.search(c)) and _DEFINES.search(c)
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
    if any(f.op in SQL_NEGATING_OPS or none_left(f) for f in sql.filters) or _outside(sql):
        return  # "no answers" as answer_count = 0; "isn't normal" as x < 29 OR x > 52
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


def _outside(sql: Spec) -> bool:
    """Does the SQL keep the values outside a range (``hct < 29 OR hct > 52``): an upper
    bound below a lower bound on one column, which only an OR lets both hold?

    >>> from stef.spec import Filter
    >>> lo, hi = Filter("hct", "<", ("29",)), Filter("hct", ">", ("52",))
    >>> _outside(Spec(filters=[lo, hi])), _outside(Spec(filters=[Filter("hct", ">", ("29",))]))
    (True, False)
    """
    below: dict[str, float] = {}
    above: dict[str, float] = {}
    for f in sql.filters:
        v = float_value(f.values[0]) if len(f.values) == 1 and f.column else None
        if v is None or f.column is None:
            continue
        if f.op in ("<", "<="):
            below[f.column] = max(v, below.get(f.column, v))
        elif f.op in (">", ">="):
            above[f.column] = min(v, above.get(f.column, v))
    return any(c in above and below[c] <= above[c] for c in below)


def _owner_said(owner: tuple[str, ...] | list[str], name: str) -> bool:
    """May the output ``name`` be the name of ``owner`` ("the school's name"): it names the
    owner, holds three letters of it (``driverref`` for "reference name"), or is a code or
    short name that cannot be read (``a2``)?

    >>> _owner_said(["school"], "phone"), _owner_said(["reference"], "driverref")
    (False, True)
    """
    low = name.casefold()
    if len(low) <= 2 or any(c.isdigit() for c in low):
        return True
    return any(word_matches(w, name) or (len(w) >= 3 and w[:3] in low) for w in owner)


def check_pinned_outputs(sql: Spec, out: FindingCollector) -> None:
    """Every output is a column the WHERE clause holds equal to a value ("Who founded Sony?"
    as ``SELECT founder … WHERE founder = 'Sony'``, "cloud covers in zip code 94107" as
    ``SELECT zip_code … WHERE zip_code = 94107``): the result can only repeat the value the
    question gave; the value belongs to another column, or the output to another one."""
    values = sql.flags.get("outputs_pinned") or []
    if not values:
        return
    shown = ", ".join(repr(v) for v in values)
    out.add(
        "output_pinned",
        "error",
        f"every output is a column the WHERE clause holds equal to {shown}: the result can"
        " only repeat that value",
        None,
        ", ".join(p.text or p.expr for p in sql.projections),
        "request",
    )


def check_own_key_counts(sql: Spec, out: FindingCollector) -> None:
    """SQL that reads one table, groups it by that table's own id and counts (``SELECT
    name FROM products GROUP BY product_id ORDER BY COUNT(*)``): each group is one row, so
    every count is 1 and a ranking by it picks arbitrarily; the rows to count sit in another
    table that the SQL never joins."""
    key = sql.flags.get("own_key_counted")
    if not key:
        return
    out.add(
        "count_per_own_key",
        "error",
        f"the SQL groups its one table by its own id {key} and counts: each group holds one "
        "row, so every count is 1",
        None,
        key,
        "aggregation",
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


def check_group_columns(sql: Spec, out: FindingCollector, mentioned: Mentioned) -> None:
    """GROUP BY columns the question never names and no output shows (grouping by
    ``patient`` to find the nurse with the most appointments); ``SELECT *`` shows them all."""
    if sql.flags.get("select_star"):
        return
    shown = {c for p in sql.projections for c in p.columns}
    # beside other keys, a column held to one value splits nothing
    pinned = pinned_columns(sql) if len(sql.group_by) > 1 else set()
    for key in sql.group_by:
        if not _PLAIN_NAME.fullmatch(key) or key in shown or _id_like(key) or mentioned(key):
            continue
        if canon_col(key) in pinned:
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
    if _ID_WORDS & set(question_words(question.casefold())):
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
    context: Sequence[str] = (),
) -> None:
    """Run every intent check (see the module doc); ``context``: the rules' context terms."""
    if question:
        check_question_terms(question, sql, out, enriched, synonyms, context)
        check_id_only_outputs(nl, sql, out, question)
    check_requests(nl, sql, out, enriched, question)
    if question:
        check_subject(question, sql, out)
        check_rank_shown(question, nl, sql, out)
        check_numbered_attributes(question, nl, sql, out)
        check_partial_names(nl, sql, out, question)
        check_enumeration(question, sql, out)
        check_counted_rows(nl, sql, out, question)
        check_grouped_counts(sql, out, question)
        check_outer_join(sql, out, question)
        check_absence(sql, out, question)
        check_two_counts(sql, out, question)
        check_negated_values(sql, out, question)
    check_negation(nl, sql, out, question, enriched)
    check_pinned_outputs(sql, out)
    check_own_key_counts(sql, out)
    check_contradiction(sql, out)
    check_like_cue(question, sql, out)
    check_range_bounds(nl, sql, out)
    check_keys(sql, out)
    check_tables(sql, out, mentioned)
    check_order_columns(sql, out, mentioned)
    check_group_columns(sql, out, mentioned)
    check_duplicate_filters(sql, out)
    check_value_formats(sql, out)
    check_ranges(sql, out)

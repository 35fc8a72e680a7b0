"""An asked total, average, highest or lowest taken over a column that names nothing of
its measure: "the average profits of companies" answered by ``AVG(sales_billion)``, "the
highest latitude" by ``MAX(long)`` (``aggregation_measure_mismatch``); and a top-k sorted by
such a column: "the candidate with the highest support rate" answered by ``ORDER BY
unsure_rate DESC LIMIT 1`` (``order_key_mismatch``); and a stated comparison on one: "the max
temperature higher than 85" as ``min_temperature_f > 85`` (``filter_wrong_column``).

Read from names only (no schema), so it stays quiet wherever a name may stand for the
measure in another way: a measure or a column so broad that anything may hold it ("the
total amount", ``SUM(value)``), a measure any name of the SQL says (a table ``payments``
for "the total payments"), a synonym ("the average pay" as ``AVG(salary)``), an
abbreviation (``temp`` for temperature), a hint that names the column, an aggregate over an
expression, or a measure that holds a name ("the average James Cameron film rating").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stef.align.matching import letters_in_order, name_words, searchable
from stef.align.measures import _holds, _same_word, measure_words, names_measure
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.request import singular
from stef.spec import Aggregation, Spec
from stef.sql.predicates import DATE_LIKE_NAME

#: Measures named so broadly that any column may hold them: "the total amount", ``SUM(value)``.
_GENERIC = lx._words(
    """amount amt quantity qty number num count cnt value val total sum figure level volume
    price cost size"""
)
#: Words that name one measure ("the average pay" as ``AVG(salary)``).
_SYNONYMS = (
    lx._words("pay salary wage earning income compensation"),
    lx._words("ratio rate percentage percent pct share proportion fraction"),
    lx._words("rating star score grade mark point goal"),
    lx._words("price cost fee charge fare spend spending expense expenditure"),
    lx._words("revenue sale turnover income"),
    lx._words("profit margin earning gain"),
    lx._words("age year"),
    lx._words("elevation altitude"),
    lx._words("duration length time span day hour minute second week month"),
)
_WORDS = {"sum": "total", "avg": "average", "max": "highest", "min": "lowest"}


def _said(measure: tuple[str, ...], word: str) -> bool:
    """Does a word of the SQL's names say one of the measure's words: the same word or stem,
    four letters that begin both, an abbreviation, or a synonym?

    >>> _said(("temperature",), "temp"), _said(("pay",), "salary"), _said(("profit",), "sales")
    (True, True, False)
    """
    w = singular(word)
    if any(w in group and not group.isdisjoint(measure) for group in _SYNONYMS):
        return True
    return any(
        _same_word(m, w)
        or (len(w) >= 4 and (m.startswith(w[:4]) or w.startswith(m[:4])))
        or (3 <= len(w) < len(m) and letters_in_order(w, m, 2))
        for m in measure
    )


def _named(column: str, hinted: str) -> bool:
    """Does the hint text name ``column`` (every word of three letters or more, whole)?

    >>> _named("AvgScrRead", " average score in reading refers to avgscrread ")
    True
    """
    if f" {column.casefold()} " in hinted:
        return True
    words = [w for w in name_words(column) if len(w) >= 3]
    return bool(words) and all(f" {w} " in hinted for w in words)


#: Broad words of a column that count something its other words name (``bathroom_count``).
_COUNTING = lx._words("count cnt num number qty quantity")
_OF_WORDS = re.compile(r" of ((?:[a-z]+ ){1,3})")


def _asked_measure(phrase: str, text: str) -> tuple[str, ...] | None:
    """The measure of an asked aggregate's phrase; for "the average number", read on in the
    question (``text``, searchable) through "of" (the average number of bedrooms is an
    average of bedroom counts).

    >>> _asked_measure("average number", " find the average number of bedrooms of all ")
    ('bedroom',)
    >>> _asked_measure("total profits", ""), _asked_measure("average room count", "")
    (('profit',), ('room',))
    """
    words = phrase.casefold().split()
    if len(words) == 2 and words[1] in ("number", "count"):
        at = text.find(searchable(phrase))
        m = _OF_WORDS.match(text, at + len(searchable(phrase)) - 1) if at >= 0 else None
        if m is None:
            return None
        kept: list[str] = []
        for w in m.group(1).split():
            if w in _COMPARED_STOPS:
                break
            kept.append(w)
        return measure_words(f"total {' '.join(kept)}") if kept else None
    if len(words) >= 3 and words[-1] in ("count", "number"):
        # "the average room count": an average of room counts, the rooms the measure
        return measure_words(" ".join(words[:-1]))
    return measure_words(phrase)


def _broad(column: str) -> bool:
    """Is ``column`` named so broadly that any measure may be in it: a broad word that is no
    count of a named thing (``amount_usd``, ``total``, ``order_value``), or broad words only
    (``total_count``)? ``bathroom_count`` counts bathrooms.

    >>> _broad("amount_usd"), _broad("bathroom_count"), _broad("num")
    (True, False, True)
    """
    words = {singular(w) for w in name_words(column)}
    plain = words - _GENERIC - _UNITS - _QUALIFIERS
    return not plain or bool(words & (_GENERIC - _COUNTING))


def _shares_head(phrase: str, text: str) -> bool:
    """Does the asked phrase go on with "and …" in the question, so that its measure may be
    a later word ("the average question and answer score")?

    >>> _shares_head("average question", " what is my average question and answer score ")
    True
    """
    at = text.find(searchable(phrase))
    return at >= 0 and text.startswith("and ", at + len(searchable(phrase)))


def _sql_says(measure: tuple[str, ...], sql: Spec, written: Sequence[str] = ()) -> bool:
    """Does a name of the SQL (a column, a table, an output's alias, or one of ``written``,
    the aggregated columns as the SQL spells them) say a word of ``measure``?

    >>> _sql_says(("profit",), Spec(columns=["sales_billion"], tables=["companies"]))
    False
    """
    names = (*sql.columns, *sql.tables, *(p.alias or "" for p in sql.projections), *written)
    return any(_said(measure, w) for n in names for w in name_words(n.rsplit(".", 1)[-1]))


def _plain(a: Aggregation) -> bool:
    """Is the aggregate's argument one plain column, named in four letters or more (``HS``
    may abbreviate "hours", ``y`` a coordinate)?"""
    arg = (a.arg or "").rsplit(".", 1)[-1]
    return len(arg) >= 4 and "(" not in arg and " " not in arg


def check_measure_named(
    nl: Spec, sql: Spec, out: FindingCollector, text: str, hints: str | None = None
) -> None:
    """Report an asked total, average, highest or lowest whose SQL aggregates of that
    function all take a plain column, where no aggregate and no name of the SQL says the
    measure (see the module doc); ``text`` is the question and hints, searchable.

    >>> nl = Spec(aggregations=[Aggregation("avg", None, False, "average profits")])
    >>> sql = Spec(columns=["sales_billion"], tables=["companies"],
    ...            aggregations=[Aggregation("avg", "sales_billion", False, "AVG(sales_billion)")])
    >>> out = FindingCollector()
    >>> check_measure_named(nl, sql, out, " compute the average profits companies make ")
    >>> print(out.findings[0].message)  # doctest: +NORMALIZE_WHITESPACE
    the question asks for the average of 'profit'; the SQL computes AVG(sales_billion), a column
    named for something else
    """
    aggs = (*sql.aggregations, *sql.window_aggregations)
    for na in nl.aggregations:
        measure = _asked_measure(na.text, text) if na.func in _WORDS else None
        if not measure or set(measure) <= _GENERIC or any(c.isupper() for c in na.text[1:]):
            continue  # "the total amount"; "the average James Cameron film rating": a name
        same = [a for a in sql.aggregations if a.func == na.func]
        if not same or not all(_plain(a) for a in same) or _shares_head(na.text, text):
            continue
        if any(names_measure(a.arg, measure) or _holds(a.arg, measure) for a in aggs):
            continue
        written = [m.group(1) for a in same if (m := _AGG_KEY.match(a.text or ""))]
        if _sql_says(measure, sql, written):  # as written, ``NumTstTakr`` splits into words
            continue
        columns = [(a.arg or "").rsplit(".", 1)[-1] for a in same]
        if any(_broad(c) for c in columns):
            continue  # ``SUM(amount)`` for "the total revenue"
        if _GENERIC.intersection(measure) and any(
            _COUNTING.intersection(name_words(c)) for c in columns
        ):
            continue  # "the average basket size" as ``AVG(item_count)``: a size is a count
        hinted = searchable(hints) if hints else ""
        if any(_named(c, hinted) for c in columns):
            continue  # a hint names the column: "A11 refers to average salary"
        out.add(
            "aggregation_measure_mismatch",
            "warning",
            f"the question asks for the {_WORDS[na.func]} of {' '.join(measure)!r}; the SQL"
            f" computes {same[0].text}, a column named for something else",
            na.text,
            same[0].text,
            "aggregation",
        )
        return


#: A superlative and the measure after it: "the highest support rate", "lowest speed".
_RANKED = re.compile(
    r"\b(?:highest|lowest|greatest|largest|smallest|biggest|maximum|minimum)"
    r"(?:\s+(?:average|avg|mean|total))?\s+(?P<m>[a-z]+(?:\s+[a-z]+){0,2})"
)
#: Words that end a ranked measure ("the highest rate of growth" is just the rate).
_MEASURE_ENDS = lx._words(
    "of by in for and with among across from on at to than who which that is are was were"
)
#: Words of a column that hold a figure of something unsaid (``average``, ``max``).
_STAT_WORDS = lx._words("average avg mean max min maximum minimum total sum")
#: Words of a column that name an attribute of a row, not a measure another name may stand
#: for: a sort by ``height`` or ``song_name`` is not "the highest speed" under another name.
_ATTRIBUTE_KEYS = lx._words(
    """name title gender sex year date id height weight age duration length time code type
    status phone address email city country"""
)
#: Words a column may restate a question's modifier with ("weekly sales" as
#: ``sales_last_7d``): periods, units and qualifiers, never another kind of the measure.
_QUALIFIERS = lx._words(
    """last past prev previous current curr this next daily weekly monthly yearly annual
    quarterly hourly total net gross usd eur gbp pct percent per mph kmh avg mean sum max min
    value amount num count raw adj adjusted"""
)
#: Units a column's name may carry beside its measure.
_UNITS = lx._words(
    """meter metre kilometer foot feet mile inch inche kg km lb pound gram second minute hour
    day week month year usd eur degree celsius fahrenheit percent"""
)
_TOKEN = re.compile(r"[a-z]+")
#: A sort key that aggregates one column: ``AVG(room_count)``.
_AGG_KEY = re.compile(r"^[a-z_]+\(\s*(?:distinct\s+)?([\w.]+)\s*\)$", re.I)


def _ranked_measure(question: str) -> tuple[str, tuple[str, ...]] | None:
    """The first superlative of ``question`` and the measure words after it.

    >>> _ranked_measure("the candidate with the highest support rate?")
    ('highest support rate', ('support', 'rate'))
    >>> _ranked_measure("the largest number of students") is None
    True
    """
    m = _RANKED.search(question.casefold())
    if m is None:
        return None
    words: list[str] = []
    for w in m.group("m").split():
        if w in _MEASURE_ENDS:
            break
        words.append(singular(w))
    if not words or words[0] in _GENERIC or words[0] in _WORDS.values():
        return None  # "the largest number of …", "the highest total …": another reading
    return m.group(0)[: m.start("m") - m.start()] + " ".join(
        m.group("m").split()[: len(words)]
    ), tuple(words)


_STAT_KIND = {
    "max": "max", "maximum": "max", "highest": "max", "min": "min", "minimum": "min",
    "lowest": "min", "mean": "avg", "avg": "avg", "average": "avg",
}  # fmt: skip


def _other_measure(
    measure: tuple[str, ...], column: str, low: str, sql: Spec, hints: str | None, *, ranked: bool
) -> bool:
    """Does the plain column ``column`` name another measure than ``measure``, read from
    the question ``low`` (case-folded, spaced)? Either the same head with a modifier the
    question never says (``unsure_rate`` for "support rate", ``min_temperature`` for "max
    temperature"), or none of the measure's words where no other name of the SQL says them
    either: for a ranking, only a column named for an attribute of the row (``height`` for
    "the highest speed"); for a comparison, one of two readable words or more
    (``mean_dew_point`` for "the max temperature")."""
    if len(column) < 4 or "(" in column or " " in column:
        return False
    words = [singular(w) for w in name_words(column)]
    if _GENERIC.intersection(words) or (hints and _named(column, searchable(hints))):
        return False
    if _STAT_WORDS.issuperset(words) or (len(words) == 1 and len(column) >= 8):
        return False  # ``average`` holds some figure; ``avgscrread`` cannot be read word by word
    if any(_said(measure, w) for w in words):
        kinds = {_STAT_KIND[w] for w in measure if w in _STAT_KIND}
        if kinds and {_STAT_KIND[w] for w in words if w in _STAT_KIND} - kinds:
            return True  # "the max temperature" as ``min_temperature_f``
        other = [
            w
            for w in words
            if len(w) >= 3 and w.isalpha() and w not in _QUALIFIERS
            and not _said(measure, w) and f" {w}" not in low
        ]  # fmt: skip
        modifiers = [m for m in measure[:-1] if m not in _STAT_KIND]
        return (
            bool(other)
            and bool(modifiers)
            and not any(_said((m,), w) for m in modifiers for w in words)
        )
    if ranked and _ATTRIBUTE_KEYS.isdisjoint(words):
        return False
    asked = {_STAT_KIND[w] for w in measure if w in _STAT_KIND}
    if not ranked and asked and {_STAT_KIND[w] for w in words if w in _STAT_KIND} - asked:
        return not _sql_says(measure, sql)  # "the max temperature" as min_visibility_miles
    if not ranked and sum(1 for w in words if len(w) >= 4 and w not in _UNITS) < 2:
        return False  # ``altitude_meters`` says one thing, in a unit
    return not _sql_says(measure, sql)


def check_ranked_measure(
    sql: Spec, out: FindingCollector, question: str, hints: str | None = None
) -> None:
    """Report a top-k whose first sort key is (an aggregate of) one column that names
    another measure than the question's only superlative (:func:`_other_measure`): "the
    highest speed" as ``ORDER BY height``, "the lowest resolution" as ``ORDER BY gender``,
    "the highest support rate" as ``ORDER BY unsure_rate``.

    >>> from stef.spec import OrderKey
    >>> sql = Spec(columns=["name", "unsure_rate"], order_by=[OrderKey("unsure_rate", "desc")],
    ...            limit=1)
    >>> out = FindingCollector()
    >>> check_ranked_measure(sql, out, "Name of the candidate with the highest support rate?")
    >>> print(out.findings[0].message)  # doctest: +NORMALIZE_WHITESPACE
    the question ranks by 'highest support rate'; the SQL sorts by unsure_rate, a column
    named for something else
    """
    if sql.limit is None or not sql.order_by:
        return
    if any(f.kind == "order_key_mismatch" for f in out.findings):
        return  # said once: the sort's key read another way (:mod:`stef.align.ranking`)
    ranked = _ranked_measure(question)
    if ranked is None:
        return
    said, measure = ranked
    key = sql.order_by[0].key
    inner = _AGG_KEY.match(key)
    column = (inner.group(1) if inner else key).rsplit(".", 1)[-1]
    low = f" {question.casefold()} "
    if sum(1 for w in _TOKEN.findall(low) if w in lx.SUPERLATIVES and w != "top") > 1:
        return  # "the youngest … with the highest salary": which one the first key answers
    if not _other_measure(measure, column, low, sql, hints, ranked=True):
        return
    out.add(
        "order_key_mismatch",
        "warning",
        f"the question ranks by {said!r}; the SQL sorts by {column}, a column named for"
        " something else",
        said,
        sql.order_by[0].text or key,
        "ordering",
    )


#: A comparison and the measure before it: "a maximum temperature higher than 85",
#: "resolution lower than 800", "market value greater than 100".
_COMPARED = re.compile(
    r"(?P<m>(?:[a-z]+\s+){1,3}?)(?:is\s+|was\s+|are\s+|were\s+)?"
    r"(?:higher|greater|larger|bigger|more|lower|less|smaller|fewer|above|below|over|under)"
    r"\s+(?:than\s+)?(?P<n>\d+(?:\.\d+)?)\b"
)
_COMPARATOR = re.compile(
    r"\b(?:higher|greater|larger|bigger|more|lower|less|smaller|fewer|above|below|over|under)"
    r"\s+(?:than\s+)?\d"
)
#: Words that end a compared measure on its left ("songs that have resolution …").
_COMPARED_STOPS = lx._words(
    """a an the of with whose that which who have has had having is are was were be been
    and or for in on at by to from all any some their its his her no not across among per"""
)


def _counted_after(word: str) -> bool:
    """Is the word after a compared number a plural noun the number counts ("300
    students"), not a verb or a unit of the measure before it?"""
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def check_compared_measure(
    sql: Spec, out: FindingCollector, question: str, hints: str | None = None
) -> None:
    """Report a stated comparison ("a maximum temperature higher than 85") whose number the
    SQL compares with one plain column that names another measure
    (:func:`_other_measure`): ``min_temperature_f > 85``, ``mean_dew_point_f > 85``
    (``filter_wrong_column``, a warning).

    >>> from stef.spec import Filter
    >>> sql = Spec(columns=["date", "mean_dew_point_f"],
    ...            filters=[Filter("mean_dew_point_f", ">", ("85",))])
    >>> out = FindingCollector()
    >>> check_compared_measure(sql, out, "Dates when the max temperature was higher than 85")
    >>> print(out.findings[0].message)  # doctest: +NORMALIZE_WHITESPACE
    the question compares 'max temperature' with 85; the SQL compares mean_dew_point_f, a
    column named for something else
    """
    low = f" {question.casefold()} "
    if _COMPARATOR.search(low) is None:
        return  # one cheap search rules most questions out
    for m in _COMPARED.finditer(low):
        words: list[str] = []
        for w in reversed(m.group("m").split()):
            if w in _COMPARED_STOPS:
                break
            words.insert(0, singular(w))
        after = _TOKEN.match(low, m.end() + 1)
        if not words or set(words) <= _GENERIC or (after and _counted_after(after.group(0))):
            continue  # "can accommodate more than 300 students": the students are compared
        number = m.group("n")
        for f in sql.filters:
            column = (f.column or "").rsplit(".", 1)[-1]
            if f.op not in (">", ">=", "<", "<=") or number not in f.values or not column:
                continue
            if not _other_measure(tuple(words), column, low, sql, hints, ranked=False):
                continue
            said = " ".join(words)
            out.add(
                "filter_wrong_column",
                "warning",
                f"the question compares {said!r} with {number}; the SQL compares {column}, a"
                " column named for something else",
                m.group(0).strip(),
                f"{column} {f.op} {number}",
                "filter_alignment",
            )
            return


#: Superlatives of time: "the most recent", "the latest", "the oldest" rank by a date.
_TIME_RANK = re.compile(r"\b(?:recent(?:ly)?|latest|earliest|newest|oldest)\b")
#: Key names that hold a time, an age (a word of the name: not ``page_views``) or a sequence
#: (an id may stand for the order of rows), or name the event whose time it is (``founded``,
#: ``launch``, ``released``).
_TIME_KEY = re.compile(
    r"(?:^|_)age|age$|id$|seq|order|rank|version|number|no$|num$|found|launch|releas|publish"
    r"|establish|buil[dt]|incorporat|debut|premier|hire"
)


def check_ranked_time(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """A ranking by time ("the race held most recently", "the latest order") that the SQL
    sorts by a plain column whose name says no date, time, age or sequence (``ORDER BY lat
    DESC``): ``order_key_mismatch``, a warning.

    >>> from stef.spec import OrderKey
    >>> nl = Spec(order_by=[OrderKey("date", "desc", False, "most recently")])
    >>> out = FindingCollector()
    >>> check_ranked_time(nl, Spec(order_by=[OrderKey("lat", "desc")]), out)
    >>> check_ranked_time(nl, Spec(order_by=[OrderKey("race_date", "desc")]), out)
    >>> [f.sql for f in out.findings]
    ['lat']
    """
    if not nl.order_by or not sql.order_by or nl.order_by[0].key != "date":
        return
    asked, key = nl.order_by[0], sql.order_by[0]
    if not _TIME_RANK.search(asked.text.casefold()) or key.is_aggregate:
        return
    column = key.key.rsplit(".", 1)[-1].casefold()
    if not column.replace("_", "").isalnum() or DATE_LIKE_NAME.search(column):
        return
    if _TIME_KEY.search(column) or any(f.kind == "order_key_mismatch" for f in out.findings):
        return
    out.add(
        "order_key_mismatch",
        "warning",
        f"the question ranks by time ({asked.text!r}); the SQL sorts by {column}, whose name"
        " says no date or time",
        asked.text,
        column,
        "ordering",
    )

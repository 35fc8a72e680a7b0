"""Aggregation checks: the functions the question asks for (average, count, total,
highest/lowest) against the SQL's aggregates, DISTINCT, ratios and aggregate-only answers
to list questions.

A missing aggregate may be excused: an average written as a division, a superlative
answered by a sorted LIMIT, an aggregate the schema stores already (``avgscrmath``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stef.align import matching
from stef.align.comparisons import check_comparisons
from stef.align.counted import duration_computed, rows_are_the_things
from stef.align.dated_extremes import check_dated_extreme
from stef.align.key_counts import check_key_counts, counted_noun
from stef.align.matching import canon_col, column_part, hinted_column, name_words
from stef.align.measured import check_measure_named
from stef.align.measures import (
    check_distinct_counted,
    check_duration_unit,
    check_measures,
    check_median,
    check_most_averaged,
    check_percentile,
    check_ratio_scale,
    check_running,
    check_spread,
    check_total_bound,
    check_unit_columns,
)
from stef.align.modifiers import check_measure_modifiers
from stef.align.shown import check_aggregate_shown
from stef.align.stored import stored_aggregate
from stef.align.structure import check_star_arguments
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.request import singular
from stef.spec import Aggregation, Spec


def sql_aggs(sql: Spec) -> set[str]:
    return {a.func for a in sql.aggregations}


def check_aggregations(
    nl: Spec, sql: Spec, out: FindingCollector, hints: str | None = None, text: str = ""
) -> None:
    """Each aggregate the question asks for, then DISTINCT, ratios and list questions.
    ``hints`` (the enriched question) may say a column holds the aggregate already;
    ``text`` is the question and hints as :func:`stef.align.matching.searchable` gives them."""
    aggs = sql_aggs(sql)
    for na in nl.aggregations:
        held = _column_holding(na, sql, hints) if na.func not in aggs else None
        if held is not None:
            out.add(
                "aggregation_stored",
                "info",
                f"question asks for {na.text!r}; a hint says the SQL's {held} holds it",
                na.text,
                held,
                "aggregation",
            )
            continue
        _check_asked_aggregate(
            na, sql, aggs, out, listed=bool(nl.flags.get("list_after")), text=text
        )
    _check_distinct(nl, sql, out)
    _check_distinct_counts(nl, sql, out)
    check_key_counts(nl, sql, out, text)
    _check_division(nl, sql, aggs, out)
    _check_list_answered_by_aggregates(nl, sql, out)
    check_aggregate_shown(nl, sql, out, text)
    check_star_arguments(sql, out)
    check_measures(nl, sql, out, divides=_divides(sql))
    check_measure_modifiers(nl, sql, out, text)
    check_measure_named(nl, sql, out, text, hints)
    check_distinct_counted(nl, sql, out, text)
    check_median(sql, out, text)
    check_spread(sql, out, text)
    check_percentile(sql, out, text)
    check_running(sql, out, text)
    check_duration_unit(sql, out, text)
    check_unit_columns(sql, out, text)
    check_ratio_scale(sql, out, text)
    check_most_averaged(sql, out, text)
    check_total_bound(nl, sql, out, text)
    check_comparisons(sql, out, text)
    check_dated_extreme(sql, out, text)


_ALNUM_RUN = re.compile(r"[a-z0-9]+")


def _column_holding(na: Aggregation, sql: Spec, hints: str | None) -> str | None:
    """A column of the SQL that a clause of the hints ties to the asked aggregate's phrase
    ("A11 refers to average salary" for "average salary", "A15 … number of committed
    crimes in 1995" for "the number of committed crimes"), or None.

    >>> na = Aggregation("avg", None, False, "average salary greater")
    >>> _column_holding(na, Spec(columns=["a11"]), "A11 refers to average salary")
    'a11'
    >>> _column_holding(na, Spec(columns=["a11"]), "A3 refers to region") is None
    True

    A clause that computes the aggregate ("maximum points = MAX(points)") says no column
    holds it where the SQL aggregates that column with another function:

    >>> top = Aggregation("max", None, False, "maximum points")
    >>> avg = Spec(columns=["points"], aggregations=[Aggregation("avg", "points")])
    >>> _column_holding(top, avg, "maximum points = MAX(points)") is None
    True
    """
    words = _ALNUM_RUN.findall(na.text.casefold())
    while words and words[0] in {"the", "what", "is", "a", "an", "of"}:
        words = words[1:]
    phrase = " ".join(words[:2])
    if not hints or len(words) < 2 or words[0] in {"how", "many"}:
        return None
    held = hinted_column(hints, sql.columns, lambda _clause, said: phrase in " ".join(said))
    if held is None:
        return None
    computes = re.compile(rf"\b(?:{_HINT_FUNCS.get(na.func, na.func)})\s*\(")
    computed = hinted_column(
        hints,
        sql.columns,
        lambda clause, said: phrase in " ".join(said) and computes.search(clause) is not None,
    )
    if computed == held and any(
        a.func != na.func and a.arg and canon_col(a.arg) == canon_col(held)
        for a in sql.aggregations
    ):
        return None  # "maximum points = MAX(points)" answered by AVG(points): substituted
    return held


#: How a hint writes each aggregate as a function call ("AVG(…)", "DIVIDE(SUM(…), …)").
_HINT_FUNCS = {"avg": "avg|average|divide", "count": "count", "sum": "sum", "max": "max",
               "min": "min"}


def _check_asked_aggregate(
    na: Aggregation,
    sql: Spec,
    aggs: set[str],
    out: FindingCollector,
    *,
    listed: bool = False,
    text: str = "",
) -> None:
    """One aggregate of the question: used, stored, or checked by its function
    (``listed``: the question asks for the rows too; ``text``: the searchable question)."""
    f = na.func
    if f in aggs:
        if f in ("max", "min") and _ranked_other_way(f, sql):
            # MAX(CASE WHEN rk = 1 THEN …) reads the first-ranked row: the window decides
            _check_ranked_extreme(na, "desc" if f == "max" else "asc", sql, out)
        _check_count_distinct(na, sql, out)
        return
    windowed = next((a for a in sql.window_aggregations if a.func == f), None)
    if windowed is not None:
        out.add(
            "aggregation_windowed",
            "info",
            f"question asks for {f.upper()}; the SQL computes it over a window",
            na.text,
            windowed.text,
            "aggregation",
        )
        return
    noun = counted_noun(na.text) if f == "count" and text else None
    stored = stored_aggregate(f, sql, noun, text)
    if stored:
        out.add(
            "aggregation_stored",
            "info",
            f"question asks for {f.upper()}; the SQL reads a stored one ({stored})",
            na.text,
            stored,
            "aggregation",
        )
        return
    if f == "avg":
        _check_average(na, sql, out)
    elif f == "count":
        _check_count(na, sql, aggs, out, listed=listed)
    elif f == "sum":
        _check_sum(na, sql, aggs, out)
    elif f in ("max", "min"):
        _check_extreme(na, sql, aggs, out)
    else:
        out.add(
            "aggregation_missing",
            "warning",
            f"question asks for {f.upper()}; the SQL does not use it",
            na.text,
            None,
            "aggregation",
        )


def _check_count_distinct(na: Aggregation, sql: Spec, out: FindingCollector) -> None:
    """The SQL uses the function asked for; a distinct count must not count rows."""
    if (
        na.func == "count"
        and na.distinct
        and not any(a.func == "count" and a.distinct for a in sql.aggregations)
        and not sql.distinct
        and not sql.group_by
        and not rows_are_the_things(na, sql)
    ):
        out.add(
            "distinct_missing",
            "warning",
            "question counts distinct things; the SQL counts rows",
            na.text,
            None,
            "aggregation",
        )


def _divides(sql: Spec) -> bool:
    """The SQL divides somewhere: in an output, or in a condition, an ORDER BY or a
    subquery (``HAVING SUM(cost) / COUNT(id) > 50``, ``ORDER BY spent / amount DESC``)."""
    return bool(sql.flags.get("division")) or "div" in sql.flags.get("functions", ())


def _check_average(na: Aggregation, sql: Spec, out: FindingCollector) -> None:
    # a division inside a SUM adds ratios up (SUM(rep / views)): no average of anything
    if _divides(sql) and not sql.flags.get("divides_in_sum_only"):
        out.add(
            "aggregation_equivalent",
            "info",
            "average computed as a division",
            na.text,
            None,
            "aggregation",
        )
    else:
        out.add(
            "aggregation_missing",
            "error",
            "question asks for an average; the SQL has no AVG or division",
            na.text,
            None,
            "aggregation",
        )


#: Units a quantity is measured in: "how many acres burned" is a total, not a row count.
_UNIT_WORDS = """acre acres dollar dollars euro euros pound pounds mile miles kilometer km
    kilometers meter meters metre metres hour hours minute minutes second seconds day days
    year years
    kg kilogram kilograms ton tons tonne tonnes gallon gallons liter liters litre litres
    calorie calories point points unit units barrel barrels
    income revenue money amount"""
_MEASURE_UNITS = frozenset(_UNIT_WORDS.split())


def _measured(text: str) -> str | None:
    """The unit "how many" asks a quantity in (``how many acres``), or None.

    >>> _measured("How many acres"), _measured("how many fires")
    ('acres', None)
    >>> _measured("How many income"), _measured("the total number of the budget amount")
    ('income', 'amount')
    """
    words = [w for w in text.casefold().split() if w != "the"]
    at = words.index("many") if "many" in words else -1
    if at < 0 and "number" in words[:-1] and words[words.index("number") + 1] == "of":
        at = words.index("number") + 1  # "the number of the budget amount"
    after = words[at + 1 :][:3] if at >= 0 else []
    return next((w for w in after if w in _MEASURE_UNITS), None)


#: Words of a column's name that say it stores a count (``num_of_audience``, ``total_horses``).
_COUNT_NAME_WORDS = frozenset({"num", "number", "count", "cnt", "total", "no", "qty", "amount"})


def _read_columns(sql: Spec) -> Iterator[str]:
    """The columns a stored count may be read from, lazily: the plain outputs', then the
    filters' columns named for a count ("with number of audience above 200" compares
    ``num_of_audience``)."""
    yield from (c for p in sql.projections if not p.is_aggregate for c in p.columns)
    for f in sql.filters:
        if f.column and _COUNT_NAME_WORDS & set(name_words(f.column)):
            yield f.column


def _sums_counts(noun: str | None, sql: Spec) -> bool:
    """Does the SQL sum a stored count of the noun ("the total number of comments" as
    ``SUM(CommentCount)``)?

    >>> _sums_counts("comments", Spec(aggregations=[Aggregation("sum", "commentcount")]))
    True
    >>> _sums_counts("comments", Spec(aggregations=[Aggregation("sum", "score")]))
    False
    >>> _sums_counts("rooms", Spec(aggregations=[Aggregation("sum", "t2.bathroom_count")]))
    False
    >>> _sums_counts("courses", Spec(aggregations=[Aggregation("sum", "course_number")]))
    False
    >>> _sums_counts("followers", Spec(aggregations=[Aggregation("sum", "followers")]))
    True
    >>> _sums_counts("items", Spec(aggregations=[Aggregation("sum", "oi.quantity")]))
    True
    """
    if not noun:
        return False
    stem = noun.casefold().rstrip("s")
    if len(stem) < 3:
        return False
    for a in sql.aggregations:
        if a.func != "sum":
            continue
        words = name_words(column_part(a.arg))
        at = [i for i, w in enumerate(words) if w.rstrip("s") == stem]
        if at and len(words) == 1:
            return True  # SUM(followers), SUM(beds): a column that is the noun's number
        if at and any(w in _COUNT_NAME_WORDS for w in words[: at[0]]):
            return True  # number_of_comments, num_comments
        if at and any(w in _COUNT_WORDS_JOINED for w in words[at[0] + 1 :]):
            return True  # comment_count, not course_number (a number that labels a course)
        if any(w in (stem + c, stem + "s" + c) for w in words for c in _COUNT_WORDS_JOINED):
            return True  # commentcount
        if stem in _GOODS and any(w.casefold() in _QUANTITY_WORDS for w in words):
            return True  # "the number of items sold" as SUM(quantity)
    return False


#: Things counted in units of stock, and the names of a column that holds how many of them.
_GOODS = frozenset({"item", "unit", "piece", "product", "copie", "article", "good"})
_QUANTITY_WORDS = frozenset({"quantity", "qty", "units", "unit", "pieces", "quantities"})


#: Count words a name writes after its noun (``commentcount``, ``view_cnt``).
_COUNT_WORDS_JOINED = ("count", "cnt", "total")


def _check_count(
    na: Aggregation, sql: Spec, aggs: set[str], out: FindingCollector, *, listed: bool = False
) -> None:
    """A count asked for: a COUNT, or what stands for one. ``listed``: the question also
    asks to list the rows ("How many …? List them by their ID."), which the rows answer."""
    unit = _measured(na.text)
    noun = unit or counted_noun(na.text)
    stored = noun and next(
        (
            c
            for c in _read_columns(sql)
            if noun.rstrip("s") in {w.casefold().rstrip("s") for w in name_words(c)}
        ),
        None,
    )
    if stored:
        out.add(
            "aggregation_stored",
            "info",
            f"question asks how many {noun}; the SQL reads a stored quantity ({stored})",
            na.text,
            stored,
            "aggregation",
        )
    elif "sum" in aggs and (unit or sql.flags.get("case") or _sums_counts(noun, sql)):
        out.add(
            "aggregation_equivalent",
            "info",
            "question asks how many (of a unit, or of the rows a CASE picks); the SQL sums it",
            na.text,
            None,
            "aggregation",
        )
    elif "sum" in aggs:
        out.add(
            "aggregation_substituted",
            "warning",
            "question asks how many; the SQL sums instead of counting",
            na.text,
            None,
            "aggregation",
        )
    elif unit and duration_computed(unit, sql):
        out.add(
            "aggregation_equivalent",
            "info",
            f"question asks how many {unit}; the SQL computes a time between two dates",
            na.text,
            None,
            "aggregation",
        )
    elif listed and sql.projections and not any(p.is_aggregate for p in sql.projections):
        out.add(
            "aggregation_listed",
            "info",
            "question asks how many and to list them; the SQL lists the rows",
            na.text,
            None,
            "aggregation",
        )
    else:
        out.add(
            "aggregation_missing",
            "error",
            "question asks how many; the SQL has no COUNT",
            na.text,
            None,
            "aggregation",
        )


#: Plural nouns of a quantity, whose total is a sum ("total hours"), not a count.
_QUANTITY_PLURALS = lx.MEASURE_NOUNS | lx._words(
    """points amounts hours minutes seconds days weeks months years dollars euros pounds units
    miles kilometers kilometres meters metres grams kilograms liters litres calories bytes
    scores sums totals costs"""
)


def _counts_things(na: Aggregation) -> bool:
    """Does the total ask for a number of things ("Total crimes in Boston", "total orders"),
    which a count answers, rather than a sum of a quantity ("total hours", "total revenue")?

    >>> _counts_things(Aggregation("sum", None, text="Total crimes"))
    True
    >>> _counts_things(Aggregation("sum", None, text="total carcinogenic molecules"))
    True
    >>> _counts_things(Aggregation("sum", None, text="total atoms consisting of the element"))
    True
    >>> _counts_things(Aggregation("sum", None, text="total hours worked"))
    False
    """
    words = (na.text or "").casefold().split()
    if not words or words[0] != "total":
        return False
    phrase = words[1:4]
    for i, w in enumerate(phrase):
        if w in lx.REQUEST_STOPS or w.endswith(("ing", "ed")):  # "total atoms consisting …"
            phrase = phrase[:i]
            break
    head = phrase[-1] if phrase else ""
    return len(head) > 3 and head.endswith("s") and not head.endswith("ss") and (
        head not in _QUANTITY_PLURALS
    )


def _check_sum(na: Aggregation, sql: Spec, aggs: set[str], out: FindingCollector) -> None:
    if sql.flags.get("rolled_up") and "total" in na.text.casefold():
        out.add(  # "include subtotals and a grand total": GROUP BY ROLLUP adds those rows
            "aggregation_equivalent",
            "info",
            "the question's total is the total row the SQL's ROLLUP (CUBE, GROUPING SETS) adds",
            na.text,
            None,
            "aggregation",
        )
    elif "count" in aggs and _counts_things(na):
        out.add(
            "aggregation_equivalent",
            "info",
            "question asks for a total of things; the SQL counts them",
            na.text,
            None,
            "aggregation",
        )
    elif "count" in aggs:
        out.add(
            "aggregation_substituted",
            "warning",
            "question asks for a total; the SQL counts rows",
            na.text,
            None,
            "aggregation",
        )
    elif sql.flags.get("addition") or sql.flags.get("added_anywhere"):
        out.add(  # an output, or a sort by "the sum of checking and savings balances"
            "aggregation_equivalent",
            "info",
            "total computed as an addition",
            na.text,
            None,
            "aggregation",
        )
    elif sql.flags.get("division") or "avg" in aggs:
        out.add(
            "aggregation_missing",
            "warning",
            "question asks for a total; the SQL has no SUM",
            na.text,
            None,
            "aggregation",
        )
    else:
        out.add(
            "aggregation_missing",
            "error",
            "question asks for a total; the SQL has no SUM",
            na.text,
            None,
            "aggregation",
        )


def _check_extreme(na: Aggregation, sql: Spec, aggs: set[str], out: FindingCollector) -> None:
    """MAX or MIN: used, answered by a sorted LIMIT (of the query or of a subquery), or
    turned the wrong way."""
    f = na.func
    grouped = sql.flags.get("distinct_on") or ()  # DISTINCT ON (c) … ORDER BY c, price: per c
    ranked = [o for o in sql.order_by if canon_col(o.key) not in grouped]
    first_order, limit = next(iter(ranked), None), sql.limit if not grouped or not ranked else 1
    want = "desc" if f == "max" else "asc"
    if first_order is not None and matching.ranks_by_start(na.text or "", first_order.key):
        want = "asc" if want == "desc" else "desc"  # "the longest-running": the earliest start
    other = "min" if f == "max" else "max"
    if first_order is not None and first_order.direction == want and limit is not None:
        out.add(
            "superlative_via_order",
            "info",
            f"{f.upper()} answered with ORDER BY … {want.upper()} LIMIT {limit}",
            na.text,
            first_order.text,
            "aggregation",
        )
    elif other in aggs and not first_order:
        out.add(
            "aggregation_direction",
            "error",
            f"question asks for the {'highest' if f == 'max' else 'lowest'}; "
            f"the SQL uses {other.upper()}",
            na.text,
            None,
            "aggregation",
        )
    elif first_order is not None and first_order.direction != want and limit is not None:
        out.add(
            "order_direction_mismatch",
            "error",
            f"question asks for the {'highest' if f == 'max' else 'lowest'}; "
            f"the SQL sorts {first_order.direction.upper()}",
            na.text,
            first_order.text,
            "ordering",
        )
    elif first_order is None and sql.flags.get("rank_cuts") and sql.flags.get("rank_windows"):
        _check_ranked_extreme(na, want, sql, out)
    elif limit is None and want in (cuts := _inner_cuts(sql)):
        # "the description of the most popular role": WHERE code = (SELECT … LIMIT 1)
        out.add(
            "superlative_via_order",
            "info",
            f"{f.upper()} answered with ORDER BY … {want.upper()} LIMIT 1 inside a subquery",
            na.text,
            None,
            "aggregation",
        )
    elif limit is None and first_order is None and len(cuts) == 1:
        out.add(
            "order_direction_mismatch",
            "error",
            f"question asks for the {'highest' if f == 'max' else 'lowest'}; the subquery that"
            f" keeps one row sorts {next(iter(cuts)).upper()}",
            na.text,
            None,
            "ordering",
        )
    else:
        out.add(
            "aggregation_missing",
            "warning",
            f"question asks for the {'highest' if f == 'max' else 'lowest'}; "
            f"the SQL has neither {f.upper()} nor a sorted LIMIT",
            na.text,
            None,
            "aggregation",
        )


def _inner_cuts(sql: Spec) -> set[str]:
    """The directions of the subqueries that sort and keep one row (``"asc"``, ``"desc"``)."""
    return {r[2] for r in sql.flags.get("inner_ranks") or () if r[0] == 1}


def _ranked_other_way(func: str, sql: Spec) -> bool:
    """Does the SQL keep the first-ranked rows (a cut at 1) of ranking windows that all rank
    the other way from the extreme ``func`` asks for?"""
    windows = sql.flags.get("rank_windows") or ()
    if 1 not in (sql.flags.get("rank_cuts") or ()) or not windows:
        return False
    want = "desc" if func == "max" else "asc"
    return all(direction != want for _, direction in windows)


def _check_ranked_extreme(na: Aggregation, want: str, sql: Spec, out: FindingCollector) -> None:
    """The highest or lowest kept by a ranking window's cut (``RANK() OVER (ORDER BY n
    DESC) … WHERE rk = 1``): answered when a window ranks the asked way, turned the wrong
    way when every window ranks the other way."""
    ways = {direction for _, direction in sql.flags["rank_windows"]}
    if want in ways:
        out.add(
            "superlative_via_order",
            "info",
            f"{na.func.upper()} answered by a ranking window's first rows ({want.upper()})",
            na.text,
            None,
            "aggregation",
        )
        return
    key, direction = sql.flags["rank_windows"][0]
    out.add(
        "order_direction_mismatch",
        "error",
        f"question asks for the {'highest' if na.func == 'max' else 'lowest'}; the SQL ranks"
        f" by {key} {direction.upper()} and keeps the first rows",
        na.text,
        key,
        "ordering",
    )


def _check_distinct(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    counts = [a for a in sql.aggregations if a.func == "count"]
    shown = next((p for p in sql.projections if p.expr.casefold().startswith("count(")), None)
    if nl.distinct and not nl.aggregations and shown and not sql.distinct and not any(
        a.distinct for a in counts
    ):
        out.add(  # "Daily unique visitors": the count shown, which the question implies
            "distinct_missing",
            "warning",
            "question counts unique things; the SQL's COUNT counts rows (no DISTINCT)",
            None,
            shown.text or shown.expr,
            "distinct",
        )
        return
    if (
        nl.distinct
        and not any(na.distinct for na in nl.aggregations)
        and not (sql.distinct or sql.group_by or any(a.distinct for a in sql.aggregations))
    ):
        out.add(
            "distinct_missing",
            "warning",
            "question asks for different/unique values; the SQL has no DISTINCT",
            None,
            None,
            "distinct",
        )


def _check_division(nl: Spec, sql: Spec, aggs: set[str], out: FindingCollector) -> None:
    wants_ratio = nl.flags.get("ratio") or nl.flags.get("division")
    stored = not nl.flags.get("division") and _stored_ratio(sql)  # a hint that divides wins
    if wants_ratio and not (_divides(sql) or "avg" in aggs or stored):
        severity = "error" if nl.flags.get("division") else "warning"
        out.add(
            "division_missing",
            severity,
            "question asks for a ratio or percentage; the SQL divides nothing",
            ", ".join(nl.formulas) or None,
            None,
            "aggregation",
        )


#: Words of a column or alias that holds a ratio already (``market_share``, ``pct_female``).
_RATIO_NAME = re.compile(r"share|percent|pct|ratio|proportion|fraction|rate(?!d)")


def _stored_ratio(sql: Spec) -> bool:
    """Does the SQL output a column that holds a ratio (``market_share``, ``Percentage``)?

    >>> from stef.spec import Projection
    >>> _stored_ratio(Spec(projections=[Projection("market_share", columns=("market_share",))]))
    True
    """
    return any(
        _RATIO_NAME.search(n.casefold())
        for p in sql.projections
        if not p.is_aggregate
        for n in (*p.columns, p.alias or "")
    )


def _check_list_answered_by_aggregates(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    if (
        nl.flags.get("list")
        and not nl.aggregations
        and not nl.flags.get("count_question")
        and sql.projections
        and all(p.is_aggregate for p in sql.projections)
        and not nl.flags.get("superlative")
        and not nl.flags.get("ratio")
    ):
        out.add(
            "aggregation_unexpected",
            "warning",
            "question asks for a list; the SQL returns only aggregates",
            None,
            ", ".join(p.text or p.expr for p in sql.projections),
            "aggregation",
        )


def _check_distinct_counts(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """Each distinct count the question asks for ("the number of unique courses, … the
    number of distinct instructors") needs a ``COUNT(DISTINCT …)``: SQL with fewer counts
    some rows twice. A ``SELECT DISTINCT`` in some scope may do the work when the SQL has
    no distinct count at all; without GROUP BY that case is ``distinct_missing``'s."""
    asked = int(nl.flags.get("distinct_counts") or 0)
    counted = [
        a for a in (*sql.aggregations, *sql.window_aggregations) if a.func == "count" and a.distinct
    ]
    told = any(f.kind == "distinct_missing" for f in out.findings)  # said once is enough
    if asked and not told and (plain := _plain_count_of_distinct(nl, sql)) is not None:
        wanted, written = plain
        out.add(
            "distinct_count_short",
            "warning",
            f"the question asks for {wanted!r}; {written} counts every row, not each one once",
            wanted,
            written,
            "aggregation",
        )
        return
    if not asked or len(counted) >= asked:
        return
    if not counted and (sql.flags.get("distinct_anywhere") or not sql.group_by):
        return
    out.add(
        "distinct_count_short",
        "warning",
        f"the question asks for {asked} distinct count(s); the SQL has {len(counted)}"
        " COUNT(DISTINCT …)",
        None,
        ", ".join(a.text for a in counted) or None,
        "aggregation",
    )


def _counts_noun(arg: str | None, noun: str) -> bool:
    """Is ``arg`` (a COUNT's argument) a column named for ``noun`` (``tso.subject_id`` for
    "subject")?"""
    if not arg or arg == "*" or len(noun) < 3:
        return False
    words = name_words(arg.rsplit(".", 1)[-1])
    return any(w == noun or (len(noun) >= 4 and w.startswith(noun)) for w in words)


def _plain_count_of_distinct(nl: Spec, sql: Spec) -> tuple[str, str] | None:
    """A distinct count the question asks for ("the number of unique subjects") that the SQL
    writes as a plain COUNT of the same column (``COUNT(subject_id)``) and counts nowhere with
    DISTINCT: (the question's words, the SQL's count), else None.

    >>> nl = Spec(aggregations=[Aggregation("count", None, True, "number of unique subjects")])
    >>> sql = Spec(aggregations=[Aggregation("count", "s.subject_id", False, "COUNT(subject_id)")])
    >>> _plain_count_of_distinct(nl, sql)
    ('number of unique subjects', 'COUNT(subject_id)')
    >>> sql.aggregations[0] = Aggregation("count", "subject_id", True, "COUNT(DISTINCT subject_id)")
    >>> _plain_count_of_distinct(nl, sql) is None
    True
    """
    counts = [a for a in (*sql.aggregations, *sql.window_aggregations) if a.func == "count"]
    for a in nl.aggregations:
        if a.func != "count" or not a.distinct or not a.text.split():
            continue
        noun = singular(a.text.split()[-1].casefold())
        plain = [c for c in counts if not c.distinct and _counts_noun(c.arg, noun)]
        if plain and not any(c.distinct and _counts_noun(c.arg, noun) for c in counts):
            return a.text, plain[0].text
    return None

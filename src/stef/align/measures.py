"""Asked aggregates against the SQL's aggregates of the same measure.

The aggregation checks ask whether the SQL uses the function the question asks for at
all. A query with several aggregates passes that test while it averages the very column
the question asks to total: "the total student enrollment" answered by
``AVG(num_enrolled_students)`` beside some other ``SUM``. Here each asked total, average,
highest or lowest is tied to the SQL aggregates over a column named for its measure (the
question's words after the aggregate word), and those must include one that computes it.
"""

from __future__ import annotations

import re

from stef.align.answers import TIMES_100
from stef.align.matching import (
    ASKED_SPREAD,
    BOUNDS,
    column_part,
    dated_name,
    letters_in_order,
    name_words,
    searchable,
)
from stef.findings import FindingCollector
from stef.nl.lexicon import _words
from stef.nl.request import singular
from stef.spec import Aggregation, Spec

#: Functions that contradict an asked one over the same measure. An asked highest may be
#: answered by a total sorted (the player "with the most points"), so only the opposite
#: extreme contradicts it; an average may not be a total, and a total not an average.
_WRONG = {
    "sum": frozenset({"avg", "max", "min"}),
    "avg": frozenset({"sum", "max", "min"}),
    "max": frozenset({"min"}),
    "min": frozenset({"max"}),
}

#: Words that state an aggregate: a measure phrase holding one ("average number of
#: students", "highest total sales") nests two aggregates and is not read here.
_AGGREGATE_WORDS = frozenset(
    """total sum average avg mean number count highest lowest maximum minimum max min
    most least largest smallest greatest biggest longest shortest top bottom""".split()  # noqa: SIM905
)

#: Words of a measure phrase that name no measure.
_FILLER = frozenset(
    """the a an of all each every per by for in on at to with within from and or its their
    his her this that these those distinct unique different associated overall""".split()  # noqa: SIM905
)

_WORD = re.compile(r"[a-z]+")

_FUNCTION_WORDS = {
    "sum": "total",
    "avg": "average",
    "max": "highest",
    "min": "lowest",
}


def measure_words(text: str) -> tuple[str, ...] | None:
    """The measure an asked aggregate's phrase names, as singular words; None when the
    phrase nests another aggregate or names nothing.

    >>> measure_words("total student enrollment")
    ('student', 'enrollment')
    >>> measure_words("average number of students") is None
    True
    """
    words = _WORD.findall(text.casefold())
    while words and words[0] in _FILLER:
        words = words[1:]
    if not words or words[0] not in _AGGREGATE_WORDS:
        return None
    rest = words[1:]
    if any(w in _AGGREGATE_WORDS for w in rest):
        return None
    kept = tuple(singular(w) for w in rest if w not in _FILLER and len(w) >= 3)
    return kept or None


def _same_word(a: str, b: str) -> bool:
    """One word of a question and one of a column name: equal, or one stem (``enrollment``
    and ``enrolled`` share ``enroll``)."""
    if a == b:
        return True
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= 5 and min(len(a), len(b)) >= 5


def names_measure(arg: str | None, measure: tuple[str, ...]) -> bool:
    """Is ``arg`` (an aggregate's argument) a plain column named for ``measure``?

    >>> names_measure("sos.num_enrolled_students", ("student", "enrollment"))
    True
    >>> names_measure("record_count", ("student", "enrollment"))
    False
    """
    if not arg or "(" in arg or " " in arg or arg == "*":
        return False
    words = [singular(w) for w in name_words(arg.rsplit(".", 1)[-1]) if len(w) >= 3]
    return any(_same_word(m, w) for m in measure for w in words)


def _holds(arg: str | None, measure: tuple[str, ...]) -> bool:
    """Does an aggregate's argument text hold a word of ``measure`` at all (``AVG(a.score +
    0.0)`` and ``AVG(CAST(score AS FLOAT))`` average the score)?"""
    low = (arg or "").casefold()
    return any(_starts_word(m, low) for m in measure) or names_measure(arg, measure)


#: What may run into a measure's word inside one word of a name (``avgscore``,
#: ``totalrevenue``); any other letters make another word (``bathroom`` is no room).
_RUN_IN = frozenset({"avg", "sum", "total", "num", "max", "min", "mean", "count", "cnt", "tot"})
_LETTERS = re.compile(r"[^\W\d_]+")


def _starts_word(m: str, low: str) -> bool:
    """Does ``m`` occur in ``low`` at the start of a word, or after a run-in aggregate word?
    (One pass over the words: a name of thousands of letters costs no more.)

    >>> _starts_word("score", "cast(a.score as float)"), _starts_word("room", "bathroom_count")
    (True, False)
    >>> _starts_word("revenue", "totalrevenue")
    True
    """
    for word in _LETTERS.findall(low):
        if word.startswith(m) or any(
            word.startswith(p) and word.startswith(m, len(p)) for p in _RUN_IN
        ):
            return True
    return False


def _reaggregated(inner: Aggregation, na: Aggregation, sql: Spec) -> bool:
    """Does an aggregate of the asked function take ``inner``'s output by its alias (the
    average of per-course totals: ``SUM(n) AS total`` in a CTE, ``AVG(total)`` outside)?"""
    names = {
        alias  # folded by the SQL spec (stef.sql.outputs.name_key)
        for alias, func, arg in sql.flags.get("aggregate_aliases") or ()
        if func == inner.func and column_part(arg) == column_part(inner.arg)
    }
    return any(
        a.func == na.func and column_part(a.arg) in names
        for a in (*sql.aggregations, *sql.window_aggregations)
    )


def _contradicts(a: Aggregation, na: Aggregation, sql: Spec) -> bool:
    """Does the SQL aggregate ``a`` compute the asked ``na``'s measure with a contradicting
    function?"""
    return a.func in _WRONG[na.func] and not _reaggregated(a, na, sql)


def _stated_extremes(nl: Spec, sql: Spec) -> list[Aggregation]:
    """The highest or lowest the question states as an order ("less than the minimum
    rating", "the cars of the earliest year"), as asked MAX or MIN, where the SQL has no
    ORDER BY to answer them (it then takes the extreme with an aggregate, in a subquery).

    >>> from stef.spec import OrderKey
    >>> nl = Spec(order_by=[OrderKey("rating", "asc", False, "minimum rating")])
    >>> _stated_extremes(nl, Spec())
    [Aggregation(func='min', arg=None, distinct=False, text='minimum rating')]
    """
    if sql.order_by:
        return []
    return [
        Aggregation("max" if k.direction == "desc" else "min", None, False, k.text)
        for k in nl.order_by
        if k.stated
    ]


def check_measures(nl: Spec, sql: Spec, out: FindingCollector, *, divides: bool) -> None:
    """Each asked total, average, highest or lowest (an order the question states, where
    the SQL sorts nothing: :func:`_stated_extremes`) whose measure the SQL aggregates only
    with a function that contradicts it (``divides``: the SQL divides somewhere, so an
    average may be a total over a count).

    >>> from stef.spec import Aggregation
    >>> nl = Spec(aggregations=[Aggregation("sum", None, False, "total student enrollment")])
    >>> sql = Spec(aggregations=[Aggregation("avg", "num_enrolled_students", False,
    ...     "AVG(num_enrolled_students)"), Aggregation("sum", "fee", False, "SUM(fee)")])
    >>> out = FindingCollector()
    >>> check_measures(nl, sql, out, divides=False)
    >>> [(f.kind, f.sql) for f in out.findings]
    [('aggregation_measure_mismatch', 'AVG(num_enrolled_students)')]
    """
    sql_aggs = (*sql.aggregations, *sql.window_aggregations)
    for na in (*nl.aggregations, *_stated_extremes(nl, sql)):
        wrong = _WRONG.get(na.func)
        measure = measure_words(na.text) if wrong else None
        if not wrong or measure is None or (divides and na.func == "avg"):
            continue
        over = [a for a in sql_aggs if names_measure(a.arg, measure)]
        over = [a for a in over if not dated_name(a.arg, measure)]  # order_date: no value
        if not over or any(a.func == na.func and _holds(a.arg, measure) for a in sql_aggs):
            continue
        bad = next((a for a in over if _contradicts(a, na, sql)), None)
        if bad is None:
            continue
        out.add(
            "aggregation_measure_mismatch",
            "warning",
            f"the question asks for the {_FUNCTION_WORDS[na.func]} of {na.text!r}; the SQL"
            f" computes {bad.text}",
            na.text,
            bad.text,
            "aggregation",
        )
        return


#: SQL functions that compute a median or a percentile (sqlglot's names, lower case).
_MEDIANS = frozenset(
    {"median", "percentilecont", "percentiledisc", "approxquantiles", "approxquantile",
     "quantile", "approxpercentile", "percentile", "quantilecont", "quantiledisc"}
)  # fmt: skip


def check_median(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question asks for a median ("median delivery time") and the SQL computes a mean
    with AVG, with no median or percentile function and no subquery or window that could
    pick the middle rows by hand (``aggregation_substituted``). ``text`` is the question
    and hints as :func:`stef.align.matching.searchable` gives them.

    >>> out = FindingCollector()
    >>> check_median(Spec(flags={"functions": ["avg"]}), out, " median delivery time ")
    >>> [f.kind for f in out.findings]
    ['aggregation_substituted']
    >>> check_median(Spec(flags={"functions": ["avg", "median"]}), out, " median time ")
    >>> len(out.findings)
    1
    """
    if " median " not in text and " medians " not in text:
        return
    functions = set(sql.flags.get("functions") or ())
    if "avg" not in functions or functions & _MEDIANS or sql.subqueries or sql.window_functions:
        return
    out.add(
        "aggregation_substituted",
        "warning",
        "the question asks for a median; the SQL computes a mean (AVG) and no median or percentile",
        "median",
        None,
        "aggregation",
    )


#: The SQL functions that compute a spread (sqlglot's names).
DEVIATIONS = frozenset({"stddev", "stddevpop", "stddevsamp"})
VARIANCES = frozenset({"variance", "variancepop"})


def check_spread(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question asks for a standard deviation or a variance and the SQL computes the
    other one, or an aggregate with neither and no square root, power, subquery or window
    that could compute it by hand (``aggregation_substituted``). ``text`` as
    :func:`check_median` takes it.

    >>> out = FindingCollector()
    >>> check_spread(Spec(flags={"functions": ["avg"]}), out, " standard deviation of score ")
    >>> check_spread(Spec(flags={"functions": ["stddev"]}), out, " variance of score ")
    >>> [f.message for f in out.findings]  # doctest: +NORMALIZE_WHITESPACE
    ['the question asks for a standard deviation; the SQL computes neither a standard
      deviation nor a variance', 'the question asks for a variance; the SQL computes a
      standard deviation']
    """
    found = ASKED_SPREAD.search(text)
    if found is None:
        return
    functions = set(sql.flags.get("functions") or ())
    asked_variance = "variance" in found.group(0)
    if asked_variance and functions & DEVIATIONS and not functions & VARIANCES:
        why = "computes a standard deviation"
    elif not asked_variance and functions & VARIANCES and not functions & DEVIATIONS:
        if "sqrt" in functions or "pow" in functions:
            return  # SQRT(VARIANCE(x)) is the deviation
        why = "computes a variance"
    elif functions & (DEVIATIONS | VARIANCES) or {"sqrt", "pow"} & functions:
        return
    elif functions & {"avg", "sum", "min", "max", "count"} and not (
        sql.subqueries or sql.window_functions
    ):
        why = "computes neither a standard deviation nor a variance"
    else:
        return
    asked = "a variance" if asked_variance else "a standard deviation"
    out.add(
        "aggregation_substituted",
        "warning",
        f"the question asks for {asked}; the SQL {why}",
        found.group(0).strip(),
        None,
        "aggregation",
    )


#: Percentiles a question names: ``p95``, ``P99.9`` (50 and up: ``P1``/``P2`` are
#: priorities), ``the 90th percentile``, ``95th-percentile``, ``median``.
_ASKED_PERCENTILE = re.compile(
    r"\bp(?P<p>[5-9]\d(?:\.\d+)?)\b|\b(?P<n>\d{1,2}(?:\.\d+)?)(?:st|nd|rd|th)?[\s-]+percentile\b"
    r"|\b(?P<m>median)\b"
)


def asked_percentiles(text: str) -> set[float]:
    """The fractions of the percentiles ``text`` names (lower case).

    >>> sorted(asked_percentiles("p95 and median latency of p1 incidents"))
    [0.5, 0.95]
    >>> sorted(asked_percentiles("the 99.9th percentile, the 90th-percentile"))
    [0.9, 0.999]
    """
    out: set[float] = set()
    for m in _ASKED_PERCENTILE.finditer(text):
        number = m.group("p") or m.group("n")
        out.add(round(float(number) / 100, 6) if number else 0.5)
    return out


def check_percentile(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question names percentiles (``p95``, "the 90th percentile", "median") and the
    SQL computes percentiles, none of them one the question names (``PERCENTILE_CONT(0.5)``
    for "p95 latency"): ``percentile_mismatch``. ``text`` as :func:`check_median` takes it.

    >>> out = FindingCollector()
    >>> check_percentile(Spec(flags={"percentiles": [0.5]}), out, " p95 latency today ")
    >>> [f.message for f in out.findings]
    ['the question asks for the 95th percentile; the SQL computes the 50th']
    >>> check_percentile(Spec(flags={"percentiles": [0.5, 0.95]}), out, " p95 and p50 ")
    >>> len(out.findings)
    1
    """
    computed = sql.flags.get("percentiles") or ()
    if not computed or ("percentile" not in text and "median" not in text and " p" not in text):
        return
    asked = asked_percentiles(text)
    if not asked or asked & set(computed):
        return
    out.add(
        "percentile_mismatch",
        "error",
        f"the question asks for the {_nth(asked)} percentile; the SQL computes the"
        f" {_nth(set(computed))}",
        None,
        None,
        "aggregation",
    )


def _nth(fractions: set[float]) -> str:
    """``{0.95, 0.5}`` → ``'50th and 95th'``."""
    return " and ".join(f"{f * 100:g}th" for f in sorted(fractions))


#: A running or moving aggregate asked for: "running total", "moving average", "rolling
#: 7-day sum", a cumulative figure over periods ("cumulative revenue by day"; "cumulative"
#: alone is left out: "cumulative amount" is often a stored total).
_ASKED_RUNNING = re.compile(
    r"\b(?:running|moving|rolling)\s+(?:\d+[\s-]*(?:day|week|month)s?\s+)?"
    r"(?:totals?|sums?|counts?|averages?|avg|means?)\b"
    r"|\bcumulative\s+(?:[a-z]+\s+){0,3}?(?:by|per|over|each)\s+(?:the\s+)?"
    r"(?:days?|weeks?|months?|quarters?|years?|dates?)\b"
)
#: Parts of a name that hold a running figure already computed (``running_total``,
#: ``cum_revenue``, ``ma_7d``).
_RUNNING_NAMES = ("running", "cumul", "cum_", "rolling", "moving", "ytd", "mtd")


def check_running(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question asks for a running or moving aggregate ("running total of revenue by
    day", "7-day moving average") and the SQL computes none: no window, no subquery or CTE,
    no join on a range (``b.day <= a.day``) and no name holding one
    (``running_aggregate_missing``). ``text`` as :func:`check_median` takes it.

    >>> out = FindingCollector()
    >>> check_running(Spec(tables=["daily"]), out, " running total of revenue by day ")
    >>> [f.kind for f in out.findings]
    ['running_aggregate_missing']
    >>> check_running(Spec(window_functions=["sum(x) over (order by d)"]), out, " running total ")
    >>> len(out.findings)
    1
    """
    if not any(map(text.__contains__, ("running", "moving", "rolling", "cumulative"))):
        return
    asked = _ASKED_RUNNING.search(text)
    if asked is None or sql.window_functions or sql.subqueries or sql.ctes:
        return
    if any(j.get("op") in ("<", "<=", ">", ">=") for j in sql.joins):
        return
    # a stored running figure answers it; an alias on a plain aggregate (``SUM(revenue) AS
    # running_total``) only says what the SQL fails to compute
    aliases = (p.alias or "" for p in sql.projections if not p.is_aggregate)
    names = " ".join([*sql.columns, *sql.tables, *aliases])
    if any(part in names.casefold() for part in _RUNNING_NAMES):
        return
    out.add(
        "running_aggregate_missing",
        "warning",
        f"the question asks for a {asked.group(0)}; the SQL computes no window, no range"
        " join and no subquery that could accumulate it",
        asked.group(0),
        None,
        "aggregation",
    )


#: The unit a question asks a duration in: "time to close in hours", "how many days
#: between …" (not "in the last 30 days": a number stands between).
_ASKED_UNIT = re.compile(
    r"\b(?:in|into|as)\s+(?P<a>seconds|minutes|hours|days|weeks|months|years|hrs|mins|secs)\b"
    r"|\bhow\s+many\s+(?P<b>seconds|minutes|hours|days|weeks|months|years)\s+"
    r"(?:between|from|since|until|does|did|do|it|on\s+average|elapsed|passed)\b"
)


def check_duration_unit(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question asks for a duration in one unit ("average resolution time in hours")
    and the SQL's date differences are all in another, unscaled (``DATEDIFF(day, …)``):
    ``duration_unit_mismatch``. ``text`` as :func:`check_median` takes it.

    >>> out = FindingCollector()
    >>> check_duration_unit(Spec(flags={"diff_units": ["day"]}), out, " time to close in hours ")
    >>> [f.message for f in out.findings]
    ["the question asks for 'in hours'; the SQL's date differences count days"]
    >>> check_duration_unit(Spec(flags={"diff_units": ["hour"]}), out, " time in hours ")
    >>> avg = Spec(aggregations=[Aggregation("avg", "duration_seconds", False, "AVG(…)")])
    >>> check_duration_unit(avg, out, " average session length in minutes ")
    >>> len(out.findings), out.findings[-1].message
    (2, "the question asks for 'in minutes'; the SQL's durations count seconds")
    """
    diffs = sql.flags.get("diff_units")  # else a column named for its unit: duration_seconds
    units, what = (diffs, "date differences") if diffs else (_column_units(sql), "durations")
    if not units:
        return
    for m in _ASKED_UNIT.finditer(text):
        said = m.group("a") or m.group("b")  # "in hrs": hours
        asked = {"hrs": "hour", "mins": "minute", "secs": "second"}.get(said) or said[:-1]
        if asked in units:
            return
        counted = " and ".join(f"{u}s" for u in units)
        out.add(
            "duration_unit_mismatch",
            "warning",
            f"the question asks for {m.group(0).strip()!r}; the SQL's {what} count"
            f" {counted}",
            m.group(0).strip(),
            None,
            "aggregation",
        )
        return


#: A time unit a column's name ends with (``duration_seconds``, ``watch_minutes``).
_UNIT_COLUMN = re.compile(r"_(?P<u>second|minute|hour|day)s?$|_(?P<s>sec|secs|mins|hrs)$")


def _column_units(sql: Spec) -> list[str]:
    """The time units of the columns the SQL aggregates unscaled (``AVG(duration_seconds)``
    with no output that divides or multiplies), for :func:`check_duration_unit`."""
    if any("/" in p.expr or "*" in p.expr for p in sql.projections):
        return []
    found = [_UNIT_COLUMN.search((a.arg or "").casefold()) for a in sql.aggregations]
    short = {"sec": "second", "secs": "second", "mins": "minute", "hrs": "hour"}
    return [m.group("u") or short[m.group("s")] for m in found if m is not None]


#: After a bound's number: its noun, then "in total" ("more than 100 units in total").
_IN_TOTAL = re.compile(r"\s*(?:[a-z]+\s+){0,2}?(?:in\s+total|in\s+all|altogether|combined)\b")
#: Before a bound: a total named ("whose total spend exceeds", "a combined total of").
_TOTAL_BEFORE = re.compile(
    r"\b(?:total|combined|cumulative)\s+(?:(?!(?:but|and|or|more|less|than)\s)[a-z]+\s+){0,2}"
    r"(?:of\s+|is\s+|are\s+)?$"
)
#: A column that holds a total already (``Total``, ``total_units``, ``sum_qty``).
_TOTAL_NAME = re.compile(r"total|sum|overall|cumul|count", re.IGNORECASE)


def check_total_bound(nl: Spec, sql: Spec, out: FindingCollector, text: str) -> None:
    """The question bounds a total ("products that sold more than 100 units in total") and
    the SQL bounds each row with that number (``qty > 100`` in WHERE), with no HAVING,
    subquery or column holding a total: ``bound_per_row``. ``text`` as
    :func:`check_median` takes it.

    >>> from stef.spec import Filter
    >>> nl = Spec(filters=[Filter(None, ">", ("100",), "more than 100")])
    >>> sql = Spec(filters=[Filter("qty", ">", ("100",), "qty > 100", "where")])
    >>> out = FindingCollector()
    >>> check_total_bound(nl, sql, out, " products sold more than 100 units in total ")
    >>> check_total_bound(nl, sql, out, " customers whose total spend is more than 100 ")
    >>> out.findings[1].nl, out.findings[1].sql
    ('total spend is more than 100', 'qty > 100')
    """
    if not any(w in text for w in ("total", "altogether", "combined", " in all ")):
        return
    if sql.subqueries or sql.ctes or any(s.clause == "having" for s in sql.filters):
        return
    if sql.flags.get("added_anywhere"):
        return  # "total SAT scores" as AvgScrRead + AvgScrMath + …: a row's total, added up
    for f in nl.filters:
        said = searchable(f.text).strip() if f.text and f.op in BOUNDS else ""  # "$1,000"
        at = text.find(f" {said} ") if said else -1
        if at < 0 or not f.values:
            continue
        before = _TOTAL_BEFORE.search(text, 0, at + 1)
        if before is not None and _names_rows(sql, text[:at]):
            before = None  # "orders whose total price is over 100" over orders: a row's total
        if not (_IN_TOTAL.match(text, at + len(said) + 1) or before):
            continue
        same = [s for s in sql.filters if f.values[0] in s.values]
        if not same or any(s.func or _TOTAL_NAME.search(s.column or "") for s in same):
            continue
        bound = f"{before.group(0).strip()} {f.text}" if before else f"{f.text} … in total"
        out.add(
            "bound_per_row",
            "warning",
            f"the question bounds a total ({bound}); the SQL's {same[0].text} bounds each row",
            bound.removesuffix(" … in total"),
            same[0].text,
            "aggregation",
        )
        return


def _names_rows(sql: Spec, before: str) -> bool:
    """Does the question name the SQL's first table before its bound (the rows bounded
    are its subject)?

    >>> _names_rows(Spec(tables=["orders"]), " orders whose total price is ")
    True
    """
    table = singular(sql.tables[0].casefold().rsplit(".", 1)[-1]) if sql.tables else ""
    return bool(table) and any(singular(w) == table for w in _WORD.findall(before))


#: Units a column's name or the question may state, as (dimension, unit).
_UNITS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("feet", "foot", "ft"), ("length", "feet")),
    **dict.fromkeys(("meter", "meters", "metre", "metres"), ("length", "meters")),
    **dict.fromkeys(("km", "kilometer", "kilometers", "kilometre", "kilometres"), ("length", "km")),
    **dict.fromkeys(("mile", "miles"), ("length", "miles")),
    **dict.fromkeys(("kg", "kilogram", "kilograms"), ("mass", "kg")),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), ("mass", "pounds")),
    **dict.fromkeys(("celsius",), ("temperature", "celsius")),
    **dict.fromkeys(("fahrenheit",), ("temperature", "fahrenheit")),
    **dict.fromkeys(("usd", "dollar", "dollars"), ("money", "usd")),
    **dict.fromkeys(("eur", "euro", "euros"), ("money", "eur")),
}
#: Words of a column that holds money, where "pounds" are pounds sterling.
_MONEY_WORDS = _words("price cost amount salary revenue budget fee")
_POUNDS = frozenset({"pound", "pounds", "lb", "lbs"})
#: Words that make a column a measure, so that its unit word is a unit (``length_feet``, not
#: ``preferred_foot``).
_MEASURE_WORDS = _words(
    """length height width depth distance elevation altitude size area weight mass price cost
    amount salary revenue budget fee temp temperature speed"""
)


def check_unit_columns(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question measures in one unit ("the average length in feet") and a measure
    column of that dimension the SQL reads is in another (``length_meters``; beside
    ``length_feet`` too where the question names no second unit: "the average and minimum
    price in euros" as ``MIN(price_in_pounds)``): the figure comes back in the wrong unit,
    or compares a bound in the wrong one. ``text`` as :func:`check_median` takes it.

    >>> out = FindingCollector()
    >>> check_unit_columns(Spec(columns=["length_meters"]), out, " average length in feet ")
    >>> [f.message for f in out.findings]
    ['the question measures in feet; the SQL reads length_meters, in meters']
    >>> check_unit_columns(Spec(columns=["length_feet"]), out, " in feet ")
    >>> check_unit_columns(Spec(columns=["price_in_pounds"]), out, " highest price in usd ")
    >>> check_unit_columns(Spec(columns=["price_in_euros", "price_in_pounds"]), out, " in euro ")
    >>> [f.message for f in out.findings][1:]  # doctest: +NORMALIZE_WHITESPACE
    ['the question measures in usd; the SQL reads price_in_pounds, in gbp',
     'the question measures in eur; the SQL reads price_in_pounds, in gbp']
    """
    said = text.split()
    priced = bool(_MONEY_WORDS.intersection(said))  # "price in pounds": sterling
    asked = {
        ("money", "gbp") if priced and w in _POUNDS else _UNITS[w] for w in said if w in _UNITS
    }
    if not asked:
        return
    read: dict[tuple[str, str], str] = {}
    for column in sql.columns:
        words = name_words(column)
        if not _MEASURE_WORDS.intersection(words):
            continue
        money = bool(_MONEY_WORDS.intersection(words))
        for w in words:
            if w in _UNITS:  # "price_in_pounds": pounds sterling, not a weight
                read.setdefault(("money", "gbp") if money and w in _POUNDS else _UNITS[w], column)
    for dimension, unit in sorted(asked):
        mine = {u: c for (d, u), c in read.items() if d == dimension}
        if not mine or (unit in mine and len(mine) == 1):
            continue
        if unit in mine and len({u for d, u in asked if d == dimension}) > 1:
            continue  # "in euros and in pounds": both asked
        other, column = next((u, c) for u, c in mine.items() if u != unit)
        out.add(
            "unit_mismatch",
            "error",
            f"the question measures in {unit}; the SQL reads {column}, in {other}",
            unit,
            column,
            "aggregation",
        )
        return


#: A word that asks for a percentage (or a scale of 100) rather than a plain ratio.
_PERCENT_CUE = re.compile(r"percent|%|\bpct\b|\b100\b|hundred")


def check_ratio_scale(sql: Spec, out: FindingCollector, text: str) -> None:
    """The question (or its hints) asks for a ratio and says nothing of a percentage, and an
    output divides and multiplies by 100 (``… * 100 / COUNT(*)``): the figure comes back 100
    times the ratio asked for. ``text`` as :func:`check_median` takes it.

    >>> from stef.spec import Projection
    >>> out = FindingCollector()
    >>> check_ratio_scale(Spec(projections=[Projection("sum(a) * 100 / count(b)")]), out,
    ...                   " what is the ratio of a to b ")
    >>> [f.kind for f in out.findings]
    ['ratio_as_percentage']
    """
    if " ratio " not in text or _PERCENT_CUE.search(text):
        return
    for p in sql.projections:
        if "/" in p.expr and TIMES_100.search(p.expr):
            out.add(
                "ratio_as_percentage",
                "error",
                "the question asks for a ratio; the SQL's output multiplies it by 100, a "
                "percentage",
                "ratio",
                p.text or p.expr,
                "aggregation",
            )
            return


#: "the most degrees", "the fewest wins", "the largest number of students": a count or a
#: total of a plural thing, which no average ranks.
_MOST_OF = re.compile(
    r"\b(?:most|fewest|(?:largest|highest|greatest|smallest|lowest) number of)\s+"
    r"(?P<noun>[a-z]{3,}s)\b"
)
#: Words that ask for an average, in the question or its hints.
_AVERAGE_CUE = re.compile(r"\b(?:average|avg|mean)\b")


def check_most_averaged(sql: Spec, out: FindingCollector, text: str) -> None:
    """A question that ranks by the most (or fewest) of a plural thing ("Which year has the
    most degrees conferred?") asks for a count or a total; SQL that ranks by an average
    (``ORDER BY AVG(degrees) DESC LIMIT 1``) ranks by something else. Nothing of an average
    may be said in the question or its hints. ``text`` as :func:`check_median` takes it.

    >>> from stef.spec import OrderKey
    >>> out = FindingCollector()
    >>> sql = Spec(order_by=[OrderKey("avg(t2.degrees)", "desc", True)], limit=1)
    >>> check_most_averaged(sql, out, " which year has the most degrees conferred ")
    >>> [f.kind for f in out.findings]
    ['rank_by_average']
    """
    first = sql.order_by[0] if sql.order_by else None
    if first is None or not first.is_aggregate or not first.key.startswith("avg("):
        return
    m = _MOST_OF.search(text)
    if m is None or _AVERAGE_CUE.search(text):
        return
    out.add(
        "rank_by_average",
        "warning",
        f"the question ranks by the {m.group(0)} (a count or a total); the SQL ranks by "
        f"{first.text or first.key}",
        m.group(0),
        first.text or first.key,
        "aggregation",
    )


#: Words of a distinct count's phrase that name no counted thing.
_COUNT_FILLER = _words(
    """how many number count distinct different unique various separate total the of all
    id code name type kind sort"""
)
#: "How many distinct kinds of lenses": the phrase names the kind, not the thing counted.
_KINDS_OF = re.compile(r"\b(?:kinds?|types?|sorts?|categories|category)\s+of\b")
#: Words that name a person. A noun for people ("customers", "answerers") may be counted
#: by a column named for other people (``COUNT(DISTINCT OwnerUserId)``,
#: ``COUNT(DISTINCT fullVisitorId)`` for users): which people a table's keys name is its
#: schema's choice, not the question's.
_PEOPLE = _words(
    """user owner author person people member customer employee visitor client buyer seller
    student patient player driver staff guest subscriber participant reviewer editor voter
    viewer donor manager worker teacher instructor professor doctor physician athlete artist
    actor singer writer contributor passenger resident applicant candidate"""
)


def _abbreviates(stem: str, word: str) -> bool:
    """Is ``stem`` (1–3 letters) an abbreviation of ``word``: its first letter, then letters
    of it in order (``e`` for employee, ``ap`` for airport)?

    >>> _abbreviates("ap", "airport"), _abbreviates("r", "airport")
    (True, False)
    """
    return 0 < len(stem) <= 3 and letters_in_order(stem, word)


def _counts_named(words: list[str], column: str) -> bool:
    """May ``column`` (a folded column name) hold the things ``words`` name: a word begins
    like one of its words or stands in it, one of its words abbreviates a word, or a person
    column counts people?

    >>> _counts_named(["user"], "fullvisitorid"), _counts_named(["job"], "city")
    (True, False)
    """
    parts = [w for w in name_words(column) if w != "id"]
    if any(w[:4] in column or any(w[:4] == p[:4] for p in parts if len(p) >= 3) for w in words):
        return True
    stems = [p.removesuffix("id") for p in (*parts, column)]
    if any(_abbreviates(s, w) for s in stems for w in words):
        return True
    people = any(w in _PEOPLE or w.endswith(("er", "or")) for w in words)
    return people and any(p in column for p in _PEOPLE)


def _alias_names(words: list[str], sql: Spec) -> bool:
    """Does the name a distinct count goes by begin with a word's first three letters or
    hold its first four (``COUNT(DISTINCT isbn) AS matcnt`` for materials,
    ``AS unique_courses`` for courses)?"""
    aliases = [a for a, func, arg in sql.flags.get("aggregate_aliases") or () if func == "count"]
    return any(
        p.startswith(w[:3]) or w[:4] in alias
        for alias in aliases
        for p in name_words(alias)
        for w in words
    )


def check_distinct_counted(nl: Spec, sql: Spec, out: FindingCollector, text: str) -> None:
    """A distinct count the question asks for ("How many different jobs are listed?")
    answered by the one ``COUNT(DISTINCT col)`` of the SQL over a column named for something
    else (``COUNT(DISTINCT city)``): the SQL counts the wrong thing. A name or a title column
    counts the things it names, a key the things it keys (``subject_id`` for patients,
    ``visit_id`` for sessions: what a schema calls them is its own choice); a column the
    hints name (``text``: the question and hints, :func:`~stef.align.matching.searchable`)
    is the one they chose.

    >>> from stef.spec import Aggregation
    >>> nl = Spec(aggregations=[Aggregation("count", None, True, "How many different jobs")])
    >>> sql = Spec(aggregations=[Aggregation("count", "city", True, "COUNT(DISTINCT city)")])
    >>> out = FindingCollector()
    >>> check_distinct_counted(nl, sql, out, "how many different jobs are listed")
    >>> [f.kind for f in out.findings]
    ['distinct_count_column']
    """
    counts = [a for a in sql.aggregations if a.func == "count" and a.distinct]
    if len(counts) != 1 or not counts[0].arg:
        return
    arg = counts[0].arg
    column = arg.rsplit(".", 1)[-1]
    if not column.replace("_", "").isalnum() or column.endswith(("name", "title")):
        return
    if column == "code" or column.endswith(("id", "key", "sku")):
        return  # a key counts the things it keys, whatever its schema calls them
    if column in text or column.replace("_", " ") in text:
        return
    for na in nl.aggregations:
        if na.func != "count" or not na.distinct:
            continue
        phrase = na.text.casefold()
        at = text.find(phrase)
        if _KINDS_OF.search(text[at : at + len(phrase) + 12] if at >= 0 else phrase):
            continue
        words = [singular(w) for w in _WORD.findall(phrase) if w not in _COUNT_FILLER]
        words = [w for w in words if len(w) >= 3 and w not in _COUNT_FILLER]
        if not words or _counts_named(words, column) or _alias_names(words, sql):
            continue
        out.add(
            "distinct_count_column",
            "warning",
            f"the question counts {na.text!r}; the SQL counts distinct {column}, a column"
            " named for something else",
            na.text,
            counts[0].text,
            "aggregation",
        )
        return

"""A stated count compared on a column named for something else: "actors who had roles in
more than 30 films" answered by ``last_update > 30``, "branches with more than 100 members"
by ``total_pounds > 100`` (``filter_wrong_column``, a warning); and a stated duration compared
unscaled with a column named for another unit: "sessions longer than 30 minutes" as
``duration_seconds > 30`` (``unit_mismatch``, an error; :func:`check_compared_duration`). In
a HAVING: a stated total or average compared as another aggregate, "total spend over $1,000"
as ``MAX(amount) > 1000`` (``aggregation_substituted``; :func:`check_compared_aggregate`), and
a number of different things compared as a count of rows, "in at least two different
countries" as ``COUNT(country) > 1`` (``distinct_count_short``;
:func:`check_distinct_count_compared`).

"More than 30 films" compares how many films a row has. The SQL may count them (``HAVING
COUNT(*) > 30``), or read a column that stores the count; such a column is named for the
things counted (``num_films``, ``membership_amount``), for a count (``total``, ``cnt``), for
a measure of how many (``capacity``, ``population``, ``enrollment``), or for a word the
question says just before the comparison ("an enrollment of more than 15000 students"). A
plain column named for none of these holds something else. A number followed by a unit
("more than 3 hours", "over 100 acres") is a measure, not a count, and is left to
:func:`stef.align.measured.check_compared_measure`. Read from names only (no schema).

>>> from stef.spec import Filter
>>> out = FindingCollector()
>>> sql = Spec(filters=[Filter("last_update", ">", ("30",), "last_update > 30")])
>>> check_counted_comparison(sql, out, "Actors who had roles in more than 30 films?")
>>> [(f.kind, f.severity) for f in out.findings]
[('filter_wrong_column', 'warning')]
>>> print(out.findings[0].message)  # doctest: +NORMALIZE_WHITESPACE
the question compares a number of films with 30; the SQL compares last_update, a column
named for neither the films nor a count
"""

from __future__ import annotations

import re

from stef.align.matching import canon_col, name_words
from stef.align.measured import _named, _said
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.request import singular
from stef.spec import Aggregation, Filter, Spec, normalize_number
from stef.sql.predicates import DATE_LIKE_NAME

#: "more than 30 films", "fewer than 5 players", "at least 2 books": a number, then what it
#: counts.
_COUNTED = re.compile(
    r"\b(?:more|fewer|less|greater|over|under|above|below|at\s+least|at\s+most)\s+"
    r"(?:than\s+)?(?P<n>\d[\d,]*)\s+(?P<noun>[a-z]+)\b"
)
#: Units: the number measures something in them, it counts no rows.
_UNITS = (
    lx.TIME_UNITS
    | lx.RATE_UNITS
    | lx._words(
        """dollars euros pounds yen cents points percent degrees meters metres kilometers
    kilometres miles feet inches yards acres hectares kilograms grams tons tonnes liters
    litres gallons calories times characters letters words bytes kilobytes megabytes pixels
    minutes seconds hours centimeters millimeters"""
    )
)
#: Words of a column that stores how many of something there are.
_COUNT_COLUMNS = lx._words(
    """count cnt num number no nbr total amount qty quantity size capacity population
    enrollment enrolment enr attendance headcount volume sum tally"""
)
#: Count words a column name runs together with others (``basesetsize``, ``numfilms``).
_COUNT_ENDS = ("num", "cnt", "count", "total", "size", "amount", "number", "qty")
#: Words that end the words just before a comparison ("an enrollment of more than …").
_BEFORE_STOPS = lx._words(
    """a an the of with whose that which who have has had having is are was were be been
    and or for in on at by to from all any some their its his her no not"""
)
_WORD = re.compile(r"[a-z]+")
#: The place counted things are in, after their noun: "units in stock", "items on hand".
_QUALIFIER = re.compile(r"\s+(?:in|on|of|at)\s+(?:the\s+)?([a-z]{3,})")


def _counts(column: str, noun: str, before: tuple[str, ...]) -> bool:
    """May ``column`` store the count of ``noun``: named for it, for a count, or for a word
    said just before the comparison?

    >>> _counts("membership_amount", "member", ()), _counts("num_of_staff", "staff", ())
    (True, True)
    >>> _counts("enr", "student", ("enrollment",)), _counts("last_update", "film", ())
    (True, False)
    >>> _counts("basesetsize", "card", ())
    True
    """
    words = [singular(w) for w in name_words(column)] or [column]
    if any(
        w in _COUNT_COLUMNS or w.startswith(_COUNT_ENDS) or w.endswith(_COUNT_ENDS) for w in words
    ):
        return True  # also run together: ``basesetsize``, ``totalpoints``
    measure = (noun, *before)
    return any(_said(measure, w) for w in words)


def check_counted_comparison(
    sql: Spec, out: FindingCollector, question: str, hints: str | None = None
) -> None:
    """Report a stated count ("more than 30 films") whose number the SQL compares with one
    plain column named for neither the things counted nor a count (see the module doc)."""
    low = question.casefold()
    if "than" not in low and "at " not in low:
        return  # one cheap test rules most questions out
    hinted = f" {hints.casefold()} " if hints else ""
    for m in _COUNTED.finditer(low):
        noun = m.group("noun")
        if len(noun) <= 3 or not noun.endswith("s") or noun.endswith(("ss", "us", "is")):
            continue  # "more than 5 of", "over 20 was": no plural noun counted
        if noun in _UNITS or noun in lx.REQUEST_STOPS:
            continue
        number = m.group("n").replace(",", "")
        compared = [f for f in sql.filters if f.op in (">", ">=", "<", "<=") and number in f.values]
        if not compared:
            continue
        if any(f.func for f in compared):
            continue  # a function of a column: not one plain name
        columns = [(f.column or "").rsplit(".", 1)[-1] for f in compared]
        if any(not c or "(" in c or " " in c for c in columns):
            continue  # a count or an expression: not one plain name
        before: list[str] = []
        said: list[str] = _WORD.findall(low[max(0, m.start() - 40) : m.start()])
        for w in reversed(said):
            if w in _BEFORE_STOPS:
                break
            before.insert(0, singular(w))
        # what the things are counted in: "10 units in stock", "5 items on hand"
        if (after := _QUALIFIER.match(low, m.end())) is not None:
            before.append(singular(after.group(1)))
        thing = singular(noun)
        if any(_counts(c, thing, tuple(before)) or (hinted and _named(c, hinted)) for c in columns):
            continue
        out.add(
            "filter_wrong_column",
            "warning",
            f"the question compares a number of {noun} with {number}; the SQL compares"
            f" {columns[0]}, a column named for neither the {noun} nor a count",
            m.group(0),
            compared[0].text or f"{columns[0]} {compared[0].op} {number}",
            "filter_alignment",
        )
        return


#: A compared duration: "longer than 30 minutes", "over 2 hours", "at least 90 seconds".
_DURATION = re.compile(
    r"\b(?:more|longer|less|shorter|greater|over|under|above|below|exceeding|at\s+least"
    r"|at\s+most|within)\s+(?:than\s+)?(?P<n>\d+(?:\.\d+)?)\s*"
    r"(?P<u>milliseconds?|ms|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\b"
)
#: Each way a name or a question writes a unit of time, as one unit.
_TIME_UNITS = {
    **dict.fromkeys(("millisecond", "milliseconds", "ms", "msec"), "millisecond"),
    **dict.fromkeys(("second", "seconds", "sec", "secs"), "second"),
    **dict.fromkeys(("minute", "minutes", "min", "mins"), "minute"),
    **dict.fromkeys(("hour", "hours", "hr", "hrs"), "hour"),
    **dict.fromkeys(("day", "days"), "day"),
    **dict.fromkeys(("week", "weeks"), "week"),
}


def check_compared_duration(sql: Spec, out: FindingCollector, question: str) -> None:
    """A duration the question compares ("longer than 30 minutes") whose number the SQL
    compares, unscaled, with a column named for another unit of time (``duration_seconds >
    30``): the bound is off by the units' ratio (``unit_mismatch``). A column named for the
    same unit, or for none, and a scaled number (``duration_seconds > 1800``) say nothing.

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> sql = Spec(filters=[Filter("duration_seconds", ">", ("30",), "duration_seconds > 30")])
    >>> check_compared_duration(sql, out, "Sessions longer than 30 minutes by browser")
    >>> [f.message for f in out.findings]
    ['the question compares 30 minutes; the SQL compares duration_seconds, in seconds, with 30']
    """
    low = question.casefold()
    for m in _DURATION.finditer(low):
        asked = _TIME_UNITS.get(m.group("u"))
        number = m.group("n")
        if _interval_unit_differs(sql, out, m, asked):
            return
        for f in sql.filters:
            column = (f.column or "").rsplit(".", 1)[-1]
            if f.op not in (">", ">=", "<", "<=") or number not in f.values or f.func:
                continue
            units = {_TIME_UNITS[w] for w in name_words(column) if w in _TIME_UNITS}
            if len(units) != 1 or asked in units:
                continue
            unit = next(iter(units))
            out.add(
                "unit_mismatch",
                "error",
                f"the question compares {number} {m.group('u')}; the SQL compares {column}, in"
                f" {unit}s, with {number}",
                m.group(0),
                f.text or f"{column} {f.op} {number}",
                "filter_alignment",
            )
            return


def _interval_unit_differs(
    sql: Spec, out: FindingCollector, m: re.Match[str], asked: str | None
) -> bool:
    """The compared duration's number written as an ``INTERVAL`` of another unit
    (``ended_at - started_at > INTERVAL '30 seconds'`` for "longer than 30 minutes"), and
    nowhere in the asked unit: ``unit_mismatch``. True when it reported one.

    >>> out = FindingCollector()
    >>> m = _DURATION.search("sessions longer than 30 minutes")
    >>> _interval_unit_differs(Spec(flags={"intervals": [["30", "second"]]}), out, m, "minute")
    True
    >>> print(out.findings[0].message)
    the question compares 30 minutes; the SQL's interval is 30 seconds
    """
    number = f"{float(m.group('n')):g}"
    written = [u for n, u in sql.flags.get("intervals") or () if n == number]
    if asked is None or not written or asked in written:
        return False
    out.add(
        "unit_mismatch",
        "error",
        f"the question compares {m.group('n')} {m.group('u')}; the SQL's interval is"
        f" {number} {written[0]}s",
        m.group(0),
        f"INTERVAL {number} {written[0].upper()}",
        "filter_alignment",
    )
    return True


#: A stated comparison with a number: "over $1,000", "more than 50", "at least 4.5".
#: The words that open a stated comparison with a number ("more than", "at least", "over").
COMPARED_BY = (
    r"\b(?:more|fewer|less|greater|higher|lower|over|under|above|below|exceed(?:s|ing)?"
    r"|at\s+least|at\s+most)\s+(?:than\s+)?"
)
_COMPARISON = re.compile(COMPARED_BY + r"\$?(?P<n>\d[\d,]*(?:\.\d+)?)(?![\d,.]*\d)")
#: The aggregate a compared figure is, named just before its comparison ("an average rating
#: (is) above 4", "total spend over $1,000") or just after its number ("over $1,000 in
#: total"), by the SQL functions that compute it.
_AGGREGATE_BEFORE = re.compile(
    r"\b(?:(?P<avg>average|avg|mean)|(?P<sum>total|combined|summed))\s+(?:[a-z']+\s+){0,3}?"
    r"(?:(?:is|are|was|were|of|being|that\s+is)\s+)?$"
)
_AGGREGATE_AFTER = re.compile(r"\s*(?:in\s+total|combined|altogether|in\s+sum)\b")
_FUNCS = {"avg": ("avg",), "sum": ("sum", "count")}
#: Where the words naming a compared figure's aggregate stand: the clause around it.
_CLAUSE_ENDS = re.compile(r"[,.;?!]|\b(?:and|or|but|who|which|where|whose)\b")
#: After a compared number, a plural noun makes the figure a count of those things.
_COUNTED_NOUN = re.compile(r"\s+([a-z]{3,}s)\b")

def check_compared_aggregate(sql: Spec, out: FindingCollector, question: str) -> None:
    """A figure the question names as a total or an average and compares with a number
    ("customers who spent over $1,000 in total", "products whose average rating is above
    4") that the SQL's HAVING compares as another aggregate (``HAVING MAX(amount) > 1000``):
    the rows kept are those whose largest order, not their total, passes
    (``aggregation_substituted``, a warning). Read in the comparison's own clause; a clause
    that names two aggregates says nothing.

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> having = Filter("amount", ">", ("1000",), "MAX(amount) > 1000", "having", "max")
    >>> check_compared_aggregate(Spec(filters=[having]), out, "Who spent over $1,000 in total?")
    >>> print(out.findings[0].message)
    the question compares a total with 1000; the SQL's HAVING compares MAX(amount) > 1000
    >>> out = FindingCollector()
    >>> total = Filter("amount", ">", ("1000",), "SUM(amount) > 1000", "having", "sum")
    >>> check_compared_aggregate(Spec(filters=[total]), out, "Who spent over $1,000 in total?")
    >>> out.findings
    []
    """
    having = [f for f in sql.filters if f.clause == "having" and f.func]
    if not having:
        return
    low = question.casefold()
    for m in _COMPARISON.finditer(low):
        number = normalize_number(m.group("n").replace(",", ""))
        compared = [f for f in having if number in f.values]
        if number is None or not compared:
            continue
        funcs = _named_aggregate(low, m.start(), m.end())
        if funcs is None or all(f.func in funcs for f in compared):
            continue
        wrong = next(f for f in compared if f.func not in funcs)
        if wrong.func not in ("max", "min", "avg", "sum", "count"):
            continue
        out.add(
            "aggregation_substituted",
            "warning",
            f"the question compares {'an average' if funcs == ('avg',) else 'a total'} with"
            f" {number}; the SQL's HAVING compares {wrong.text}",
            m.group(0),
            wrong.text,
            "aggregation",
        )
        return


def _named_aggregate(low: str, start: int, end: int) -> tuple[str, ...] | None:
    """The SQL functions that compute the figure compared at ``low[start:end]``, where the
    words right around it name its aggregate; None where they name none, or where a plural
    noun after the number makes it a count of things ("an average … of stations with more
    than 10 bikes")."""
    after = _COUNTED_NOUN.match(low, end)
    if after is not None and after.group(1) not in _UNITS:
        return None
    if _AGGREGATE_AFTER.match(low, end):
        return _FUNCS["sum"]
    before = _AGGREGATE_BEFORE.search(_clause_before(low, start))
    if before is None:
        return None
    return _FUNCS["avg" if before.group("avg") else "sum"]


def _clause_before(low: str, start: int) -> str:
    """The words of the clause that ``low[start:]`` continues, back to the last clause end
    (at most 60 characters)."""
    before = low[max(0, start - 60) : start]
    cut = [m.end() for m in _CLAUSE_ENDS.finditer(before)]
    return before[cut[-1] if cut else 0 :]


#: "in at least two different countries", "more than 3 distinct sellers": how many distinct
#: things a row has, compared with a number.
_DISTINCT_COUNTED = re.compile(
    rf"\b(?P<n>\d+|{'|'.join(lx.NUMBER_WORDS)})\s+(?:different|distinct|unique)"
    r"\s+(?P<noun>[a-z]{3,})"
)


def check_distinct_count_compared(sql: Spec, out: FindingCollector, question: str) -> None:
    """A number of distinct things the question compares ("customers with addresses in at
    least two different countries") that the SQL's HAVING compares as a count of rows
    (``HAVING COUNT(country) > 1``): two addresses in one country pass
    (``distinct_count_short``, a warning). The count compared with that number or the one
    below it (``>= 2`` or ``> 1``) is read; a DISTINCT count of the same number says nothing.

    >>> from stef.spec import Filter
    >>> rows = Filter("country", ">", ("1",), "COUNT(country) > 1", "having", "count")
    >>> out = FindingCollector()
    >>> check_distinct_count_compared(Spec(filters=[rows]), out, "In two different countries")
    >>> print(out.findings[0].message)  # doctest: +NORMALIZE_WHITESPACE
    the question counts two different countries; the SQL's COUNT(country) > 1 counts rows,
    not each country once
    """
    low = question.casefold()
    if "different" not in low and "distinct" not in low and "unique" not in low:
        return
    counts = [f for f in sql.filters if f.clause == "having" and f.func == "count"]
    if not counts:
        return
    for m in _DISTINCT_COUNTED.finditer(low):
        raw = m.group("n")
        n = int(raw) if raw.isdigit() else lx.NUMBER_WORDS[raw]
        near = {str(n), str(n - 1)}
        compared = [f for f in counts if near & set(f.values)]
        if not compared or any("distinct" in f.text.casefold() for f in compared):
            continue
        noun = singular(m.group("noun"))
        if _own_rows(noun, compared[0], sql):
            continue  # COUNT(*) or COUNT(address_id) over addresses: each one is counted once
        out.add(
            "distinct_count_short",
            "warning",
            f"the question counts {m.group(0)}; the SQL's {compared[0].text} counts rows, not"
            f" each {noun} once",
            m.group(0),
            compared[0].text,
            "aggregation",
        )
        return


def _own_rows(noun: str, f: Filter, sql: Spec) -> bool:
    """Are the rows a count reads the very things counted: a table named for ``noun`` (alone,
    for ``COUNT(*)``), its own key counted (``COUNT(address_id)`` over ``addresses``)?"""
    own = [t for t in sql.tables if singular(t.rsplit(".", 1)[-1].casefold()) == noun]
    if not own:
        return False
    column = (f.column or "").rsplit(".", 1)[-1].casefold()
    if column in ("*", "1", ""):
        return len(sql.tables) == 1
    return column in (f"{noun}_id", f"{noun}id", "id")


#: Words between "how many"/"number of" and the noun they count.
_COUNT_LEADS = frozenset({"distinct", "different", "unique", "kinds", "types", "sorts", "of"})
#: Words that end the counted phrase ("colleges are there", "stages in claim processing").
_PHRASE_ENDS = frozenset(
    {"are", "is", "were", "was", "there", "do", "does", "did", "have", "has", "in", "on", "at"}
    | {"for", "with", "by", "from", "to", "that", "which", "who"}
)


def rows_are_the_things(na: Aggregation, sql: Spec) -> bool:
    """Does the SQL count the rows of the one table named for what the question counts
    ("How many different colleges are there?" as ``COUNT(*) FROM college``)? A table's rows
    are its things, each once: no DISTINCT is needed.

    >>> na = Aggregation("count", None, True, "How many different colleges")
    >>> rows, names = Aggregation("count", "*"), Aggregation("count", "name")
    >>> rows_are_the_things(na, Spec(tables=["College"], aggregations=[rows]))
    True
    >>> rows_are_the_things(na, Spec(tables=["College"], aggregations=[names]))
    False
    >>> model = Aggregation("count", None, True, "How many kinds of nuclear reactor model in")
    >>> rows_are_the_things(model, Spec(tables=["nuclear_power_plants"], aggregations=[rows]))
    False
    """
    if len(sql.tables) != 1 or sql.joins:
        return False
    counts = [a.arg or "" for a in sql.aggregations if a.func == "count"]
    if not counts or not all(arg in ("*", "1") or canon_col(arg).endswith("id") for arg in counts):
        return False  # COUNT(name) counts names, which may repeat
    words = [w.strip(",.?!;:") for w in na.text.casefold().split()]
    lead = next((i for i, w in enumerate(words) if w in ("many", "of")), None)
    phrase: list[str] = []  # the counted phrase, up to the word that ends it
    for w in words[lead + 1 :] if lead is not None else ():
        if w in _PHRASE_ENDS:
            break
        if w not in _COUNT_LEADS:
            phrase.append(w)
    table = {singular(w.casefold()) for w in name_words(sql.tables[0])}
    return bool(phrase) and singular(phrase[-1]) in table  # its head noun names the table


#: Units of time "how many" may count in, whose number a date difference gives.
_TIME_PLURALS = frozenset({"seconds", "minutes", "hours", "days", "weeks", "months", "years"})


def duration_computed(unit: str, sql: Spec) -> bool:
    """Does the SQL answer "how many days" with a time between two dates: a date difference
    function (``DATEDIFF``, ``EXTRACT(EPOCH …)``) or an output that subtracts one date-named
    column from another (``closed_at::date - opened_at::date``)?

    >>> from stef.spec import Projection
    >>> p = Projection("closed_at - opened_at", columns=["closed_at", "opened_at"])
    >>> duration_computed("days", Spec(projections=[p])), duration_computed("acres", Spec())
    (True, False)
    """
    if unit not in _TIME_PLURALS:
        return False
    if sql.flags.get("diff_units"):
        return True
    return any(
        " - " in p.expr and sum(1 for c in p.columns if DATE_LIKE_NAME.search(c)) >= 2
        for p in sql.projections
    )

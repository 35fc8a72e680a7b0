"""Ordering and limit checks: sort direction, a missing ORDER BY, a missing or wrong
LIMIT for a top-k question, and the sorts and safety limits the rules tolerate
(``order_by_tolerance``, ``limit_tolerance``).
"""

from __future__ import annotations

import re

from stef.align.aggregation import sql_aggs
from stef.align.matching import HINT_CLAUSE, column_part, name_words, ranks_by_start
from stef.align.matching import canon_col as canon
from stef.align.measured import check_ranked_measure, check_ranked_time
from stef.align.ranking import check_rankings, check_second_key, check_sort_key
from stef.align.stated_limits import limit_stated
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.rules import Rules
from stef.spec import OrderKey, Spec


def check_order_limit(
    nl: Spec,
    sql: Spec,
    out: FindingCollector,
    rules: Rules,
    hints: str | None = None,
    question: str = "",
) -> None:
    """The sort direction and ORDER BY the question asks for, then its top-k LIMIT; before
    them, the checks that read the question's own words (``question``) or the enrichment
    (``hints``): "slowest"/"fastest" (:func:`check_speed`), a ranking by a row's own
    attribute taken by a count, and a frequency taken by an attribute
    (:mod:`stef.align.ranking`), each one's first or last
    (:func:`check_own_extreme`, in either), a stated sort key (:func:`check_sort_key`), a
    ranking within each group (:func:`check_rank_partition`), a ranking by a total
    (:func:`check_ranked_total`)."""
    check_speed(sql, out, question)
    check_rankings(nl, sql, out, question)
    check_own_extreme(sql, out, f"{question}\n{hints}" if hints else question)
    check_sort_key(nl, sql, out)
    check_second_key(nl, sql, out)
    check_ranked_measure(sql, out, question, hints)
    check_ranked_time(nl, sql, out)
    check_rank_partition(sql, out, question)
    check_ranked_total(nl, sql, out, hints)
    aggs = sql_aggs(sql)
    inner = sql.flags.get("inner_limits") or []
    if nl.order_by and sql.limit is None and nl.limit is not None and nl.limit in inner:
        out.add(
            "topk_in_subquery",
            "info",
            f"the top {nl.limit} the question asks for is taken inside a subquery or CTE",
            nl.order_by[0].text,
            None,
            "ordering",
        )
        _check_inner_rank(nl, sql, out, hints)
        return
    if nl.order_by and sql.limit is None and not sql.order_by:
        defined = _ranking_as_filter(nl.order_by[0], hints)
        if defined is not None:
            out.add(
                "ranking_by_hint",
                "info",
                f"a hint reads the question's {nl.order_by[0].text!r} as a condition"
                f" ({defined}), which the SQL may apply instead of a sorted LIMIT",
                nl.order_by[0].text,
                None,
                "ordering",
            )
            return
    named = _superlative_named(nl, sql)
    if named is not None:
        out.add(
            "superlative_is_name",
            "info",
            f"the question's {nl.order_by[0].text!r} is part of the name {named!r}, not a ranking",
            nl.order_by[0].text,
            named,
            "ordering",
        )
        return
    _check_order(nl, sql, out, rules, aggs, hints)
    _check_limit(nl, sql, out, rules, aggs, limit_stated(question, sql.limit))
    _check_group_rank(nl, sql, out)
    _check_one_row_sorted(nl, sql, out)


def _check_one_row_sorted(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """SQL that folds every row into one aggregate and then sorts that one row
    (``SELECT COUNT(*) … ORDER BY capacity DESC LIMIT 1``): the ranking picks nothing, so
    the count or total covers all rows, not the top ones. An error where the question
    ranks (a superlative or a top-k), a warning otherwise."""
    if not sql.flags.get("one_row_sorted") or not sql.order_by:
        return
    ranks = bool(nl.order_by) or nl.limit is not None
    key = sql.order_by[0].text or sql.order_by[0].key
    out.add(
        "order_on_one_row",
        "error" if ranks else "warning",
        f"the SQL aggregates all its rows into one and then sorts by {key}: the ORDER BY"
        f"{' … LIMIT' if sql.limit is not None else ''} picks nothing"
        + (f" of the {nl.order_by[0].text!r} the question asks for" if nl.order_by else ""),
        nl.order_by[0].text if nl.order_by else None,
        key,
        "ordering",
    )


def _check_group_rank(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """One row per group ranked by a superlative ("the latest order for each customer") and
    kept by ranking windows cut to their first rows that all rank the other way (``ROW_NUMBER()
    OVER (PARTITION BY customer_id ORDER BY order_date ASC) = 1``: each customer's first
    order): ``order_direction_mismatch``. An age superlative is left alone (the youngest has
    the latest birth date).

    >>> nl = Spec(flags={"one_per_group": "desc"})
    >>> sql = Spec(flags={"rank_windows": [["order_date", "asc"]], "rank_cuts": [1]})
    >>> out = FindingCollector()
    >>> _check_group_rank(nl, sql, out)
    >>> [f.kind for f in out.findings]
    ['order_direction_mismatch']
    """
    want = nl.flags.get("one_per_group")
    windows = sql.flags.get("rank_windows") or []
    if want not in ("asc", "desc") or not windows or not sql.flags.get("rank_cuts"):
        return
    if any(direction == want for _, direction in windows):
        return
    if any(_age_like(str(key)) for key, _ in windows):
        return
    out.add(
        "order_direction_mismatch",
        "error",
        f"question asks for each group's first row in {want.upper()} order; the SQL's ranking"
        f" window orders {windows[0][1].upper()} by {windows[0][0]}",
        None,
        str(windows[0][0]),
        "ordering",
    )


def _age_like(key: str) -> bool:
    """Does a ranking key hold a birth date or an age, which ranks the other way round?

    >>> _age_like("birth_date"), _age_like("Age"), _age_like("page_views")
    (True, True, False)
    """
    words = name_words(key)
    return any(w in ("age", "ages", "dob", "born") or w.startswith("birth") for w in words)


def _check_inner_rank(nl: Spec, sql: Spec, out: FindingCollector, hints: str | None) -> None:
    """The sort of the subquery or CTE that takes the asked top k ("the most subscribed
    list" as a CTE's ``ORDER BY members DESC LIMIT 1``) goes the way the question states."""
    asked = nl.order_by[0]
    rank = next((r for r in sql.flags.get("inner_ranks") or () if r[0] == nl.limit), None)
    if rank is None or not asked.stated:
        return
    key = OrderKey(rank[1], rank[2], text=rank[1])
    want = _hinted_direction(asked, hints) or _wanted(asked, key)
    if rank[2] != want:
        out.add(
            "order_direction_mismatch",
            "error",
            f"question asks for {want.upper()} order; the subquery that takes the top"
            f" {nl.limit} sorts {rank[2].upper()}",
            asked.text,
            rank[1],
            "ordering",
        )


_VERB_OR_PLURAL_END = re.compile(r"(?:ed|s)$")


def _superlative_named(nl: Spec, sql: Spec) -> str | None:
    """The SQL literal a question's superlative is part of ("the most valuable player"
    against ``award = 'Most Valuable Player'``), or None.

    >>> from stef.spec import OrderKey
    >>> nl = Spec(order_by=[OrderKey("valuable", "desc", text="most valuable player winner")])
    >>> _superlative_named(nl, Spec(literals=["most valuable player", "nl"]))
    'most valuable player'
    >>> _superlative_named(nl, Spec(literals=["nl"])) is None
    True
    >>> edit = Spec(order_by=[OrderKey("date", "desc", text="last edit date")])
    >>> _superlative_named(edit, Spec(columns=["LastEditDate"]))
    'LastEditDate'
    >>> wind = Spec(order_by=[OrderKey("speed", "desc", text="maximum wind speed")])
    >>> _superlative_named(wind, Spec(columns=["max_wind_Speed_mph"]))
    'max_wind_Speed_mph'
    """
    if not nl.order_by:
        return None
    words = nl.order_by[0].text.casefold().split()[:2]
    if len(words) < 2:
        return None
    head = " ".join(words)
    literal = next((lit for lit in sql.literals if f" {head} " in f" {lit.casefold()} "), None)
    if literal is not None:
        return literal
    # "the last edit date" as the column lasteditdate, "the maximum wind speed" as
    # max_wind_speed_mph: the words name a column
    rest = _VERB_OR_PLURAL_END.sub("", words[1])
    short = _SHORT_EXTREMES.get(words[0])
    starts = [w + rest for w in (words[0], short) if w and len(w + rest) >= 7]
    return next((c for c in sql.columns if starts and canon(c).startswith(tuple(starts))), None)


#: How a column's name shortens an extreme ("max_wind_speed" for "the maximum wind speed").
_SHORT_EXTREMES = {"maximum": "max", "minimum": "min", "highest": "high", "lowest": "low"}


#: Superlatives of age, read as dates (the youngest has the latest birth date), by the
#: direction they ask of a column that holds an age.
_AGE_SUPERLATIVES = {"youngest": "asc", "oldest": "desc", "eldest": "desc"}


_LETTER_RUN = re.compile(r"[a-z]+")


def _wanted(asked: OrderKey, sorted_by: OrderKey) -> str:
    """The direction the question asks of the SQL's sort key: "the youngest" sorts
    birth dates descending but ages ascending.

    >>> _wanted(OrderKey("date", "desc", text="youngest editor"), OrderKey("age", "asc"))
    'asc'
    >>> _wanted(OrderKey("date", "desc", text="youngest editor"), OrderKey("birthday", "desc"))
    'desc'
    >>> serving = OrderKey("x", "desc", text="longest-serving employees")
    >>> _wanted(serving, OrderKey("hire_date", "asc"))
    'asc'
    """
    key_words = set(_LETTER_RUN.findall(sorted_by.key.casefold()))
    if "age" in key_words:
        for w in asked.text.casefold().split():
            if w in _AGE_SUPERLATIVES:
                return _AGE_SUPERLATIVES[w]
    if ranks_by_start(asked.text, sorted_by.key):  # "the longest-serving employees": the
        return "asc" if asked.direction == "desc" else "desc"  # earliest hire dates
    return asked.direction


def _hinted_direction(asked: OrderKey, hints: str | None) -> str | None:
    """The direction a hint gives the question's superlative phrase by naming its
    aggregate: "lowest speed of lap time refers to Max(time)" sorts time descending.

    >>> _hinted_direction(OrderKey("speed", "asc", text="lowest speed of lap time"),
    ...                   "lowest speed of lap time refers to Max(time);")
    'desc'
    """
    for clause, end in _hint_clauses_naming(asked, hints):
        m = _HINT_EXTREME.search(clause, end)
        if m is not None:
            return "desc" if m.group(1) == "max" else "asc"
    return None


def _hint_clauses_naming(asked: OrderKey, hints: str | None) -> list[tuple[str, int]]:
    """Each clause of the hints (lower-cased) that holds the first two words of the
    question's phrase, with where they end in it: what the hint says of the phrase follows.

    >>> _hint_clauses_naming(OrderKey("x", "desc", text="top 10 drivers"), "Top 10 is rank<11")
    [('top 10 is rank<11', 6)]
    """
    words = asked.text.casefold().split()
    if not hints or not words or (len(words) < 2 and len(words[0]) < 4):
        return []
    phrase = " ".join(words[:2])  # one word of four letters or more: "the most"
    return [
        (clause, at + len(phrase))
        for clause in HINT_CLAUSE.split(hints.casefold())
        if (at := clause.find(phrase)) >= 0
    ]


def _ranking_as_filter(asked: OrderKey, hints: str | None) -> str | None:
    """The condition a hint gives the question's top-k phrase ("first 100 molecules in
    number order refers to molecule_id between 'TR000' and 'TR099'", "top 10 refers to
    rank < 11"): the hint clause's text after the phrase when it compares (BETWEEN, <, >,
    =) and names no MAX, MIN or sort; else None.

    >>> top = OrderKey("drivers", "desc", text="top 10 drivers")
    >>> _ranking_as_filter(top, "top 10 refers to rank <11; AVG(fastestLapTime);")
    'rank <11'
    >>> _ranking_as_filter(top, "top 10 refers to MAX(points)") is None
    True
    """
    for clause, end in _hint_clauses_naming(asked, hints):
        m = _HINT_DEFINES.search(clause, end)
        if m is None:
            continue
        said = clause[m.end() :].strip(" .,")
        if _HINT_COMPARES.search(said) and not _HINT_RANKS.search(said):
            return said
    return None


#: What a hint clause says its phrase is, the words that say so.
_HINT_DEFINES = re.compile(r"\b(?:refers?\s+to|means|stands\s+for|is\s+defined\s+as)\b|=")
#: A comparison in a hint's condition, and what makes it a ranking after all.
_HINT_COMPARES = re.compile(r"\bbetween\b|[<>]|\bin\s*\(")
_HINT_RANKS = re.compile(r"\b(?:max|min|order|top|limit|desc|asc)\b")


#: MAX( or MIN( in a hint clause.
_HINT_EXTREME = re.compile(r"\b(max|min)\s*\(")


def _check_order(
    nl: Spec, sql: Spec, out: FindingCollector, rules: Rules, aggs: set[str], hints: str | None
) -> None:
    asked_order = bool(nl.order_by)
    topk = nl.limit
    first = sql.order_by[0] if sql.order_by else None
    if asked_order and first is not None:
        want = _hinted_direction(nl.order_by[0], hints) or _wanted(nl.order_by[0], first)
        extreme = "max" if want == "desc" else "min"  # the aggregate that answers it alone
        if (
            first.direction != want
            and not (extreme in aggs and sql.limit is None)
            and not _extreme_filtered(sql, extreme, first.key)
        ):
            if nl.order_by[0].stated:
                out.add(
                    "order_direction_mismatch",
                    "error",
                    f"question asks for {want.upper()} order; "
                    f"the SQL sorts {first.direction.upper()}",
                    nl.order_by[0].text,
                    first.text,
                    "ordering",
                )
            else:
                out.add(
                    "order_direction_unstated",
                    "warning",
                    f"question names no sort direction (SQL's default is {want.upper()}); "
                    f"the SQL sorts {first.direction.upper()}",
                    nl.order_by[0].text,
                    first.text,
                    "ordering",
                )
    elif asked_order and first is None and sql.flags.get("rank_windows"):
        _check_rank_windows(nl, sql, out, hints)
    elif asked_order and first is None:
        superlative_by_agg = bool(set(aggs) & {"max", "min"}) or sql.subqueries > 0
        if (topk is not None and topk > 1) or not superlative_by_agg:
            out.add(
                "order_by_missing",
                "warning" if not topk else "error",
                "question asks for an order; the SQL has no ORDER BY",
                nl.order_by[0].text,
                None,
                "ordering",
            )
    elif (
        not asked_order
        and first is not None
        and (sql.limit is None or sql.limit >= rules.safety_limit_min)
    ):
        out.add(
            "order_by_tolerated",
            "info",
            "the SQL sorts although the question asked for no order; a default sort is harmless",
            None,
            first.text,
            "order_by_tolerance",
        )


def _extreme_filtered(sql: Spec, func: str, key: str) -> bool:
    """Does a filter hold a column equal to its own extreme, ``amount = (SELECT MAX(amount)
    …)``, on another column than the sort ``key``? The superlative is answered there; the
    sort serves another word ("the biggest loan's first transaction").

    >>> from stef.spec import Aggregation, Filter
    >>> sql = Spec(filters=[Filter("t2.amount", "=", ())],
    ...            aggregations=[Aggregation("max", "amount", False, "MAX(amount)")])
    >>> _extreme_filtered(sql, "max", "t4.date"), _extreme_filtered(sql, "max", "t2.amount")
    (True, False)
    """
    extremes = {column_part(a.arg) for a in sql.aggregations if a.func == func}
    return any(
        f.op == "="
        and not f.values
        and column_part(f.column) in extremes
        and column_part(f.column) != column_part(key)
        for f in sql.filters
    )


def _check_rank_windows(nl: Spec, sql: Spec, out: FindingCollector, hints: str | None) -> None:
    """A superlative answered by ranking windows and no ORDER BY (``RANK() OVER (ORDER BY
    n DESC)`` kept where it is 1): the stated direction must be the windows' (when every
    window ranks the other way, the rows ranked first are the opposite extreme).

    >>> nl = Spec(order_by=[OrderKey("count", "desc", text="highest student count")])
    >>> out = FindingCollector()
    >>> _check_rank_windows(nl, Spec(flags={"rank_windows": [["sum(n)", "asc"]]}), out, None)
    >>> [f.kind for f in out.findings]
    ['order_direction_mismatch']
    """
    asked = nl.order_by[0]
    windows = [OrderKey(key, direction) for key, direction in sql.flags["rank_windows"]]
    wants = [_hinted_direction(asked, hints) or _wanted(asked, k) for k in windows]
    if not asked.stated or any(k.direction == want for k, want in zip(windows, wants, strict=True)):
        return
    out.add(
        "order_direction_mismatch",
        "error",
        f"question asks for {wants[0].upper()} order; the SQL ranks its rows"
        f" {windows[0].direction.upper()} (a ranking window over {windows[0].key})",
        asked.text,
        windows[0].key,
        "ordering",
    )


def _check_no_limit(
    nl: Spec, sql: Spec, out: FindingCollector, aggs: set[str], topk: int, first: OrderKey | None
) -> None:
    """A top k asked of SQL with no LIMIT: kept by a ranking window's cut, answered by an
    aggregate (the one extreme), ranked the asked way without a cut, or missing."""
    if topk in (sql.flags.get("rank_cuts") or ()):
        out.add(
            "topk_by_rank",
            "info",
            f"the top {topk} the question asks for is kept by a ranking window's cut",
            nl.order_by[0].text if nl.order_by else None,
            None,
            "limit",
        )
        return
    via_agg = topk == 1 and (bool(set(aggs) & {"max", "min"}) or sql.subqueries > 0)
    if via_agg and nl.offset and not sql.subqueries and not sql.ctes and not sql.window_functions:
        out.add(  # "the second highest salary" as MAX(salary): the highest
            "offset_mismatch",
            "error",
            f"question asks for the row at place {nl.offset + 1}; the SQL's"
            f" {'/'.join(sorted(set(aggs) & {'max', 'min'})).upper()} gives the first",
            nl.order_by[0].text if nl.order_by else None,
            None,
            "limit",
        )
        return
    asked = nl.order_by[0] if nl.order_by else None
    ranked = first is not None and asked is not None and first.direction == _wanted(asked, first)
    if ranked and not via_agg:
        out.add(
            "limit_missing_sorted",
            "warning",
            f"question asks for the top {topk}; the SQL returns every row, "
            "ranked the asked way (the answer comes first)",
            nl.order_by[0].text,
            first.text if first is not None else None,
            "limit",
        )
    elif not via_agg:
        out.add(
            "limit_missing",
            "error",
            f"question asks for the top {topk}; the SQL returns every row",
            nl.order_by[0].text if nl.order_by else None,
            None,
            "limit",
        )


def _one_row_in_all(nl: Spec, sql: Spec, out: FindingCollector) -> bool:
    """ "The most recent order for each customer" answered by ``ORDER BY … LIMIT 1`` alone
    (no window, DISTINCT or subquery; a GROUP BY only under LIMIT 1, which keeps one group):
    one row in all, not one per group."""
    lim = sql.limit
    if not nl.flags.get("one_per_group") or nl.limit is not None or lim is None:
        return False
    if sql.window_functions or sql.distinct or sql.subqueries or sql.ctes:
        return False
    if sql.group_by and lim != 1:
        return False
    out.add(
        "limit_not_per_group",
        "error",
        f"question asks for one row of each group; the SQL's LIMIT {lim} keeps"
        f" {'one row' if lim == 1 else f'{lim} rows'} in all",
        None,
        f"LIMIT {lim}",
        "limit",
    )
    return True


def _check_limit(
    nl: Spec, sql: Spec, out: FindingCollector, rules: Rules, aggs: set[str], stated: bool = False
) -> None:
    """The LIMIT against the question's top-k; ``stated``: the question says the LIMIT's
    number otherwise (:func:`stef.align.stated_limits.limit_stated`)."""
    if _one_row_in_all(nl, sql, out):
        return
    asked_order = bool(nl.order_by)
    topk = nl.limit
    first = sql.order_by[0] if sql.order_by else None
    lim = sql.limit
    if topk is not None:
        if lim is None:
            _check_no_limit(nl, sql, out, aggs, topk, first)
        elif nl.flags.get("topk_per_group") and not sql.window_functions:
            out.add(
                "limit_not_per_group",
                "error",
                f"question asks for the top {topk} of each group; the SQL's LIMIT {lim} keeps"
                f" {lim} rows in all",
                nl.order_by[0].text if nl.order_by else None,
                f"LIMIT {lim}",
                "limit",
            )
        elif (
            lim == topk
            and nl.offset
            and (sql.offset or 0) != nl.offset
            and not sql.window_functions  # a ranking window may pick the k-th row
        ):
            out.add(
                "offset_mismatch",
                "error",
                f"question asks for the row at place {nl.offset + 1} (OFFSET {nl.offset}); the"
                f" SQL skips {sql.offset or 0}",
                nl.order_by[0].text if nl.order_by else None,
                f"LIMIT {lim}" + (f" OFFSET {sql.offset}" if sql.offset else ""),
                "limit",
            )
        elif lim != topk:
            tolerated = lim >= rules.safety_limit_min
            out.add(
                "limit_mismatch",
                "error",
                f"question asks for {topk} rows; the SQL "
                + (f"has only a safety LIMIT {lim}" if tolerated else f"returns {lim}"),
                nl.order_by[0].text if nl.order_by else None,
                f"LIMIT {lim}",
                "limit",
            )
    elif lim is not None and str(lim) not in nl.literals and not stated:  # "at least five": 5
        if lim >= rules.safety_limit_min:
            out.add(
                "limit_tolerated",
                "info",
                f"LIMIT {lim} is a safety limit (≥ {rules.safety_limit_min}), not a top-k",
                None,
                f"LIMIT {lim}",
                "limit_tolerance",
            )
        elif first is None:
            out.add(
                "limit_unexpected",
                "warning",
                f"LIMIT {lim} truncates an unordered result the question did not limit",
                None,
                f"LIMIT {lim}",
                "limit",
            )
        elif not (asked_order or any(a.func in ("max", "min") for a in nl.aggregations)):
            # a sorted LIMIT answers "the highest …", "the lowest …" (a superlative)
            out.add(
                "limit_unexpected",
                "warning",
                f"LIMIT {lim} keeps only the top {lim}; the question asked for no top-k",
                None,
                f"LIMIT {lim}",
                "limit",
            )


#: "slowest"/"fastest": their direction depends on what is sorted (a time or a speed).
_SPEED = re.compile(r"\b(?P<w>slowest|fastest|quickest)\b(?![\s-]+(?:grow|ris|increas|declin))")
_TIME_WORDS = frozenset(
    """time times duration durations latency ms millis milliseconds msec seconds secs sec
    minutes mins hours elapsed runtime delay delays wait""".split()  # noqa: SIM905
)
_SPEED_WORDS = frozenset("speed speeds rate velocity throughput mph kph kmh rps qps".split())  # noqa: SIM905


def check_speed(sql: Spec, out: FindingCollector, question: str) -> None:
    """ "The 10 slowest endpoints by response time" sorted by a time ascending, or "the
    fastest lap speed" by a speed ascending: the question's ranking read against the
    SQL's first sort key, a time (slowest: DESC) or a speed (slowest: ASC)
    (``order_direction_mismatch``). Left alone where the key names neither, or both.

    >>> out = FindingCollector()
    >>> key = OrderKey("avg(response_ms)", "asc", True, "avg_ms ASC")
    >>> check_speed(Spec(order_by=[key]), out, "The 10 slowest endpoints by response time")
    >>> [f.message for f in out.findings]
    ["the question's 'slowest' ranks by avg(response_ms), a time: DESC; the SQL sorts ASC"]
    >>> check_speed(Spec(order_by=[key]), out, "The fastest endpoints")
    >>> len(out.findings)
    1
    """
    low = question.casefold()
    m = _SPEED.search(low)
    if m is None or not sql.order_by or len(set(_SPEED.findall(low))) > 1:
        return
    first = sql.order_by[0]
    words = set(name_words(first.key)) | set(name_words(first.text))
    is_time, is_speed = bool(words & _TIME_WORDS), bool(words & _SPEED_WORDS)
    if is_time == is_speed:
        return
    slow = m.group("w") == "slowest"
    want = "desc" if slow == is_time else "asc"
    if first.direction == want:
        return
    out.add(
        "order_direction_mismatch",
        "error",
        f"the question's {m.group('w')!r} ranks by {first.key}, a {'time' if is_time else 'speed'}:"
        f" {want.upper()}; the SQL sorts {first.direction.upper()}",
        m.group(0),
        first.text or first.key,
        "ordering",
    )


#: "each customer's first order", "their most recent login": one row of each subject's own.
_OWN_EXTREME = re.compile(
    r"\b(?:their|his|her|its|whose|[a-z]+'s)\s+(?P<w>first|earliest|last|latest|most\s+recent)"
    r"\s+(?P<n>[a-z]+)"
)

_STORED_EXTREME = re.compile(r"first|last|latest|recent|earliest|min|max|prev|top")


def check_own_extreme(sql: Spec, out: FindingCollector, question: str) -> None:
    """ "When did each customer place their first order?" answered by SQL that keeps every
    row: no MIN or MAX, window, ORDER BY, LIMIT, GROUP BY or subquery picks the first of
    each (``extreme_per_group_missing``; DISTINCT keeps every distinct row).

    >>> out = FindingCollector()
    >>> check_own_extreme(Spec(tables=["orders"]), out, "Each customer's first order date")
    >>> [f.kind for f in out.findings]
    ['extreme_per_group_missing']
    >>> check_own_extreme(Spec(tables=["users"]), out, "Users and their first name")
    >>> check_own_extreme(Spec(columns=["last_login"]), out, "Users and their last login")
    >>> len(out.findings)
    1
    """
    low = question.casefold().replace("’", "'")
    if "first" not in low and "last" not in low and "recent" not in low:
        return
    m = _OWN_EXTREME.search(low)
    if m is None or m.group("n") in lx.NOT_RANKED or m.group("n") in lx.TIME_UNITS:
        return
    if sql.aggregations or sql.window_functions or sql.order_by or sql.limit is not None:
        return
    if sql.group_by or sql.subqueries or sql.ctes or sql.set_operations:
        return  # (DISTINCT picks no first: it keeps each distinct row)
    if any(_STORED_EXTREME.search(c.casefold()) for c in sql.columns):
        return  # ``users.last_login``: a column that holds each one's extreme already
    out.add(
        "extreme_per_group_missing",
        "warning",
        f"the question asks for {m.group(0)!r}; nothing in the SQL (MIN, MAX, a ranking, ORDER"
        " BY, GROUP BY) picks it: every row is returned",
        m.group(0),
        None,
        "ordering",
    )


#: A ranking the question restarts in each group: "rank products by revenue within each
#: category", "ranked per region".
_RANK_EACH = re.compile(
    r"\brank(?:ed|ing|s)?\b[^.?!;]{0,60}?\b(?:(?:within|in|for)\s+(?:each|every)|per)\s+[a-z]+"
)


def check_rank_partition(sql: Spec, out: FindingCollector, question: str) -> None:
    """The question ranks within each group ("rank products by revenue within each
    category") and every ranking window of the SQL ranks all rows at once (no PARTITION
    BY): ``window_partition_missing``.

    >>> out = FindingCollector()
    >>> sql = Spec(flags={"rank_unpartitioned": [True]})
    >>> check_rank_partition(sql, out, "Rank products by revenue within each category")
    >>> [f.kind for f in out.findings]
    ['window_partition_missing']
    """
    ranks = sql.flags.get("rank_unpartitioned") or ()
    if not ranks or not all(ranks) or "rank" not in question.casefold():
        return
    m = _RANK_EACH.search(question.casefold())
    if m is None:
        return
    out.add(
        "window_partition_missing",
        "warning",
        f"the question ranks {m.group(0)!r}; the SQL's ranking window has no PARTITION BY, so it"
        " ranks all rows as one",
        m.group(0),
        None,
        "ordering",
    )


#: A ranking by a total or a sum: "top 10 customers by total order amount".
_BY_TOTAL = re.compile(r"\bby\s+(?:the\s+)?(?:total|sum\s+of|summed)\s+(?P<m>[a-z]+(?:\s+[a-z]+)?)")


def check_ranked_total(
    nl: Spec, sql: Spec, out: FindingCollector, hints: str | None = None
) -> None:
    """The question (or its enrichment, ``hints``) ranks by a total of a measure ("top 10
    customers by total order amount") and the SQL ranks by a count of rows (``ORDER BY
    COUNT(*)``) with no SUM anywhere: ``aggregation_substituted``.

    >>> asked = OrderKey("amount", "desc", False, "Top 10 customers by total order amount")
    >>> out = FindingCollector()
    >>> check_ranked_total(Spec(order_by=[asked]), Spec(order_by=[OrderKey("count(*)")]), out)
    >>> [f.kind for f in out.findings]
    ['aggregation_substituted']
    """
    if not nl.order_by or not sql.order_by or "sum" in sql_aggs(sql):
        return
    key = sql.order_by[0].key.casefold()
    texts = [o.text for o in nl.order_by] + ([hints] if hints else [])  # or the enrichment's
    m = next((m for t in texts if (m := _BY_TOTAL.search(t.casefold())) is not None), None)
    if m is None or not key.startswith("count("):
        return
    words = m.group("m").split()
    if words[0] in ("number", "count") or words[-1] in _COUNTED_NOUNS:
        return  # "by total orders", "by the total number of …": a count
    out.add(
        "aggregation_substituted",
        "warning",
        f"the question ranks by the total {m.group('m')}; the SQL ranks by a count of rows"
        f" ({sql.order_by[0].key})",
        m.group(0),
        sql.order_by[0].text or sql.order_by[0].key,
        "aggregation",
    )


#: Nouns whose total is a count ("by total orders"; "the total number of …" is one too).
_COUNTED_NOUNS = frozenset(
    "orders sales visits sessions users customers items posts".split()  # noqa: SIM905
)

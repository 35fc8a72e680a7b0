"""Grouping checks: a GROUP BY the question asks for but the SQL lacks, and each SQL
grouping key the question did not ask for, excused (``required_group_by``,
``benign_group_by``) or reported.
"""

from __future__ import annotations

import re

from stef.align.formats import descriptive
from stef.align.matching import canon_col, pinned_columns
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.attributes import ATTRIBUTES
from stef.rules import Rules
from stef.spec import Spec


def _one_total(sql: Spec) -> bool:
    """Does the SQL return one row of aggregates: every output aggregated, no GROUP BY?"""
    return bool(sql.projections) and all(p.is_aggregate for p in sql.projections)


def _report_missing_group(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """The question groups and the SQL has no GROUP BY: one total row where it asks for
    each X (``group_total_only``), else ``group_by_missing``."""
    if nl.flags.get("group_each") and _one_total(sql):
        out.add(
            "group_total_only",
            "warning",
            f"question asks for each {', '.join(nl.group_by)}; the SQL returns one total"
            " row (aggregates only, no GROUP BY)",
            ", ".join(nl.group_by),
            ", ".join(p.text or p.expr for p in sql.projections),
            "grouping",
        )
        return
    out.add(
        "group_by_missing",
        "warning",
        f"question groups by {', '.join(nl.group_by)}; the SQL has no GROUP BY",
        ", ".join(nl.group_by),
        None,
        "grouping",
    )


#: Words that name one grouping key ("each rank and gender" grouped by ``sex``).
_KEY_SYNONYMS = (frozenset({"gender", "sex"}), frozenset({"person", "individual", "people"}))


def _key_named(key: str, names: list[str]) -> bool:
    """Is the question's grouping key ``key`` named by one of the SQL's canonical ``names``:
    a name holds the first four letters of a word of it (``airline_name`` for "airline",
    ``category`` for "product category"), or a synonym of it?

    >>> _key_named("semester", ["year"]), _key_named("gender", ["rank", "sex"])
    (False, True)
    >>> _key_named("product category", ["region", "category"])
    True
    """
    words: list[str] = _KEY_WORD.findall(key.casefold())
    if any(w[:4] in n for w in words if len(w) >= 3 for n in names):
        return True
    return any(
        group.intersection(words) and any(w in n for w in group for n in names)
        for group in _KEY_SYNONYMS
    )


_KEY_WORD = re.compile(r"[a-z0-9]+")


def _check_coordinated_keys(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """The question groups by two keys or more ("in each semester and year") and the SQL
    groups by a column named for one of them but by nothing named for another, which no
    column, table or output of the SQL names either (``group_by_missing``): one figure per
    year where the question asks for one per semester of each year.

    >>> nl = Spec(group_by=["semester", "year"])
    >>> sql = Spec(group_by=["year"], columns=["year"], tables=["takes"])
    >>> out = FindingCollector()
    >>> _check_coordinated_keys(nl, sql, out)
    >>> [f.message for f in out.findings]
    ['question groups by semester, year; the SQL groups by year, nothing named for semester']
    """
    if len(nl.group_by) < 2:
        return
    grouped = [canon_col(g) for g in sql.group_by]
    if not any(_key_named(k, grouped) for k in nl.group_by):
        return  # no key is named like the question's: names say nothing here
    names = [canon_col(n) for n in (*sql.columns, *sql.tables)]
    names += [canon_col(p.alias) for p in sql.projections if p.alias]
    for key in nl.group_by:
        if len(key) < 3 or _key_named(key, grouped) or _key_named(key, names):
            continue
        if canon_col(key).removesuffix("s") in _PERIOD_MARKS:
            continue  # a period: ``group_period_missing`` reads it by its date functions
        out.add(
            "group_by_missing",
            "warning",
            f"question groups by {', '.join(nl.group_by)}; the SQL groups by"
            f" {', '.join(sql.group_by)}, nothing named for {key}",
            key,
            ", ".join(sql.group_by),
            "grouping",
        )
        return


#: Output names that say they hold a figure (``Total_Subjects``, ``n_posts``).
_FIGURE_NAME = re.compile(r"count|total|sum|num|avg|average|mean|rate|ratio|percent|share|qty")


def _check_series_measured(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """A series over periods ("Voters in moderator elections per year") grouped by the
    period, whose outputs are only the grouping keys: the SQL lists the periods and no
    figure for any of them (``series_unmeasured``). Aggregates that filter or rank the
    groups, windows, ``*`` and outputs named for a figure are left alone.

    >>> from stef.spec import Projection
    >>> series, out = Spec(flags={"period_series": True}), FindingCollector()
    >>> year = Projection("year(d)", "election", ("d",))
    >>> _check_series_measured(series, Spec(projections=[year], group_by=["year(d)"]), out)
    >>> [f.kind for f in out.findings]
    ['series_unmeasured']
    >>> voters = Projection("year(d)", "voters_count", ("d",))
    >>> _check_series_measured(series, Spec(projections=[voters], group_by=["year(d)"]), out)
    >>> len(out.findings)
    1
    """
    if not nl.flags.get("period_series") or not sql.group_by or not sql.projections:
        return
    if sql.window_functions or sql.flags.get("select_star"):
        return
    if any(f.clause == "having" for f in sql.filters):
        return
    if any(p.is_aggregate for p in sql.projections) or any(o.is_aggregate for o in sql.order_by):
        return
    names = [n for p in sql.projections for n in (p.alias, *p.columns) if n]
    if any(_FIGURE_NAME.search(canon_col(n)) for n in names):
        return
    out.add(
        "series_unmeasured",
        "warning",
        "the question asks for a figure per period; the SQL groups by "
        f"{', '.join(sql.group_by)} but outputs no aggregate, only the groups themselves",
        None,
        ", ".join(p.text or p.expr for p in sql.projections),
        "grouping",
    )


def _grouped_elsewhere(nl: Spec, sql: Spec) -> bool:
    """Does the SQL answer "per X" without a GROUP BY of its own: a subquery or CTE groups,
    a window partitions, the outer SELECT outputs no aggregate (each row is one X, its
    figures stored or computed per row: "the room count of each apartment", a correlated
    COUNT), it divides (a rate: "sessions per user" as ``COUNT(*) / COUNT(DISTINCT
    user_id)``), or the question's only figures are averages "per X", a rate ("the average
    order quantity per order") rather than a breakdown?

    >>> from stef.spec import Aggregation, Projection
    >>> total = Spec(projections=[Projection("count(*)", is_aggregate=True)])
    >>> per = Spec(group_by=["order"], aggregations=[Aggregation("avg", "quantity")])
    >>> _grouped_elsewhere(per, total)
    True
    >>> per.aggregations[0] = Aggregation("count", None)
    >>> _grouped_elsewhere(per, total), _grouped_elsewhere(per, Spec())
    (False, True)
    """
    if sql.window_functions or sql.flags.get("group_anywhere"):
        return True
    if not any(p.is_aggregate for p in sql.projections):
        return True  # each row is one X: its figures are stored or computed per row
    if sql.flags.get("division"):
        return True  # "sessions per user" as COUNT(*) / COUNT(DISTINCT user_id): a rate
    rate = not nl.flags.get("group_each") and nl.aggregations and _per_row(nl)
    return bool(rate) and all(a.func == "avg" for a in nl.aggregations)


#: Heads of a "per X" that names a category of rows, not a thing each row is: "per device
#: type", "per plan", "per month" ask for a breakdown, even of an average.
CATEGORY_HEADS = ATTRIBUTES | lx._words(
    """type types kind kinds class classes group groups level levels tier tiers status
    state states day days week weeks month months quarter quarters year years hour hours
    weekday weekdays"""
)


def _per_row(nl: Spec) -> bool:
    """Is each "per X" of the question a thing the rows are, so that an average "per X" is
    a rate ("the average order quantity per order", "the average number of tags per
    question"), not a breakdown by a category ("the average session length per device
    type")?

    >>> _per_row(Spec(group_by=["order"])), _per_row(Spec(group_by=["device type"]))
    (True, False)
    """
    return not any(g.split() and g.split()[-1] in CATEGORY_HEADS for g in nl.group_by)


#: Each period a question may group by, and the marks of a GROUP BY key that holds it
#: (``DATE_TRUNC('month', d)``, ``strftime('%Y-%m', d)``, ``FORMAT(d, 'yyyy-MM')``,
#: ``CAST(d AS DATE)``, a column named for the period).
_PERIOD_MARKS: dict[str, tuple[str, ...]] = {
    "year": ("year", "%y", "yy"),
    "quarter": ("quarter", "q"),
    "month": ("month", "%m", "mm", "mon"),
    "week": ("week", "%w", "%u", "%v", "iw", "ww", "wk"),
    "day": ("day", "date", "%d", "dd"),
    "date": ("day", "date", "%d", "dd"),
    "hour": ("hour", "%h", "hh"),
}


def _check_period_keys(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """A period the question groups by ("revenue by region and month") that no GROUP BY
    key holds, where the SQL groups by something else: one row per region over the whole
    year, not per month (``group_period_missing``).

    >>> out = FindingCollector()
    >>> asked = Spec(group_by=["region", "month"])
    >>> _check_period_keys(asked, Spec(group_by=["region"]), out)
    >>> [(f.kind, f.nl) for f in out.findings]
    [('group_period_missing', 'month')]
    >>> _check_period_keys(asked, Spec(group_by=["region", "date_trunc('month', d)"]), out)
    >>> len(out.findings)
    1
    """
    if not sql.group_by or sql.window_functions:
        return
    keys = [k.casefold() for k in sql.group_by]
    for asked in nl.group_by:
        marks = _PERIOD_MARKS.get(asked.casefold().removesuffix("s"))
        if marks is None or any(m in k for m in marks for k in keys):
            continue
        out.add(
            "group_period_missing",
            "warning",
            f"the question groups by {asked}; the SQL groups by {', '.join(sql.group_by)}:"
            f" no key holds the {asked}, so each row spans every {asked}",
            asked,
            ", ".join(sql.group_by),
            "grouping",
        )


#: "the last two years", "past 3 years": a reach back of several years.
_YEARS_BACK = re.compile(r"\b(?:[2-9]|1\d|two|three|four|five|six|seven|eight|nine|ten)\s+years\b")


def _several_years(nl: Spec) -> str | None:
    """The text of a period the question asks for that spans several years ("from 2021 to
    2023", "since 2020", "over the last two years"), or None."""
    for f in nl.filters:
        if f.func != "year" and not _YEARS_BACK.search(f.text.casefold()):
            continue
        if (f.op == "between" and len(set(f.values)) == 2) or f.op in (">=", ">"):
            return f.text
    return None


def _check_months_merged(nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """The question asks per month over several years ("orders by month from 2021 to
    2023") and the SQL groups by the month of the year alone: each row adds up that month of
    every year (``months_merged``).

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> asked = Spec(group_by=["month"], filters=[Filter(None, ">=", ("2020",), "since 2020",
    ...     "question", "year")])
    >>> _check_months_merged(asked, Spec(flags={"month_without_year": "MONTH(d)"}), out)
    >>> [f.kind for f in out.findings]
    ['months_merged']
    """
    month = sql.flags.get("month_without_year")
    if not month or not ("month" in nl.group_by or nl.flags.get("period_series")):
        return
    span = _several_years(nl)
    if span is None:
        return
    out.add(
        "months_merged",
        "warning",
        f"the question asks per month over {span!r}; the SQL groups by {month} alone, so"
        " each row adds up that month of every year",
        span,
        month,
        "grouping",
    )


def check_grouping(nl: Spec, sql: Spec, out: FindingCollector, rules: Rules) -> None:
    _check_series_measured(nl, sql, out)
    _check_period_keys(nl, sql, out)
    _check_months_merged(nl, sql, out)
    if nl.group_by and not sql.group_by:
        if not _grouped_elsewhere(nl, sql):
            _report_missing_group(nl, sql, out)
        return
    if not sql.group_by:
        return
    _check_coordinated_keys(nl, sql, out)
    nl_keys = {canon_col(g) for g in nl.group_by}
    plain_proj = {canon_col(c) for p in sql.projections if not p.is_aggregate for c in p.columns}
    plain_proj |= {canon_col(p.expr) for p in sql.projections if not p.is_aggregate}
    plain_proj |= {canon_col(p.alias) for p in sql.projections if p.alias and not p.is_aggregate}
    mixes = any(p.is_aggregate for p in sql.projections) and bool(plain_proj)
    pinned = pinned_columns(sql)
    benign = {canon_col(c) for c in rules.benign_group_by}
    ranks = bool(sql.order_by) and any(o.is_aggregate for o in sql.order_by)
    _check_asked_key_shown(nl_keys, sql, plain_proj, out)
    for key in sql.group_by:
        k = canon_col(key)
        if k in nl_keys or any(k in n or n in k for n in nl_keys if n):
            continue
        if k in benign:
            out.add(
                "group_by_benign",
                "info",
                f"GROUP BY {key} is declared benign by the rules",
                None,
                key,
                "benign_group_by",
            )
        elif k in pinned:
            out.add(
                "group_by_benign",
                "info",
                f"GROUP BY {key} is harmless: a WHERE equality pins it to one value",
                None,
                key,
                "benign_group_by",
            )
        elif mixes and k in plain_proj:
            out.add(
                "group_by_inferred",
                "info",
                f"GROUP BY {key} is required: the SELECT mixes aggregates and plain columns",
                None,
                key,
                "required_group_by",
            )
        elif ranks or nl.flags.get("superlative") or nl.limit:
            out.add(
                "group_by_inferred",
                "info",
                f"GROUP BY {key} serves the ranking the question asks for",
                None,
                key,
                "required_group_by",
            )
        elif k in plain_proj:
            out.add(
                "group_by_inferred",
                "info",
                f"GROUP BY {key} groups the selected column",
                None,
                key,
                "required_group_by",
            )
        else:
            out.add(
                "group_by_unexpected",
                "warning",
                f"GROUP BY {key} is neither asked for nor selected",
                None,
                key,
                "grouping",
            )


#: Key names of an entity's identifier, which another output (its name) may label.
_IDENTIFIER_ENDS = ("id", "key", "code", "number", "no", "num")


def _labelled(key: str, plain: set[str]) -> bool:
    """May a plain output label the rows of an identifier key: one that shares the key's
    stem (``station_id`` and ``station_name``), a name or a title, or any output where the
    stem is too short to tell (``id``)? Outputs of other things (a year, a month) label no
    post type id.

    >>> _labelled("posttypeid", {"year", "month"}), _labelled("station_id", {"station_name"})
    (False, True)
    """
    stem = key
    for end in _IDENTIFIER_ENDS:
        if key.endswith(end):
            stem = key.removesuffix(end).rstrip("_")
            break
    if len(stem) < 3 or any(descriptive(p) for p in plain):
        return True  # a name or a title labels whatever the id is of
    return any(stem in p or p.rstrip("s") in stem for p in plain if len(p) >= 3)


def _check_asked_key_shown(
    nl_keys: set[str], sql: Spec, plain_proj: set[str], out: FindingCollector
) -> None:
    """A grouping the question asks for ("… by month", "for each tag") whose GROUP BY key no
    output shows, beside outputs that do label the rows: the labels repeat, one row per
    value of the hidden key (``GROUP BY YEAR(d), MONTH(d)`` showing only the year)."""
    plain_proj = {p for p in plain_proj if p}
    if not plain_proj or sql.flags.get("unshown_group_keys") or sql.flags.get("select_star"):
        return
    for key in sql.group_by:
        k = canon_col(key)
        asked = [n for n in nl_keys if n and (k == n or n in k)]
        if not asked or k in plain_proj or any(n in p or p in n for n in asked for p in plain_proj):
            continue
        if k.endswith(_IDENTIFIER_ENDS) and _labelled(k, plain_proj):
            continue  # "for each station" grouped by its id and labelled by its name
        out.add(
            "group_key_unshown",
            "warning",
            f"the question groups by {asked[0]}; the SQL groups by {key!r} but no output shows"
            " it: the rows of one label repeat, one per value of it",
            asked[0],
            key,
            "grouping",
        )
        return

"""Where a required filter is answered other than by a matching SQL filter: a number a
name holds (``NumGE1500``), a code that holds a year (``'2023FA'``), a LIMIT that is the
number of rows asked for, a value applied by its key (``eye_colour_id = 7``), a fraction the
SQL computes as a percentage or a quantity in a smaller unit (:func:`scaled_pairs`), a
capitalised value a literal or a name holds (:func:`weak_value`); where it is answered
wrongly, by another value on the column the question names (:func:`named_column_other_value`,
:func:`modifier_of_column`: "the engineering department" as ``department = 'Sales'``); and
where it is missing, listed with a filtered value or a place named on its own
(:func:`listed_missing`). Pure functions of the two specs, used by :mod:`stef.align.filters`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from stef.align.held import abbreviates, held_otherwise, other_code, other_value
from stef.align.matching import (
    BOUNDS,
    NEUTRAL_LITERALS,
    canon_col,
    float_value,
    hinted_column,
    int_value,
    is_parameter,
    name_words,
    searchable,
    text_mentions,
    value_in_names,
    values_match,
    written_strings,
)
from stef.findings import FindingCollector
from stef.nl import hint_patterns as hp
from stef.nl import lexicon as lx
from stef.nl.places import other_place, same_city, stated_place
from stef.nl.values import UNITS
from stef.spec import WEAK_CUE, Filter, Spec

#: A SQL expression scaled to a percentage (``x * 100 / n``, ``100.0 * x / n``).
TIMES_100 = re.compile(r"\*\s*100(?:\.0*)?\b|\b100(?:\.0*)?\s*\*")


def percent_scaled(nl: Filter, sql: Filter) -> bool:
    """One side states a percentage and the other a fraction: ``over 75%`` against
    ``share > 0.75``, ``a rate of over 0.3`` against ``x * 100 / n > 30``."""
    said = nl.text.casefold()
    return "%" in said or "percent" in said or TIMES_100.search(sql.text) is not None


def hundredfold(a: str, b: str) -> bool:
    """Is one number a hundred times the other (``0.3`` and ``30``)?

    >>> hundredfold("0.3", "30"), hundredfold("75", "0.75"), hundredfold("3", "30")
    (True, True, False)
    """
    x, y = float_value(a), float_value(b)
    if x is None or y is None:
        return False
    return x != 0 and (_times(x, y, 100) or _times(y, x, 100))


#: A number that multiplies the rest of a SQL value: ``1.1 * min(price)``, ``old * 1.1``.
_FACTOR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*\*|\*\s*(\d+(?:\.\d+)?)\s*$")


def _grown(percent: str, factor: str) -> bool:
    """Is ``factor`` a growth by ``percent`` ("up more than 10%" as ``price > 1.1 * old``),
    alone or multiplying the value it grows from?

    >>> _grown("10", "1.1"), _grown("10", "0.1"), _grown("10", "1.1 * min(price)")
    (True, False, True)
    """
    m = _FACTOR.search(factor)
    if m is not None:
        factor = m.group(1) or m.group(2)
    p, f = float_value(percent), float_value(factor)
    return p is not None and f is not None and p > 0 and abs(1 + p / 100 - f) < 1e-9


def _times(x: float, y: float, factor: float) -> bool:
    """Is ``y`` ``factor`` times ``x``, up to rounding?"""
    return abs(x * factor - y) < 1e-9 * max(1.0, abs(y))


def scaled_pairs(nl: Filter, sql: Filter) -> list[tuple[str, str]]:
    """``(question value, SQL value)`` pairs that state one quantity in two scales: a
    percentage as a fraction ("over 75%" as ``share > 0.75``), a duration or a size in a
    smaller unit ("longer than 2 hours" as ``length > 120``).

    >>> q = Filter(None, ">", ("2",), "longer than 2 hours")
    >>> scaled_pairs(q, Filter("length", ">", ("120",), "length > 120"))
    [('2', '120')]
    >>> scaled_pairs(q, Filter("length", ">", ("100",), "length > 100"))
    []
    """
    if percent_scaled(nl, sql):
        pairs = [
            (nv, sv)
            for nv in nl.values
            for sv in sql.values
            if hundredfold(nv, sv) or _grown(nv, sv)
        ]
        if pairs:
            return pairs
    m = _UNIT.search(nl.text)
    if m is None:
        return []
    factors = _UNIT_FACTORS[m.group(1).casefold().rstrip("s")[:3]]
    return [
        (nv, sv)
        for nv in nl.values
        for sv in sql.values
        if (a := float_value(nv)) is not None
        and (b := float_value(sv)) is not None
        and any(_times(a, b, f) for f in factors)
    ]


#: A number's unit in the question: the durations and sizes a column may keep in a smaller
#: unit (``length`` in minutes, ``duration_sec``, ``distance_m``).
_UNIT = re.compile(rf"\d\s*({UNITS})\b", re.I)
#: What one of each unit (by its first three letters) is in the smaller units a column may
#: keep it in.
_UNIT_FACTORS: dict[str, tuple[float, ...]] = {
    "hou": (60, 3600, 3_600_000),
    "hr": (60, 3600, 3_600_000),
    "min": (60, 60_000),
    "sec": (1000,),
    "day": (24, 1440, 86400),
    "wee": (7,),
    "yea": (12, 365, 52),
    "km": (1000,),
    "kil": (1000,),
    "kg": (1000,),
    "met": (100, 1000),
}


#: A key column's name: ``gender_id``, ``ColourId``, ``TYPE_ID``.
_KEY_NAME = re.compile(r"(?:_id|_ID|[a-z]Id|[a-z]ID)$")


_NON_ALNUM_RUN = re.compile(r"[^a-z0-9]+")


def value_as_key(req: Filter, candidates: Sequence[Filter], used: set[int]) -> int | None:
    """The position of an unused SQL filter that applies a named value by its key: the hint
    ``color = 'Blue'`` as ``eye_colour_id = 7``, ``gender = 'Female'`` as ``gender_id = 2``
    (the agent looked the key up). Only a key column named after the value's column and
    compared with whole numbers qualifies.

    >>> req = Filter("color", "=", ("blue",))
    >>> value_as_key(req, [Filter("eye_colour_id", "=", ("7",))], set())
    0
    >>> value_as_key(req, [Filter("height_cm", "=", ("7",))], set()) is None
    True
    """
    if not req.column or req.op not in ("=", "in") or any(v.isdigit() for v in req.values):
        return None
    stems = [w[:4] for w in _NON_ALNUM_RUN.split(canon_col(req.column)) if len(w) >= 4]
    for i, c in enumerate(candidates):
        col = canon_col(c.column or "")
        if (
            i in used
            or c.op not in ("=", "in")
            or not _KEY_NAME.search(c.column or "")
            or not all(v.isdigit() for v in c.values)
        ):
            continue
        if any(stem in col for stem in stems):
            return i
    return None


def number_in_code(req: Filter, sql: Spec) -> str | None:
    """A SQL filter's code value that holds the question's number with a short tag of
    letters (``the 2023 Fall term`` as ``TERM_CODE = '2023FA'``, ``FY2024``), or None.

    >>> number_in_code(Filter(None, "=", ("2023",)), Spec(filters=[Filter("t", "=", ("2023fa",))]))
    '2023fa'
    """
    if req.op != "=" or len(req.values) != 1 or not req.values[0].isdigit():
        return None
    n = req.values[0]
    for f in sql.filters:
        if f.op in ("=", "in"):
            for v in f.values:
                if _tagged(v, n):
                    return v
    return None


def share_of_measure(req: Filter, sql: Spec) -> str | None:
    """The SQL's factor for a share of another quantity the question compares with:
    "height greater than 80% of the average height" as ``height > AVG(height) * 0.8``.

    >>> share_of_measure(Filter(None, ">", ("80",), "greater than 80%"), Spec(literals=["0.8"]))
    '0.8'
    >>> share_of_measure(Filter(None, ">", ("80",), "greater than 80"), Spec(literals=["0.8"]))
    """
    if req.op not in BOUNDS or len(req.values) != 1 or not req.values[0].isdigit():
        return None
    if not req.text.endswith(("%", "percent")):
        return None
    share = int(req.values[0]) / 100
    return next((lit for lit in sql.literals if float_value(lit) == share), None)


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


def _tagged(v: str, n: str) -> bool:
    """``re.fullmatch(rf"[a-z]{{1,4}}{re.escape(n)}|{re.escape(n)}[a-z]{{1,4}}", v)``, by
    string tests (no pattern compiled for each number; tests/test_regex_forms.py).

    >>> _tagged("fy2024", "2024"), _tagged("2023fa", "2023"), _tagged("2023", "2023")
    (True, True, False)
    """
    k = len(v) - len(n)
    if not 1 <= k <= 4:
        return False
    return (v.endswith(n) and _LOWER.issuperset(v[:k])) or (
        v.startswith(n) and _LOWER.issuperset(v[len(n) :])
    )


def counted_by_limit(req: Filter, sql: Spec) -> bool:
    """A bare number of rows the SQL returns as its LIMIT: ``list at least five
    superpowers`` as ``LIMIT 5``, ``Greece 1000`` as ``TOP 1000``.

    >>> counted_by_limit(Filter(None, ">=", ("5",)), Spec(limit=5))
    True
    >>> counted_by_limit(Filter("age", ">=", ("5",)), Spec(limit=5))
    False
    >>> counted_by_limit(Filter(None, ">=", ("5",), ">= 5"), Spec(limit=5))  # "reputation >= 5"
    False
    """
    return (
        req.column is None
        and req.op in ("=", ">=")
        and not req.text.startswith(("<", ">", "="))  # a value compared, not rows counted
        and sql.limit is not None
        and req.values == (str(sql.limit),)
    )


#: Comparisons of a column with itself across two copies of one table that pair distinct rows.
_PAIRING = frozenset({"!=", "<>", "<", ">"})


def counted_by_pairs(req: Filter, sql: Spec) -> bool:
    """"More than one" answered by a self-join that pairs distinct rows: ``Movie T1 JOIN Movie
    T2 ON T1.director = T2.director WHERE T1.title != T2.title`` keeps the directors of two
    movies or more.

    >>> pairs = {"left": "title", "right": "title", "op": "!=", "tables": ["movie"]}
    >>> counted_by_pairs(Filter(None, ">", ("1",)), Spec(joins=[pairs]))
    True
    >>> counted_by_pairs(Filter(None, ">", ("2",)), Spec(joins=[pairs]))
    False
    """
    if req.column is not None or (req.op, req.values) not in ((">", ("1",)), (">=", ("2",))):
        return False
    return any(
        j.get("op") in _PAIRING
        and j.get("left") == j.get("right")
        and len(j.get("tables") or ()) == 1
        for j in sql.joins
    )


def number_in_names(req: Filter, sql: Spec, hints: str | None) -> str | None:
    """A name of the SQL that holds the question's number: a column named for it
    (``more than 1500`` as ``NumGE1500``, ``ages 5-17`` as `` `Enrollment (Ages 5-17)` ``),
    a sharded table, or a column that a clause of the hints ties to it ("A16 stands for
    no. of committed crimes 1996"); None otherwise.

    >>> s = Spec(columns=["numge1500", "a16"], tables=["satscores"])
    >>> number_in_names(Filter(None, ">", ("1500",)), s, None)
    'numge1500'
    >>> number_in_names(Filter(None, "=", ("1996",)), s, "A16 stands for crimes in 1996")
    'a16'
    >>> number_in_names(Filter(None, "=", ("150",)), s, None) is None
    True
    >>> number_in_names(Filter(None, "=", ("2025",)), Spec(columns=["amount"]),
    ...                 "Top customers by total order amount in 2025") is None
    True
    """
    if not req.values or any(int_value(v) is None for v in req.values):
        return None
    names = [*sql.columns, *sql.tables]
    # a plain word ("amount") is tied to a number only by a hint that maps ("A16 stands for
    # crimes in 1996"); a restatement ("customers by total order amount in 2025") ties none
    tied = sql.columns if hp.MAPPING_VERB.search(hints or "") else [
        c for c in sql.columns if not c.isalpha()
    ]
    for v in req.values:
        found = next((n for n in names if bounded_in(v, n)), None)
        found = found or hinted_column(hints, tied, _searches(v))
        if found is not None:
            return found
    return None


def bounded_in(v: str, text: str) -> bool:
    r"""``re.search(rf"(?<![\d.]){re.escape(v)}(?!\d|\.\d)", text)``, by string tests (no
    pattern compiled for each number): ``v`` in ``text`` not inside a longer number
    (``\d`` is a Unicode decimal digit, ``str.isdecimal``; tests/test_regex_forms.py).

    >>> bounded_in("16", "a16"), bounded_in("16", "a160"), bounded_in("16", "1.16")
    (True, False, False)
    """
    at = text.find(v)
    while at >= 0:
        end = at + len(v)
        before = text[at - 1] if at else ""
        after = text[end : end + 1]
        if not (before == "." or before.isdecimal()) and not (
            after.isdecimal() or (after == "." and text[end + 1 : end + 2].isdecimal())
        ):
            return True
        at = text.find(v, at + 1)
    return False


def _searches(v: str) -> Callable[[str, list[str]], bool]:
    """A clause test for :func:`hinted_column`: does ``v`` occur in the clause, bounded?"""
    return lambda clause, _words: bounded_in(v, clause)


_LONG_WORD = re.compile(r"[a-z]{3,}")


def parameter_answer(
    req: Filter, sql: Spec, candidates: Sequence[Filter], used: set[int]
) -> int | None:
    """The SQL filter on a column compared with a run-time parameter that the question's
    value names (``customer 42`` against ``customer_id = ?``): the SQL applies the filter,
    with a value bound when it runs, so the value cannot be checked. None when none fits.

    >>> sql = Spec(flags={"parameter_columns": ["customer_id"]})
    >>> c = [Filter("customer_id", "=", ("?",), "customer_id = ?")]
    >>> parameter_answer(Filter(None, "=", ("42",), "customer 42"), sql, c, set())
    0
    >>> parameter_answer(Filter(None, "=", ("42",), "order 42"), sql, c, set()) is None
    True
    """
    columns = {canon_col(c) for c in sql.flags.get("parameter_columns") or ()}
    if not columns:
        return None
    said = {w.rstrip("s") for w in _LONG_WORD.findall(req.text.casefold())}
    for i, c in enumerate(candidates):
        col = canon_col(c.column)
        if i in used or col not in columns:
            continue
        if req.column is not None:
            if canon_col(req.column) == col:
                return i
        elif said & {w.casefold().rstrip("s") for w in name_words(c.column or "")}:
            return i
    return None


def named_column_other_value(
    req: Filter, candidates: Sequence[Filter], used: set[int], text: str
) -> Filter | None:
    """An equality on a column the question names, with a value the question never
    states, while the question's own capitalised value goes unmatched: the SQL compares
    the right attribute with another value (``the Toys category`` → ``category = 'Books'``);
    or a code of another place than the one the question names (``country = 'FR'``)."""
    if req.cue != WEAK_CUE or req.op != "=":
        return None
    for i, c in enumerate(candidates):
        if i in used or c.op != "=" or not c.column:
            continue
        if any(other_place(v, w) for v in req.values for w in c.values):
            return c  # "in Germany" as country = 'FR': another country's code
        if len(canon_col(c.column)) < 4 or f" {c.column.casefold()} " not in text:
            continue
        if all(map(is_parameter, c.values)):
            continue  # ``category = :category``: a value bound when the query runs
        if not any(v in NEUTRAL_LITERALS or text_mentions(v, text) for v in c.values) and not any(
            abbreviates(w, v) for v in req.values for w in c.values
        ):
            return c  # "the London office" as office = 'LDN' abbreviates it
    return None


def listed_missing(
    unmatched: Sequence[Filter],
    matched: Sequence[tuple[Filter, Filter]],
    question: str,
    out: FindingCollector,
    unused: Sequence[Filter] = (),
) -> list[Filter]:
    """Capitalised values no filter holds although the question lists them with a value
    the SQL filters for equality ("customers in Germany or France" as ``country =
    'Germany'``): the SQL filters that list, and leaves these out (``filter_missing``). A
    place named on its own that no filter or name holds is missing too ("users in Canada"),
    unless an ``unused`` filter of the SQL may apply it by a key or a code
    (:func:`place_by_key`).

    >>> out = FindingCollector()
    >>> de = Filter(None, "=", ("germany",), "Germany")
    >>> fr = Filter(None, "=", ("france",), "France")
    >>> sql = Filter("country", "=", ("germany",), "country = 'Germany'")
    >>> [f.values for f in listed_missing([fr], [(de, sql)], "in Germany or France", out)]
    [('france',)]
    >>> listed_missing([fr], [(de, sql)], "in Germany, France", FindingCollector())
    []
    """
    low = question.casefold()
    missing: list[Filter] = []
    held = {w for f in unused for v in f.values for w in name_words(v)}  # 'DC Comics' in a CASE
    for req in unmatched:
        if all(w in held for v in req.values for w in name_words(v)):
            continue  # "DC" held by another condition's 'DC Comics'
        for nl, sql in matched:
            if sql.op not in ("=", "in") or not sql.column or not nl.text or not req.text:
                continue
            a, b = re.escape(nl.text.casefold()), re.escape(req.text.casefold())
            if not re.search(f"{a}{_JOIN}{b}|{b}{_JOIN}{a}", low):
                continue
            missing.append(req)
            out.add(
                "filter_missing",
                "error",
                f"question lists {', '.join(req.values)} with {nl.text}; the SQL's"
                f" {sql.column} keeps {', '.join(sql.values)} only",
                req.text,
                sql.text,
                "filter_alignment",
            )
            break
        else:  # listed with no filtered value: missing still where it names a place
            if (place := stated_place(req.values, question)) is None:
                continue
            if (key := place_by_key(unused)) is not None:
                why = (
                    f"the question's {place} may be applied as {key.text or key.column!r}, a"
                    " key or code whose place the SQL alone cannot confirm"
                )
                out.add("value_answered_elsewhere", "info", why, req.text, key.text)
                continue
            missing.append(req)
            why = f"the question names {place}, a place; no SQL filter or name holds it"
            out.add("filter_missing", "error", why, req.text, None, "filter_alignment")
    return missing


#: Parts of a column's name that say it holds a place, or what stands at one.
_PLACE_COLUMN = re.compile(
    r"city|country|state|region|location|town|store|site|branch|office|market|area|zone"
    r"|airport|origin|dest",
    re.IGNORECASE,
)


def place_by_key(unused: Sequence[Filter]) -> Filter | None:
    """The first equality that may apply a named place by its key or its code: a key compared
    with whole numbers (``store_id = 7``, ``ship_country_id = 49``), or a column named for a
    place compared with a code (``ship_city = 'CHI'``; a name, ``country = 'France'``, is
    another place). A CASE's condition filters nothing.

    >>> place_by_key([Filter("store_id", "=", ("7",))]).column
    'store_id'
    >>> place_by_key([Filter("ship_city", "=", ("chi",))]).column
    'ship_city'
    >>> place_by_key([Filter("amount", ">", ("7",)), Filter("country", "=", ("france",))])
    """
    for f in unused:
        if f.op not in ("=", "in") or not f.column or not f.values or f.clause == "case":
            continue
        if all(v.isdigit() for v in f.values) and _KEY_NAME.search(f.column):
            return f
        if all(v.isdigit() or len(v) <= 3 for v in f.values) and _PLACE_COLUMN.search(f.column):
            return f
    return None


#: What joins the last two items of a list: "and", "or", "&" (a bare comma joins a city and
#: its state as often: "Rochester, NY").
_JOIN = r"\s*(?:,\s*(?:and|or)\s+|\s(?:and|or)\s+|&\s*)"


def answered_by_key(
    req: Filter,
    sql: Spec,
    candidates: Sequence[Filter],
    used: set[int],
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
) -> bool:
    """A value bound to a run-time parameter (``customer_id = ?`` for "customer 42") or
    applied as a key whose value the SQL alone cannot confirm: answered, with an info."""
    if (key := parameter_answer(req, sql, candidates, used)) is not None:
        used.add(key)
        matched.append((req, candidates[key]))
        message = f"the question's {', '.join(req.values)} is bound to a run-time parameter"
        out.add("value_parameterized", "info", message, req.text, candidates[key].text)
        return True
    if (key := value_as_key(req, candidates, used)) is not None:
        used.add(key)
        c = candidates[key]
        message = (
            f"the question's {req.column} = {', '.join(req.values)} is applied as the key "
            f"{c.text!r}, whose value the SQL alone cannot confirm"
        )
        answer_elsewhere(req, f"key {c.text!r}", c.text, matched, out, message)
        return True
    return False


def answer_elsewhere(
    req: Filter,
    where: str,
    fragment: str | None,
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
    message: str | None = None,
) -> None:
    """Record ``req`` as answered by ``where`` in the SQL (a literal, a name, an output),
    not by a filter: a matched pseudo-filter and an ``info`` finding."""
    matched.append((req, Filter(None, req.op, req.values, where, "name")))
    out.add(
        "value_answered_elsewhere",
        "info",
        message or f"the question's {', '.join(req.values)} is answered by the SQL's {where}",
        req.text,
        fragment,
        "filter_alignment",
    )


def stated_literal(req: Filter, sql: Spec) -> str | None:
    """A literal of the SQL outside its filters that holds the required value (a label the
    answer should show, ``CASE … THEN 'TOTAL'``; a value inside an OR'ed LIKE)."""
    if req.op not in ("=", "like") or req.func is not None:
        return None
    return next((s for v in req.values for s in sql.literals if values_match(v, s)), None)


def weak_value(
    req: Filter,
    sql: Spec,
    matched: list[tuple[Filter, Filter]],
    out: FindingCollector,
    literal: str | None,
    text: str,
) -> bool:
    """A value no SQL filter applies: answered when a literal elsewhere in the SQL (an
    OR'ed LIKE, a CASE label) or — for a value read only from capitalisation — a name (a
    table, a column) holds it; a capitalised value held nowhere is reported as unmatched,
    without making the filters partial — such a phrase is as often a title, a product or
    a metric as a value to filter on, unless it names a place (``filter_missing``). ``literal``
    is the SQL literal already found for it, if any (looked up here otherwise). True when
    answered."""
    vals = ", ".join(req.values)
    literal = literal if literal is not None else stated_literal(req, sql)
    names = [*sql.tables, *sql.columns, *(p.alias for p in sql.projections if p.alias)]
    name = (
        None
        if literal
        else next((n for v in req.values if (n := value_in_names(v, names)) is not None), None)
    )
    if literal is None and name is None and (place := stated_place(req.values, text)):
        # "users in Munich" as LIKE '%München%': another name of the city; else missing
        literal = next((s for s in sql.literals if same_city(place, s.strip("%_ "))), None)
        if literal is None:
            return False  # "users in Canada": a missing filter (:func:`listed_missing`)
    held = None if literal or name else held_otherwise(req.values[0], sql, text)
    if literal is None and name is None and held is None and (code := other_code(vals, sql)):
        out.add(
            "filter_wrong_value",
            "warning",
            f"the question names {vals}; the SQL compares {code}, another code of its form",
            req.text,
            code,
            "filter_alignment",
        )
        return False
    if literal is None and name is None and held is None and (
        swapped := other_value(req.values[0], sql, searchable(text), matched)
    ):
        out.add(
            "value_substituted",
            "warning",
            f"the question names {vals}; the SQL keeps {swapped}, a value the question never"
            " names",
            req.text,
            swapped,
            "filter_alignment",
        )
        return False
    if literal is None and name is None and held is None:
        bare = not sql.filters  # and the SQL restricts nothing at all: value_unfiltered
        why = "neither a filter nor a name of the SQL holds it"
        why = "the SQL filters nothing" if bare else why
        quoted = req.text[:1] in "\"'“‘" and not bare  # a quoted phrase read as a weak cue:
        out.add(  # a gloss, scare quotes, an excerpt ("definitions", "Bad", "Whilst …")
            "value_unfiltered" if bare else "value_unmatched",
            "info" if quoted else "warning",
            f"the question names {vals}; {why}",
            req.text,
            None,
            "filter_alignment",
        )
        return False
    where = f"literal {literal!r}" if literal is not None else held or f"name {name!r}"
    answer_elsewhere(req, where, literal or name or held, matched, out)  # held: "Toys category"
    return True


#: Words before a column's name that are no value of it ("each department", "the largest
#: department", "their department", "a new category").
_NOT_MODIFIERS = (
    lx.DETERMINERS
    | lx.SUPERLATIVE_WORDS
    | lx.NUMBER_WORD_SET
    | lx.REQUEST_STOPS
    | lx.REQUEST_FILLERS
    | lx.CONNECTIVES
    | lx.AGGREGATE_WORDS
    | lx.IMPERATIVES
    | lx.DISTINCT_WORDS
    | lx.RELATIVE_DATE_WORDS
    | lx._words("same other another new main specific given particular their my our your")
)


#: Last words of a column name that do not sort rows into kinds: the word before them is
#: whose they are ("the customer name", "the order date"), not a value.
_NOT_KIND_HEADS = lx._words(
    "name names id ids code codes number numbers date dates time times title titles value values"
)


def _a_word(value: str) -> bool:
    """Is a literal a word or words (``'sales'``, ``'closed won'``), not a flag or a symbol?"""
    return sum(ch.isalpha() for ch in value) >= 3 and value not in NEUTRAL_LITERALS


def modifier_of_column(f: Filter, text: str, sql: Spec) -> tuple[str, bool] | None:
    """The value the question gives a column that the SQL compares with a value the question
    never states, and whether the question says it with the value's own word, or None: a
    word before the column's name ("engineering department" against ``department =
    'Sales'``: the value may be a synonym), or before the last word of the SQL's value in
    other words ("organic search" against ``channel = 'paid_search'``: another value). The
    word must be no determiner, superlative, participle or grammar word, and no word of a
    table, column or string literal of the SQL; the column's name must end in a noun that
    sorts rows into kinds (not a name, an id or a date), and its value be a word (not a flag
    such as ``'Y'`` or a symbol). ``text`` is the searchable question
    (:func:`stef.align.matching.searchable`).

    >>> from stef.spec import Filter, Spec
    >>> sales = Filter("department", "=", ("sales",), "department = 'Sales'")
    >>> sql = Spec(filters=[sales], columns=["department", "salary"], tables=["employees"],
    ...     flags={"string_literals": ["Sales"]})
    >>> modifier_of_column(sales, " employees in the engineering department ", sql)
    ('engineering department', False)
    >>> modifier_of_column(sales, " employees of each department ", sql) is None
    True
    >>> paid = Filter("channel", "=", ("paid_search",), "channel = 'paid_search'")
    >>> sql = Spec(filters=[paid], columns=["channel"], flags={"string_literals": ["paid_search"]})
    >>> modifier_of_column(paid, " daily sessions from organic search ", sql)
    ('organic search', True)
    """
    if f.op not in ("=", "in") or not f.column:
        return None
    written = written_strings(sql)
    if not f.values or not all(v in written and _a_word(v) for v in f.values):
        return None  # a string literal the SQL compares, not a number, a flag or an expression
    names = {w.removesuffix("s") for n in (*sql.tables, *sql.columns) for w in name_words(n)}
    literal_words = {w for v in written for w in name_words(v)}
    words = name_words(f.column)
    head = words[-1] if words else ""
    # the question says no word of the value ("data engineering team" for 'Data Platform')
    partly = any(f" {w} " in text for v in f.values for w in name_words(v) if len(w) >= 3)
    if any(len(v) >= 6 and v in text.replace(" ", "") for v in map(_squashed, f.values)):
        return None  # "the old school format" as format = 'oldschool': its words run together
    if len(head) >= 4 and head not in _NOT_KIND_HEADS and not partly:
        for word in _words_before(head, text):
            if _gives_value(word, head, names, literal_words) and not any(
                abbreviates(v, word) for v in f.values
            ):  # "the London office" as office = 'LDN'
                return f"{word} {head}", False
    for value in f.values if len(f.values) == 1 else ():
        parts = name_words(value)
        if len(parts) < 2 or len(parts[-1]) < 4 or any(f" {p} " in text for p in parts[:-1]):
            continue  # one word, or the question says the value's other words too
        if any(len(p) == 1 for p in parts[:-1]):
            continue  # a letter may stand for any word: 'X-Large' for "extra large"
        for word in _words_before(parts[-1], text):
            if _gives_value(word, parts[-1], names, literal_words) and not any(
                SequenceMatcher(None, word, p).ratio() >= 0.75 for p in parts[:-1]
            ):  # "Noth America" misspells the value's "north"
                return f"{word} {parts[-1]}", True
    return None


def _words_before(head: str, text: str) -> list[str]:
    """The words (three letters or more) right before ``head`` or its plural in ``text``."""
    said: set[str] = set()
    for form in (head, head + "s"):
        i = text.find(f" {form} ")
        while i > 0:
            before = text[:i].rsplit(" ", 1)[-1]
            if before.isalpha() and len(before) >= 3:
                said.add(before)
            i = text.find(f" {form} ", i + 1)
    return sorted(said)


def _gives_value(word: str, head: str, names: set[str], literal_words: set[str]) -> bool:
    """Can ``word`` before ``head`` be a value: no grammar word, superlative, participle, the
    head again, nor a word of the SQL's names or literals, nor one a literal shortens
    (``'ENT'`` for "enterprise": then the SQL reads it)?"""
    if word in _NOT_MODIFIERS or word.removesuffix("s") in names or word in literal_words:
        return False
    if any(len(w) >= 2 and word.startswith(w) for w in literal_words):
        return False
    return not (word.endswith("est") or word == head or (len(word) > 4 and word.endswith("ed")))


def quoted_column(req: Filter, sql: Spec) -> str | None:
    """The output column a quoted phrase of two words or more names ("What is "the date in
    location from" for …" against ``date_in_location_from``, a slip of a letter allowed):
    the question quotes a column's name, it gives no value.

    >>> from stef.spec import Projection
    >>> sql = Spec(projections=[Projection("t.date_in_locaton_to", None, ("date_in_locaton_to",))])
    >>> asked = Filter(None, "=", ("the date in location to",), '"the date in location to')
    >>> quoted_column(asked, sql)
    'date_in_locaton_to'
    >>> quoted_column(Filter(None, "=", ("robin cv",), '"Robin CV'), sql) is None
    True
    """
    if req.op != "=" or len(req.values) != 1 or req.text[:1] not in "\"'“‘":
        return None
    words = [w for w in name_words(req.values[0]) if w not in _ARTICLES]
    if len(words) < 2 or len(req.values[0]) > 80:
        return None
    said = "".join(words)
    for p in sql.projections:
        for column in p.columns:
            name = canon_col(column)
            near = abs(len(name) - len(said)) <= 2  # a ratio of 0.95 needs near lengths
            if name == said or (near and SequenceMatcher(None, name, said).ratio() >= 0.95):
                return column.rsplit(".", 1)[-1]
    return None


_ARTICLES = frozenset(("the", "a", "an"))


def _squashed(value: str) -> str:
    """The letters and digits of a value, case-folded: 'Old-School' is 'oldschool'."""
    return "".join(ch for ch in value.casefold() if ch.isalnum())

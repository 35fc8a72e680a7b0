"""Checks of the SQL's literals and names against the question and its enrichment (Q_e):
numbers the question states but the SQL never uses, literals nobody asked for, columns and
functions a hint prescribes, selected or filtered columns the question never names
(schema linking), and string literals written in another letter case.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from stef.align.aggregation import sql_aggs
from stef.align.dates import relative_period
from stef.align.matching import (
    BOUNDS,
    NAME_SPLIT,
    NEUTRAL_LITERALS,
    SIGNED_NUMBER,
    canon_col,
    int_value,
    name_mentioned,
    occurs,
    quoted_terms,
    text_mentions,
    values_match,
)
from stef.align.matching import _digits as digits_of
from stef.findings import FindingCollector
from stef.nl.words import TEXT_CACHE_SIZE, plain_ascii
from stef.rules import Rules
from stef.spec import Filter, Spec, normalize_number, normalize_value

#: Words a hint's prose uses that are no column ("one of the district names").
_HINT_PROSE = frozenset(
    (
        *("one", "ones", "the", "this", "that", "these", "those", "each", "all", "any", "some"),
        *("none", "it", "its", "they", "them", "their"),
    )
)


def _hint_column_used(c: str, sql_cols: set[str], sql: Spec) -> bool:
    """Does the SQL use the column a hint names? Also when the SQL spells it as a word
    of a longer name (``ana`` of `` `ana pattern` ``), with one slip (``covertedmanacost``),
    as a table's ``id`` (``alignment.id`` → ``alignment_id``), or when the "column" is a
    value or (part of) a table's name the SQL uses (``TR001_10_11 is the bond id``, "gas
    stations" for ``gasstations``).

    >>> s = Spec(columns=["ana pattern", "convertedmanacost", "alignment_id"], literals=["f"],
    ...          tables=["gasstations"])
    >>> cols = {canon_col(c) for c in s.columns}
    >>> [_hint_column_used(c, cols, s) for c in ("ana", "covertedmanacost", "id", "f", "age")]
    [True, True, True, True, False]
    >>> _hint_column_used("stations", cols, s)
    True
    >>> _hint_column_used("clients", set(), Spec(tables=["client"]))  # "customers refer to clients"
    True
    >>> _hint_column_used("heropower", set(), Spec(tables=["hero_power"]))
    True
    """
    if c in sql_cols or c in _HINT_PROSE or len(c) < 2:
        return True
    if c in sql.literals or any(
        c in (t, canon_col(t)) or (len(c) >= 4 and c in t) for t in sql.tables
    ):
        return True  # "superpower refers to hero_power": the table
    if any(c == canon_col(lit) for lit in sql.literals):  # "TR001_10_11 is the bond id"
        return True
    if len(c) >= 5 and c.endswith("s") and any(c[:-1] == canon_col(t) for t in sql.tables):
        return True  # "customers refer to clients": the client table's rows
    words = {w for col in sql.columns for w in NAME_SPLIT.split(col.casefold()) if w}
    if c in words:
        return True  # a word of a longer name: ``acl`` of `` `aCL IgA` ``
    for s in sql_cols:
        if len(c) >= 4 and c in s:
            return True
        if c == "id" and s.endswith("id"):
            return True
        if len(c) >= 6 and abs(len(s) - len(c)) <= 2 and _one_slip(c, s):
            return True
    return False


def _one_slip(a: str, b: str) -> bool:
    """Are two names the same but for one inserted, dropped or changed letter? A digit is
    no slip: ``atom_id2`` and ``atom_id``, ``admfname2`` and ``admfname1`` are two columns.

    >>> _one_slip("covertedmanacost", "convertedmanacost"), _one_slip("atomid2", "atomid")
    (True, False)
    """
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if i == len(b):
        return True  # the same name
    if b[i].isdecimal() or (len(a) == len(b) and a[i].isdecimal()):
        return False
    return a[i + (len(a) == len(b)) :] == b[i + 1 :]


class _Joined:
    """Strings joined by NUL, to find those holding a needle (no NUL in it) in one scan.

    >>> _Joined(["agent 13", "7", "2013-04"]).containing("13")
    ['agent 13', '2013-04']
    """

    def __init__(self, items: Sequence[str]) -> None:
        self.items = list(items)
        self.text = "\x00".join(self.items)
        self.starts = list(itertools.accumulate((len(i) + 1 for i in self.items[:-1]), initial=0))

    def containing(self, needle: str) -> list[str]:
        if not needle:
            return list(self.items)
        out = []
        pos = self.text.find(needle)
        while pos >= 0:
            i = bisect.bisect_right(self.starts, pos) - 1
            out.append(self.items[i])
            pos = self.text.find(needle, self.starts[i] + len(self.items[i]) + 1)
        return out


class _ValueIndex:
    """The SQL's values (and names), indexed for the question's numbers: a number is
    compared only with the values it can match, not with each (3,500 numbers against a
    2,000-value IN list: issue 13, item 5).

    Every way :func:`values_match` holds (equal, a year of a date, a date's two spellings,
    a word contained, either way round) keeps the digits of one side inside the digits of
    the other, written as they are or as numbers (``4.0`` equals ``'04'``), but for a LIKE
    pattern, so the values whose digits hold the number's, or are held by them, are all
    that can match.

    >>> ix = _ValueIndex({"agent 13", "2013-04", "7", "north"}, ["numge1500"])
    >>> sorted(ix.could_match("13")), ix.containing("1500")
    (['2013-04', 'agent 13', 'north'], ['numge1500'])
    """

    def __init__(self, values: Iterable[str], names: Sequence[str]) -> None:
        self.values = list(values)
        self.by_digits: dict[str, list[str]] = {}
        for v in self.values:
            self.by_digits.setdefault(digits_of(v), []).append(v)
            number = normalize_number(v)  # '04' equals 4.0: indexed under '4' too
            if number is not None and digits_of(number) != digits_of(v):
                self.by_digits.setdefault(digits_of(number), []).append(v)
        self.lengths = sorted({len(d) for d in self.by_digits})
        self.digit_keys = _Joined(list(self.by_digits))
        self.texts = _Joined([*self.values, *names])

    def could_match(self, v: str) -> list[str]:
        """The values ``values_match(v, value)`` can hold for."""
        dv = digits_of(v)
        if "%" in v or not dv:
            return self.values
        number = normalize_number(v)  # 4.0 equals '04'
        keys: set[str] = set()
        for d in {dv, digits_of(number)} if number is not None else (dv,):
            keys.update(self.digit_keys.containing(d))  # values whose digits hold v's
            for n in self.lengths:  # values whose digits are held in v's
                held = (d[i : i + n] for i in range(len(d) - n + 1))
                keys.update(k for k in held if k in self.by_digits)
        return list(dict.fromkeys(value for k in keys for value in self.by_digits[k]))

    def containing(self, v: str) -> list[str]:
        """The values and names holding ``v`` (a number: no NUL in it)."""
        return self.texts.containing(v)


def _number_used(v: str, values: set[str], sql: Spec, index: _ValueIndex | None = None) -> bool:
    """Does the SQL use the question's number ``v``: as a value, as a word of a longer
    value or name ('Agent 13', ``numge1500``, `` `enrollment (ages 5-17)` ``), or one off
    as the other side of a strict bound ("more than 50" as ``BETWEEN 51 AND 59``, "after
    1996" as ``>= '1997-01-01'``)?

    >>> s = Spec(columns=["numge1500"], literals=["agent 13", "51", "1997-01-01", "2024"],
    ...          filters=[Filter("speed", ">=", ("51",)), Filter("d", ">=", ("1997-01-01",)),
    ...                   Filter("year", "=", ("2024",))])
    >>> [_number_used(v, set(s.literals), s) for v in ("13", "1500", "50", "1996", "2025")]
    [True, True, True, True, False]
    """
    index = index or _ValueIndex(values, [*sql.columns, *sql.tables])  # sharded: events_2017*
    if any(values_match(v, s) for s in index.could_match(v)):
        return True
    if any(occurs(v, s, _digit_or_dot, str.isdecimal, _dot_digit) for s in index.containing(v)):
        return True
    n = int_value(v)
    if n is None:
        return False
    bounds = [b for f in sql.filters if f.op in BOUNDS or f.op == "between" for b in f.values]
    return any(values_match(str(m), b) for m in (n - 1, n + 1) for b in bounds)


def _only_inside(c: str, sql_cols: set[str], sql: Spec) -> str | None:
    """The longer column the SQL uses where a hint names ``c``, when ``c`` is used only
    inside such names: the hint's ``DisplayName`` answered by ``OwnerDisplayName``, its
    ``date`` by ``CreationDate``, its ``seconds`` by ``milliseconds`` are other columns. A
    flag named for it (``isTextless`` for ``textless``) is the same column.

    >>> cols = {"ownerdisplayname", "title", "istextless"}
    >>> s = Spec(columns=sorted(cols))
    >>> _only_inside("displayname", cols, s), _only_inside("textless", cols, s)
    ('ownerdisplayname', None)
    >>> _only_inside("title", cols, s) is None
    True
    """
    if len(c) < 4 or c in sql_cols or c in sql.literals or any(c in t for t in sql.tables):
        return None
    if any(c in NAME_SPLIT.split(col.casefold()) for col in sql.columns):
        return None  # a word of a longer name: ``acl`` of `` `aCL IgA` ``
    longer = sorted(x for x in sql_cols if c in x)
    if not longer or any(x in ("is" + c, "has" + c) for x in longer):
        return None
    return longer[0]


def _digit_or_dot(ch: str) -> bool:
    return ch.isdecimal() or ch == "."


def _dot_digit(pair: str) -> bool:
    return len(pair) == 2 and pair[0] == "." and pair[1].isdecimal()


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


#: Words no hint names as a column.
_FUNCTION_WORDS = frozenset(
    {"with", "for", "and", "or", "the", "of", "in", "on", "by", "to", "from", "per", "a", "an"}
    | {"minus", "plus", "times"}  # "% promoters minus % detractors": arithmetic, no column
)


def _check_hint_columns(
    nl: Spec,
    sql: Spec,
    out: FindingCollector,
    synonyms: Mapping[str, Sequence[str]] | None,
    question: str,
) -> None:
    """Each column the hints name is used by the SQL (``hint_column_missing``), as itself
    rather than inside a longer name (``hint_column_other``)."""
    sql_cols = {canon_col(c) for c in sql.columns}
    sql_cols |= {canon_col(p.alias) for p in sql.projections if p.alias}
    literals = {lit.casefold() for lit in sql.literals}
    quoted = quoted_terms(question)
    for col in nl.columns:
        c = canon_col(col)
        if c in _FUNCTION_WORDS or col.casefold().strip() in quoted:
            continue  # "(with limited blacklist …)" read as a column list: no column
        said = (synonyms or {}).get(col) or ()
        if said and any(w.casefold() in literals for w in said):
            continue
        if c and not _hint_column_used(c, sql_cols, sql):
            out.add(
                "hint_column_missing",
                "warning",
                f"the enriched question names column {col!r}; the SQL never uses it",
                col,
                None,
                "hint",
            )
        elif c and (longer := _only_inside(c, sql_cols, sql)):
            out.add(
                "hint_column_other",
                "warning",
                f"the enriched question names column {col!r}; the SQL uses {longer!r}, another"
                " column whose name holds it",
                col,
                longer,
                "hint",
            )


def check_literals_and_hints(
    nl: Spec,
    sql: Spec,
    out: FindingCollector,
    text: str,
    reported: set[str],
    synonyms: Mapping[str, Sequence[str]] | None = None,
    question: str = "",
) -> None:
    """Columns the hints name, numbers the question states, literals nobody asked for.
    A column named only through a synonym that the SQL compares as a value ("the sales
    team" as ``team = 'sales'`` while "sales" is a synonym of ``amount``) is that value,
    not the column; a term the question itself quotes (``an answer about `hg pull
    --force```) is what the user searches for, whatever the hints quote."""
    _check_hint_columns(nl, sql, out, synonyms, question)
    sql_values = set(sql.literals)
    if sql.limit is not None:
        sql_values.add(str(sql.limit))
    index: _ValueIndex | None = None  # built for the first number that needs it
    # a number the question never wrote: "last year" resolved to 2023 at the record's time
    unwritten = {
        v
        for f in nl.filters
        if not any(map(str.isdigit, f.text)) and relative_period(f.text) is not None
        for v in f.values
    }
    for v in nl.literals:
        if normalize_value(v) != v or v in unwritten:
            continue
        if int_value(v) is None and not SIGNED_NUMBER.fullmatch(v):
            continue
        if v in NEUTRAL_LITERALS or v in reported:
            continue
        index = index or _ValueIndex(sql_values, [*sql.columns, *sql.tables])
        if not _number_used(v, sql_values, sql, index):
            out.add(
                "number_missing",
                "warning",
                f"the question mentions {v}; the SQL never uses it",
                v,
                None,
                "literal",
            )
    for lit in sql.literals:
        if lit in NEUTRAL_LITERALS or lit in reported:
            continue
        if not text_mentions(lit, text):
            reported.add(lit)
            out.add(
                "literal_unexplained",
                "warning",
                f"SQL literal {lit!r} appears in neither the question nor the enriched question",
                None,
                lit,
                "literal",
            )


#: ``count(x)`` without DISTINCT: a row count, whatever column it names.
_ROW_COUNT = re.compile(r"count\((?!distinct\b)[^(),]*\)")


#: Columns that label the rows a question asks for (``name``, ``full_name``, ``title``).
_LABEL = re.compile(r"(?:name|title)$")


def check_schema_linking(
    sql: Spec,
    out: FindingCollector,
    stems: frozenset[str],
    rules: Rules,
    matched: Sequence[Filter] = (),
    benign: Sequence[Filter] = (),
    labels: bool = False,
) -> None:
    """Columns the SQL selects or filters on that the question never names (filters that
    apply a value the question states are explained by that value); ``stems`` are the
    :func:`text_stems` of the question and its enrichment. With ``labels`` (the question
    names no item to return: "inactive customers") a name or title output labels the rows
    and needs no mention."""
    explained = {id(f) for f in matched}
    benign_cols = {canon_col(f.column) for f in benign if f.column}
    syn: dict[str, list[str]] = {c.casefold(): list(v) for c, v in rules.column_synonyms.items()}
    seen: set[str] = set()
    for p in sql.projections:
        if _ROW_COUNT.fullmatch(p.expr):
            continue  # COUNT(col) counts rows: which column it names says nothing
        for col in p.columns:
            if col in seen:
                continue
            seen.add(col)
            if labels and _LABEL.search(canon_col(col)):
                continue  # a name labelling the rows asked for
            if not name_mentioned(col, stems, syn.get(col, ())):
                out.add(
                    "projection_unexplained",
                    "warning",
                    f"selected column {col!r} is named nowhere in the question or its enrichment",
                    None,
                    p.text or p.expr,
                    "schema_linking",
                )
    for f in sql.filters:
        fcol = f.column
        if (
            not fcol
            or fcol in seen
            or f.clause in ("join", "case", "or")
            or not f.values
            or id(f) in explained
            or canon_col(fcol) in benign_cols
        ):
            continue
        seen.add(fcol)
        if not name_mentioned(fcol, stems, syn.get(fcol, ())):
            out.add(
                "filter_column_unexplained",
                "warning",
                f"filtered column {fcol!r} is named nowhere in the question or its enrichment",
                None,
                f.text,
                "schema_linking",
            )


#: A space before closing punctuation or after an opening parenthesis.
_LOOSE_SPACE = re.compile(r"\s+(?=[,.;:!?)])|(?<=\()\s+")
#: A space before a comma or a semicolon only.
_LOOSE_COMMA = re.compile(r"\s+(?=[,;])")


def check_value_case(sql: Spec, out: FindingCollector, question: str, enriched: str | None) -> None:
    """String literals the question writes in another letter case: ``=`` on strings is
    case-sensitive in SQLite, PostgreSQL and others, so ``'alameda'`` misses 'Alameda' (not
    in T-SQL and MySQL, whose default collations ignore case).
    Also string literals spaced otherwise than the question or its hints write them
    (``'Rochester , NY'`` for "Rochester, NY", a tokenizer's habit): no stored value reads
    so, and string comparison is exact; and dates in another form (:func:`check_date_forms`)."""
    check_date_forms(sql, out, enriched)
    raw = f"{question} {enriched or ''}"
    folded = raw.casefold()
    for s in sql.flags.get("string_literals") or ():
        core = s.strip("%_ ")
        if len(core) == 1 and core.isalpha() and _quoted_otherwise(core, raw):
            folded += f" {core.casefold()} "  # a code a hint quotes in the other case: 'c', 'C'
        elif len(core) < 2 or not any(map(str.isalpha, core)) or core in raw:
            continue
        if " " in core and (tight := _spaced_otherwise(core, folded)) is not None:
            out.add(
                "value_spacing_mismatch",
                "error",
                f"SQL literal {core!r} puts spaces where the question writes {tight!r}; "
                "string comparison is exact",
                tight,
                s,
                "literal",
            )
            continue
        if not sql.flags.get("case_insensitive") and occurs(core.casefold(), folded, _word, _word):
            out.add(
                "value_case_mismatch",
                "warning",
                f"SQL literal {core!r} is written with another letter case in the question; "
                "string comparison is case-sensitive in most databases",
                core,
                s,
                "literal",
            )


#: A date literal written with dashes ("2013-09", "2013-09-01"): year and month.
_DASHED_DATE = re.compile(r"((?:19|20)\d\d)-(\d\d)(?:-\d\d)?")
#: A month a hint writes as bare digits, year then month ("201309", "'201309'").
_DIGIT_MONTH = re.compile(r"(?<![\w.-])((?:19|20)\d\d(?:0[1-9]|1[0-2]))(?![\w.-])")


def check_date_forms(sql: Spec, out: FindingCollector, enriched: str | None) -> None:
    """A date literal written with dashes (``'2013-09'``, ``LIKE '2013-06%'``) for a month
    the hints write as bare digits ("September 2013 refers to date = '201309'"): the column
    stores the hints' form, and comparing strings of another form matches nothing.

    >>> out = FindingCollector()
    >>> sql = Spec(flags={"string_literals": ["2013-09"]})
    >>> check_date_forms(sql, out, "September 2013 refers to yearmonth.date = '201309'")
    >>> [(f.kind, f.message) for f in out.findings]  # doctest: +NORMALIZE_WHITESPACE
    [('date_format_mismatch', "SQL literal '2013-09' writes with dashes the month the hints
      write as 201309, the form the column stores; string comparison is exact")]
    """
    if not enriched or "-" in enriched or not _DIGIT_MONTH.search(enriched):
        return  # a hint that writes dashes itself says nothing of the stored form
    months = set(_DIGIT_MONTH.findall(enriched))
    for s in sql.flags.get("string_literals") or ():
        m = _DASHED_DATE.fullmatch(s.strip("%_ "))
        if m is not None and (month := m.group(1) + m.group(2)) in months:
            out.add(
                "date_format_mismatch",
                "error",
                f"SQL literal {s!r} writes with dashes the month the hints write as {month},"
                " the form the column stores; string comparison is exact",
                month,
                s,
                "literal",
            )
            return


def _quoted_otherwise(letter: str, raw: str) -> bool:
    """Does the text quote a one-letter code only in the other letter case (the hint's
    ``element = 'c'`` against the SQL's ``'C'``)?

    >>> _quoted_otherwise("C", "carbon refers to element = 'c'"), _quoted_otherwise("c", "= 'c'")
    (True, False)
    """
    other = letter.swapcase()
    return any(f"{q}{other}{q}" in raw for q in "'\"") and not any(
        f"{q}{letter}{q}" in raw for q in "'\""
    )


def _spaced_otherwise(literal: str, folded: str) -> str | None:
    """The literal with the spaces before punctuation taken out, when only so does
    ``folded`` (the question and hints, case-folded) write it; else None.

    >>> _spaced_otherwise("Vienna , Austria", "the city vienna, austria")
    'Vienna, Austria'
    >>> _spaced_otherwise("Vienna , Austria", "vienna , austria or vienna, austria") is None
    True
    >>> _spaced_otherwise("fine , you win :)", 'commented "fine, you win :)"')
    'fine, you win :)'
    """
    if literal.casefold() in folded:
        return None
    for loose in (_LOOSE_SPACE, _LOOSE_COMMA):  # "fine , you win :)": the smiley keeps its space
        tight = loose.sub("", literal)
        if tight != literal and occurs(tight.casefold(), folded, _word, _word):
            return tight
    return None


_HINT_FUNCTION = re.compile(  # not "the calendar year (2024)": a year in parentheses
    r"\b(count|sum|avg|min|max|year|subtract|divide|substr|cast)\s*\((?!\s*\d{4}\s*\))", re.I
)
_HINT_DISTINCT = re.compile(r"\bdistinct\b", re.I)
#: :data:`_HINT_FUNCTION` for lower-case plain ASCII text, its branches by first character
#: (the ``\b`` tested after it), which the engine scans for; a match is the name, spaces
#: and ``(`` (tests/test_regex_forms.py holds it to the pattern).
_HINT_FUNCTION_LOW = re.compile(
    r"(?:c(?<!\wc)(?:ount|ast)|s(?<!\ws)(?:um|ubtract|ubstr)|a(?<!\wa)vg|m(?<!\wm)(?:in|ax)"
    r"|y(?<!\wy)ear|d(?<!\wd)ivide)\s*\((?!\s*\d{4}\s*\))",
    re.A,
)


#: A LIKE pattern that keeps a year ('1964%'): the year of a date, as YEAR() would.
_YEAR_PATTERN = re.compile(r"[12][0-9]{3}-?%")


_BACK_QUOTED = re.compile(r"`[^`]*`")


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _hint_functions(enriched: str) -> frozenset[str]:
    """The functions an enriched question prescribes, lower-case (``distinct`` too); a
    back-quoted column's name is no call (```Free Meal Count (K-12)```).

    >>> sorted(_hint_functions("rate = `Free Meal Count (K-12)` / `Enrollment (K-12)`"))
    []
    >>> sorted(_hint_functions("average = DIVIDE(SUM(x), COUNT(id))"))
    ['count', 'divide', 'sum']
    """
    if "`" in enriched:
        enriched = _BACK_QUOTED.sub(" ", enriched)
    if plain_ascii(enriched):
        low = enriched.lower()
        named = {m.group(0)[:-1].rstrip() for m in _HINT_FUNCTION_LOW.finditer(low)}
    else:
        named = {m.lower() for m in _HINT_FUNCTION.findall(enriched)}
    if _HINT_DISTINCT.search(enriched):
        named.add("distinct")
    return frozenset(named)


def check_hint_functions(nl: Spec, sql: Spec, out: FindingCollector, enriched: str | None) -> None:
    """Functions the enriched question prescribes (``SUM(cost)``, ``year(dob) > 1980``,
    ``DISTINCT``) that the SQL does not use."""
    if not enriched:
        return
    named = _hint_functions(enriched)
    if not named:
        return
    aggs = sql_aggs(sql)
    funcs = set(sql.flags.get("functions") or ())
    first = sql.order_by[0] if sql.order_by else None
    divides = "div" in funcs  # anywhere: an output, HAVING, ORDER BY, WHERE
    # AVG is SUM / COUNT; SUM(CASE WHEN … THEN 1 ELSE 0 END) is a conditional COUNT
    average = "avg" in aggs
    conditional_count = "sum" in aggs and bool(funcs & {"case", "if"})
    have = {
        "count": "count" in aggs or average or conditional_count,
        "sum": "sum" in aggs or average,
        "avg": average or divides,
        "min": "min" in aggs
        or (first is not None and first.direction == "asc" and sql.limit is not None),
        "max": "max" in aggs
        or (first is not None and first.direction == "desc" and sql.limit is not None),
        "year": any(f.func == "year" for f in sql.filters)
        or bool(funcs & {"year", "timetostr", "extract", "strftime"})
        or any(
            f.op == "like" and any(_YEAR_PATTERN.fullmatch(v) for v in f.values)
            for f in sql.filters
        ),
        "subtract": "sub" in funcs,
        "divide": divides or average,
        "substr": bool(funcs & {"substring", "substr"}),
        "cast": bool(sql.flags.get("cast")),
        "distinct": sql.distinct or any(a.distinct for a in sql.aggregations) or bool(sql.group_by),
    }
    for name in sorted(named):
        if not have.get(name, True):
            out.add(
                "hint_function_missing",
                "warning",
                f"the enriched question prescribes {name.upper()}; the SQL does not use it",
                name.upper(),
                None,
                "hint",
            )
    by = _DIVIDED_BY.search(enriched)
    if by is not None and not divides and by.group("n") not in sql.literals:
        out.add(  # "Average monthly consumption = AVG(consumption) / 12" as AVG(consumption)
            "hint_function_missing",
            "warning",
            f"the enriched question divides by {by.group('n')}; the SQL divides by nothing",
            by.group(0).strip(),
            None,
            "hint",
        )


#: A hint's formula that divides a function's result by a number: ``AVG(consumption) / 12``.
_DIVIDED_BY = re.compile(r"\)\s*/\s*(?P<n>(?!1\b)\d+(?:\.\d+)?)\b")


def check_hint_values(matched: Sequence[tuple[Filter, Filter]], out: FindingCollector) -> None:
    """A value the enriched question quotes in full ("'Electrical and Computer Engineering
    Department' is the department") matched to a SQL equality on part of it (``department
    = 'Electrical and Computer Engineering'``): a quoted hint gives the stored value, which
    the SQL's shorter or longer string is not (``filter_wrong_value``, a warning: the
    filter class keeps the match). Said once.

    >>> nl = Filter("department", "=", ("ece department",), "'ECE Department' is the department",
    ...             "enriched")
    >>> sql = Filter("department", "=", ("ece",), "department = 'ECE'")
    >>> out = FindingCollector()
    >>> check_hint_values([(nl, sql)], out)
    >>> [f.kind for f in out.findings]
    ['filter_wrong_value']
    """
    for nl, sql in matched:
        if nl.clause != "enriched" or nl.op != "=" or sql.op != "=" or len(nl.values) != 1:
            continue
        if len(sql.values) != 1 or not any(q in (nl.text or "") for q in ("'", '"')):
            continue
        want, got = nl.values[0].strip(), sql.values[0].strip()
        if any(c in got for c in "%_") or any(c in want for c in "%_'\""):
            continue  # a pattern (the LIKE checks read it), or a quote read into the value
        extra = _extra_words(_WORDS.findall(want), _WORDS.findall(got))
        if not extra or all(w.isdigit() for w in extra):
            continue  # the same words (a stray quote, a "!"), or a number more (a time's ".0")
        out.add(
            "filter_wrong_value",
            "warning",
            f"the enriched question gives {nl.column or 'the value'} = {want!r}; the SQL"
            f" compares {got!r}, a part of it or more",
            nl.text,
            sql.text,
            "filter",
        )
        return


_WORDS = re.compile(r"[a-z0-9]+")


def _extra_words(a: list[str], b: list[str]) -> list[str]:
    """The words one list has beyond the other where the shorter runs inside the longer,
    else empty.

    >>> _extra_words(["ece", "department"], ["ece"]), _extra_words(["a", "b"], ["a", "c"])
    (['department'], [])
    """
    long, short = (a, b) if len(a) > len(b) else (b, a)
    if not short or len(long) == len(short):
        return []
    for i in range(len(long) - len(short) + 1):
        if long[i : i + len(short)] == short:
            return long[:i] + long[i + len(short) :]
    return []

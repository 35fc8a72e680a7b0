"""Whose rows a query counts and keeps, against the rows the question is about.

* "How many customers placed an order in 2024?" answered by ``SELECT COUNT(*) FROM orders
  WHERE …`` counts orders, one per order, not customers (``count_subject_mismatch``): the
  table counted is the question's other noun, and nothing makes the count distinct.
* "Number of orders per customer, including customers with no orders" answered with an
  inner join to ``orders`` drops the customers it asks to keep (``outer_join_missing``).
* "How many orders and customers …?" answered by one count (``projection_count_short``).
* "The musician with the most songs" as a count per group of the rows of a table that names
  nothing of songs (``count_subject_mismatch``).

All read names only (no schema): a table counted that the question never names, or a
join to a table the "with no …" phrase does not name, is left alone.
"""

from __future__ import annotations

import re

from stef.align.terms import _Vocabulary
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.request import singular
from stef.spec import Projection, Spec

_WORD = re.compile(r"[a-z]+")
#: The counted noun of a count question: "how many customers", "number of users".
_COUNTED = re.compile(
    r"\b(?:how\s+many|number\s+of|count\s+(?!the\s+number\b)(?:of\s+)?(?:the\s+)?)\s*"
    r"(?:of\s+(?:the\s+)?)?(?P<n>[a-z]+)"
)


def _same(word: str, name: str) -> bool:
    """Does a question word name a table (singular forms, or one's prefix of four letters)?

    >>> _same("orders", "order"), _same("customers", "customer_accounts"), _same("user", "orders")
    (True, True, False)
    """
    w, n = singular(word), singular(name.casefold())
    return w == n or (len(w) >= 4 and n.startswith(w))


#: Words that end the counted noun phrase ("how many customers placed …").
_PHRASE_END = lx._words(
    """are is were was have has had did do does in of with that who which from by for on at
    there per each whose where when than"""
)


def _counted_phrase(text: str) -> list[str]:
    """The counted noun phrase at the start of ``text``: words up to a verb, a preposition
    or a clause ("white bordered cards are …" → white, bordered, cards).

    >>> _counted_phrase("customers placed an order"), _counted_phrase("white bordered cards are")
    (['customers'], ['white', 'bordered', 'cards'])
    >>> _counted_phrase("total number of clubs")
    ['clubs']
    """
    words: list[str] = []
    for w in _WORD.findall(text)[:8]:
        if w == "of" and words and words[-1] in _QUANTITY:
            words = []  # "total number of clubs", "kinds of enzymes": the clubs, the enzymes
            continue
        if w in _PHRASE_END or (
            words and w.endswith(("ed", "ing", "ght")) and singular(words[-1]) != words[-1]
        ):
            break  # "customers placed", "kids staying", "students taught": a plural, a verb
        words.append(w)
    return words or [""]


#: Nouns of a quantity or a kind, whose "of …" names what is counted.
_QUANTITY = lx._words("number numbers total count amount kinds kind types type sorts sort")
#: Words before a noun that place the counted rows in it ("items in inventory").
_INSIDE = lx._words("in of from at on within inside into")


def check_counted_rows(nl: Spec, sql: Spec, out: FindingCollector, question: str) -> None:
    """Report a count of another table's rows than the question counts (see the module
    doc).

    >>> from stef.spec import Aggregation
    >>> nl = Spec(aggregations=[Aggregation("count", None, False, "How many customers")])
    >>> sql = Spec(tables=["orders"], aggregations=[Aggregation("count", "*", False, "COUNT(*)")])
    >>> out = FindingCollector()
    >>> check_counted_rows(nl, sql, out, "How many customers placed an order in 2024?")
    >>> [f.message for f in out.findings]
    ['the question counts customers; the SQL counts rows of orders (one per order)']
    """
    counts = [a for a in sql.aggregations if a.func == "count"]
    if len(sql.tables) != 1 or len(counts) != 1 or counts[0].distinct or sql.distinct:
        return
    if sql.group_by or sql.subqueries or sql.ctes or sql.set_operations or sql.joins:
        return
    if not any(a.func == "count" for a in nl.aggregations):
        return
    low = question.casefold()
    m = _COUNTED.search(low)
    if m is None:
        return
    phrase = _counted_phrase(low[m.start("n") :])
    noun, table = phrase[-1], sql.tables[0]
    arg = (counts[0].arg or "").casefold().rsplit(".", 1)[-1]
    if not noun or any(_same(w, table) for w in phrase):
        return
    if arg.startswith(singular(noun)[:4]):
        return  # COUNT(user_id) for "how many users": the rows counted are meant as users
    rest = _WORD.findall(low[m.start("n") :])
    after = rest[rest.index(noun) + 1 :] if noun in rest else []
    whose, severity = f"one per {singular(table)}", "warning"
    if not any(
        _same(w, table) and (i == 0 or after[i - 1] not in _INSIDE) for i, w in enumerate(after)
    ):
        pinned = _pinned_name(table, sql)
        if pinned and noun not in _ROW_NOUNS and _names_none(phrase, sql):
            whose = f"the {singular(table)} whose {pinned}: one row"
            severity = "error"  # "How many albums does Billy Cobham have?" counts him: 1
        elif not _unnamed(phrase, arg, sql) or _table_named(table, low):
            return  # the counted table is not the question's other noun, or holds the rows
        else:
            whose = f"which names nothing of the {noun}"
    out.add(
        "count_subject_mismatch",
        severity,
        f"the question counts {noun}; the SQL counts rows of {table} ({whose})",
        m.group(0),
        counts[0].text,
        "aggregation",
    )


#: Columns that name a row of their own table: a person's or a thing's name.
_OWN_NAMES = lx._words("name first_name last_name fname lname firstname lastname full_name")


def _pinned_name(table: str, sql: Spec) -> str:
    """The condition that pins a count of ``table`` to one named row: equalities only, one
    on the table's own name (``name``, ``first_name``, ``country_name``, or a column named
    as the table, ``country.country``), as text for a message; "" where there is none.

    >>> from stef.spec import Filter
    >>> named = [Filter("fname", "=", ("mark",)), Filter("lname", "=", ("giuliano",))]
    >>> _pinned_name("student", Spec(filters=named))
    "fname is 'mark'"
    >>> _pinned_name("sales", Spec(filters=[Filter("rep_name", "=", ("ann",))]))
    ''
    """
    own = singular(table.casefold())
    if not sql.filters or any(f.op != "=" for f in sql.filters):
        return ""
    for f in sql.filters:
        col = (f.column or "").casefold().rsplit(".", 1)[-1]
        if col in _OWN_NAMES or singular(col) == own or col == f"{own}_name":
            return f"{col} is {f.values[0]!r}" if f.values else ""
    return ""


def _unnamed(phrase: list[str], arg: str, sql: Spec) -> bool:
    """Does a count of every row of one table (``COUNT(*)``, no condition) name none of
    the counted phrase's words: no table, column, value or alias of the SQL holds them
    ("How many submissions are there?" as ``SELECT COUNT(*) FROM workshop``)?

    >>> sql = Spec(tables=["workshop"], columns=[])
    >>> _unnamed(["submissions"], "*", sql), _unnamed(["workshops"], "*", sql)
    (True, False)
    """
    if arg not in ("*", "1") or sql.filters or phrase[-1] in _QUANTITY:
        return False
    if "and" in phrase or "or" in phrase:
        return False  # "students and teachers" from people: a table may hold both kinds
    return _names_none(phrase, sql)


def _names_none(phrase: list[str], sql: Spec) -> bool:
    """Does no table, column, value or alias of the SQL name a word of the phrase, or stand
    inside one (``fires`` in "wildfires")?

    >>> _names_none(["wildfires"], Spec(tables=["fires"]))
    False
    >>> _names_none(["songs"], Spec(tables=["band"]))
    True
    """
    vocabulary = _Vocabulary.of(sql)[0]
    if any(vocabulary.accounts(w) for w in phrase):
        return False
    return not any(len(v) >= 4 and v in w for w in phrase for v in vocabulary.words)


#: A count the question ranks or bounds per group: "the most songs", "more than one
#: student", "at least two players", "the largest number of documents".
_PER_GROUP_COUNT = re.compile(
    r"\b(?:(?:the\s+)?(?:most|fewest|least)(?:\s+number\s+of)?"
    r"|(?:the\s+)?(?:largest|greatest|smallest|highest|lowest)\s+number\s+of"
    r"|(?:more|fewer|less)\s+than\s+\w+|at\s+(?:least|most)\s+\w+)"
    r"\s+(?P<n>[a-z]+)"
)
#: A group key that is a period: a date or time part, a truncation, a column named for one.
_TIME_KEY = re.compile(r"date|time|month|year|day|week|quarter|hour|_at\b|trunc|strftime|extract")
#: Nouns that count rows whatever the table holds ("the most entries"), or measure
#: ("more than 300 days").
_ROW_NOUNS = lx._words(
    """entries records rows items times cases instances occurrences ones things seconds
    minutes hours days weeks months years dollars euros points percent miles kilometers"""
)


def check_grouped_counts(sql: Spec, out: FindingCollector, question: str) -> None:
    """A count per group of every row of one table that names nothing of what the question
    counts: "the musician that produced the most songs" as ``SELECT lastname FROM band GROUP
    BY lastname ORDER BY COUNT(*) DESC`` counts band rows, not songs
    (``count_subject_mismatch``). A phrase of two kinds, a noun of a quantity or of rows,
    and one the SQL names anywhere are left alone, as are a count under a condition (which may
    keep the counted kind of rows: answers among posts) and a count per period ("signups by
    month" over users).

    >>> from stef.spec import Aggregation
    >>> sql = Spec(tables=["band"], group_by=["lastname"], columns=["lastname"],
    ...            aggregations=[Aggregation("count", "*", False, "COUNT(*)")])
    >>> out = FindingCollector()
    >>> check_grouped_counts(sql, out, "Who produced the most songs?")
    >>> print(out.findings[0].message)  # doctest: +NORMALIZE_WHITESPACE
    the question counts songs per group; the SQL counts rows of band,
    which names nothing of the songs
    """
    if len(sql.tables) != 1 or not sql.group_by or sql.joins or sql.subqueries or sql.ctes:
        return
    counts = [a for a in sql.aggregations if a.func == "count"]
    if sql.set_operations or len(counts) != 1 or counts[0].distinct:
        return
    if (counts[0].arg or "*") not in ("*", "1") or sql.filters:
        return  # a condition may keep the counted kind of rows (answers among posts)
    if any(_TIME_KEY.search(k) for k in sql.group_by):
        return  # "signups by month" over users: events a table is named otherwise for
    low = question.casefold()
    for m in (*_COUNTED.finditer(low), *_PER_GROUP_COUNT.finditer(low)):
        phrase = _counted_phrase(low[m.start("n") :])
        noun = phrase[-1]
        if not noun.endswith("s") or noun in _QUANTITY or noun in _ROW_NOUNS:
            continue
        if "and" in phrase or "or" in phrase or not _names_none(phrase, sql):
            continue
        out.add(
            "count_subject_mismatch",
            "warning",
            f"the question counts {noun} per group; the SQL counts rows of {sql.tables[0]},"
            f" which names nothing of the {noun}",
            m.group(0),
            counts[0].text,
            "aggregation",
        )
        return


def _table_named(table: str, low: str) -> bool:
    """Does a word of a table's name (four letters or more) stand in the question ("rent
    arrears" for ``rent_arrears``)?

    >>> _table_named("rent_arrears", "how many taxes are collected for renting arrears")
    True
    """
    words = {singular(w) for w in _WORD.findall(low)}
    return any(len(w) >= 4 and singular(w) in words for w in _WORD.findall(table.casefold()))


#: "including customers with no orders", "even those without a purchase", "include
#: customers with zero orders", "even if they have no orders".
_KEEP_EMPTY = re.compile(
    r"\b(?:including|include|even)\s+(?:(?:the\s+)?(?:ones|those)|if|[a-z]+)\s+"
    r"(?:with\s+(?:no|zero|0)|without(?:\s+any)?"
    r"|(?:who|that|they|it)\s+(?:have|had|has)\s+(?:no|zero|0|not)(?:\s+any)?)"
    r"\s+(?:[a-z]+\s+)?(?:(?:any|a|an)\s+)?(?P<m>[a-z]+)"
)


#: "including products never sold", "include customers that have not ordered yet": the
#: rows kept are named, what they lack is a verb.
_KEEP_NEVER = re.compile(
    r"\b(?:including|include|even)\s+(?:the\s+)?(?P<k>[a-z]{3,})\s+(?:(?:that|which|who)\s+)?"
    r"(?:(?:were|was|have|has|had|are|is)\s+)?(?:never|not(?:\s+yet)?)\s+(?:been\s+)?[a-z]+"
)


def _check_kept_never(sql: Spec, out: FindingCollector, m: re.Match[str]) -> None:
    """An inner join of the table named for the rows the question keeps ("including products
    never sold") to another table: the rows with no match there are dropped."""
    kept = m.group("k")
    for j in sql.joins:
        tables = [str(t) for t in j.get("tables") or ()]
        if any(_same(kept, t) for t in tables) and any(not _same(kept, t) for t in tables):
            out.add(
                "outer_join_missing",
                "warning",
                f"the question keeps {m.group(0).split(' ', 1)[1]}; the SQL's inner join of"
                f" {kept} to {next(t for t in tables if not _same(kept, t))} drops them",
                m.group(0),
                None,
                "structure",
            )
            return


def _kept(said: str) -> str:
    """Whom a "keep the empty ones" phrase keeps, for a message.

    >>> _kept("including customers with no orders"), _kept("even if they have no orders")
    ('customers with no orders', 'rows even if they have no orders')
    """
    rest = said.split(" ", 1)[1]
    return f"rows even {rest}" if rest.startswith("if ") else rest


def check_outer_join(sql: Spec, out: FindingCollector, question: str) -> None:
    """Report an inner join to the table whose missing rows the question asks to keep
    (see the module doc).

    >>> joins = [{"left": "id", "right": "customer_id", "kind": "inner",
    ...           "tables": ["customers", "orders"]}]
    >>> out, q = FindingCollector(), "Orders per customer, including customers with no orders"
    >>> check_outer_join(Spec(joins=joins), out, q)
    >>> [f.kind for f in out.findings]
    ['outer_join_missing']
    """
    low = question.casefold()
    if "includ" not in low and "even" not in low:
        return
    m = _KEEP_EMPTY.search(low)
    never = _KEEP_NEVER.search(low) if m is None else None
    if (m is None and never is None) or sql.set_operations:
        return
    kinds = {str(j.get("kind", "")).casefold() for j in sql.joins}
    if kinds & {"left", "right", "full", "outer"}:
        if m is not None:
            _check_nullified(sql, out, m)
        return
    if m is None:  # "including products never sold": the kept rows' table joined to another
        if never is not None:
            _check_kept_never(sql, out, never)
        return
    dropped = [
        j for j in sql.joins if any(_same(m.group("m"), str(t)) for t in j.get("tables") or ())
    ]
    if not dropped:
        return
    out.add(
        "outer_join_missing",
        "warning",
        f"the question keeps {_kept(m.group(0))}; the SQL's inner join to"
        f" {m.group('m')} drops them",
        m.group(0),
        None,
        "structure",
    )


def _check_nullified(sql: Spec, out: FindingCollector, m: re.Match[str]) -> None:
    """The table whose missing rows the question keeps is LEFT JOINed, but a WHERE condition
    on its columns drops the rows with no match again (``outer_nullified``)."""
    nullified = [str(t) for t in sql.flags.get("outer_nullified") or ()]
    if not any(_same(m.group("m"), t) for t in nullified):
        return
    out.add(
        "outer_join_missing",
        "warning",
        f"the question keeps {_kept(m.group(0))}; the SQL LEFT JOINs {m.group('m')} but its"
        " WHERE tests their columns, which drops the rows with none again (put the test in"
        " the ON)",
        m.group(0),
        None,
        "structure",
    )


#: Two things a count question asks to count: "how many orders and customers", "how many
#: wins and how many losses".
_TWO_COUNTED = re.compile(
    r"\bhow\s+many\s+([a-z]{3,}s)\s+and\s+(?:how\s+many\s+)?([a-z]{3,}s)\b"
    # "how many owner and disponent dispositions": two kinds of one thing
    r"|\bhow\s+many\s+([a-z]{3,})\s+and\s+([a-z]{3,})\s+[a-z]{3,}s\b"
)


def _counts(p: Projection) -> bool:
    """Is the output an aggregate, or a scalar subquery that counts (``(SELECT COUNT(*) FROM
    posts WHERE …) AS questions``)?"""
    return p.is_aggregate or p.expr.startswith("(select count(")


def check_two_counts(sql: Spec, out: FindingCollector, question: str) -> None:
    """ "How many orders and customers do we have?" answered by one count: the SQL names
    one of the two things (a table, a column or a value) and nothing of the other, and computes
    one aggregate only (``projection_count_short``). "How many males and females", counted
    per gender, names neither and is left alone.

    >>> from stef.spec import Projection
    >>> sql = Spec(projections=[Projection("count(*)", is_aggregate=True)], tables=["orders"])
    >>> out = FindingCollector()
    >>> check_two_counts(sql, out, "How many orders and customers do we have?")
    >>> [f.message for f in out.findings]
    ['the question asks how many orders and how many customers; the SQL counts one of them']
    """
    m = _TWO_COUNTED.search(question.casefold())
    if m is None or sum(1 for p in sql.projections if _counts(p)) != 1:
        return
    first, second = m.group(1) or m.group(3), m.group(2) or m.group(4)
    vocabulary = _Vocabulary.of(sql)[0]
    if singular(first) == singular(second):
        return
    named = vocabulary.accounts(first), vocabulary.accounts(second)
    if named[0] == named[1] and (any(named) or sql.group_by or sql.flags.get("case")):
        return  # both named (a count of both), or neither (counted per value)
    out.add(
        "projection_count_short",
        "warning",
        f"the question asks how many {first} and how many {second}; the SQL counts one of them",
        m.group(0),
        ", ".join(p.text or p.expr for p in sql.projections),
        "request",
    )

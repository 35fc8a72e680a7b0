"""A state the question asks for that nothing of the SQL names: "How many cancelled orders"
answered by ``SELECT COUNT(*) FROM orders`` (``state_unfiltered``).

The question's state words come from :func:`stef.nl.states.state_words`. A state is
answered when one of its stems is part of a column, table, alias or literal of the SQL
(``status = 'cancelled'``, ``is_refunded``, ``closed_at IS NULL``). It may be answered
without its name when the SQL filters a coded column (``status_id = 3``,
``VoteTypeId = 1``: the code cannot be read without the schema), when the enriched
question defines the word ("pending refers to status = 'P'"), or when it restates the
question without the word ("unpaid invoices" as "invoices with no payment yet": the
reformulation says what the state means; one that widens to "all invoices" does not):
then nothing is reported.

The polarity is checked too (``filter_wrong_operator``): a state the question excludes
("excluding refunded orders") that the SQL keeps alone (``status = 'refunded'``), and rows
where something never happened ("users who have never logged in", "employees without a
manager") kept as those where it did (``last_login_at IS NOT NULL``). A state the question
asks for that the SQL keeps as its opposite ("still open" as ``status = 'closed'`` or
``closed_at IS NOT NULL``) is ``filter_wrong_value``. Days of the week asked for and read
nowhere are ``weekday_unfiltered``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stef.align.matching import HINT_CLAUSE
from stef.align.terms import restatement_lead
from stef.align.weekdays import check_day_numbers
from stef.findings import FindingCollector
from stef.nl import lexicon as lx
from stef.nl.states import StateWord, negated_verbs, state_words, weekday_words
from stef.nl.words import stem
from stef.spec import Filter, Spec
from stef.sql.predicates import DATE_LIKE_NAME

#: Parts of a column name that mark a coded state (``status_id``, ``VoteTypeId``).
_CODED = ("status", "state", "stage", "type", "flag", "code", "kind", "categor", "class")
#: Outputs that count every row, whatever their name says.
_ROW_COUNTS = frozenset({"count(*)", "count(1)"})
#: What makes an enrichment clause a definition of its words.
_DEFINES = re.compile(r"\brefers?\s+to\b|\bmeans?\b|\bstands\s+for\b|\bdefined\b|=|:")


def check_states(
    sql: Spec, out: FindingCollector, question: str, enriched_question: str | None = None
) -> None:
    """Report each state word of ``question`` that no name or literal of ``sql`` holds
    (see the module doc), a state the question excludes that the SQL keeps alone, and an
    event that never happened kept as one that did (:func:`check_never`).

    >>> out = FindingCollector()
    >>> sql = Spec(tables=["orders"], columns=["id"])
    >>> check_states(sql, out, "How many cancelled orders are there?")
    >>> [(f.kind, f.severity, f.nl) for f in out.findings]
    [('state_unfiltered', 'warning', 'cancelled')]
    >>> out = FindingCollector()
    >>> check_states(Spec(columns=["cancelled_at"]), out, "How many cancelled orders?")
    >>> check_states(sql, out, "Pending orders", "pending refers to status = 'P'")
    >>> check_states(sql, out, "Unpaid orders", "Orders with no payment yet")
    >>> out.findings
    []
    """
    check_never(sql, out, question)
    check_with_one(sql, out, question)
    check_negated_verbs(sql, out, question)
    check_exclusion_applied(sql, out, question)
    check_negated_values(sql, out, question)
    states = state_words(question)
    for state in states:
        if state.excluded:
            _check_excluded(sql, out, state)
        elif not _negated_before(state.word, question):
            _check_opposite(sql, out, state)
    restated = _restatement_states(question, enriched_question, states)
    states = (*states, *restated)
    if not states or _coded_filter(sql):
        return
    names = " ".join(
        [
            *sql.columns,
            *sql.tables,
            *sql.literals,
            # an output's name, unless it names a count of every row (``COUNT(*) AS
            # open_tickets`` says "open" and keeps every ticket)
            *(p.alias for p in sql.projections if p.alias and p.expr not in _ROW_COUNTS),
        ]
    ).casefold()
    for state in states:
        if any(stem in names for stem in state.stems) or _restated(state, enriched_question):
            continue
        asker = "the enriched question" if state in restated else "the question"
        out.add(
            "state_unfiltered",
            "warning",
            f"{asker} asks for {state.word} rows; no column, table or value of the SQL"
            f" names that state ({', '.join(state.stems)}…)",
            state.word,
            None,
            "filter_alignment",
        )


def _restatement_states(
    question: str, enriched: str | None, asked: Sequence[StateWord]
) -> list[StateWord]:
    """The states an agent's restatement of the question asks for beside the question's own
    ("overdue invoices" restated as "unpaid invoices past their due date"), read in its
    first sentence; none where the enrichment is hints, not a restatement.

    >>> [s.word for s in _restatement_states("overdue invoices", "Unpaid invoices.", ())]
    ['unpaid']
    >>> _restatement_states("overdue invoices", "unpaid refers to paid = 0", ())
    []
    """
    lead = restatement_lead(question, enriched)
    if lead is None:
        return []
    words = {s.word for s in asked}
    return [s for s in state_words(lead) if s.word not in words and not s.excluded]


#: Operators of a filter that keeps the rows holding its value, and of one that keeps them out.
_KEEPS = frozenset({"=", "in", "like"})
_DROPS = frozenset({"!=", "not in", "not like"})


def _check_excluded(sql: Spec, out: FindingCollector, state: StateWord) -> None:
    """The question keeps a state's rows out ("excluding refunded orders") and the SQL keeps
    only them: a filter equal to (or LIKE) a value naming the state, none that drops it,
    and nothing that could subtract them (``NOT IN``/``NOT EXISTS``/``EXCEPT``, an outer
    join, a subtraction): ``filter_wrong_operator``.

    >>> from stef.spec import Filter
    >>> from stef.nl.states import StateWord
    >>> out, refunded = FindingCollector(), StateWord("refunded", ("refund",), True)
    >>> _check_excluded(Spec(filters=[Filter("status", "=", ("refunded",))]), out, refunded)
    >>> [(f.kind, f.nl) for f in out.findings]
    [('filter_wrong_operator', 'refunded')]
    >>> both = [Filter("status", "=", ("refunded",)), Filter("status", "!=", ("refunded",))]
    >>> _check_excluded(Spec(filters=both), out, refunded)
    >>> _check_excluded(Spec(filters=[Filter("is_refunded", "=", ("true",))]), out, refunded)
    >>> _check_excluded(Spec(filters=[Filter("is_refunded", "=", ("0",))]), out, refunded)
    >>> len(out.findings)
    2
    """
    flags = sql.flags
    if flags.get("negation") or "sub" in (flags.get("functions") or ()):
        return
    keeps: Filter | None = None
    for f in sql.filters:
        named = any(stem in v.casefold() for v in f.values for stem in state.stems)
        column = (f.column or "").casefold()
        flag = any(stem in column for stem in state.stems) and f.op in ("=", "!=")
        if flag and not named:  # ``discontinued = true`` keeps them, ``= false`` drops them
            if set(f.values) <= _FALSE or (f.op == "!=" and set(f.values) <= _TRUE):
                return
            if f.op == "=" and set(f.values) <= _TRUE and keeps is None:
                keeps = f
            continue
        if not named:
            continue
        if f.op in _DROPS or f.negated:
            return
        if f.op in _KEEPS and keeps is None:
            keeps = f
    if keeps is None:
        return
    out.add(
        "filter_wrong_operator",
        "error",
        f"the question excludes {state.word} rows; the SQL keeps only them"
        f" ({keeps.text or keeps.column})",
        state.word,
        keeps.text,
        "filter_alignment",
    )


#: The stems of each state's opposites, and of the state itself where it is no negation:
#: "open" rows are no ``status = 'closed'`` and no ``closed_at IS NOT NULL``.
_OPPOSITES: dict[str, tuple[tuple[str, ...], str | None]] = {
    "open": (("clos", "fill", "resolv"), "open"),  # an open role is unfilled, a ticket unresolved
    "closed": (("open",), "clos"),
    "enabled": (("disabl",), "enabl"),
    "disabled": (("enabl",), "disabl"),
    "successful": (("fail",), "success"),
    "failed": (("success",), "fail"),
    "published": (("draft",), "publish"),
    "unpaid": (("paid",), None),
    "unshipped": (("ship",), None),
    "undelivered": (("deliver",), None),
    "unapproved": (("approv",), None),
    "unpublished": (("publish",), None),
    "unverified": (("verif",), None),
    "unresolved": (("resolv",), None),
    "unanswered": (("answer",), None),
    "incomplete": (("complet",), None),
}
#: Values of a flag that keep its rows, and that keep them out.
_TRUE = frozenset({"1", "true", "t", "y", "yes"})
_FALSE = frozenset({"0", "false", "f", "n", "no"})


def _check_opposite(sql: Spec, out: FindingCollector, state: StateWord) -> None:
    """The question asks for rows in a state ("tickets that are still open") and a filter of
    the SQL keeps those in the opposite one: a value that names it (``status = 'closed'``), a
    date or flag named for it that is set (``closed_at IS NOT NULL``, ``is_closed = 1``), or
    one named for the state itself that is empty (``opened_at IS NULL``):
    ``filter_wrong_value``. Nothing is said when the SQL subtracts rows (``EXCEPT``, ``NOT
    IN``/``NOT EXISTS``), and nothing when a filter names the state itself.

    >>> from stef.spec import Filter
    >>> from stef.nl.states import StateWord
    >>> out, open_ = FindingCollector(), StateWord("open", ("open", "clos"))
    >>> _check_opposite(Spec(filters=[Filter("closed_at", "is not null")]), out, open_)
    >>> _check_opposite(Spec(filters=[Filter("status", "=", ("closed",))]), out, open_)
    >>> _check_opposite(Spec(filters=[Filter("closed_at", "is null")]), out, open_)
    >>> [f.message for f in out.findings]  # doctest: +NORMALIZE_WHITESPACE
    ['the question asks for open rows; the SQL keeps the opposite (closed_at IS NOT NULL)',
      'the question asks for open rows; the SQL keeps the opposite (status = closed)']
    """
    pair = _OPPOSITES.get(state.word)
    if pair is None or "except" in sql.set_operations or any(f.negated for f in sql.filters):
        return  # the SQL subtracts rows: what it keeps is not what it returns
    others, own = pair
    read = [f for f in sql.filters if not f.negated and f.clause in ("where", "having")]
    if any(state.word in v or (own and own in v) for f in read for v in f.values):
        return  # a filter names the state itself: the SQL reads it
    for f in read:
        if any(_keeps_opposite(f, other, own) for other in others):
            shown = f.text or f"{f.column} {f.op.upper()} {', '.join(f.values)}".strip()
            out.add(
                "filter_wrong_value",
                "error",
                f"the question asks for {state.word} rows; the SQL keeps the opposite ({shown})",
                state.word,
                f.text,
                "filter_alignment",
            )
            return


#: Words before a state word in its sentence that may turn it round ("excluding community
#: wiki / closed posts", "not yet closed").
_TURNING = lx.NEGATION_WORDS | lx._words("excluding exclude excludes ignoring non yet")


def _negated_before(word: str, question: str) -> bool:
    """Does a negation or an exclusion come before ``word`` in its sentence of ``question``?

    >>> _negated_before("closed", "Top users excluding community wiki / closed posts")
    True
    >>> _negated_before("open", "Tickets that are still open. Not urgent ones.")
    False
    """
    low = question.casefold()
    at = low.find(word)
    if at < 0:
        return False
    sentence = re.split(r"[.?!;]", low[:at])[-1]
    return any(w in _TURNING for w in re.findall(r"[a-z]+", sentence))


def _keeps_opposite(f: Filter, other: str, own: str | None) -> bool:
    """Does ``f`` keep the rows of the state whose stem is ``other``: a value naming it, a
    date or flag named for it that is set, or one named for the state ``own`` that is not?"""
    column = (f.column or "").casefold()
    values = {v.casefold() for v in f.values}
    if f.op in _KEEPS and values and all(other in v for v in values):
        return True
    if other in column and (f.op == "is not null" or (f.op == "=" and values and values <= _TRUE)):
        return True
    return (
        own is not None
        and own in column
        and (f.op == "is null" or (f.op == "=" and bool(values) and values <= _FALSE))
    )


def _coded_filter(sql: Spec) -> bool:
    """Does the SQL filter a column whose name marks a coded state, or test a date for
    being empty (``filled_at IS NULL`` for "open positions": the state may be when a thing
    happened, or that it has not happened yet)?

    >>> from stef.spec import Filter
    >>> _coded_filter(Spec(filters=[Filter("status_id", "=", ("3",))]))
    True
    >>> _coded_filter(Spec(filters=[Filter("filled_at", "is null")]))
    True
    >>> _coded_filter(Spec(filters=[Filter("status", "=", ("shipped",))]))
    False
    """
    for f in sql.filters:
        column = (f.column or "").casefold()
        if any(part in column for part in _CODED) and not _spelled(f.values):
            return True  # a code ('C', 3): the state may hide behind it
        if f.op in ("is null", "is not null") and DATE_LIKE_NAME.search(column):
            return True
    return False


def _spelled(values: tuple[str, ...]) -> bool:
    """Are the values words that spell a state (``'shipped'``), not codes (``'C'``, ``3``)?"""
    return bool(values) and all(v.isalpha() and len(v) > 3 for v in values)


#: An enrichment that widens the rows to all of a noun ("Count all tickets").
_WIDENS = re.compile(r"\b(?:all|every|any)\s+(?:of\s+)?(?:the\s+)?[a-z][a-z-]{2,}")


def _restated(state: StateWord, enriched_question: str | None) -> bool:
    """Does the enriched question say what the state means in other words ("unpaid" as "no
    payment", "churned" as "whose subscription ended"), or define it in one of its
    clauses? One that drops the word and widens the rows to all of them ("open tickets" as
    "all tickets") does not, unless it names one of the state's stems.

    >>> unpaid, pending = StateWord("unpaid", ("paid", "pay")), StateWord("pending", ("pend",))
    >>> _restated(pending, "pending means status = 'P'"), _restated(pending, "pending orders")
    (True, False)
    >>> _restated(unpaid, "orders with no payment"), _restated(unpaid, None)
    (True, False)
    >>> _restated(StateWord("open", ("open", "clos")), "Count all tickets")
    False
    >>> _restated(StateWord("churned", ("churn",)), "Customers whose subscription ended")
    True
    """
    if not enriched_question or not enriched_question.strip():
        return False
    word, low = state.word, enriched_question.casefold()
    if word not in low:
        return any(stem in low for stem in state.stems) or _WIDENS.search(low) is None
    return any(
        word in clause and _DEFINES.search(clause)
        for clause in HINT_CLAUSE.split(enriched_question.casefold())
    )


#: Parts of a function or column name that read the day of the week, and the day names and
#: abbreviations a literal may be.
_WEEKDAY_MARKS = ("dow", "dayofweek", "day_of_week", "weekday", "week_day", "dayname", "weekend")
_DAY_NAMES = lx._words(
    """mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday friday
    saturday sunday"""
)
#: Functions that format a date by a pattern, which may spell its weekday (``TO_CHAR(d,
#: 'Day')``, ``FORMAT(d, 'dddd')``): such a query may read the day, so nothing is reported.
_FORMATS = frozenset(
    {"timetostr", "strftime", "tochar", "format", "datename", "dateformat", "formatdate"}
)


def check_weekdays(sql: Spec, out: FindingCollector, question: str) -> None:
    """The question restricts rows to days of the week ("orders placed on weekends") and
    nothing of the SQL reads a day of the week: no ``EXTRACT(DOW …)``, ``DAYOFWEEK``,
    ``DATENAME(weekday, …)``, day name or weekend column (``weekday_unfiltered``).

    >>> out = FindingCollector()
    >>> check_weekdays(Spec(columns=["created_at"]), out, "Orders placed on weekends")
    >>> [(f.kind, f.nl) for f in out.findings]
    [('weekday_unfiltered', 'weekends')]
    >>> from stef.spec import Filter
    >>> dow = Spec(filters=[Filter("created_at", "in", ("0", "6"), func="dow")])
    >>> check_weekdays(dow, out, "Orders placed on weekends")
    >>> len(out.findings)
    1
    """
    words = weekday_words(question)
    if not words:
        return
    names = " ".join(
        [
            *sql.columns,
            *sql.group_by,
            *(sql.flags.get("functions") or ()),
            *(f"{f.column} {f.func or ''}" for f in sql.filters),
            *(p.text or p.expr for p in sql.projections),
        ]
    ).casefold()
    values = {
        v.strip("%_ ").casefold()
        for v in (*sql.literals, *(v for f in sql.filters for v in f.values))
    }
    formats = _FORMATS.intersection(sql.flags.get("functions") or ())
    if any(mark in names for mark in _WEEKDAY_MARKS) or values & _DAY_NAMES or formats:
        check_day_numbers(sql, out, words)
        return
    out.add(
        "weekday_unfiltered",
        "warning",
        f"the question asks for {words[0]}; nothing in the SQL reads the day of the week",
        words[0],
        None,
        "filter_alignment",
    )


#: "never logged in", "have not purchased", "hasn't been verified": the rows where a thing
#: has not happened, named by its participle.
_NEVER = re.compile(
    r"\b(?:never|(?:has|have|had|did|does|do)(?:n't|\s+not))\s+(?:been\s+|ever\s+|yet\s+)?"
    r"(?P<w>[a-z]{3,}ed)\b(?:\s+(?:an?|any|one|some)\b)?(?:\s+(?P<o>[a-z]{4,}))?"
    # "employees without a manager", "who do not have a manager"
    r"|\b(?:without|(?:do|does|did)(?:n't|\s+not)\s+have)\s+(?:a|an|any)\s+(?P<n>[a-z]{4,})\b"
    r"|\b(?:has|have|had|with)\s+(?:no|zero)\s+(?P<z>[a-z]{4,})\b"  # "with no orders", "zero"
)
#: Operators that keep the rows where a thing has not happened or subtract the others, and
#: those that do so on the column named for it.
_KEEPS_OTHERS = frozenset({"is null", "not in", "not exists"})
_KEEPS_OTHERS_ON = frozenset({"!=", "not like", "<", "<=", "="})


def participle_stem(word: str) -> str:
    """The stem a column naming the event shares: ``logged`` → ``log``.

    >>> participle_stem("logged"), participle_stem("purchased"), participle_stem("shipped")
    ('log', 'purchas', 'ship')
    """
    s = stem(word)
    return s[:-1] if len(s) > 3 and s[-1] == s[-2] and s[-1] not in "aeiou" else s


def check_never(sql: Spec, out: FindingCollector, question: str) -> None:
    """The question asks for rows where something never happened ("users who have never
    logged in") and the SQL keeps only those where it did: a column named for it tested
    ``IS NOT NULL``, with nothing of the SQL keeping the others (``IS NULL``, ``NOT IN``,
    ``NOT EXISTS``, an outer join, ``EXCEPT``): ``filter_wrong_operator``.

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> kept = Filter("last_login_at", "is not null", (), "last_login_at IS NOT NULL")
    >>> check_never(Spec(filters=[kept]), out, "How many users have never logged in?")
    >>> boss = Filter("manager_id", "is not null", (), "manager_id IS NOT NULL")
    >>> check_never(Spec(filters=[boss]), out, "Employees without a manager")
    >>> [(f.kind, f.nl) for f in out.findings]
    [('filter_wrong_operator', 'never logged'), ('filter_wrong_operator', 'without a manager')]
    """
    low = question.casefold()
    if not any(map(low.__contains__, ("never", "not", "n't", "without", " no "))):
        return
    if (
        "except" in sql.set_operations
        or any(str(j.get("kind", "")).casefold() in ("left", "right", "full") for j in sql.joins)
        or any(f.op in _KEEPS_OTHERS or f.negated for f in sql.filters)
    ):
        return
    for m in _NEVER.finditer(low):
        root = (
            participle_stem(m.group("w")) if m.group("w") else stem(m.group("n") or m.group("z"))
        )
        if m.group("o") and _joined(sql, root) is None and _joined(sql, stem(m.group("o"))):
            root = stem(m.group("o"))  # "never placed an order": the thing, not the verb
        named = [f for f in sql.filters if f.column and root in f.column.casefold()]
        if any(f.op in _KEEPS_OTHERS_ON for f in named):
            return
        kept = next((f for f in named if f.op == "is not null"), None)
        before = low[max(0, m.start() - 40) : m.start()]
        kept_too = "includ" in before or "even " in before  # "including … with no", "even if"
        if kept is None and not kept_too and not any(f.kind in _SAID_BY_JOIN for f in out.findings):
            kept = _joined(sql, root)  # not where the join or its rows were reported already
        if kept is None:
            continue
        said = m.group(0).replace("never been", "were never")  # "never been ordered"
        if said.startswith(("has ", "have ", "had ", "do ", "does ", "did ")) and not m.group("w"):
            said = f"that {said}"  # "customers that have no orders", "that do not have a …"
        out.add(
            "filter_wrong_operator",
            "error",
            (
                f"the question asks for rows that {said}; the SQL keeps only those where it"
                f" happened ({kept.text or kept.column})"
                if m.group("w")
                else f"the question asks for rows {said}; the SQL keeps only those with"
                f" one ({kept.text or kept.column})"
            ),
            m.group(0),
            kept.text,
            "filter_alignment",
        )
        return


#: "orders with a discount code", "users that have a phone number": rows holding a thing.
_WITH_ONE = re.compile(
    r"(?<!\bor\s)\b(?:with|(?:has|have|had)(?!\s+(?:no|not)\b))\s+(?:a|an)\s+(?P<a>[a-z]{3,})"
    r"(?:\s+(?P<b>[a-z]{3,}))?"
)


def check_with_one(sql: Spec, out: FindingCollector, question: str) -> None:
    """The question asks for rows that hold a thing ("orders with a discount code") and the
    SQL keeps those where the column named for it is NULL, and nothing else tests that
    column: it keeps the rows without one (``filter_wrong_operator``). A question that
    negates anything is left to :func:`check_never`.

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> none = Filter("discount_code", "is null", (), "discount_code IS NULL")
    >>> check_with_one(Spec(filters=[none]), out, "Orders with a discount code")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    """
    low = question.casefold()
    if " a" not in low or lx.NEGATION_ANY.search(low):
        return
    nulls = [(f, f.column) for f in sql.filters if f.op == "is null" and not f.negated and f.column]
    for m in _WITH_ONE.finditer(low) if nulls else ():
        thing = stem(m.group("a"))  # the first word names the column ("discount code")
        for f, name in nulls:
            if thing not in name.casefold() or any(
                g.column == f.column and g is not f for g in sql.filters
            ):
                continue
            out.add(
                "filter_wrong_operator",
                "error",
                f"the question asks for rows {m.group(0)}; the SQL keeps those without one"
                f" ({f.text or f.column})",
                m.group(0),
                f.text,
                "filter_alignment",
            )
            return


#: Findings that already say what an inner join keeps: a negated period kept as its rows.
#: (Rows kept beside the others, "including customers with no orders", ask for an outer
#: join: ``outer_join_missing``, not this.)
_SAID_BY_JOIN = frozenset({"filter_wrong_operator"})


def _joined(sql: Spec, root: str) -> Filter | None:
    """An inner join to a table named for ``root`` ("orders" for "no orders", "never
    ordered"), as a pseudo-filter to report, or a semi-join (``IN``, ``EXISTS``) where such a
    table is read after the first: it keeps only the rows that have one. None when
    the SQL negates anything (``NOT EXISTS`` in a subquery), or joins no such table.

    >>> join = {"kind": "inner", "tables": ["orders", "customers"], "left": "customer_id"}
    >>> _joined(Spec(joins=[join]), "order").text
    'inner join to orders'
    >>> semi = Filter("id", "in", (), "id IN (SELECT product_id FROM order_items)")
    >>> _joined(Spec(tables=["products", "order_items"], filters=[semi]), "order").op
    'in'
    """
    if sql.flags.get("negation"):
        return None
    for j in sql.joins:
        if str(j.get("kind", "")).casefold() != "inner":
            continue
        table = next((t for t in j.get("tables") or () if root in str(t).casefold()), None)
        if table is not None:
            return Filter(str(j.get("left") or ""), "join", (), f"inner join to {table}")
    semi = next((f for f in sql.filters if f.op in ("in", "exists") and not f.values), None)
    table = next((t for t in sql.tables[1:] if root in t.casefold()), None)
    if semi is not None and table is not None and root not in sql.tables[0].casefold():
        return semi  # "products never ordered" as id IN (SELECT product_id FROM order_items)
    return None


def _inflects(word: str, verb: str) -> bool:
    """Is ``word`` ``verb`` or one of its forms ("finished" of finish, "passed" of pass,
    "verified" of verify, "stopped" of stop)? The verb may come as its participle.

    >>> [_inflects(w, "finish") for w in ("finished", "finishing", "finisher", "fin")]
    [True, True, False, False]
    >>> _inflects("verified", "verify"), _inflects("verified", "verified")
    (True, True)
    >>> _inflects("paypal", "pay")
    False
    """
    base = verb[:-2] if verb.endswith("ed") and len(verb) > 4 else verb
    forms = {verb, base, base + "ed", base + "d", base + "ing", base + "s", base + "es"}
    if base.endswith("y"):
        forms.add(base[:-1] + "ied")
    if base.endswith("i"):  # "verified" read as its base "verifi"
        forms.update((base + "ed", base[:-1] + "y"))
    forms.add(base + base[-1:] + "ed")  # "stopped"
    return word in forms


def check_negated_verbs(sql: Spec, out: FindingCollector, question: str) -> None:
    """A verb the question negates ("drivers who did not finish", "users who never
    verified their email") whose rows the SQL keeps alone: a value naming it kept by
    ``=``, ``IN`` or ``LIKE`` (``status = 'Finished'``), or a flag named for it that is
    set (``email_verified = true``), with nothing that drops or subtracts those rows
    (``filter_wrong_operator``).

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> check_negated_verbs(Spec(filters=[Filter("status", "=", ("finished",))]), out,
    ...                     "How many drivers did not finish?")
    >>> check_negated_verbs(Spec(filters=[Filter("status", "!=", ("finished",))]), out,
    ...                     "How many drivers did not finish?")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator']
    """
    verbs = negated_verbs(question)
    flags = sql.flags
    if not verbs or flags.get("negation") or "sub" in (flags.get("functions") or ()):
        return
    for verb in verbs:
        keeps: Filter | None = None
        for f in sql.filters:
            words = [w for v in f.values for w in _VALUE_WORD.findall(v.casefold())]
            named = any(_inflects(w, verb) for w in words)
            flag = any(_inflects(w, verb) for w in _VALUE_WORD.findall((f.column or "").casefold()))
            if not (named or (flag and f.op == "=" and set(f.values) <= _TRUE)):
                continue
            if f.op in _DROPS or f.negated:
                keeps = None
                break
            if f.op in _KEEPS and keeps is None:
                keeps = f
        if keeps is not None:
            out.add(
                "filter_wrong_operator",
                "error",
                f"the question asks for rows without {verb!r}; the SQL keeps only those with it"
                f" ({keeps.text or keeps.column})",
                verb,
                keeps.text,
                "filter_alignment",
            )


_VALUE_WORD = re.compile(r"[a-z]+")


#: A question that leaves some rows out: "total sales excluding returns", "all users except
#: admins", "revenue other than from refunds".
_EXCLUDES = re.compile(
    r"\b(?:excluding|exclude|except(?:\s+for)?|other\s+than|apart\s+from|not\s+including"
    r"|leaving\s+out|omitting)\s+(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)",
    re.IGNORECASE,
)


def check_exclusion_applied(sql: Spec, out: FindingCollector, question: str) -> None:
    """The question leaves some rows out ("total sales excluding returns") and the SQL
    restricts nothing at all: no filter, join, negation, set difference or subtraction
    (``exclusion_unapplied``; "rep per day excluding the association bonus" as
    ``reputation - 101`` subtracts it).

    >>> out = FindingCollector()
    >>> check_exclusion_applied(Spec(tables=["sales"]), out, "Total sales excluding returns")
    >>> [(f.kind, f.nl) for f in out.findings]
    [('exclusion_unapplied', 'excluding returns')]
    """
    m = _EXCLUDES.search(question)
    if m is None or sql.filters or sql.joins or "except" in sql.set_operations:
        return
    if sql.flags.get("negation") or "sub" in (sql.flags.get("functions") or ()):
        return
    said = " ".join(m.group(0).split())
    out.add(
        "exclusion_unapplied",
        "warning",
        f"the question leaves rows out ({said!r}); the SQL restricts nothing",
        said,
        None,
        "filter_alignment",
    )


#: "non-US customers", "non-zero balances": a value the question negates by its prefix.
_NON = re.compile(r"\bnon[- ](?P<v>[a-z0-9]{2,})\b", re.IGNORECASE)
#: "active subscriptions" kept as one of the states that end being active.
_ACTIVE = re.compile(r"(?<![a-z-])active\b(?!\s+(?:in|on|at|since|during|for)\b)")
_ENDED = frozenset(
    """cancelled canceled inactive churned expired terminated suspended closed deactivated
    disabled ended lapsed""".split()  # noqa: SIM905
)


def check_negated_values(sql: Spec, out: FindingCollector, question: str) -> None:
    """A value the question negates by "non-" ("non-US customers") that the SQL keeps
    alone (``country = 'US'``), with nothing that drops or subtracts it
    (``filter_wrong_operator``); "active" rows kept as ended ones (``status = 'cancelled'``,
    ``filter_wrong_value``).

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> us = Filter("country", "=", ("us",), "country = 'US'")
    >>> check_negated_values(Spec(filters=[us]), out, "How many non-US customers?")
    >>> ended = Filter("status", "=", ("cancelled",), "status = 'cancelled'")
    >>> check_negated_values(Spec(filters=[ended]), out, "How many active subscriptions?")
    >>> [f.kind for f in out.findings]
    ['filter_wrong_operator', 'filter_wrong_value']
    """
    if sql.flags.get("negation") or "except" in sql.set_operations:
        return
    if any(f.negated for f in sql.filters):
        return
    low = question.casefold()
    for m in _NON.finditer(low) if "non" in low else ():
        said = m.group("v")
        kept = [f for f in sql.filters if f.op in _KEEPS and said in f.values]
        if kept and not any(f.op in _DROPS for f in sql.filters):
            written = question[m.start() : m.end()]  # "non-US" as the question writes it
            out.add(
                "filter_wrong_operator",
                "error",
                f"the question asks for {written} rows; the SQL keeps only those with"
                f" {written[4:]!r} ({kept[0].text or kept[0].column})",
                written,
                kept[0].text,
                "filter_alignment",
            )
            return
    if "active" not in low or (act := _ACTIVE.search(low)) is None:
        return
    said_ended = _ENDED & set(_VALUE_WORD.findall(low))
    if said_ended or any("activ" in v for f in sql.filters for v in f.values):
        return  # "active users who cancelled", or a filter naming the state itself
    ended = [f for f in sql.filters if f.op in _KEEPS and f.values and set(f.values) <= _ENDED]
    if ended:
        f = ended[0]
        out.add(
            "filter_wrong_value",
            "error",
            f"the question asks for active rows; the SQL keeps ended ones ({f.text or f.column})",
            act.group(0),
            f.text,
            "filter_alignment",
        )

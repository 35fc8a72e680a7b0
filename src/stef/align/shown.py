"""Is the measure a ranked listing's title sorts by shown, and the figure a question opens
with? Intent checks of the alignment.

A title that ranks a list by a measure ("Top 50 posts by score", "Users with the most gold
badges", "Users ranked by average answer score") asks to see that measure beside each row:
a list of user links in the right order, with no count, total or score, leaves the reader
unable to tell why a row is where it is, or whether the ranking measured the right thing.
SQL that sorts by an expression none of its outputs shows does not answer such a title.

Only titles (no request opener with its own list of outputs, which
:func:`stef.align.intent.check_requests` reads) and only plural listings: "which user has
the most posts?" asks for the user alone.

>>> from stef.findings import FindingCollector
>>> from stef.spec import OrderKey, Projection, Spec
>>> sql = Spec(projections=[Projection("id", "user link", ("id",))],
...            order_by=[OrderKey("count(*)", "desc", True)], limit=10)
>>> out = FindingCollector()
>>> check_rank_shown("Top 10 users by number of answers", Spec(), sql, out)
>>> [f.kind for f in out.findings]
['rank_measure_unshown']
"""

from __future__ import annotations

import re

from stef.align.matching import canon_col
from stef.align.stored import STORED_AGGREGATES, stored_name
from stef.findings import FindingCollector
from stef.nl.lexicon import RATIO_WORDS
from stef.spec import Spec

_RANKS = r"top|best|worst|bottom|highest|lowest|most|least"
#: A title may open with the verb of its listing: "View top 100 questions sorted by …".
_VERB = r"(?:(?:view|show|list|find|get|display)\s+(?:(?:me|all|of)\s+)?)?"
#: The rank a title opens with: "Top 100 ", "the best ", "My top ".
_RANK = rf"(?:(?:the\s+|my\s+)?(?:{_RANKS})(?:\s+\d[\d,]*)?\s+)"
#: Up to three words before the listed noun that are no preposition or article ("active",
#: "SO"); ``also`` adds the words that may not stand there either.
_MODIFIERS = (
    r"(?:(?!(?:of|for|with|in|from|and|or|per|on|at|to|the|a|an{also})\b)[\w#+.'-]+\s+){{0,3}}?"
)
#: "Top 100 [active] users by …", "Top 20 SO users ranked by …", "Users ranked by …".
_RANKED_BY = re.compile(
    rf"^\W*{_VERB}{_RANK}{_MODIFIERS.format(also='')}"
    r"[a-z]{3,}s\s+(?:(?:ranked|sorted|ordered)\s+)?by\s+(?P<measure>[\w ]+)",
    re.I,
)
#: "Users with the most badges", "Top 10 questions with the highest view counts".
_WITH_MOST = re.compile(
    rf"^\W*{_VERB}{_RANK}?{_MODIFIERS.format(also='|who|which|that')}"
    r"[a-z]{3,}s\s+(?:ranked\s+by|with\s+(?:the\s+)?(?:most|highest|largest|greatest|lowest|"
    r"fewest|least|biggest|smallest))\s+(?P<measure>[\w ]+)",
    re.I,
)
#: A period or place that "by" may name instead of a measure: "Posts by month", "by tag".
_NOT_MEASURE = re.compile(
    r"(?:year|month|week|day|date|hour|quarter|tag|country|location|city|region|type|"
    r"category|site|language)s?\b",
    re.I,
)


#: An output that numbers the rows by the sort (its columns are the sort key's, its value
#: is no measure).
_RANKING = re.compile(r"(?:row_number|rank|dense_rank|ntile|percent_rank)\s*\(", re.I)


def ranked_measure(question: str) -> str | None:
    """The measure a title-style plural listing ranks its rows by, else ``None``.

    >>> ranked_measure("Top 100 users by reputation per day")
    'reputation per day'
    >>> ranked_measure("Users with the most Populist badges")
    'Populist badges'
    >>> ranked_measure("Questions by month"), ranked_measure("Which user has the most posts?")
    (None, None)
    """
    m = _RANKED_BY.match(question) or _WITH_MOST.match(question)
    if m is None:
        return None
    measure = " ".join(m.group("measure").split())
    if not measure or _NOT_MEASURE.match(measure):
        return None
    return measure


def check_rank_shown(question: str, nl: Spec, sql: Spec, out: FindingCollector) -> None:
    """A ranked listing whose first sort key no output shows (see the module doc). Outputs
    that show the key are its expression, its alias, an output ``*``, or a column of it."""
    if nl.projections or not sql.order_by or not sql.projections or sql.flags.get("select_star"):
        return
    measure = ranked_measure(question)
    if measure is None:
        return
    key = sql.order_by[0].key
    for p in sql.projections:
        if _RANKING.match(p.expr):
            continue  # ROW_NUMBER() OVER (ORDER BY views DESC) shows a rank, not the views
        if key in (p.expr, p.alias) or (p.columns and key in p.columns):
            return
    out.add(
        "rank_measure_unshown",
        "warning",
        f"the question ranks its rows by {measure!r}; the SQL sorts by {key} but no output "
        "shows it",
        measure,
        sql.order_by[0].text or key,
        "request",
    )


def check_aggregate_shown(nl: Spec, sql: Spec, out: FindingCollector, text: str = "") -> None:
    """A question that opens with the aggregate or the ratio it asks for ("Number of
    accounts per email address", "How many users …", "Fraction of … per tag") wants that
    figure back; SQL that works it out only to
    group, filter or sort its rows (``GROUP BY email HAVING COUNT(*) > 1``) and outputs
    no computed value does not answer it. An output whose name says it stores the
    figure (``AnswerCount``) answers it; one that the SQL reads only to sort or filter,
    computing nothing ("Number of answers for questions …" as ``ORDER BY AnswerCount``),
    does not (:func:`_stored_unshown`). ``text``: the searchable question and hints."""
    if not nl.flags.get("aggregate_answer") or nl.flags.get("list_after"):
        return
    if not sql.flags.get("aggregates_unshown"):
        if (held := _stored_unshown(nl, sql, text)) is not None:
            count = next(a.text or "" for a in nl.aggregations if a.func == "count")
            out.add(
                "aggregate_not_output",
                "warning",
                f"the question asks for {count!r} as its answer; the SQL reads the stored"
                f" {held} only to sort or filter, and no output shows it",
                count,
                ", ".join(p.text or p.expr for p in sql.projections),
                "aggregation",
            )
        return
    names = [c for p in sql.projections for c in (*p.columns, p.alias or "")]
    stored = any(
        STORED_AGGREGATES[a.func].search(canon_col(n))
        for a in nl.aggregations
        if a.func in STORED_AGGREGATES
        for n in names
        if n
    )
    if stored:
        return
    asked = next((a.text for a in nl.aggregations if a.func in ("count", "sum", "avg")), None)
    ratio = (c for c in nl.cues if RATIO_WORDS & set(c.casefold().split()))  # "fraction of"
    asked = asked or next(ratio, "a ratio")
    out.add(
        "aggregate_not_output",
        "warning",
        f"the question asks for {asked!r} as its answer; the SQL computes it only to group,"
        " filter or sort, and no output shows it",
        asked,
        ", ".join(p.text or p.expr for p in sql.projections),
        "aggregation",
    )


def _stored_unshown(nl: Spec, sql: Spec, text: str) -> str | None:
    """A column that stores the count the question opens with (``AnswerCount`` for "Number
    of answers …"), read by the SQL but not output, while no output computes anything or
    stores that count itself (``NumTstTakr`` for "the number of test takers")."""
    if sql.flags.get("outputs_computed", True) or sql.flags.get("select_star"):
        return None
    counts = [a.text for a in nl.aggregations if a.func == "count" and a.text]
    outputs = [c for p in sql.projections for c in (*p.columns, p.alias or "") if c]
    if not counts or not outputs:
        return None
    noun = counts[0].split()[-1]
    if stored_name("count", outputs, noun, text) is not None:
        return None  # an output stores it: "the number of test takers" as NumTstTakr
    shown = {canon_col(c) for c in outputs}
    return stored_name("count", [c for c in sql.columns if canon_col(c) not in shown], noun, text)

"""A route the question names from one place to another, against the SQL's route columns:
"flights from Los Angeles to Honolulu" answered with ``destination = 'Los Angeles'``
returns the flights of the other direction (``filter_wrong_column``, an error).

A route is "from X to Y" with both ends written as names (capitalised or quoted). The check
only speaks when the SQL compares one end's name, with ``=`` or ``IN``, on a column whose
name says it holds the *other* end (``destination``, ``arrival``, ``to_city`` against the
start; ``origin``, ``departure``, ``from_team`` against the end). Periods ("from August to
October"), ranges of codes ("from TR000 to TR030") and numbers are compared on columns that
name no end of a route, so they never reach a finding.
"""

from __future__ import annotations

import re

from stef.align.matching import name_words
from stef.findings import FindingCollector
from stef.spec import Spec

#: A place's name: capitalised words ("New York", "Bay of Plenty") or a quoted text.
_NAME = (
    r"(?:[A-Z][\w.'&-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w.'&-]*){0,3}"
    r"|'[^'\n]{1,40}'|\"[^\"\n]{1,40}\")"
)
#: "from X to Y" with both ends written as names.
_ROUTE = re.compile(rf"\bfrom\s+(?P<a>{_NAME})\s+to\s+(?P<b>{_NAME})")

#: Column words that name where a route starts, and where it ends.
_START_WORDS = frozenset({"origin", "source", "src", "departure", "depart", "from", "start"})
_END_WORDS = frozenset({"destination", "dest", "arrival", "arrive", "to", "target"})
_QUOTES = "'\""


def check_route_ends(sql: Spec, out: FindingCollector, question: str) -> None:
    """Report a route end the SQL compares on the column of the route's other end (see the
    module doc).

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> sql = Spec(filters=[Filter("destination", "=", ("los angeles",))])
    >>> check_route_ends(sql, out, "Average price of flights from Los Angeles to Honolulu?")
    >>> [(f.kind, f.severity) for f in out.findings]
    [('filter_wrong_column', 'error')]
    >>> out = FindingCollector()
    >>> sql = Spec(filters=[Filter("origin", "=", ("los angeles",))])
    >>> check_route_ends(sql, out, "Average price of flights from Los Angeles to Honolulu?")
    >>> out.findings
    []
    """
    if " to " not in question or "from " not in question.casefold():
        return  # one cheap test rules most questions out
    for m in _ROUTE.finditer(question):
        ends = ((m.group("a"), "starts", _END_WORDS), (m.group("b"), "ends", _START_WORDS))
        for written, where, other in ends:
            name = written.strip(_QUOTES)
            value = name.casefold()  # as a filter holds it
            for f in sql.filters:
                if f.op not in ("=", "in") or value not in f.values or not f.column:
                    continue
                column = f.column.rsplit(".", 1)[-1]
                if other.isdisjoint(name_words(column)):
                    continue
                out.add(
                    "filter_wrong_column",
                    "error",
                    f"the question's route {where} at {name!r}; the"
                    f" SQL compares it with {column}, the route's other end",
                    m.group(0),
                    f"{column} {f.op} {value!r}",
                    "filter_alignment",
                )
                return

"""The spec: one shape for what a question asks and what a SQL query does.

Both extractors (``stef.sql.spec`` for SQL, ``stef.nl.spec`` for the question) produce a
:class:`Spec`. Alignment compares two specs field by field, so every field means the
same thing on both sides:

* column names are canonical: lower-case, unquoted, without table qualifier, and mapped
  through the rules' ``column_synonyms`` (``"territory"`` → ``"region"``);
* values are normalised strings (see :func:`normalize_value`): ``'North '`` → ``"north"``,
  ``1,000`` → ``"1000"``, ``2023-1-5`` → ``"2023-01-05"``;
* operators come from :data:`OPERATORS`.

>>> f = Filter(column="region", op="=", values=("north",), text="region = 'North'")
>>> f.to_dict()["values"]
['north']
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from stef.findings import by_constructor

#: Comparison operators a :class:`Filter` may carry.
OPERATORS = (
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "in",
    "not in",
    "between",
    "not between",
    "like",
    "not like",
    "is null",
    "is not null",
    "exists",
    "not exists",
)

#: Aggregate function names, canonical.
AGGREGATES = ("count", "sum", "avg", "min", "max")


#: Longest fragment text an evaluation shows; a longer one (a condition widened across a
#: CASE of thousands of WHENs) is cut, so an output line stays linear in the SQL's size.
MAX_FRAGMENT_CHARS = 2000


def excerpt(text: str, limit: int = MAX_FRAGMENT_CHARS) -> str:
    """``text``, or its start and its size when longer than ``limit``.

    >>> excerpt("abcdef", 3)
    'abc… [6 characters]'
    """
    return text if len(text) <= limit else text[:limit] + f"… [{len(text):,} characters]"


#: The cue of an NL value read only from capitalisation (see :class:`Filter`).
WEAK_CUE = "capitalised"

#: A comparison operator and the one that selects exactly the rows it leaves out
#: (``NOT x > 5`` is ``x <= 5``; "except those less than 9" keeps ``>= 9``).
NEGATED_OP = {"=": "!=", "!=": "=", ">": "<=", ">=": "<", "<": ">=", "<=": ">"}


@dataclass(frozen=True)
class Filter:
    """One conjunct of a WHERE/HAVING/ON condition, or one constraint the question states.

    ``column`` is ``None`` when unknown (an NL value with no column hint, or a predicate
    over an expression). ``func`` names a function wrapped around the column
    (``YEAR(d) = 2023`` → ``func="year"``). ``values`` holds the normalised literal(s):
    one for ``=``, several for ``IN``, two for ``BETWEEN``, none for ``IS NULL``.
    ``clause`` says where it came from: ``where``, ``having``, ``join``, ``case`` (a CASE
    WHEN / IIF condition inside an output) (SQL) or
    ``question``, ``enriched`` (NL). ``text`` is the fragment that supports it.
    ``cue`` (NL only) names a weak cue the value was read from: :data:`WEAK_CUE` for a
    capitalised phrase no quote or hint marks as a value (``customers in Germany``), which
    the SQL may answer by a name instead of a filter (a table ``germany_customers``).
    """

    column: str | None
    op: str
    values: tuple[str, ...] = ()
    text: str = ""
    clause: str = "where"
    func: str | None = None
    cue: str | None = None
    #: SQL only: the condition selects rows that are then excluded (the right side of an
    #: EXCEPT, a subquery under NOT IN / NOT EXISTS), so it answers a negated requirement.
    negated: bool = False

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "column": self.column,
            "op": self.op,
            "values": list(self.values),
            "text": self.text if len(self.text) <= MAX_FRAGMENT_CHARS else excerpt(self.text),
            "clause": self.clause,
            "func": self.func,
            "cue": self.cue,
        }
        if self.negated:
            out["negated"] = True
        return out


@dataclass(frozen=True)
class Aggregation:
    """An aggregate call: ``COUNT(DISTINCT x)`` → ``Aggregation("count", "x", True)``.

    ``arg`` is a canonical column name, ``"*"``, or a normalised expression text; ``None``
    on the NL side when the question names no argument.
    """

    func: str
    arg: str | None = None
    distinct: bool = False
    text: str = ""

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)

    def to_dict(self) -> dict[str, Any]:
        return {"func": self.func, "arg": self.arg, "distinct": self.distinct, "text": self.text}


@dataclass(frozen=True)
class Projection:
    """One SELECT output: its normalised expression text, output name and columns used."""

    expr: str
    alias: str | None = None
    columns: tuple[str, ...] = ()
    is_aggregate: bool = False
    text: str = ""

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "expr": self.expr,
            "alias": self.alias,
            "columns": list(self.columns),
            "is_aggregate": self.is_aggregate,
            "text": self.text,
        }


@dataclass(frozen=True)
class OrderKey:
    """One ORDER BY key (resolved through SELECT aliases and ordinals) and its direction.

    On the NL side ``stated`` says whether the question names the direction (``sorted by
    price`` does not: it is read as ascending, SQL's default)."""

    key: str
    direction: str = "asc"
    is_aggregate: bool = False
    text: str = ""
    stated: bool = True

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "direction": self.direction,
            "is_aggregate": self.is_aggregate,
            "text": self.text,
            "stated": self.stated,
        }


@dataclass
class Spec:
    """What a query does (SQL side) or what a question asks (NL side).

    On the NL side ``limit`` is the requested top-k, ``columns`` the columns the
    question or its enrichment names, ``literals`` the values it mentions and ``cues``
    the phrases that produced the spec (an empty ``cues`` means the question gave the
    extractor nothing to hold on to). On the SQL side ``literals`` holds every literal
    in the query and ``tables`` every base table.
    """

    projections: list[Projection] = field(default_factory=list)
    aggregations: list[Aggregation] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    group_by: list[str] = field(default_factory=list)
    order_by: list[OrderKey] = field(default_factory=list)
    limit: int | None = None
    offset: int | None = None
    distinct: bool = False
    set_operations: list[str] = field(default_factory=list)
    window_functions: list[str] = field(default_factory=list)
    #: SQL only: aggregates computed over a window (``SUM(x) OVER (PARTITION BY g)``).
    window_aggregations: list[Aggregation] = field(default_factory=list)
    subqueries: int = 0
    ctes: int = 0
    tables: list[str] = field(default_factory=list)
    joins: list[dict[str, Any]] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)
    formulas: list[str] = field(default_factory=list)
    cues: list[str] = field(default_factory=list)
    flags: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "projections": [p.to_dict() for p in self.projections],
            "aggregations": [a.to_dict() for a in self.aggregations],
            "filters": [f.to_dict() for f in self.filters],
            "group_by": list(self.group_by),
            "order_by": [o.to_dict() for o in self.order_by],
            "limit": self.limit,
            "offset": self.offset,
            "distinct": self.distinct,
            "set_operations": list(self.set_operations),
            "window_functions": list(self.window_functions),
            "window_aggregations": [a.to_dict() for a in self.window_aggregations],
            "subqueries": self.subqueries,
            "ctes": self.ctes,
            "tables": list(self.tables),
            "joins": [dict(j) for j in self.joins],
            "columns": list(self.columns),
            "literals": list(self.literals),
            "formulas": list(self.formulas),
            "cues": list(self.cues),
            "flags": dict(self.flags),
        }


_WS = re.compile(r"\s+")
_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$")
#: A date (or year-month) with "-", "/" or "." between its parts, and a time of day that
#: may carry fractions of a second: "2023/1/5", "2013/4", "2014/4/23 20:29:39.0".
_DATE = re.compile(
    r"^(\d{4})[-/.](\d{1,2})(?:[-/.](\d{1,2})(?:[ T](\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?)?$"
)


@lru_cache(maxsize=65536)
def normalize_number(text: str) -> str | None:
    """Canonical text of a number, or ``None`` when ``text`` is not one.

    >>> normalize_number("1,000.50"), normalize_number("007"), normalize_number("x")
    ('1000.5', '7', None)
    """
    t = text.strip()
    if not _NUMBER.match(t):
        return None
    t = t.replace(",", "")
    if "." in t:
        t = t.rstrip("0").rstrip(".")
    sign = "-" if t.startswith("-") else ""
    t = t.lstrip("+-")
    int_part, _, frac = t.partition(".")
    int_part = int_part.lstrip("0") or "0"
    out = int_part + ("." + frac if frac else "")
    return sign + out if out != "0" else "0"


def normalize_value(value: object) -> str:
    """Normalise a literal so the NL and SQL sides compare equal.

    Case-folded, accents kept, surrounding quotes and whitespace removed, inner
    whitespace collapsed, numbers and ISO-like dates made canonical.

    >>> normalize_value("  'New  York' "), normalize_value(2023.0), normalize_value("2023/1/5")
    ('new york', '2023', '2023-01-05')
    >>> normalize_value("2014/4/23 20:29:39.0"), normalize_value("2013/4")
    ('2014-04-23 20:29:39.0', '2013-04')
    """
    if type(value) is str:
        return _normalize_text(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return _normalize_text(repr(value) if isinstance(value, (int, float)) else str(value))


@lru_cache(maxsize=65536)
def _normalize_text(text: str) -> str:
    """:func:`normalize_value` of a string (memoised: the same literals recur)."""
    text = unicodedata.normalize("NFC", text).strip()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        text = text[1:-1].strip()
    num = normalize_number(text)
    if num is not None:
        return num
    m = _DATE.match(text)
    if m:
        y, mo, d, tm = m.groups()
        out = f"{int(y):04d}-{int(mo):02d}" + (f"-{int(d):02d}" if d else "")
        return f"{out} {tm}" if tm else out
    return _WS.sub(" ", text).casefold()


def normalize_column(name: str, synonyms: dict[str, str] | None = None) -> str:
    """Canonical column name: unquoted, lower-case, no qualifier, synonyms applied.

    ``synonyms`` maps a lower-case synonym to its canonical name.

    >>> normalize_column('T1."Territory"', {"territory": "region"})
    'region'
    """
    text = _canonical_column(name)
    if synonyms:
        return synonyms.get(text, text)
    return text


@lru_cache(maxsize=65536)
def _canonical_column(name: str) -> str:
    """:func:`normalize_column` without synonyms (memoised: the same names recur)."""
    text = unicodedata.normalize("NFC", name).strip()
    for q in ('"', "`", "[", "]"):
        text = text.replace(q, "")
    if "." in text:
        text = text.rsplit(".", 1)[1]
    return _WS.sub(" ", text).casefold().strip()

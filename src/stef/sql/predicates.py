"""Turn WHERE / HAVING / ON conditions into :class:`stef.spec.Filter` s and join conditions.

A condition is split into its AND-ed conjuncts; each becomes one filter
(``column op values``), one join condition (a comparison of two plain columns), or one
opaque filter with a ``complex_predicate`` finding when it cannot be reduced to a column
filter (an OR over different columns, a negated conjunction, ...).

>>> from stef.sql.spec import extract_sql_spec
>>> spec = extract_sql_spec("SELECT a FROM t WHERE 5 < x AND NOT y = 'N' AND z IN (1, 2)").spec
>>> [(f.column, f.op, f.values) for f in spec.filters]
[('x', '>', ('5',)), ('y', '!=', ('n',)), ('z', 'in', ('1', '2'))]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from typing import Final

from dateutil.relativedelta import relativedelta
from sqlglot import exp

from stef.findings import Finding
from stef.spec import NEGATED_OP, Filter, normalize_value
from stef.sql.clock import clock_token
from stef.sql.nodes import NATIVE, push_children
from stef.sql.text import TreeText
from stef.sql.walk import search


@lru_cache(maxsize=65536)
def cached_value(text: str) -> str:
    """``normalize_value(text)``, memoised."""
    return normalize_value(text)


#: Comparison node → operator.
COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NullSafeEQ: "=",
    exp.NEQ: "!=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
_NEGATABLE = frozenset({exp.In, exp.Between, exp.Like, exp.ILike, exp.Is})
_FLIP = {"=": "=", "!=": "!=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}

#: Nodes that only change a value's type; a filter looks through them to the column.
TRANSPARENT = (
    exp.Paren, exp.Cast, exp.TsOrDsToDate, exp.TsOrDsToTimestamp, exp.TsOrDsToDatetime, exp.Collate,
)  # a collation (``LIKE '%i%' COLLATE …_CS_AS``) leaves the value as it is

#: The node classes the per-node code below tests, as constants: compiled, ``exp.Column``
#: is a look-up in the module's dictionary each time; a ``Final`` name is a C global.
_COLUMN: Final = exp.Column
_LITERAL: Final = exp.Literal
_EXPR: Final = exp.Expr
_QUERY: Final = exp.Query
_STAR: Final = exp.Star
_PAREN: Final = exp.Paren
_OR: Final = exp.Or
_NEG: Final = exp.Neg
#: Value nodes that may compute a date from the clock (:meth:`PredicateReader._clocked`).
_CLOCKISH = (
    exp.Sub, exp.Add, exp.DateAdd, exp.DateSub, exp.TimestampAdd, exp.TimestampSub,
    exp.DatetimeAdd, exp.DatetimeSub, exp.CurrentDate, exp.CurrentTimestamp,
    exp.CurrentDatetime, exp.Anonymous, exp.Cast, exp.TryCast, exp.DateTrunc,
    exp.TimestampTrunc, exp.Year, exp.Month, exp.Extract, exp.TsOrDsToDate, exp.Date,
    exp.TimeToStr, exp.TsOrDsToTimestamp, exp.DateFromParts, exp.LastDay, exp.TsOrDsAdd,
)  # fmt: skip
_FUNC: Final = exp.Func

#: strftime / DATE_FORMAT / TO_CHAR formats that mean a date part.
_FORMAT_PARTS = {
    "%Y": "year",
    "%m": "month",
    "%d": "day",
    "%H": "hour",
    "%M": "minute",
    "%w": "dayofweek",
    "%j": "dayofyear",
    "%W": "week",
    "%Y-%m": "year_month",
    "%Y-%m-%d": "date",
}


_UNITS = {"day": "days", "week": "weeks", "month": "months", "year": "years"}


def shift_date(anchor: str, sign: int, amount: str, unit: str) -> str | None:
    """``anchor`` (an ISO date) moved by ``sign * amount`` units (``6``, ``'6 days'``).

    >>> shift_date("2017-07-31", -1, "6", "DAY"), shift_date("2017-07-01", 1, "1", "MONTH")
    ('2017-07-25', '2017-08-01')
    >>> shift_date("2017-07-31", -1, "6 days", ""), shift_date("soon", 1, "1", "DAY")
    ('2017-07-25', None)
    """
    words = amount.split()
    if len(words) == 2:
        amount, unit = words
    unit = _UNITS.get(unit.casefold().rstrip("s"), "")
    if not unit or not amount.isdigit():
        return None
    try:
        day = date.fromisoformat(anchor[:10])
    except ValueError:
        return None
    return (day + relativedelta(**{unit: sign * int(amount)})).isoformat()


def strip(node: exp.Expr) -> exp.Expr:
    """``node`` without parentheses, casts and sqlglot's date-coercion wrappers."""
    while isinstance(node, TRANSPARENT) and isinstance(node.this, _EXPR):
        node = node.this
    return node


def _flatten(condition: exp.Expr, connector: type[exp.Connector]) -> list[exp.Expr]:
    """The parts of ``condition`` that ``connector`` (AND or OR) joins, left to right, at
    any depth of parentheses."""
    out: list[exp.Expr] = []
    stack = [condition]
    while stack:
        node = stack.pop()
        while isinstance(node, _PAREN) and isinstance(node.this, _EXPR):
            node = node.this
        if isinstance(node, connector):
            stack.append(node.expression)
            stack.append(node.this)
        else:
            out.append(node)
    return out


def conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The AND-ed parts of a condition, left to right, parentheses removed.

    >>> import sqlglot
    >>> [c.sql() for c in conjuncts(sqlglot.parse_one("(a = 1 AND (b = 2)) AND (c = 3 OR d = 4)"))]
    ['a = 1', 'b = 2', 'c = 3 OR d = 4']
    """
    return _flatten(condition, exp.And)


def _disjuncts(condition: exp.Expr) -> list[exp.Expr]:
    return _flatten(condition, exp.Or)


#: Names that may hold a date or time (``birthday``, ``opendate``, ``created_at``, ``dob``,
#: ``order_ts``).
DATE_LIKE_NAME = re.compile(
    r"date|time|birth|dob|day|year|month|creat|open|clos|issue|modif|_at$|^at$|period|start|"
    r"end|received|join|since|until|when|stamp|dt$|^d$|_on$|(?:^|_)ts$"
)

#: The date part a fixed slice of a date string holds: ``substr(d, 1, 4)`` of
#: ``'2013-10-05'`` or ``'20131005'`` is the year; (1, 7) or (1, 6) the year and month.
_SUBSTRING_PARTS = {
    (1, 4): "year",
    (1, 7): "year_month",
    (1, 6): "year_month",
    (6, 2): "month",
    (5, 2): "month",
    (9, 2): "day",
    (7, 2): "day",
    (1, 10): "date",
    (1, 8): "date",
}


def _substring_part(node: exp.Substring) -> str | None:
    """The date part ``SUBSTR(col, start, length)`` takes of a date-named column.

    >>> import sqlglot
    >>> _substring_part(sqlglot.parse_one("substr(birthday, 1, 4)", read="sqlite"))
    'year'
    >>> _substring_part(sqlglot.parse_one("substr(code, 1, 4)", read="sqlite")) is None
    True
    """
    col, start, length = node.this, node.args.get("start"), node.args.get("length")
    if not isinstance(col, _COLUMN) or not DATE_LIKE_NAME.search(col.name.casefold()):
        return None
    if not (isinstance(start, _LITERAL) and isinstance(length, _LITERAL)):
        return None
    if not (start.is_int and length.is_int):
        return None
    return _SUBSTRING_PARTS.get((int(start.name), int(length.name)))


def function_name(node: exp.Expr, literal: Callable[[exp.Expr], str] | None = None) -> str:
    """Lower-case name of the function ``node`` applies (date parts for date functions).

    ``literal`` reads a literal's original text (see ``TreeText.literal_value``).

    >>> import sqlglot
    >>> function_name(sqlglot.parse_one("strftime('%Y', d)", read="sqlite"))
    'year'
    """
    read = literal or (lambda n: n.name)
    if isinstance(node, exp.Extract):
        return read(node.this).lower() if isinstance(node.this, _EXPR) else "extract"
    if isinstance(node, exp.TimeToStr):
        fmt = node.args.get("format")
        return _FORMAT_PARTS.get(read(fmt) if isinstance(fmt, _EXPR) else "", "strftime")
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Substring) and (part := _substring_part(node)) is not None:
        return part
    if isinstance(node, _FUNC):
        return node.sql_name().lower()
    return node.key


@dataclass
class JoinCondition:
    """A comparison of two plain columns (``T1.id = T2.owner_id``)."""

    left: str
    right: str
    op: str
    kind: str
    left_qualifier: str | None
    right_qualifier: str | None
    tables: list[str] = field(default_factory=list)

    # Written out, not generated by @dataclass: mypyc compiles it (docs/performance.md).
    def __init__(
        self,
        left: str,
        right: str,
        op: str,
        kind: str,
        left_qualifier: str | None,
        right_qualifier: str | None,
        tables: list[str] | None = None,
    ) -> None:
        self.left = left
        self.right = right
        self.op = op
        self.kind = kind
        self.left_qualifier = left_qualifier
        self.right_qualifier = right_qualifier
        self.tables = [] if tables is None else tables

    def to_dict(self) -> dict[str, object]:
        return {
            "left": self.left,
            "right": self.right,
            "op": self.op,
            "kind": self.kind,
            "tables": list(self.tables),
        }


@dataclass
class Conditions:
    """What a set of conditions said: filters, join conditions and findings."""

    filters: list[Filter] = field(default_factory=list)
    joins: list[JoinCondition] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    # Written out, not generated by @dataclass: mypyc compiles it (docs/performance.md).
    def __init__(
        self,
        filters: list[Filter] | None = None,
        joins: list[JoinCondition] | None = None,
        findings: list[Finding] | None = None,
    ) -> None:
        self.filters = [] if filters is None else filters
        self.joins = [] if joins is None else joins
        self.findings = [] if findings is None else findings


class PredicateReader:
    """Reads conditions of one statement, using its :class:`TreeText` for text and names.

    ``allow_joins=False`` (rules-file predicates) turns column-to-column comparisons into
    plain filters whose value is the other column's name.
    """

    def __init__(self, text: TreeText, allow_joins: bool = True) -> None:
        self.text = text
        self.allow_joins = allow_joins
        #: SELECT aliases (written name → aliased expression) a HAVING may refer to.
        self.aliases: dict[str, exp.Expr] = {}
        #: Filter values computed from the clock: (filter, value position, clock token),
        #: read only when ``may_read_clock`` (the statement calls a function that can).
        self.clock_values: list[tuple[Filter, int, str]] = []
        self.may_read_clock = True

    def _clocked(
        self, f: Filter, nodes: tuple[exp.Expr, ...], column: exp.Expr | None = None
    ) -> Filter:
        """``f``, its values computed from the clock noted (:func:`clock_token`); a column
        side truncated to a month or a year (``DATE_TRUNC('month', d) = DATE_TRUNC('month',
        NOW())``) compares values at that precision."""
        if not self.may_read_clock:
            return f
        for pos, node in enumerate(nodes):
            core = strip(node)
            if isinstance(core, _CLOCKISH) and (token := clock_token(core, self._literal)):
                if isinstance(column, (exp.DateTrunc, exp.TimestampTrunc)):
                    unit = column.args.get("unit")
                    part = _TRUNC_PARTS.get(unit.name.casefold() if unit else "")
                    token += f"|fmt:{part[0] if part else 'other'}"  # 'other': left unread
                self.clock_values.append((f, pos, token))
        return f

    def _text(self, src: exp.Expr | None) -> str:
        return self.text.original(src) if src is not None else ""

    def _literal(self, node: exp.Expr) -> str:
        return self.text.literal_value(node) if type(node) is _LITERAL else node.name

    # ------------------------------------------------------------------ helpers
    def side_columns(self, node: exp.Expr) -> list[str]:
        """Distinct canonical columns a side reads, not looking into subqueries."""
        cols = self.text.columns
        cls = type(node)
        if cls is _LITERAL:
            return []
        if cls is _COLUMN:
            info = cols.get(id(node))
            if info is not None:
                return [] if info.string is not None else [info.name]
        names: list[str] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if type(n) is _COLUMN:
                info = cols.get(id(n))
                if info is None:
                    name = self.text.canonical_column(n)
                elif info.string is not None or isinstance(n.this, _STAR):
                    continue
                else:
                    name = info.name
                if name not in names:
                    names.append(name)
                continue
            if isinstance(n, _QUERY) and n is not node:
                continue
            if NATIVE:
                push_children(n, stack)
            else:
                stack.extend(n.iter_expressions())
        return names

    def aggregate_arg(self, agg: exp.Expr) -> tuple[str, bool]:
        """``(arg, distinct)`` of an aggregate call: a column, ``"*"`` or expression text."""
        this = agg.this if isinstance(agg.this, _EXPR) else None
        if isinstance(this, exp.Distinct):
            parts = [self.text.render(strip(e)) for e in this.expressions]
            return ", ".join(parts) or "*", True
        if this is None or isinstance(this, _STAR):
            return "*", False
        return self.text.render(strip(this)), False

    def describe(
        self, node: exp.Expr, names: list[str] | None = None
    ) -> tuple[str | None, str | None]:
        """``(column, func)`` for one side of a comparison.

        A plain column gives ``(column, None)``; a function of one column gives the
        column and the function's name; an aggregate gives its argument and name; other
        expressions of one column give the column and the expression's text; expressions
        of several columns give their canonical text and no function.
        """
        core = strip(node)
        if type(core) is _COLUMN:
            info = self.text.columns.get(id(core))
            if info is not None and info.qualifier is None and info.raw in self.aliases:
                target = self.aliases[info.raw]
                if not (type(target) is _COLUMN and target.name.lower() == info.raw):
                    saved, self.aliases = self.aliases, {}
                    try:
                        return self.describe(target)
                    finally:
                        self.aliases = saved
            if info is None or info.string is None:
                return self.text.canonical_column(core), None
        if names is None:
            names = self.side_columns(core)
        if isinstance(core, exp.AggFunc):
            return self.aggregate_arg(core)[0], function_name(core, self._literal)
        if not names:
            return None, None
        if len(names) == 1:
            if isinstance(core, _FUNC) and not isinstance(core, (exp.Case, exp.If)):
                return names[0], function_name(core, self._literal)
            return names[0], self.text.render(core)
        return self.text.render(core), None

    def value(self, node: exp.Expr) -> str:
        """Normalised literal value of a value-side node (canonical text otherwise)."""
        core = strip(node)
        cls = type(core)
        if cls is _LITERAL:
            return cached_value(self.text.literal_value(core))
        if cls is _NEG and type(core.this) is _LITERAL:
            return cached_value("-" + self.text.literal_value(core.this))
        if cls is exp.Boolean:
            return "true" if core.this else "false"
        if cls is exp.Null:
            return "null"
        if cls is exp.Placeholder:
            return f":{core.name}" if core.name not in ("", "?") else "?"
        if cls is _COLUMN:
            info = self.text.columns.get(id(core))
            if info is not None and info.string is not None:
                return cached_value(info.string)
        if cls in (exp.DateAdd, exp.DateSub, exp.Add, exp.Sub):
            shifted = self._shifted_date(core)
            if shifted is not None:
                return shifted
        return self.text.render(core)

    def _shifted_date(self, node: exp.Expr) -> str | None:
        """A literal date moved by a literal interval (``DATE_SUB('2017-07-31', INTERVAL 6
        DAY)``, ``DATE '2017-07-31' - INTERVAL '6 days'``), as an ISO date; else None."""
        anchor, amount = strip(node.this), node.expression
        unit = node.args.get("unit")
        if isinstance(amount, exp.Interval):
            unit, amount = amount.args.get("unit"), amount.this
        sign = -1 if isinstance(node, (exp.DateSub, exp.Sub)) else 1
        if isinstance(amount, _NEG):
            sign, amount = -sign, amount.this
        if not isinstance(anchor, _LITERAL) or not isinstance(amount, _LITERAL):
            return None
        return shift_date(
            cached_value(self.text.literal_value(anchor)),
            sign,
            amount.name,
            unit.name if isinstance(unit, _EXPR) else "",
        )

    # --------------------------------------------------------------------- read
    def read(
        self,
        condition: exp.Expr,
        clause: str,
        out: Conditions,
        kind: str = "inner",
        resolve: Callable[[str | None], str | None] | None = None,
    ) -> list[JoinCondition]:
        """Add the filters/joins of ``condition`` to ``out``; returns its join conditions."""
        found: list[JoinCondition] = []
        for node in conjuncts(condition):
            res = self._predicate(node, clause, node, kind)
            if isinstance(res, JoinCondition):
                if resolve is not None:
                    for q in (res.left_qualifier, res.right_qualifier):
                        table = resolve(q)
                        if table and table not in res.tables:
                            res.tables.append(table)
                found.append(res)
                out.joins.append(res)
            elif res is None:
                text = self.text.original(node)
                out.filters.append(Filter(None, "=", (), text, clause))
                out.filters.extend(self._alternatives(node))
                out.findings.append(
                    Finding(
                        "complex_predicate",
                        "info",
                        f"{clause.upper()} condition kept whole (not reducible to "
                        f"column filters): {text}",
                        sql=text,
                        rule="sqlspec",
                    )
                )
            else:
                out.filters.append(res)
        return found

    def _alternatives(self, node: exp.Expr) -> list[Filter]:
        """The column filters inside the branches of an OR kept whole, each of clause
        ``or``: ``(alb <= 3.5 OR alb >= 5.5)`` applies both bounds, one row at a time, so a
        question stating either bound finds it here. They answer requirements; being one
        condition together, they are never extras one by one."""
        core = strip(node)
        if not isinstance(core, _OR):
            return []
        found: list[Filter] = []
        for part in _disjuncts(core):
            for conj in conjuncts(part):
                res = self._predicate(conj, "or", conj, "inner")
                if isinstance(res, Filter) and res.values and res.column is not None:
                    found.append(res)
        return found

    def _predicate(
        self, node: exp.Expr, clause: str, src: exp.Expr | None, kind: str
    ) -> Filter | JoinCondition | None:
        """One conjunct; ``src`` is the node whose original text a filter quotes."""
        negate = False
        core = node
        while True:
            if isinstance(core, _PAREN) and isinstance(core.this, _EXPR):
                core = core.this
            elif isinstance(core, exp.Not) and isinstance(core.this, _EXPR):
                negate = not negate
                core = core.this
            else:
                break
        cls = type(core)
        if cls in _NEGATABLE and core.args.get("negate"):  # e.g. postgres ``IS NOT NULL``
            negate = not negate
        op = COMPARISONS.get(cls)
        if op is not None:
            return self._comparison(core, op, negate, clause, src, kind)
        if cls is _OR:
            return None if negate else self._or(core, clause, src)
        if cls is exp.Exists:
            return Filter(None, "not exists" if negate else "exists", (), self._text(src), clause)
        if cls is exp.In:
            column, func = self.describe(core.this)
            if core.args.get("query") is not None:
                values: tuple[str, ...] = ()
            elif core.args.get("unnest") is not None or core.args.get("field") is not None:
                return None
            else:
                values = tuple(self.value(e) for e in core.expressions)
            return Filter(
                column, "not in" if negate else "in", values, self._text(src), clause, func
            )
        if cls is exp.Between:
            column, func = self.describe(core.this)
            low, high = core.args["low"], core.args["high"]
            op = "not between" if negate else "between"
            values = (self.value(low), self.value(high))
            f = Filter(column, op, values, self._text(src), clause, func)
            return self._clocked(f, (low, high))
        if cls in (exp.Like, exp.ILike):
            column, func = self.describe(core.this)
            value = (self.value(core.expression),)
            return Filter(
                column, "not like" if negate else "like", value, self._text(src), clause, func
            )
        if cls is exp.Is:
            column, func = self.describe(core.this)
            rhs = core.expression
            if isinstance(rhs, exp.Null):
                op = "is not null" if negate else "is null"
                return Filter(column, op, (), self._text(src), clause, func)
            if isinstance(rhs, exp.Boolean):
                value = ("true" if rhs.this else "false",)
                return Filter(column, "!=" if negate else "=", value, self._text(src), clause, func)
            return None
        if cls is _COLUMN:
            info = self.text.columns.get(id(core))
            if info is None or info.string is None:
                flag = ("false" if negate else "true",)
                return Filter(self.text.canonical_column(core), "=", flag, self._text(src), clause)
        return None

    def _comparison(
        self, core: exp.Expr, op: str, negate: bool, clause: str, src: exp.Expr | None, kind: str
    ) -> Filter | JoinCondition:
        if negate:
            op = NEGATED_OP[op]
        left, right = core.this, core.expression
        lnames = self.side_columns(left)
        rnames = self.side_columns(right)
        lcore, rcore = strip(left), strip(right)
        if (not lnames and rnames) or (
            isinstance(lcore, _QUERY) and not isinstance(rcore, _QUERY)
        ):
            left, right, lnames, rnames, lcore, rcore = right, left, rnames, lnames, rcore, lcore
            op = _FLIP[op]
        if lnames and rnames and type(lcore) is _COLUMN and type(rcore) is _COLUMN:
            linfo = self.text.columns.get(id(lcore))
            rinfo = self.text.columns.get(id(rcore))
            if self.allow_joins:
                return JoinCondition(
                    left=lnames[0],
                    right=rnames[0],
                    op=op,
                    kind=kind,
                    left_qualifier=linfo.qualifier if linfo else None,
                    right_qualifier=rinfo.qualifier if rinfo else None,
                )
        column, func = self.describe(left, lnames)
        if isinstance(rcore, _QUERY):
            return Filter(column, op, (), self._text(src), clause, func)
        truncated = isinstance(lcore, (exp.DateTrunc, exp.TimestampTrunc)) and not rnames
        if truncated and op == "=" and (days := _trunc_quarter(lcore, self.value(right))):
            # DATE_TRUNC('quarter', d) = '2024-04-01': the days of that quarter
            return Filter(column, "between", days, self._text(src), clause, None)
        if truncated and (period := _trunc_period(lcore, self.value(right))) is not None:
            # DATE_TRUNC('month', d) = '2024-01-01': the month 2024-01, as strftime('%Y-%m', d)
            part, value = period
            return Filter(column, op, (value,), self._text(src), clause, part)
        scaled = _scaled(rcore) if rnames and type(lcore) is exp.Column else None
        if scaled is not None:
            # "below 10% of capacity" as units < 0.1 * capacity: units / capacity < 0.1
            factor, base = scaled
            ratio = f"{self.text.render(lcore)} / {self.text.render(base)}"
            return Filter(ratio, op, (self.value(factor),), self._text(src), clause, None)
        if rnames:
            return Filter(column, op, (self.text.render(rcore),), self._text(src), clause, func)
        f = Filter(column, op, (self.value(right),), self._text(src), clause, func)
        return self._clocked(f, (rcore,), lcore)

    def _or(self, core: exp.Expr, clause: str, src: exp.Expr | None) -> Filter | None:
        column: str | None = None
        func: str | None = None
        values: dict[str, None] = {}  # ordered set
        for i, part in enumerate(_disjuncts(core)):
            res = self._predicate(part, clause, None, "inner")
            if not isinstance(res, Filter) or res.column is None:
                return None
            # "x = 'a' OR x IS NULL": the values stand, NULL is allowed besides
            if res.op != "is null" and (res.op not in ("=", "in") or not res.values):
                return None
            if i == 0:
                column, func = res.column, res.func
            elif (res.column, res.func) != (column, func):
                return None
            values.update(dict.fromkeys(res.values))
        if not values:
            return None
        return Filter(column, "in", tuple(values), self._text(src), clause, func)


#: The date part a truncation to each unit compares, and how many characters of an ISO date
#: it keeps: ``DATE_TRUNC('month', d) = '2024-01-01'`` is ``year_month`` ``'2024-01'``.
_TRUNC_PARTS = {"month": ("year_month", 7, "-01"), "year": ("year", 4, "-01-01")}


def _trunc_quarter(node: exp.Expr, value: str) -> tuple[str, str] | None:
    """The first and last day of the quarter a date truncated to its quarter is compared
    with (``DATE_TRUNC('quarter', d) = '2024-04-01'``); else None.

    >>> import sqlglot
    >>> _trunc_quarter(sqlglot.parse_one("DATE_TRUNC('quarter', d)", read="postgres"), "2024-04-01")
    ('2024-04-01', '2024-06-30')
    >>> _trunc_quarter(sqlglot.parse_one("DATE_TRUNC('quarter', d)", read="postgres"), "2024-05-01")
    """
    unit = node.args.get("unit")
    if not isinstance(unit, exp.Expr) or unit.name.casefold() != "quarter":
        return None
    try:
        first = date.fromisoformat(value[:10])
    except ValueError:
        return None
    if first.day != 1 or first.month % 3 != 1 or value[10:].strip(" 0:") != "":
        return None
    last = first + relativedelta(months=3) - timedelta(days=1)
    return first.isoformat(), last.isoformat()


def _trunc_period(node: exp.Expr, value: str) -> tuple[str, str] | None:
    """``(part, value)`` of a date truncated to a month or a year and compared with the
    first day of one (``DATE_TRUNC('month', d) = '2024-01-01'`` → ``("year_month",
    "2024-01")``); else None.

    >>> import sqlglot
    >>> _trunc_period(sqlglot.parse_one("DATE_TRUNC('month', d)", read="postgres"), "2024-01-01")
    ('year_month', '2024-01')
    >>> _trunc_period(sqlglot.parse_one("DATE_TRUNC(d, YEAR)", read="bigquery"), "2023-01-01")
    ('year', '2023')
    >>> _trunc_period(sqlglot.parse_one("DATE_TRUNC('month', d)", read="postgres"), "2024-01-15")
    """
    if not isinstance(node, (exp.DateTrunc, exp.TimestampTrunc)) or len(value) < 10:
        return None
    unit = node.args.get("unit")
    name = unit.name.casefold() if isinstance(unit, exp.Expr) else ""
    part = _TRUNC_PARTS.get(name)
    if part is None or not value[:10].endswith(part[2]) or value[10:].strip(" 0:") != "":
        return None
    return part[0], value[: part[1]]


def _scaled(node: exp.Expr) -> tuple[exp.Expr, exp.Expr] | None:
    """``(factor, column)`` of a column times a number (``0.1 * capacity``, ``cap * 0.5``),
    the value side of a comparison with a share of another column; else None.

    >>> import sqlglot
    >>> [n.sql() for n in _scaled(sqlglot.parse_one("0.1 * capacity"))]
    ['0.1', 'capacity']
    >>> _scaled(sqlglot.parse_one("a * b")) is None
    True
    """
    if type(node) is not exp.Mul:
        return None
    a, b = strip(node.this), strip(node.expression)
    for factor, base in ((a, b), (b, a)):
        if type(factor) is exp.Literal and not factor.is_string and type(base) is exp.Column:
            return factor, base
    return None


def _and_terms(node: exp.Expr) -> list[exp.Expr]:
    """The terms of an AND chain as written (parenthesised groups stay whole)."""
    if type(node) is exp.And:
        return [*_and_terms(node.this), *_and_terms(node.expression)]
    return [node]


def _column_names(node: exp.Expr) -> set[str]:
    return {c.name.casefold() for c in search(node, (exp.Column,)) if c.name}


def or_precedence(ors: list[exp.Or]) -> exp.Or | None:
    """The first OR whose one side is an AND chain and whose other side is one condition on
    a column that the chain's adjacent term tests: ``a = 1 AND b IS NULL OR b = '*'``, which
    SQL reads as ``(a = 1 AND b IS NULL) OR b = '*'`` (AND binds tighter), when
    ``a = 1 AND (b IS NULL OR b = '*')`` was almost surely meant; likewise two AND chains
    joined by OR whose adjacent terms test one column and whose columns differ. Two chains
    of the same columns are a condition in disjunctive form, not this.

    >>> import sqlglot
    >>> def first(sql):
    ...     found = or_precedence(list(sqlglot.parse_one(sql).find_all(exp.Or)))
    ...     return found.sql() if found else None
    >>> first("SELECT x FROM t WHERE a = 1 AND b IS NULL OR b = '*'")
    "a = 1 AND b IS NULL OR b = '*'"
    >>> first("SELECT x FROM t WHERE a = 1 AND (b IS NULL OR b = '*')") is None
    True
    >>> first("SELECT x FROM t WHERE a = 1 AND b = 2 OR a = 3 AND b = 4") is None
    True
    >>> first("SELECT x FROM t WHERE a > 5 AND b IS NULL OR b = '*' AND c = 'C'")
    "a > 5 AND b IS NULL OR b = '*' AND c = 'C'"
    """
    for node in ors:
        left, right = node.this, node.expression
        if type(left) is exp.And and type(right) is exp.And:
            a, b = _and_terms(left), _and_terms(right)
            adjacent = _column_names(a[-1]) & _column_names(b[0])
            if adjacent and _chain_columns(a) != _chain_columns(b):
                return node  # "x > 5 AND p IS NULL OR p = '*' AND s = 'C'": no disjunctive form
            continue
        for chain, other, last in ((left, right, True), (right, left, False)):
            if type(chain) is not exp.And or type(other) in (exp.And, exp.Or):
                continue
            terms = _and_terms(chain)
            if _column_names(other) & _column_names(terms[-1] if last else terms[0]):
                return node
    return None


def _chain_columns(terms: list[exp.Expr]) -> set[str]:
    """The columns an AND chain's terms test, together."""
    return set().union(*(_column_names(t) for t in terms))


def repeated_condition(filters: list[Filter]) -> str | None:
    """The text of the first condition these filters (of one SELECT) hold twice: the same
    column, operator and values, written the same (``STRFTIME('%m', d) = '03'`` and
    ``STRFTIME('%d', d) = '03'`` are two conditions, so are ``a.year = 1`` and ``b.year = 1``).

    >>> f, g = Filter("year", "=", ("1",), "t.year = 1"), Filter("year", "=", ("1",), "u.year = 1")
    >>> repeated_condition([f, f]), repeated_condition([f, g])
    ('t.year = 1', None)
    """
    seen: set[tuple[str | None, str, tuple[str, ...], str, str]] = set()
    for f in filters:
        if not f.values or f.clause in ("case", "or"):
            continue
        key = (f.column, f.op, f.values, f.clause, " ".join((f.text or "").casefold().split()))
        if key in seen:
            return f.text
        seen.add(key)
    return None


def repeated_operand(
    ors: list[exp.Or], selects: list[exp.Select], tt: TreeText | None = None
) -> str | None:
    """The text (from ``tt`` where given) of the first condition an OR, or a join's ON,
    holds twice (``id = 121 OR id = 121``, ``ON a.x = b.x AND a.x = b.x``): a slip that
    stands where another condition should be.

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT c FROM t WHERE id = 121 OR id = 121")
    >>> repeated_operand(list(q.find_all(exp.Or)), [q])
    'id = 121'
    """
    groups: list[exp.Expr] = [o for o in ors if type(o.parent) is not _OR]
    for sel in selects:
        for join in sel.args.get("joins") or ():
            if isinstance(on := join.args.get("on"), exp.And):
                groups.append(on)
    for node in groups:
        seen: set[exp.Expr] = set()
        for part in node.flatten():
            if part in seen:
                return tt.original(part) if tt is not None else part.sql()
            seen.add(part)
    return None

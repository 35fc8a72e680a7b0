"""SQL side: turn one SQL query into a :class:`stef.spec.Spec`.

One parse (sqlglot, tokens kept for original fragments), one walk over the tree, and
sqlglot's scopes (CTEs, derived tables, subqueries, set-operation branches) when the
query has more than one SELECT. Column names, expressions and values are canonical
(see :mod:`stef.sql.text` and :func:`stef.spec.normalize_value`), so SQL that differs
only in keyword case, identifier quoting, whitespace or table-alias names yields the same
spec, ``text`` fields aside.

SQLite/MySQL habit: in ``T1.sex = "M"`` the double-quoted ``"M"`` is an identifier to
sqlglot. When the dialect is ``sqlite``, ``mysql`` or unspecified and an unqualified
double-quoted identifier stands where a comparison expects a value (right side of a
comparison, LIKE pattern, IN item, BETWEEN bound), it is read as the string ``'M'`` and a
``double_quoted_string`` finding says so. (So ``"a" = "b"`` reads as column ``a`` equal to
the string ``'b'``; a qualified ``T2."b"`` stays a column.)

>>> sql = "SELECT COUNT(*) FROM orders WHERE strftime('%Y', created_at) = '2023'"
>>> r = extract_sql_spec(sql, "sqlite")
>>> r.spec.aggregations[0].func, r.spec.filters[0].func, r.spec.filters[0].values
('count', 'year', ('2023',))
>>> extract_sql_spec("   ")
Traceback (most recent call last):
...
stef.errors.SqlError: SQL is empty
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from stef.errors import SqlError
from stef.findings import Finding
from stef.spec import (
    Aggregation,
    Filter,
    OrderKey,
    Projection,
    Spec,
    normalize_column,
)
from stef.sql.parse import MAX_SQL_CHARS, ParsedSql, check_text, parse_query
from stef.sql.parse import tokenize_and_parse as _tokenize_and_parse
from stef.sql.predicates import Conditions, JoinCondition, PredicateReader, cached_value
from stef.sql.text import TreeText

__all__ = [
    "MAX_SQL_CHARS",
    "SqlSpecResult",
    "canonical_expression",
    "extract_sql_spec",
    "predicate_filters",
]

#: Dialects in which ``"x"`` on the value side of a comparison is read as a string.
DOUBLE_QUOTED_STRING_DIALECTS = frozenset({"", "sqlite", "mysql"})

_NESTED = "cannot analyse SQL: it is nested too deeply (recursion limit)"
_VALUE_BINARY = frozenset(
    {exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike}
)
_POSITIONAL_PARENTS = (exp.Limit, exp.Offset, exp.Fetch)


@dataclass
class SqlSpecResult:
    """A SQL query's spec, non-fatal findings about it, and its parsed tree."""

    spec: Spec
    findings: list[Finding]
    tree: exp.Expr


def extract_sql_spec(
    sql: str, dialect: str | None = None, synonyms: dict[str, str] | None = None
) -> SqlSpecResult:
    """Parse ``sql`` and extract its spec; raises :class:`stef.errors.SqlError`.

    ``synonyms`` maps a lower-case synonym to its canonical column name.

    >>> s = extract_sql_spec("SELECT T1.Name FROM people AS T1 ORDER BY 1 DESC LIMIT 3").spec
    >>> s.projections[0].expr, s.order_by[0].key, s.order_by[0].direction, s.limit
    ('name', 'name', 'desc', 3)
    """
    parsed = parse_query(sql, dialect)
    try:
        return _Extractor(parsed, synonyms).run()
    except RecursionError:
        raise SqlError("sql_unparseable", _NESTED) from None


def predicate_filters(
    predicate_sql: str, dialect: str | None = None, synonyms: dict[str, str] | None = None
) -> list[Filter]:
    """Filters of a rules-file predicate; a ``?`` placeholder becomes the value ``"?"``.

    >>> [(f.column, f.op, f.values) for f in predicate_filters("is_deleted = 0 AND tenant_id = ?")]
    [('is_deleted', '=', ('0',)), ('tenant_id', '=', ('?',))]
    """
    text = check_text(predicate_sql)
    tokens, parsed, tools = _tokenize_and_parse(text, dialect or None, into=exp.Condition)
    conditions = [c for c in parsed if c is not None]
    if len(conditions) != 1:
        raise SqlError(
            "sql_unparseable", f"expected one predicate, got {len(conditions)}: {text[:80]!r}"
        )
    extractor = _Extractor(ParsedSql(text, conditions[0], tokens, tools, dialect), synonyms)
    out = Conditions()
    try:
        extractor.walk()
        PredicateReader(extractor.tt, allow_joins=False).read(conditions[0], "where", out)
    except RecursionError:
        raise SqlError("sql_unparseable", _NESTED) from None
    finally:
        extractor.tt.restore()
    return out.filters


def canonical_expression(
    sql_fragment: str, dialect: str | None = None, synonyms: dict[str, str] | None = None
) -> str:
    """Canonical text of one SQL expression, as the spec's ``expr``/``arg`` fields write it.

    >>> canonical_expression('CAST(T1."Free Meal" AS REAL) / t.Enrollment', "sqlite")
    'cast(free meal as real) / enrollment'
    """
    r = extract_sql_spec(f"SELECT {check_text(sql_fragment)}", dialect, synonyms)
    return r.spec.projections[0].expr


# ---------------------------------------------------------------------------- helpers
_NAMES: dict[str, str] = {}


def _column_name(raw: str, synonyms: dict[str, str] | None) -> str:
    """``normalize_column(raw, synonyms)``, memoised on ``raw`` (synonyms apply last)."""
    name = _NAMES.get(raw)
    if name is None:
        if len(_NAMES) > 50_000:
            _NAMES.clear()
        name = _NAMES[raw] = normalize_column(raw)
    return synonyms.get(name, name) if synonyms else name


def _is_string_column(node: exp.Expr, sql: str) -> bool:
    if type(node) is not exp.Column or node.args.get("table") is not None:
        return False
    ident = node.this
    if not isinstance(ident, exp.Identifier) or not ident.args.get("quoted"):
        return False
    start = ident.meta_get("start")
    return start is not None and 0 <= start < len(sql) and sql[start] == '"'


def _value_side(node: exp.Expr, sql: str) -> list[exp.Expr]:
    """Operands of a comparison that hold values and are double-quoted identifiers."""
    cls = type(node)
    if cls in _VALUE_BINARY:
        right = node.expression
        return [right] if _is_string_column(right, sql) else []
    if cls is exp.In:
        return [e for e in node.expressions if _is_string_column(e, sql)]
    if cls is exp.Between:
        bounds = (node.args.get("low"), node.args.get("high"))
        return [b for b in bounds if b is not None and _is_string_column(b, sql)]
    return []


def _first_select(node: exp.Expr) -> exp.Expr:
    while isinstance(node, (exp.Subquery, exp.SetOperation)) and isinstance(node.this, exp.Expr):
        node = node.this
    return node


def _is_star(node: exp.Expr) -> bool:
    return type(node) is exp.Star or (type(node) is exp.Column and type(node.this) is exp.Star)


def _int_literal(node: exp.Expr | None) -> int | None:
    if type(node) is exp.Literal and not node.args.get("is_string"):
        try:
            return int(float(node.this))
        except (TypeError, ValueError, OverflowError):
            return None
    return None


def _set_op_name(node: exp.SetOperation) -> str:
    if isinstance(node, exp.Union):
        return "union" if node.args.get("distinct") else "union all"
    return "intersect" if isinstance(node, exp.Intersect) else "except"


def _operand(node: exp.Expr | None) -> exp.Expr | None:
    """A set-operation operand, looking through the parentheses sqlglot adds around one."""
    while type(node) is exp.Subquery and isinstance(node.this, exp.SetOperation):
        node = node.this
    return node


def _set_ops_in_order(root: exp.SetOperation) -> list[exp.SetOperation]:
    """The set operations of a chain in reading order (``A UNION B EXCEPT C``)."""
    out: list[exp.SetOperation] = []
    stack: list[exp.SetOperation] = []
    node: exp.Expr | None = root
    while True:
        while isinstance(node, exp.SetOperation):
            stack.append(node)
            node = _operand(node.this)
        if not stack:
            return out
        top = stack.pop()
        out.append(top)
        node = _operand(top.expression)


def _join_kind(join: exp.Join) -> str:
    for key in ("method", "side", "kind"):
        value = join.args.get(key)
        if value:
            return str(value).lower()
    return "inner"


def _enclosing(node: exp.Expr) -> tuple[exp.Expr | None, exp.Expr]:
    """The nearest query above ``node`` and the child of it that holds ``node``."""
    child = node
    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Query):
        child = parent
        parent = parent.parent
    return parent, child


# Node kinds the walk cares about, cached per class.
_COLUMN, _LITERAL, _SELECT, _TABLE, _SUBQUERY, _WINDOW, _CTE = 1, 2, 3, 4, 5, 6, 7
_AGG, _SETOP, _CASE, _CAST, _COMPARE, _NEGATE = 8, 9, 10, 11, 12, 13

#: Dialects whose ``/`` truncates when both operands are integers.
INTEGER_DIVISION_DIALECTS = frozenset({"sqlite", "postgres", "tsql", "redshift", "trino", "presto"})
_KINDS: dict[type, int] = {}


def _kind(cls: type) -> int:
    kind = _KINDS.get(cls)
    if kind is not None:
        return kind
    if cls is exp.Column:
        kind = _COLUMN
    elif cls is exp.Literal:
        kind = _LITERAL
    elif cls is exp.Select:
        kind = _SELECT
    elif cls is exp.Table:
        kind = _TABLE
    elif cls is exp.Subquery:
        kind = _SUBQUERY
    elif cls is exp.Window:
        kind = _WINDOW
    elif cls is exp.CTE:
        kind = _CTE
    elif issubclass(cls, exp.AggFunc):
        kind = _AGG
    elif issubclass(cls, exp.SetOperation):
        kind = _SETOP
    elif cls is exp.Case or cls is exp.If:
        kind = _CASE
    elif issubclass(cls, exp.Cast):
        kind = _CAST
    elif cls in _VALUE_BINARY or cls is exp.In or cls is exp.Between:
        kind = _COMPARE
    elif cls is exp.Not or cls is exp.Is:
        kind = _NEGATE
    else:
        kind = 0
    _KINDS[cls] = kind
    return kind


_FUNC_NAMES: dict[type, str] = {}


def _func_name(cls: type) -> str:
    """Lower-case class name of a function node (``Func``, ``Sub`` or ``Div``), else ``""``."""
    name = cls.__name__.lower() if issubclass(cls, (exp.Func, exp.Sub, exp.Div)) else ""
    _FUNC_NAMES[cls] = name
    return name


@dataclass
class _AggInfo:
    node: exp.AggFunc
    query: exp.Expr | None
    clause: str
    top: exp.Expr
    windowed: bool
    nested: bool


@dataclass
class _Walk:
    """Everything the single tree walk collects, in reading order."""

    selects: list[exp.Select] = field(default_factory=list)
    columns: list[exp.Column] = field(default_factory=list)
    literals: list[exp.Expr] = field(default_factory=list)
    tables: list[exp.Table] = field(default_factory=list)
    aggs: list[exp.AggFunc] = field(default_factory=list)
    windows: list[exp.Window] = field(default_factory=list)
    set_ops: list[exp.SetOperation] = field(default_factory=list)
    ctes: list[exp.CTE] = field(default_factory=list)
    subqueries: int = 0
    case: bool = False
    cast: bool = False
    count_star: bool = False
    negation: bool = False  # NOT, <>, IS [NOT] NULL anywhere
    in_queries: list[exp.In] = field(default_factory=list)  # x IN (SELECT …)
    functions: set[str] = field(default_factory=set)  # lower-case names of Func/Sub/Div


class _Extractor:
    """One extraction: walk, scopes, then the spec (see :func:`extract_sql_spec`)."""

    def __init__(self, parsed: ParsedSql, synonyms: dict[str, str] | None) -> None:
        self.p = parsed
        self.tree = parsed.tree
        self.synonyms = synonyms
        self.tt = TreeText(parsed.sql, parsed.tokens, parsed.tools.generator, synonyms)
        self.reader = PredicateReader(self.tt)
        self.findings: list[Finding] = []
        self.scope_of: dict[int, Scope] = {}
        self.scopes: list[Scope] | None = None
        self.source_name: dict[int, str] = {}
        self.redundant: list[str] = []
        self.bridges: list[str] = []
        self.raw_strings: list[str] = []
        self.w = _Walk()

    def run(self) -> SqlSpecResult:
        try:
            w = self.walk()
            if len(w.selects) > 1 or w.ctes or w.set_ops:
                self._scopes()
            spec = self._build(w)
        finally:
            self.tt.restore()
        return SqlSpecResult(spec=spec, findings=self.findings, tree=self.tree)

    # --------------------------------------------------------------------- walk
    def walk(self) -> _Walk:
        """One pre-order pass: collect nodes, canonical column names, string columns."""
        w = self.w
        sql = self.p.sql
        check_strings = (self.p.dialect_name or "").lower() in DOUBLE_QUOTED_STRING_DIALECTS
        names: dict[str, str] = {}
        strings: set[int] = set()
        seen_set_ops: set[int] = set()
        tt = self.tt
        synonyms = self.synonyms
        kinds = _KINDS
        func_names = _FUNC_NAMES
        for node in self.tree.dfs():
            cls = type(node)
            fname = func_names.get(cls)
            if fname is None:
                fname = _func_name(cls)
            if fname:
                w.functions.add(fname)
            kind = kinds.get(cls)
            if kind is None:
                kind = _kind(cls)
            if not kind:
                continue
            if kind == _COLUMN:
                this = node.args.get("this")
                if type(this) is exp.Star:
                    continue
                raw = this.name if this is not None else ""
                if id(node) in strings:
                    tt.add_column(node, raw, string=raw)
                    w.literals.append(node)
                    continue
                name = names.get(raw)
                if name is None:
                    name = names[raw] = _column_name(raw, synonyms) if raw else raw
                tt.add_column(node, name)
                w.columns.append(cast(exp.Column, node))
            elif kind == _LITERAL:
                w.literals.append(node)
            elif kind == _COMPARE:
                if cls is exp.NEQ:
                    w.negation = True
                elif cls is exp.In and node.args.get("query") is not None:
                    w.in_queries.append(cast(exp.In, node))
                if check_strings:
                    for col in _value_side(node, sql):
                        strings.add(id(col))
            elif kind == _SELECT:
                w.selects.append(cast(exp.Select, node))
            elif kind == _TABLE:
                w.tables.append(cast(exp.Table, node))
                self.source_name[id(node)] = node.alias_or_name.lower()
            elif kind == _SUBQUERY:
                w.subqueries += 1
                self.source_name[id(node)] = node.alias_or_name.lower()
            elif kind == _AGG:
                w.aggs.append(cast(exp.AggFunc, node))
                if cls is exp.Count and type(node.this) is exp.Star:
                    w.count_star = True
            elif kind == _WINDOW:
                w.windows.append(cast(exp.Window, node))
            elif kind == _CTE:
                w.ctes.append(cast(exp.CTE, node))
            elif kind == _SETOP:
                if id(node) not in seen_set_ops:
                    chain = _set_ops_in_order(cast(exp.SetOperation, node))
                    seen_set_ops.update(id(s) for s in chain)
                    w.set_ops.extend(chain)
            elif kind == _CASE:
                w.case = True
            elif kind == _CAST:
                w.cast = True
            elif kind == _NEGATE:
                w.negation = True
        if strings:
            values = sorted({f'"{tt.columns[i].string}"' for i in strings if i in tt.columns})
            shown = ", ".join(values)
            self.findings.append(
                Finding(
                    "double_quoted_string",
                    "info",
                    f"read double-quoted {shown} as string value(s), as SQLite/MySQL do",
                    sql=shown,
                    rule="sqlspec",
                )
            )
        return w

    def _scopes(self) -> None:
        try:
            self.scopes = traverse_scope(self.tree)
        except RecursionError:
            raise
        except Exception as err:  # sqlglot's scope builder rejects a few odd shapes
            self.findings.append(
                Finding(
                    "scope_error",
                    "warning",
                    f"could not resolve query scopes ({type(err).__name__}: {err}); "
                    "table aliases of nested queries are not resolved",
                    rule="sqlspec",
                )
            )
            self.scopes = None
            return
        for scope in self.scopes:
            expr = scope.expression
            self.scope_of[id(expr)] = scope
            if isinstance(expr, exp.Subquery) and isinstance(expr.this, exp.Expr):
                self.scope_of.setdefault(id(expr.this), scope)

    # -------------------------------------------------------------------- build
    def _build(self, w: _Walk) -> Spec:
        tt = self.tt
        spec = Spec()
        aggs = [self._agg_info(a) for a in w.aggs]
        aggs_in: dict[int, list[_AggInfo]] = {}
        for a in aggs:
            if not a.windowed and a.query is not None:
                aggs_in.setdefault(id(a.query), []).append(a)
        excluded = self._alias_references(w)
        chain, eff = self._effective(self.tree)

        # filters and joins, all scopes, outer query first (before any rendering swaps)
        conds = Conditions()
        cartesian = having_alone = group_alone = False
        for sel in w.selects:
            cartesian = self._select_conditions(sel, conds) or cartesian
            if w.case:
                self._case_conditions(sel, conds)
            args = sel.args
            if args.get("group") is None:
                having_alone = having_alone or args.get("having") is not None
            elif not group_alone:
                group_alone = not any(
                    a.clause in ("expressions", "having", "order") for a in aggs_in.get(id(sel), ())
                )

        # projections of the query's result
        division = False
        if isinstance(eff, exp.Select):
            eff_aggs = {id(a.top) for a in aggs_in.get(id(eff), ()) if a.clause == "expressions"}
            for e in eff.expressions:
                node = e.this if type(e) is exp.Alias else e
                alias = e.alias.lower() if type(e) is exp.Alias else None
                names: list[str] = []
                for n in (node,) if type(node) is exp.Column else node.dfs():
                    cls = type(n)
                    if cls is exp.Column:
                        info = tt.columns.get(id(n))
                        if info is not None and info.string is None and info.name not in names:
                            names.append(info.name)
                    elif cls is exp.Div:
                        division = True
                spec.projections.append(
                    Projection(
                        expr=tt.render(node),
                        alias=alias,
                        columns=tuple(names),
                        is_aggregate=id(e) in eff_aggs,
                        text=tt.original(e),
                    )
                )
        exprs = [p.expr for p in spec.projections]

        # aggregations, all scopes
        for a in aggs:
            node = a.node
            if a.windowed or (isinstance(node, (exp.Max, exp.Min)) and node.expressions):
                continue
            arg, distinct = self.reader.aggregate_arg(node)
            func = node.sql_name().lower()
            spec.aggregations.append(Aggregation(func, arg, distinct, tt.original(node, "func")))

        spec.filters = conds.filters
        spec.joins = [j.to_dict() for j in conds.joins]
        self.findings.extend(conds.findings)

        # grouping, ordering, limits
        if isinstance(eff, exp.Select):
            group = eff.args.get("group")
            if group is not None:
                for g in group.expressions:
                    key, _ = self._resolve_key(g, spec.projections)
                    if key not in spec.group_by:
                        spec.group_by.append(key)
        for q in chain:
            order = q.args.get("order")
            if order is not None:
                for o in order.expressions:
                    key, is_agg = self._resolve_key(o.this, spec.projections)
                    direction = "desc" if o.args.get("desc") else "asc"
                    spec.order_by.append(OrderKey(key, direction, is_agg, tt.original(o)))
                break
        spec.limit = self._limit(chain, "limit")
        spec.offset = self._limit(chain, "offset")
        spec.distinct = any(
            type(q) is exp.Select and q.args.get("distinct") is not None for q in [*chain, eff]
        )

        spec.set_operations = [_set_op_name(s) for s in w.set_ops]
        spec.window_functions = [tt.render(win) for win in w.windows]
        spec.ctes = len(w.ctes)
        if self.scopes is not None:
            spec.subqueries = sum(1 for s in self.scopes if s.is_subquery or s.is_derived_table)
        else:
            spec.subqueries = w.subqueries
        spec.tables = self._tables(w)
        spec.columns = list(
            dict.fromkeys(tt.columns[id(c)].name for c in w.columns if id(c) not in excluded)
        )
        spec.literals = self._literals(w)

        plain = [a for a in aggs if not a.windowed]
        spec.flags = {
            "select_star": isinstance(eff, exp.Select) and any(map(_is_star, eff.expressions)),
            "cartesian_join": cartesian,
            "identical_set_sides": bool(w.set_ops)
            and any(tt.render(s.this) == tt.render(s.expression) for s in w.set_ops),
            "duplicate_projections": len(set(exprs)) < len(exprs),
            "division": division,
            "case": w.case,
            "cast": w.cast,
            "nested_aggregate": any(a.nested for a in plain),
            "aggregate_in_where": any(a.clause == "where" for a in plain),
            "having_without_group_by": having_alone,
            "group_by_without_aggregate": group_alone,
            "order_by_aggregate": any(o.is_aggregate for o in spec.order_by),
            "count_star": w.count_star,
            "redundant_tables": list(dict.fromkeys(self.redundant)),
            "bridge_tables": list(dict.fromkeys(self.bridges)),
            "string_literals": list(dict.fromkeys(self.raw_strings)),
            "functions": sorted(w.functions),
            "integer_division": division and self._integer_division(eff),
            "negation": w.negation
            or "except" in spec.set_operations
            or any(
                j.side in ("LEFT", "RIGHT", "FULL")
                for sel in w.selects
                for j in sel.args.get("joins") or ()
            ),
            "in_subquery_keys": self._in_subquery_keys(w),
        }
        return spec

    def _case_conditions(self, sel: exp.Select, out: Conditions) -> None:
        """Conditions of CASE WHEN / IIF in a SELECT's outputs, as filters of clause
        ``case`` (``SUM(CASE WHEN score > 50 THEN 1 END)`` applies ``score > 50`` to what
        it counts); a simple ``CASE x WHEN v`` has values, not conditions."""
        for e in sel.expressions:
            for node in e.dfs(prune=lambda n: isinstance(n, exp.Query)):
                if type(node) is not exp.If or not isinstance(node.this, exp.Expr):
                    continue
                parent = node.parent
                if type(parent) is exp.Case and parent.this is not None:
                    continue
                scratch = Conditions()
                self.reader.read(node.this, "case", scratch)
                out.filters.extend(f for f in scratch.filters if f.values)

    def _in_subquery_keys(self, w: _Walk) -> list[list[str]]:
        """(outer column, subquery's selected column) of each ``x IN (SELECT y …)``."""
        out: list[list[str]] = []
        cols = self.tt.columns
        for node in w.in_queries:
            query = node.args.get("query")
            inner = query.this if isinstance(query, exp.Subquery) else query
            outer = node.this
            if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
                continue
            sel = inner.expressions[0]
            sel = sel.this if isinstance(sel, exp.Alias) else sel
            if type(outer) is exp.Column and type(sel) is exp.Column:
                a, b = cols.get(id(outer)), cols.get(id(sel))
                if a is not None and b is not None and a.name and b.name:
                    out.append([a.name, b.name])
        return out

    def _integer_division(self, eff: exp.Expr) -> bool:
        """A division of integer-valued operands (no CAST, no decimal literal) in a dialect
        whose ``/`` truncates integers (SQLite, PostgreSQL, T-SQL …)."""
        if (self.p.dialect_name or "").lower() not in INTEGER_DIVISION_DIALECTS:
            return False
        for div in eff.find_all(exp.Div):
            exact = False
            for n in div.walk():
                if isinstance(n, exp.Cast) or (
                    type(n) is exp.Literal and not n.is_string and "." in n.this
                ):
                    exact = True
                    break
            if not exact:
                return True
        return False

    def _agg_info(self, agg: exp.AggFunc) -> _AggInfo:
        windowed = isinstance(agg.parent, exp.Window)
        nested = False
        child: exp.Expr = agg
        parent = agg.parent
        while parent is not None and not isinstance(parent, exp.Query):
            if isinstance(parent, exp.AggFunc) and not isinstance(parent.parent, exp.Window):
                nested = True
            child = parent
            parent = parent.parent
        return _AggInfo(agg, parent, child.arg_key or "", child, windowed, nested)

    def _alias_references(self, w: _Walk) -> set[int]:
        """Ids of columns that name a SELECT alias (ORDER BY/HAVING/GROUP BY), not a column."""
        aliases: dict[int, dict[str, exp.Expr]] = {}
        every: set[str] = set()
        for sel in w.selects:
            names = {e.alias.lower(): e.this for e in sel.expressions if type(e) is exp.Alias}
            if names:
                aliases[id(sel)] = names
                every.update(names)
        out: set[int] = set()
        if not every:
            return out
        for col in w.columns:
            info = self.tt.columns[id(col)]
            if info.qualifier is not None or info.raw not in every:
                continue
            query, child = _enclosing(col)
            if query is None or child.arg_key not in ("order", "having", "group"):
                continue
            target = aliases.get(id(_first_select(query)), {}).get(info.raw)
            if target is None or (type(target) is exp.Column and target.name.lower() == info.raw):
                continue
            out.add(id(col))
        return out

    def _effective(self, root: exp.Expr) -> tuple[list[exp.Expr], exp.Expr]:
        """Queries from the outermost inwards through pass-through ``SELECT *``, and the
        SELECT whose projections the query returns."""
        chain: list[exp.Expr] = [root]
        node = root
        while isinstance(node, exp.Subquery) and isinstance(node.this, exp.Expr):
            node = node.this
            chain.append(node)
        eff = _first_select(node)
        for _ in range(100):
            target = self._pass_through(eff)
            if target is None:
                break
            chain.append(target)
            eff = _first_select(target)
        return chain, eff

    def _pass_through(self, sel: exp.Expr) -> exp.Expr | None:
        if type(sel) is not exp.Select or len(sel.expressions) != 1:
            return None
        if not _is_star(sel.expressions[0]) or sel.args.get("joins"):
            return None
        if sel.args.get("group") is not None or sel.args.get("having") is not None:
            return None
        from_ = sel.args.get("from_")
        src = from_.this if from_ is not None else None
        if type(src) is exp.Subquery and isinstance(src.this, exp.Query):
            return src.this
        if type(src) is exp.Table:
            scope = self.scope_of.get(id(sel))
            name = self.source_name.get(id(src), "")
            if scope is not None:
                for key, source in scope.sources.items():
                    if key.lower() == name and isinstance(source, Scope):
                        expr = source.expression
                        return expr if isinstance(expr, exp.Query) else None
        return None

    def _resolve_key(self, node: exp.Expr, projections: list[Projection]) -> tuple[str, bool]:
        """Canonical key of a GROUP BY / ORDER BY item, through ordinals and aliases."""
        pos = _int_literal(node)
        if pos is not None and 1 <= pos <= len(projections):
            p = projections[pos - 1]
            return p.expr, p.is_aggregate
        if type(node) is exp.Column:
            info = self.tt.columns.get(id(node))
            if info is not None and info.qualifier is None:
                for p in projections:
                    if p.alias is not None and p.alias == info.raw:
                        return p.expr, p.is_aggregate
        has_agg = any(
            isinstance(n, exp.AggFunc)
            for n in node.dfs(prune=lambda x: isinstance(x, (exp.Query, exp.Window)))
        )
        return self.tt.render(node), has_agg

    def _limit(self, chain: list[exp.Expr], key: str) -> int | None:
        for q in chain:
            node = q.args.get(key)
            if node is None:
                continue
            value = node.args.get("count") if type(node) is exp.Fetch else node.expression
            if type(node) is exp.Fetch and value is None:
                return 1
            n = _int_literal(value)
            if n is None:
                text = self.tt.original(value).strip() if value is not None else "?"
                self.findings.append(
                    Finding(
                        "non_literal_limit",
                        "info",
                        f"{key.upper()} is not a number literal: {text}",
                        sql=text,
                        rule="sqlspec",
                    )
                )
            return n
        return None

    def _select_conditions(self, sel: exp.Select, out: Conditions) -> bool:
        """Read one SELECT's ON/WHERE/HAVING into ``out``; returns its cartesian flag."""
        scope = self.scope_of.get(id(sel))
        from_ = sel.args.get("from_")
        joins = sel.args.get("joins") or []
        sources = ([from_.this] if from_ is not None else []) + [j.this for j in joins]
        tables: dict[str, str] = {}
        if scope is not None:
            for name, src in scope.sources.items():
                tables[name.lower()] = (
                    src.name.lower() if isinstance(src, exp.Table) else name.lower()
                )
        else:
            for src in sources:
                alias = self.source_name.get(id(src), "")
                tables[alias] = src.name.lower() if type(src) is exp.Table else alias

        def resolve(q: str | None) -> str | None:
            if q is None:
                return None
            found = tables.get(q)
            outer = scope.parent if scope is not None else None
            while found is None and outer is not None:  # correlated: an outer query's source
                for name, src in outer.sources.items():
                    if name.lower() == q:
                        found = src.name.lower() if isinstance(src, exp.Table) else q
                        break
                outer = outer.parent
            return found

        index = {self.source_name.get(id(s), ""): i for i, s in enumerate(sources)}
        parent = list(range(len(sources)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        def link(a: int | None, b: int | None) -> None:
            if a is not None and b is not None:
                parent[find(a)] = find(b)

        linked_all = False
        for i, join in enumerate(joins, start=1):
            kind = _join_kind(join)
            on = join.args.get("on")
            using = join.args.get("using")
            if on is not None:
                for jc in self.reader.read(on, "join", out, kind, resolve):
                    a = index.get(jc.left_qualifier or "")
                    b = index.get(jc.right_qualifier or "")
                    if a is None or b is None:
                        link(i, i - 1)
                    else:
                        link(a, b)
            elif using:
                names = [resolve(self.source_name.get(id(s), "")) for s in sources[i - 1 : i + 1]]
                pair = [n for n in names if n]
                for ident in using:
                    name = normalize_column(ident.name, self.synonyms)
                    out.joins.append(JoinCondition(name, name, "=", kind, None, None, pair))
                link(i, i - 1)
            elif kind == "natural":
                link(i, i - 1)
        where = sel.args.get("where")
        if where is not None:
            for jc in self.reader.read(where.this, "where", out, "inner", resolve):
                if jc.left_qualifier is None or jc.right_qualifier is None:
                    linked_all = True
                link(index.get(jc.left_qualifier or ""), index.get(jc.right_qualifier or ""))
        having = sel.args.get("having")
        if having is not None:
            self.reader.aliases = {
                e.alias.lower(): e.this for e in sel.expressions if type(e) is exp.Alias
            }
            try:
                self.reader.read(having.this, "having", out, "inner", resolve)
            finally:
                self.reader.aliases = {}
        if len(sources) >= 2:
            self._redundant_sources(sel, sources, joins, tables)
        if len(sources) < 2 or linked_all:
            return False
        return len({find(i) for i in range(len(sources))}) > 1

    def _redundant_sources(
        self,
        sel: exp.Select,
        sources: list[exp.Expr],
        joins: list[exp.Join],
        tables: dict[str, str],
    ) -> None:
        """Joined base tables none of whose columns is used outside the join conditions,
        and which link to at most one other source (a bridge table that links two others,
        ``hero_power`` between ``superhero`` and ``superpower``, is needed).

        Only decided when every column of the SELECT is qualified (otherwise a column
        could belong to any source).
        """
        in_on: set[int] = set()
        neighbours: dict[str, set[str]] = {}
        for j in joins:
            on = j.args.get("on")
            if on is not None:
                quals: set[str] = set()
                for n in on.walk():
                    in_on.add(id(n))
                    if type(n) is exp.Column and n.table:
                        quals.add(n.table.lower())
                for q in quals:
                    neighbours.setdefault(q, set()).update(quals - {q})
        used: set[str] = set()
        for col in sel.find_all(exp.Column):
            if id(col) in in_on or type(col.this) is exp.Star:
                continue
            q = col.table.lower()
            if not q:
                return
            used.add(q)
        for star in sel.expressions:
            if _is_star(star):
                return
        for src in sources:
            if type(src) is not exp.Table:
                continue
            alias = self.source_name.get(id(src), "")
            if alias and alias not in used:
                if len(neighbours.get(alias, ())) < 2:
                    self.redundant.append(tables.get(alias, alias))
                else:
                    self.bridges.append(tables.get(alias, alias))

    def _tables(self, w: _Walk) -> list[str]:
        base: set[int] | None = None
        if self.scopes is not None:
            base = {
                id(src)
                for scope in self.scopes
                for src in scope.sources.values()
                if isinstance(src, exp.Table)
            }
        cte_names = {c.alias.lower() for c in w.ctes}
        out: dict[str, None] = {}  # ordered set
        for t in w.tables:
            if base is not None and id(t) not in base:
                continue
            name = t.name.lower()
            if name and (base is not None or name not in cte_names):
                out[name] = None
        return list(out)

    def _literals(self, w: _Walk) -> list[str]:
        out: dict[str, None] = {}  # ordered set
        tt = self.tt
        for node in w.literals:
            if type(node) is exp.Column:
                text = tt.columns[id(node)].string or ""
                self.raw_strings.append(text)
            else:
                parent = node.parent
                key = node.arg_key
                if isinstance(parent, _POSITIONAL_PARENTS) or key in ("format", "unit"):
                    continue
                if type(parent) is exp.Extract and key == "this":
                    continue
                string = node.args.get("is_string")
                if not string and isinstance(parent, (exp.Ordered, exp.Group)):
                    continue
                text = tt.literal_value(node)
                if string:
                    self.raw_strings.append(text)
                if type(parent) is exp.Neg:
                    text = "-" + text
            out[cached_value(text)] = None
        return list(out)

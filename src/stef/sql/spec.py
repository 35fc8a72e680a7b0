"""SQL side: turn one SQL query into a :class:`stef.spec.Spec`.

One parse (sqlglot, tokens kept for original fragments), one walk over the tree
(:mod:`stef.sql.walk`), and sqlglot's scopes (CTEs, derived tables, subqueries,
set-operation branches; :mod:`stef.sql.sources`) when the query has more than one
SELECT. Column names, expressions and values are canonical
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


from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from stef.errors import SqlError
from stef.findings import Finding
from stef.spec import (
    Aggregation,
    Filter,
    OrderKey,
    Projection,
    Spec,
)
from stef.sql.clock import clock_columns, clock_windows, parameter_columns
from stef.sql.keys import join_key_columns, key_counts
from stef.sql.nodes import preorder
from stef.sql.outputs import (
    RANKING,
    aggregate_aliases,
    aggregates_unshown,
    branch_aggregates,
    carried_aliases,
    rank_cuts,
    ungrouped,
    unlabelled_groups,
    unshown_plain_keys,
)
from stef.sql.parse import MAX_SQL_CHARS, ParsedSql, check_text, parse_query
from stef.sql.parse import tokenize_and_parse as _tokenize_and_parse
from stef.sql.predicates import Conditions, PredicateReader, cached_value, or_precedence
from stef.sql.sources import Sources, first_select, is_star
from stef.sql.text import TreeText
from stef.sql.walk import Walk, contains, search, walk_tree

__all__ = [
    "MAX_SQL_CHARS",
    "SqlSpecResult",
    "canonical_expression",
    "extract_sql_spec",
    "predicate_filters",
]

_NESTED = "cannot analyse SQL: it is nested too deeply (recursion limit)"
_POSITIONAL_PARENTS = (exp.Limit, exp.Offset, exp.Fetch)
_DIV, _ADD, _AGG_OR_WINDOW = (exp.Div,), (exp.Add,), (exp.AggFunc, exp.Window)


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


def _enclosing(node: exp.Expr) -> tuple[exp.Expr | None, exp.Expr]:
    """The nearest query above ``node`` and the child of it that holds ``node``."""
    child = node
    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Query):
        child = parent
        parent = parent.parent
    return parent, child


#: Dialects whose ``/`` truncates when both operands are integers.
INTEGER_DIVISION_DIALECTS = frozenset({"sqlite", "postgres", "tsql", "redshift", "trino", "presto"})


@dataclass
class _AggInfo:
    node: exp.AggFunc
    query: exp.Expr | None
    clause: str
    top: exp.Expr
    windowed: bool
    nested: bool


class _Extractor:
    """One extraction: walk, scopes, then the spec (see :func:`extract_sql_spec`)."""

    def __init__(self, parsed: ParsedSql, synonyms: dict[str, str] | None) -> None:
        self.p = parsed
        self.tree = parsed.tree
        self.synonyms = synonyms
        self.tt = TreeText(parsed.sql, parsed.tokens, parsed.tools.generator, synonyms)
        #: The text of a condition one SELECT writes twice (conditions repeated in other
        #: scopes, such as the same date range in two CTEs, are no slip).
        self._duplicate: str | None = None
        self.reader = PredicateReader(self.tt)
        self.findings: list[Finding] = []
        self.sources = Sources(self.reader, synonyms, self.findings)
        self.raw_strings: list[str] = []
        self.w = Walk()
        self._key_counts: list[tuple[exp.Count, str, str]] = []
        self._ungrouped: list[str] = []

    def run(self) -> SqlSpecResult:
        try:
            w = self.walk()
            self.sources.root, self.sources.walk = self.tree, w
            if len(w.selects) > 1 or w.ctes or w.set_ops:
                self.sources.build_scopes(self.tree)
            # read before any rendering folds the columns' qualifiers
            self._key_counts = self._counts_of_keys(w)
            self._ungrouped = (  # nothing aggregates: no column is collapsed
                [c for sel in w.selects for c in ungrouped(sel)]
                if w.aggs or w.aggregate_clause
                else []
            )
            spec = self._build(w)
        finally:
            self.tt.restore()
        return SqlSpecResult(spec=spec, findings=self.findings, tree=self.tree)

    @staticmethod
    def _counts_of_keys(w: Walk) -> list[tuple[exp.Count, str, str]]:
        """:func:`~stef.sql.keys.key_counts` of each SELECT that holds a ``COUNT(column)``
        of its own, from the COUNTs the walk found (none of the others has a result): a
        SELECT's own, nearest first, in reading order at one depth, as ``find_all`` gives
        them."""
        own: dict[int, list[exp.Count]] = {}
        for a in w.aggs:
            if type(a) is exp.Count:
                own.setdefault(id(a.find_ancestor(exp.Select)), []).append(a)
        out: list[tuple[exp.Count, str, str]] = []
        for s in w.selects if own else ():
            counts = own.get(id(s))
            if counts and any(isinstance(c.this, exp.Column) for c in counts):
                out += key_counts(s, sorted(counts, key=_depth) if len(counts) > 1 else counts)
        return out

    # --------------------------------------------------------------------- walk
    def walk(self) -> Walk:
        """One pre-order pass (:func:`stef.sql.walk.walk_tree`) into ``self.w``."""
        finding = walk_tree(self.p, self.tt, self.synonyms, self.w, self.sources.source_name)
        if finding is not None:
            self.findings.append(finding)
        return self.w

    # -------------------------------------------------------------------- build
    def _build(self, w: Walk) -> Spec:
        tt = self.tt
        spec = Spec()
        aggs = [self._agg_info(a) for a in w.aggs]
        aggs_in: dict[int, list[_AggInfo]] = {}
        for a in aggs:
            if not a.windowed and a.query is not None:
                aggs_in.setdefault(id(a.query), []).append(a)
        excluded = self._alias_references(w)
        chain, eff = self.sources.effective(self.tree)
        conds, cartesian, having_alone, group_alone = self._conditions(w, aggs_in)
        division = self._projections(eff, aggs_in, spec)
        exprs = [p.expr for p in spec.projections]
        self._aggregations(aggs, spec)

        spec.filters = conds.filters
        spec.joins = [j.to_dict() for j in conds.joins]
        self.findings.extend(conds.findings)
        self._group_order_limit(eff, chain, spec)

        spec.set_operations = [_set_op_name(s) for s in w.set_ops]
        spec.window_functions = [tt.render(win) for win in w.windows]
        spec.ctes = len(w.ctes)
        if self.sources.scopes is not None:
            scopes = self.sources.scopes
            spec.subqueries = sum(1 for s in scopes if s.is_subquery or s.is_derived_table)
        else:
            spec.subqueries = w.subqueries
        spec.tables = self.sources.tables(w)
        spec.columns = list(
            dict.fromkeys(tt.columns[id(c)].name for c in w.columns if id(c) not in excluded)
        )
        spec.literals = self._literals(w)

        plain = [a for a in aggs if not a.windowed]
        spec.flags = self._flags(
            w,
            spec,
            eff,
            plain,
            cartesian=cartesian,
            duplicates=len(set(exprs)) < len(exprs),
            division=division,
            having_alone=having_alone,
            group_alone=group_alone,
        )
        return spec

    def _conditions(
        self, w: Walk, aggs_in: dict[int, list[_AggInfo]]
    ) -> tuple[Conditions, bool, bool, bool]:
        """Filters and joins of all scopes, outer query first (before any rendering swaps),
        with the cartesian, HAVING-without-GROUP-BY and GROUP-BY-without-aggregate flags."""
        conds = Conditions()
        cartesian = having_alone = group_alone = False
        for sel in w.selects:
            before = len(conds.filters)
            cartesian = self.sources.select_conditions(sel, conds) or cartesian
            self._duplicate = self._duplicate or _repeated_condition(conds.filters[before:])
            if w.case:
                self._case_conditions(sel, conds)
            args = sel.args
            if args.get("group") is None:
                having_alone = having_alone or args.get("having") is not None
            elif not group_alone:
                group_alone = not any(
                    a.clause in ("expressions", "having", "order") for a in aggs_in.get(id(sel), ())
                )
        return conds, cartesian, having_alone, group_alone

    def _projections(
        self, eff: exp.Expr, aggs_in: dict[int, list[_AggInfo]], spec: Spec
    ) -> bool:
        """The projections of the query's result into ``spec``; True when one divides."""
        tt = self.tt
        division = False
        if isinstance(eff, exp.Select):
            eff_aggs = {id(a.top) for a in aggs_in.get(id(eff), ()) if a.clause == "expressions"}
            for e in eff.expressions:
                node = e.this if type(e) is exp.Alias else e
                alias = e.alias.lower() if type(e) is exp.Alias else None
                names: list[str] = []
                for n in (node,) if type(node) is exp.Column else preorder(node):
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
        return division

    def _aggregations(self, aggs: list[_AggInfo], spec: Spec) -> None:
        """Aggregations of all scopes into ``spec`` (multi-argument MAX/MIN, which are
        GREATEST/LEAST, left out; window aggregates apart, in ``window_aggregations``)."""
        tt = self.tt
        for a in aggs:
            node = a.node
            if isinstance(node, (exp.Max, exp.Min)) and node.expressions:
                continue
            arg, distinct = self.reader.aggregate_arg(node)
            func = node.sql_name().lower()
            found = Aggregation(func, arg, distinct, tt.original(node, "func"))
            (spec.window_aggregations if a.windowed else spec.aggregations).append(found)

    def _group_order_limit(self, eff: exp.Expr, chain: list[exp.Expr], spec: Spec) -> None:
        """GROUP BY of the result's SELECT, the outermost ORDER BY, LIMIT, OFFSET, DISTINCT."""
        tt = self.tt
        if isinstance(eff, exp.Select):
            group = eff.args.get("group")
            if group is not None:
                for g in group.expressions:
                    key, _ = self._resolve_key(g, spec.projections)
                    if key not in spec.group_by:
                        spec.group_by.append(key)
        # the ORDER BY that picks the rows a LIMIT keeps ranks them ("Top 500 askers" in a
        # subquery that an outer SELECT * sorts by another column); else the outermost
        limited = next((q for q in chain if q.args.get("limit") is not None), None)
        order = limited.args.get("order") if limited is not None else None
        if order is None:
            order = next((o for q in chain if (o := q.args.get("order")) is not None), None)
        for o in order.expressions if order is not None else ():
            key, is_agg = self._resolve_key(o.this, spec.projections)
            direction = "desc" if o.args.get("desc") else "asc"
            spec.order_by.append(OrderKey(key, direction, is_agg, tt.original(o)))
        spec.limit = self._limit(chain, "limit")
        spec.offset = self._limit(chain, "offset")
        spec.distinct = any(
            type(q) is exp.Select and q.args.get("distinct") is not None for q in [*chain, eff]
        )

    def _flags(
        self,
        w: Walk,
        spec: Spec,
        eff: exp.Expr,
        plain: list[_AggInfo],
        *,
        cartesian: bool,
        duplicates: bool,
        division: bool,
        having_alone: bool,
        group_alone: bool,
    ) -> dict[str, Any]:
        """The spec's flags: what the structure and dialect checks read."""
        tt = self.tt
        ranks = [r for sel in w.selects if sel is not eff for r in _limit_rank(sel)]
        branch_aggs = [t for op in w.set_ops for t in branch_aggregates(op)]
        clocked = bool(_MAY_READ_CLOCK & w.functions)
        return {
            "select_star": isinstance(eff, exp.Select) and any(map(is_star, eff.expressions)),
            "cartesian_join": cartesian,
            "identical_set_sides": bool(w.set_ops)
            and any(tt.render(s.this) == tt.render(s.expression) for s in w.set_ops),
            "duplicate_projections": duplicates,
            "duplicate_condition": self._duplicate,
            "division": division,
            "case": w.case,
            "cast": w.cast,
            "nested_aggregate": any(a.nested for a in plain),
            "aggregate_in_where": any(a.clause == "where" for a in plain),
            "having_without_group_by": having_alone,
            "group_by_without_aggregate": group_alone,
            "order_by_aggregate": any(o.is_aggregate for o in spec.order_by),
            "count_star": w.count_star,
            "redundant_tables": list(dict.fromkeys(self.sources.redundant)),
            "bridge_tables": list(dict.fromkeys(self.sources.bridges)),
            "string_literals": list(dict.fromkeys(self.raw_strings)),
            "functions": sorted(w.functions),
            "integer_division": division and self._integer_division(eff),
            "or_precedence": tt.original(found) if (found := or_precedence(w.ors)) else None,
            "divides_in_sum_only": "div" in w.functions
            and all(d.find_ancestor(exp.Sum) is not None for d in search(self.tree, _DIV)),
            "negation": w.negation
            or "except" in spec.set_operations
            or any(
                j.side in ("LEFT", "RIGHT", "FULL")
                for sel in w.selects
                for j in sel.args.get("joins") or ()
            ),
            "in_subquery_keys": self._in_subquery_keys(w),
            "ungrouped_columns": self._ungrouped,
            "aggregate_aliases": [pair for sel in w.selects for pair in aggregate_aliases(sel)]
            + branch_aggs,
            "carried_aliases": [a for sel in w.selects for a in carried_aliases(sel)],
            "key_counts": [[self.tt.render(c), e, h] for c, e, h in self._key_counts],
            "join_keys": sorted({k for s in w.selects for k in join_key_columns(s)})
            if w.aggs
            else [],
            "clock_windows": clock_windows(self.tree, self.tt.literal_value) if clocked else [],
            "clock_columns": clock_columns(self.tree) if clocked else [],
            "parameter_columns": parameter_columns(self.tree) if _may_bind(self.p) else [],
            "rank_cuts": rank_cuts(self.tree) if w.windows else [],
            "unlabelled_groups": isinstance(eff, exp.Select) and unlabelled_groups(eff),
            "aggregates_unshown": isinstance(eff, exp.Select) and aggregates_unshown(eff),
            "distinct_anywhere": any(sel.args.get("distinct") is not None for sel in w.selects),
            "rank_windows": self._rank_windows(w),
            "unshown_group_keys": self._unshown_group_keys(eff),
            "inner_limits": [r[0] for r in ranks],
            "inner_ranks": ranks,
            "addition": isinstance(eff, exp.Select)
            and any(contains(e, _ADD) for e in eff.expressions),
        }

    def _rank_windows(self, w: Walk) -> list[list[str]]:
        """``[key, direction]`` of the first ORDER BY key of each ranking window
        (``ROW_NUMBER``/``RANK``/``DENSE_RANK … OVER (ORDER BY …)``): a superlative may be
        answered by the rows ranked first.

        >>> q = "SELECT n FROM (SELECT n, RANK() OVER (ORDER BY c DESC) AS r FROM t) WHERE r = 1"
        >>> extract_sql_spec(q).spec.flags["rank_windows"]
        [['c', 'desc']]
        """
        out: list[list[str]] = []
        for win in w.windows:
            order = win.args.get("order")
            if isinstance(win.this, RANKING) and order is not None and order.expressions:
                first = order.expressions[0]
                key = first.this if isinstance(first, exp.Ordered) else first
                out.append([self.tt.render(key), "desc" if first.args.get("desc") else "asc"])
        return out

    def _unshown_group_keys(self, eff: exp.Expr) -> list[str]:
        """GROUP BY keys of the result that no output shows, when some output is a label
        rather than an aggregate: computed keys (``MONTH(created)``), whose rows of one
        label repeat, one per value of the hidden key; and plain columns of a source no
        label comes from (:func:`stef.sql.outputs.unshown_plain_keys`).

        >>> q = "SELECT YEAR(d) AS y, COUNT(*) FROM t GROUP BY YEAR(d), MONTH(d)"
        >>> extract_sql_spec(q).spec.flags["unshown_group_keys"]
        ['month(d)']
        >>> q = "SELECT a.title, COUNT(*) FROM a JOIN b ON a.id = b.aid GROUP BY b.label"
        >>> extract_sql_spec(q).spec.flags["unshown_group_keys"]
        ['label']
        """
        if not isinstance(eff, exp.Select) or (group := eff.args.get("group")) is None:
            return []
        render = self.tt.render
        plain = [render(k) for k in unshown_plain_keys(eff)]
        keys = [k.unnest() for k in group.expressions]
        computed = [k for k in keys if type(k) is not exp.Column and not isinstance(k, exp.Literal)]
        if not computed:
            return plain
        cores = [e.this if type(e) is exp.Alias else e for e in eff.expressions]
        if all(contains(c, _AGG_OR_WINDOW) for c in cores):
            return plain  # no label at all: groups_unlabelled says it
        shown = {render(n) for c in cores for n in c.dfs()}
        return [key for key in map(render, computed) if key not in shown] + plain

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

    def _in_subquery_keys(self, w: Walk) -> list[list[str]]:
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

    def _alias_references(self, w: Walk) -> set[int]:
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
            target = aliases.get(id(first_select(query)), {}).get(info.raw)
            if target is None or (type(target) is exp.Column and target.name.lower() == info.raw):
                continue
            out.add(id(col))
        return out

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
        has_agg = bool(self.w.aggs) and any(  # no aggregate in the tree: none in the key
            isinstance(n, exp.AggFunc)
            for n in preorder(node, (exp.Query, exp.Window))
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

    def _literals(self, w: Walk) -> list[str]:
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


def _depth(node: exp.Expr) -> int:
    """How many nodes lie above ``node`` in its tree."""
    depth = 0
    parent = node.parent
    while parent is not None:
        depth += 1
        parent = parent.parent
    return depth


def _repeated_condition(filters: list[Filter]) -> str | None:
    """The text of the first condition these filters (of one SELECT) hold twice: the same
    column, operator and values, written the same (``STRFTIME('%m', d) = '03'`` and
    ``STRFTIME('%d', d) = '03'`` are two conditions, so are ``a.year = 1`` and ``b.year = 1``).

    >>> f, g = Filter("year", "=", ("1",), "t.year = 1"), Filter("year", "=", ("1",), "u.year = 1")
    >>> _repeated_condition([f, f]), _repeated_condition([f, g])
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



#: Function kinds of the walk without which no condition reads the clock.
_MAY_READ_CLOCK = frozenset(
    {"anonymous", "currentdate", "currenttimestamp", "currentdatetime", "currenttime"}
)

#: Tokens that may stand for a run-time parameter (``?``, ``:name``, ``$1``, ``@name``,
#: ``%(name)s``).
_BIND_TOKENS = frozenset(
    {TokenType.PLACEHOLDER, TokenType.PARAMETER, TokenType.COLON, TokenType.MOD}
)


_TOKEN_TYPE = attrgetter("token_type")


def _may_bind(parsed: ParsedSql) -> bool:
    """Can the query hold a run-time parameter at all? A test of its characters, then of
    its tokens (a ``%`` or ``:`` inside a string is none); the tree decides which are."""
    sql = parsed.sql
    if not ("?" in sql or ":" in sql or "$" in sql or "@" in sql or "%" in sql):
        return False
    return not _BIND_TOKENS.isdisjoint(map(_TOKEN_TYPE, parsed.tokens))


def _limit_rank(sel: exp.Select) -> list[tuple[int, str, str]]:
    """``(limit, first sort key, direction)`` of a sorted SELECT with a LIMIT, or nothing.

    >>> import sqlglot
    >>> _limit_rank(sqlglot.parse_one("SELECT a FROM t ORDER BY COUNT(*) DESC, a LIMIT 1"))
    [(1, 'COUNT(*)', 'desc')]
    """
    limit = _sorted_limit(sel)
    if not limit:
        return []
    first = sel.args["order"].expressions[0]
    return [(limit[0], first.this.sql(), "desc" if first.args.get("desc") else "asc")]


def _sorted_limit(sel: exp.Select) -> list[int]:
    """The LIMIT of a sorted SELECT (one element), or nothing.

    >>> import sqlglot
    >>> _sorted_limit(sqlglot.parse_one("SELECT a FROM t ORDER BY b DESC LIMIT 3"))
    [3]
    >>> _sorted_limit(sqlglot.parse_one("SELECT a FROM t LIMIT 3"))
    []
    """
    bound = getattr(sel.args.get("limit"), "expression", None)
    if sel.args.get("order") is None or not isinstance(bound, exp.Literal):
        return []
    return [int(bound.name)] if bound.name.isdigit() else []


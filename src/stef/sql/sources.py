"""The FROM/JOIN sources of a query, through sqlglot's scopes.

:class:`Sources` resolves the scopes of a query with more than one SELECT (CTEs, derived
tables, subqueries, set-operation branches), follows pass-through ``SELECT *`` to the
SELECT whose outputs the query returns, names the base tables a query reads, and reads
each SELECT's ON/WHERE/HAVING conditions: which table an alias stands for (correlated
outer queries included), which sources the join conditions link (a cartesian join when
some stay apart), and which joined tables no column uses (redundant or bridge tables).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Final

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.tokens import TokenType

from stef.findings import Finding
from stef.spec import normalize_column
from stef.sql.nodes import preorder
from stef.sql.predicates import Conditions, JoinCondition, PredicateReader
from stef.sql.walk import Walk, search

#: Node classes the per-node code tests, as constants: compiled, ``exp.Column`` is a
#: look-up in the module's dictionary each time; a ``Final`` name is a C global.
_COLUMN: Final = exp.Column
_SELECT: Final = exp.Select
_ALIAS: Final = exp.Alias
_STAR: Final = exp.Star
_EXPR: Final = exp.Expr
_QUERY: Final = exp.Query
_TABLE: Final = exp.Table
_WINDOW: Final = exp.Window

_COLUMNS = (exp.Column,)
#: A condition's own nodes stop at a subquery (its columns are another scope's).
_SUBQUERY = (exp.Query,)


def first_select(node: exp.Expr) -> exp.Expr:
    while isinstance(node, (exp.Subquery, exp.SetOperation)) and isinstance(node.this, _EXPR):
        node = node.this
    return node


def is_star(node: exp.Expr) -> bool:
    return type(node) is _STAR or (type(node) is _COLUMN and type(node.this) is _STAR)


def _join_kind(join: exp.Join) -> str:
    for key in ("method", "side", "kind"):
        value = join.args.get(key)
        if value:
            return str(value).lower()
    return "inner"


#: Which table a source qualifier names (``None`` for an unknown or missing one).
_Resolve = Callable[[str | None], str | None]


def _resolver(tables: dict[str, str], scope: Scope | None) -> _Resolve:
    """Resolve a qualifier to its table: the SELECT's own sources first, then (correlated
    subqueries) the sources of the scopes around it."""

    def resolve(q: str | None) -> str | None:
        if q is None:
            return None
        found = tables.get(q)
        outer = scope.parent if scope is not None else None
        while found is None and outer is not None:  # correlated: an outer query's source
            for name, src in outer.sources.items():
                if name.lower() == q:
                    found = src.name.lower() if isinstance(src, _TABLE) else q
                    break
            outer = outer.parent
        return found

    return resolve


def _one_row(query: exp.Expr | None) -> bool:
    """Whether ``query`` returns one row at most: a SELECT without FROM, or one that
    aggregates without GROUP BY (``SELECT CAST(MAX(x) AS FLOAT), COUNT(*) FROM t``).

    >>> import sqlglot
    >>> _one_row(sqlglot.parse_one("SELECT CAST(MAX(x) AS FLOAT) AS m, COUNT(1) FROM t"))
    True
    >>> _one_row(sqlglot.parse_one("SELECT MAX(x) FROM t GROUP BY y"))
    False
    >>> _one_row(sqlglot.parse_one("SELECT SUM(x) OVER () FROM t"))
    False
    """
    if type(query) is not _SELECT or not query.expressions:
        return False
    if query.args.get("from_") is None:
        return True
    if query.args.get("group") is not None:
        return False
    for out in query.expressions:
        for agg in search(out, (exp.AggFunc,)):
            if type(agg.parent) is not _WINDOW:
                return True
    return False


class _Links:
    """Union-find over a SELECT's sources: which of them join conditions link."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def link(self, a: int | None, b: int | None) -> None:
        if a is not None and b is not None:
            self.parent[self.find(a)] = self.find(b)

    def groups(self) -> int:
        """How many groups of linked sources there are."""
        return len({self.find(i) for i in range(len(self.parent))})


class Sources:
    """Scopes and sources of one extraction; ``findings`` is the extraction's list."""

    def __init__(
        self, reader: PredicateReader, synonyms: dict[str, str] | None, findings: list[Finding]
    ) -> None:
        self.reader = reader
        self.synonyms = synonyms
        self.findings = findings
        self.scope_of: dict[int, Scope] = {}
        self.scopes: list[Scope] | None = None
        #: alias (or name) of each table and subquery node, by id; filled by the walk
        self.source_name: dict[int, str] = {}
        self.redundant: list[str] = []
        self.bridges: list[str] = []
        #: The tree's root and its walk (set by the extractor): the walk holds every
        #: column of the tree, so a SELECT at the root needs no search for its columns.
        self.root: exp.Expr | None = None
        self.walk: Walk | None = None

    def build_scopes(self, tree: exp.Expr) -> None:
        """Resolve the scopes of ``tree``; a scope error is a finding, not a failure."""
        try:
            self.scopes = traverse_scope(tree)
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
            if isinstance(expr, exp.Subquery) and isinstance(expr.this, _EXPR):
                self.scope_of.setdefault(id(expr.this), scope)

    def effective(self, root: exp.Expr) -> tuple[list[exp.Expr], exp.Expr]:
        """Queries from the outermost inwards through pass-through ``SELECT *``, and the
        SELECT whose projections the query returns."""
        chain: list[exp.Expr] = [root]
        node = root
        while isinstance(node, exp.Subquery) and isinstance(node.this, _EXPR):
            node = node.this
            chain.append(node)
        eff = first_select(node)
        for _ in range(100):
            target = self._pass_through(eff)
            if target is None:
                break
            chain.append(target)
            eff = first_select(target)
        return chain, eff

    def _pass_through(self, sel: exp.Expr) -> exp.Expr | None:
        if type(sel) is not _SELECT or len(sel.expressions) != 1:
            return None
        if not is_star(sel.expressions[0]) or sel.args.get("joins"):
            return None
        if sel.args.get("group") is not None or sel.args.get("having") is not None:
            return None
        from_ = sel.args.get("from_")
        if from_ is None:
            return None
        return self._source_query(self.scope_of.get(id(sel)), from_.this)

    def select_conditions(self, sel: exp.Select, out: Conditions) -> bool:
        """Read one SELECT's ON/WHERE/HAVING into ``out``; returns its cartesian flag."""
        scope = self.scope_of.get(id(sel))
        from_ = sel.args.get("from_")
        joins = sel.args.get("joins") or []
        sources = ([from_.this] if from_ is not None else []) + [j.this for j in joins]
        tables = self._source_tables(scope, sources)
        resolve = _resolver(_key_tables(tables, scope), scope)
        index = {self.source_name.get(id(s), ""): i for i, s in enumerate(sources)}
        links = _Links(len(sources))
        for i, src in enumerate(sources[1:], start=1):
            if isinstance(src, (exp.Unnest, exp.Lateral)):
                links.link(i, i - 1)  # UNNEST(t.hits), LATERAL FLATTEN(t.arr): a row's own array
            elif from_ is not None and joins[i - 1].args.get("kind") == "CROSS" and self._crossed():
                links.link(i, i - 1)  # CROSS JOIN written out: the product is what is asked
        self._read_joins(joins, sources, index, links, out, resolve)
        linked_all = self._read_where(sel, index, links, out, resolve)
        self._read_having(sel, out, resolve)
        if len(sources) >= 2:
            self._redundant_sources(sel, sources, joins, tables)
        if len(sources) < 2 or linked_all or links.groups() == 1:
            return False
        self._loose_links(sel, scope, sources, index, links)
        return links.groups() > 1

    def _crossed(self) -> bool:
        """Does the SQL write ``CROSS JOIN`` (the parser gives a comma join that kind too)?"""
        return any(t.token_type == TokenType.CROSS for t in self.reader.text.tokens)

    def _loose_links(
        self,
        sel: exp.Select,
        scope: Scope | None,
        sources: list[exp.Expr],
        index: dict[str, int],
        links: _Links,
    ) -> None:
        """Link the sources that a condition other than a column equality ties (a
        comparison, LIKE or IN whose operands read columns of two sources:
        ``UPPER(a.x) = UPPER(b.y)``, ``a.x = b.y OR a.x = b.z``, ``p.tags LIKE '%' +
        t.name + '%'``), and a source that holds one row (an aggregate without GROUP BY:
        ``JOIN stats ON 1 = 1``), which multiplies no row."""
        columns = self.reader.text.columns  # qualifiers as written (rendering swaps them)

        def qualifier(node: exp.Expr) -> str | None:
            info = columns.get(id(node)) if type(node) is _COLUMN else None
            return info.qualifier if info is not None else None

        where = sel.args.get("where")
        conditions = [j.args.get("on") for j in sel.args.get("joins") or []]
        conditions.append(where.this if where is not None else None)
        for cond in conditions:
            if cond is None:
                continue
            for pred in preorder(cond, _SUBQUERY):
                if isinstance(pred, exp.Predicate) and not isinstance(pred, exp.Exists):
                    at = {index.get(q or "") for q in map(qualifier, preorder(pred, _SUBQUERY))}
                    at.discard(None)
                    first = next(iter(at), None)
                    for other in at:
                        links.link(first, other)
                if type(pred) is exp.EQ and (i := _pinned_source(pred, sources, index, qualifier)):
                    links.link(i, 0)  # JOIN users u ON u.id = 42: one row, multiplying none
        for i, src in enumerate(sources):
            if _one_row(self._source_query(scope, src)):
                links.link(i, 0 if i else min(1, len(sources) - 1))

    def _source_query(self, scope: Scope | None, src: exp.Expr) -> exp.Expr | None:
        """The query a derived table or CTE source reads (None for a base table), the
        source found in ``scope`` by its alias whatever its letter case."""
        if type(src) is exp.Subquery and isinstance(src.this, _QUERY):
            return src.this
        if type(src) is _TABLE and scope is not None:
            name = self.source_name.get(id(src), "")
            for key, source in scope.sources.items():
                if key.lower() == name and isinstance(source, Scope):
                    expr = source.expression
                    return expr if isinstance(expr, _QUERY) else None
        return None

    def _source_tables(self, scope: Scope | None, sources: list[exp.Expr]) -> dict[str, str]:
        """The table each source alias of a SELECT stands for (a derived table: its alias)."""
        tables: dict[str, str] = {}
        if scope is not None:
            for name, src in scope.sources.items():
                tables[name.lower()] = src.name.lower() if isinstance(src, _TABLE) else name.lower()
        else:
            for node in sources:
                alias = self.source_name.get(id(node), "")
                tables[alias] = node.name.lower() if type(node) is _TABLE else alias
        return tables

    def _read_joins(
        self,
        joins: list[exp.Join],
        sources: list[exp.Expr],
        index: dict[str, int],
        links: _Links,
        out: Conditions,
        resolve: _Resolve,
    ) -> None:
        """Read each JOIN's ON or USING into ``out`` and link the sources it joins."""
        for i, join in enumerate(joins, start=1):
            kind = _join_kind(join)
            on = join.args.get("on")
            using = join.args.get("using")
            if on is not None:
                for jc in self.reader.read(on, "join", out, kind, resolve):
                    a = index.get(jc.left_qualifier or "")
                    b = index.get(jc.right_qualifier or "")
                    if a is None or b is None:
                        links.link(i, i - 1)
                    else:
                        links.link(a, b)
            elif using:
                names = [resolve(self.source_name.get(id(s), "")) for s in sources[i - 1 : i + 1]]
                pair = [n for n in names if n]
                for ident in using:
                    name = normalize_column(ident.name, self.synonyms)
                    out.joins.append(JoinCondition(name, name, "=", kind, None, None, pair))
                links.link(i, i - 1)
            elif kind == "natural":
                links.link(i, i - 1)

    def _read_where(
        self,
        sel: exp.Select,
        index: dict[str, int],
        links: _Links,
        out: Conditions,
        resolve: _Resolve,
    ) -> bool:
        """Read WHERE into ``out``, linking the sources its join conditions name; True when
        a join condition there names an unqualified column (the sources count as linked)."""
        linked_all = False
        where = sel.args.get("where")
        if where is not None:
            first = len(out.filters)
            for jc in self.reader.read(where.this, "where", out, "inner", resolve):
                if jc.left_qualifier is None or jc.right_qualifier is None:
                    linked_all = True
                links.link(index.get(jc.left_qualifier or ""), index.get(jc.right_qualifier or ""))
            if negated_scope(sel):
                out.filters[first:] = [replace(f, negated=True) for f in out.filters[first:]]
        return linked_all

    def _read_having(self, sel: exp.Select, out: Conditions, resolve: _Resolve) -> None:
        """Read HAVING into ``out``, with the SELECT's aliases known to the reader."""
        having = sel.args.get("having")
        if having is not None:
            self.reader.aliases = {
                e.alias.lower(): e.this for e in sel.expressions if type(e) is _ALIAS
            }
            first = len(out.filters)
            try:
                self.reader.read(having.this, "having", out, "inner", resolve)
            finally:
                self.reader.aliases = {}
            if negated_scope(sel):  # "except those with at least two": EXCEPT … HAVING >= 2
                out.filters[first:] = [replace(f, negated=True) for f in out.filters[first:]]

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
        for star in sel.expressions:
            if is_star(star):
                return
        in_on: set[int] = set()  # the columns of the ON conditions
        neighbours: dict[str, set[str]] = {}
        for j in joins:
            on = j.args.get("on")
            if on is not None:
                quals: set[str] = set()
                for n in search(on, _COLUMNS):
                    in_on.add(id(n))
                    if type(n) is _COLUMN and n.table:
                        quals.add(n.table.lower())
                for q in quals:
                    neighbours.setdefault(q, set()).update(quals - {q})
        used: set[str] = set()
        for col in self._columns_under(sel):
            if id(col) in in_on or type(col.this) is _STAR:
                continue
            q = col.table.lower()
            if not q:
                return
            used.add(q)
        for src in sources:
            if type(src) is not _TABLE:
                continue
            alias = self.source_name.get(id(src), "")
            if alias and alias not in used:
                if len(neighbours.get(alias, ())) < 2:
                    self.redundant.append(tables.get(alias, alias))
                else:
                    self.bridges.append(tables.get(alias, alias))

    def _columns_under(self, sel: exp.Select) -> Iterable[exp.Column]:
        """Every column node (``Pseudocolumn`` included) in ``sel``'s subtree, in no
        particular order. At the root these are the walk's columns, its double-quoted
        strings and its pseudocolumns (star columns, which the walk skips, are skipped
        by the caller); a rendering's swaps replace a column's children, never the
        column, so the set is the same at any time."""
        w = self.walk
        if sel is not self.root or w is None:
            return search(sel, _COLUMNS)
        strings = [n for n in w.literals if type(n) is _COLUMN]
        if not strings and not w.pseudocolumns:
            return w.columns
        return [*w.columns, *w.pseudocolumns, *strings]

    def tables(self, w: Walk) -> list[str]:
        base: set[int] | None = None
        if self.scopes is not None:
            base = {
                id(src)
                for scope in self.scopes
                for src in scope.sources.values()
                if isinstance(src, _TABLE)
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


def negated_scope(sel: exp.Expr) -> bool:
    """Are the rows ``sel`` selects excluded from the result: the right side of an EXCEPT,
    a subquery under NOT IN or NOT EXISTS?

    >>> import sqlglot
    >>> t = sqlglot.parse_one("SELECT a FROM t EXCEPT SELECT a FROM u WHERE c = 1")
    >>> [negated_scope(s) for s in t.find_all(exp.Select)]
    [False, True]
    >>> t = sqlglot.parse_one("SELECT a FROM t WHERE a NOT IN (SELECT a FROM u WHERE c = 1)")
    >>> [negated_scope(s) for s in t.find_all(exp.Select)]
    [False, True]
    """
    node: exp.Expr = sel
    while node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.Except) and node is parent.expression:
            return True
        if isinstance(parent, (exp.In, exp.Exists)) and isinstance(parent.parent, exp.Not):
            return True
        node = parent
    return False


def _key_tables(tables: dict[str, str], scope: Scope | None) -> dict[str, str]:
    """``tables`` with each derived table or CTE that reads one base table without a join
    standing for that table, as the join conditions read their keys (``WITH b AS (SELECT
    id FROM customers WHERE …) … JOIN b ON b.id = c.id``: ``b.id`` is a customer's id)."""
    if scope is None:
        return tables
    out = dict(tables)
    for name, src in scope.sources.items():
        if isinstance(src, Scope) and (base := _one_base_table(src)) is not None:
            out[name.lower()] = base
    return out


def _one_base_table(scope: Scope) -> str | None:
    """The base table a derived table or CTE reads alone (one FROM table, no join, no set
    operation) and whose columns it keeps under their own names, lower case; else None (a
    column renamed, ``SELECT OwnerUserId AS id``, is no longer the key its name says).

    >>> import sqlglot
    >>> from sqlglot.optimizer.scope import build_scope
    >>> root = build_scope(sqlglot.parse_one("WITH b AS (SELECT id FROM Users) SELECT * FROM b"))
    >>> _one_base_table(root.sources["b"])
    'users'
    >>> root = build_scope(sqlglot.parse_one("SELECT * FROM (SELECT owner AS id FROM t) AS p"))
    >>> _one_base_table(root.sources["p"]) is None
    True
    """
    sel = scope.expression
    if type(sel) is not exp.Select or sel.args.get("joins"):
        return None
    for p in sel.expressions:
        if type(p) is exp.Alias and type(p.this) is _COLUMN and p.this.name != p.alias:
            return None
    from_ = sel.args.get("from_")
    src = from_.this if from_ is not None else None
    return src.name.lower() if type(src) is _TABLE and src.name else None


def _pinned_source(
    pred: exp.Expr,
    sources: list[exp.Expr],
    index: dict[str, int],
    qualifier: Callable[[exp.Expr], str | None],
) -> int | None:
    """The joined source (position ≥ 1) whose own id an equality holds to a literal
    (``u.Id = 1387233``): it gives one row, so joining it multiplies no row. Else None."""
    for col, value in ((pred.this, pred.expression), (pred.expression, pred.this)):
        if type(col) is not _COLUMN or not isinstance(value, exp.Literal):
            continue
        i = index.get(qualifier(col) or "")
        src = sources[i] if i else None
        if type(src) is _TABLE and own_key(col.name.casefold(), src.name.casefold()):
            return i
    return None


def own_key(column: str, table: str) -> bool:
    """Is ``column`` the table's own key (``id``, ``molecule_id`` of molecule), not a
    key of another table it refers to (``posttypeid`` of posts)? Both names case-folded.

    >>> own_key("molecule_id", "molecule"), own_key("posttypeid", "posts"), own_key("id", "")
    (True, False, True)
    """
    col = _NON_ALNUM.sub("", column)
    name = _NON_ALNUM.sub("", table)
    return col == "id" or (bool(name) and col in (f"{name}id", f"{name.removesuffix('s')}id"))


def own_code(column: str, table: str) -> bool:
    """Is ``column`` the code a reference table is keyed by (``incident_type_code`` of
    ``Ref_Incident_Type``, ``document_type_code`` of ``Ref_Document_Types``)? Both folded.

    >>> own_code("incident_type_code", "ref_incident_type"), own_code("code", "orders")
    (True, False)
    """
    name = re.sub(r"^(?:ref|lookup|lkp|dim)_", "", table).replace("_", "")
    col = column.replace("_", "")
    return bool(name) and col in (f"{name}code", f"{name.removesuffix('s')}code")


_NON_ALNUM = re.compile(r"[^a-z0-9]")

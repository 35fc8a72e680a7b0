"""What the outputs of one SELECT compute: aggregates named by their aliases (and by the
first branch of a set operation), values carried through a grouping, and outputs that
leave a grouping's figures unshown or its rows unlabelled. Flags of the SQL spec
(:mod:`stef.sql.spec`) that the structure checks read.

>>> import sqlglot
>>> aggregate_aliases(sqlglot.parse_one("SELECT COUNT(DISTINCT s.k) AS n FROM t"))
[['n', 'count', 'distinct s.k']]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from sqlglot import exp

from stef.sql.carried import carried_columns
from stef.sql.nodes import preorder
from stef.sql.predicates import conjuncts
from stef.sql.sources import is_star, own_code, own_key
from stef.sql.text import TreeText
from stef.sql.walk import contains, search

#: Node classes the per-node code tests, as constants: compiled, ``exp.Column`` is a
#: look-up in the module's dictionary each time; a ``Final`` name is a C global.
_COLUMN: Final = exp.Column
_LITERAL: Final = exp.Literal
_SELECT: Final = exp.Select
_ALIAS: Final = exp.Alias
_EXPR: Final = exp.Expr
_TABLE: Final = exp.Table
_WINDOW: Final = exp.Window

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_AGGREGATE: tuple[type[exp.AggFunc]] = (exp.AggFunc,)
_COLUMNS: tuple[type[exp.Column]] = (exp.Column,)
_EQ: tuple[type[exp.EQ]] = (exp.EQ,)
_ADD: tuple[type[exp.Add]] = (exp.Add,)
_LITERALS: tuple[type[exp.Literal]] = (exp.Literal,)


def name_key(name: str) -> str:
    """An output name folded to lower case with the word breaks its case showed: a mixed-case
    name's capitals start words (``AvgRepGain`` → ``avg_rep_gain``); a name in one case
    has none to show, so ``S`` and ``s`` read alike.

    >>> name_key("AvgRepGain"), name_key("AVGREPGAIN"), name_key("Total_Members")
    ('avg_rep_gain', 'avgrepgain', 'total_members')
    """
    if name.islower() or name.isupper():
        return name.casefold()
    return _CAMEL.sub("_", name).casefold()


def unwrapped_aggregate(node: exp.Expr) -> exp.AggFunc | None:
    """The aggregate an output computes through CAST, ROUND, COALESCE and parentheses."""
    while True:
        if isinstance(node, (exp.Cast, exp.Paren, exp.Round, exp.Coalesce, exp.Ceil, exp.Floor)):
            node = node.this
        elif isinstance(node, (exp.Mul, exp.Div)) and isinstance(node.expression, _LITERAL):
            node = node.this  # SUM(x) / 5.1, AVG(x) * 100: scaled, still that aggregate
        else:
            break
    if isinstance(node, exp.AggFunc) and not isinstance(node.parent, _WINDOW):
        return node
    return None


def branch_aggregates(op: exp.SetOperation) -> list[list[str]]:
    """``[name, function, argument]`` of each unaliased aggregate output of a set
    operation's later branch, named as the first branch names that column (a grand-total
    row ``SELECT 'TOTAL', SUM(n)`` under ``SELECT dept, n AS total_courses``).

    >>> import sqlglot
    >>> q = "SELECT d, n AS total_n FROM t UNION ALL SELECT 'ALL', AVG(n) FROM t"
    >>> branch_aggregates(sqlglot.parse_one(q))
    [['total_n', 'avg', 'n']]
    """
    # the branches by their args, not .left/.right: those raise on a branch that is no
    # query ("* UNION SELECT …" parses to a Star on the left)
    first, later = op.this, op.expression
    while isinstance(first, (exp.SetOperation, exp.Subquery)):
        first = first.this
    if not isinstance(first, _SELECT) or not isinstance(later, _SELECT):
        return []
    names = [e.alias_or_name for e in first.expressions]
    out = []
    for name, e in zip(names, later.expressions, strict=False):
        agg = None if isinstance(e, _ALIAS) else unwrapped_aggregate(e)
        if agg is not None and name:
            arg = agg.this.sql().casefold() if isinstance(agg.this, _EXPR) else ""
            out.append([name_key(name), agg.sql_name().lower(), arg])
    return out


def carried_aliases(sel: exp.Select) -> list[str]:
    """Aliases of a grouped SELECT's outputs that carry one column through the grouping
    under its own name (``AVG(t.count) AS count``, ``MAX(p.title) AS title``): a value
    fixed per group, not a computed figure.

    >>> import sqlglot
    >>> carried_aliases(sqlglot.parse_one("SELECT tag, AVG(t.count) AS count FROM t GROUP BY tag"))
    ['count']
    >>> carried_aliases(sqlglot.parse_one("SELECT AVG(t.count) AS count FROM t"))
    []
    >>> q = "SELECT tag, AVG(t.ViewCount) AS ViewCount FROM t GROUP BY tag"
    >>> carried_aliases(sqlglot.parse_one(q))
    ['view_count']
    """
    if sel.args.get("group") is None:
        return []
    out = []
    for e in sel.expressions:
        node = unwrapped_aggregate(e.this) if isinstance(e, _ALIAS) and e.alias else None
        arg = node.this if isinstance(node, (exp.Avg, exp.Max, exp.Min)) else None
        if isinstance(arg, _COLUMN) and arg.name.casefold() == e.alias.casefold():
            out.append(name_key(e.alias))  # folded as aggregate_aliases folds it
    return out


def aggregate_aliases(sel: exp.Select) -> list[list[str]]:
    """``[alias, function, argument]`` of each output named by an alias and computed by one
    aggregate (through CAST, ROUND, COALESCE and parentheses).

    >>> import sqlglot
    >>> aggregate_aliases(sqlglot.parse_one("SELECT ROUND(AVG(x), 2) AS avg_x, y AS n FROM t"))
    [['avg_x', 'avg', 'x']]
    """
    out = []
    for e in sel.expressions:
        if not isinstance(e, _ALIAS) or not e.alias:
            continue
        node = unwrapped_aggregate(e.this)
        if node is not None:
            arg = node.this.sql().casefold() if isinstance(node.this, _EXPR) else ""
            out.append([name_key(e.alias), node.sql_name().lower(), arg])
    return out


#: Nodes that make an output a computed value rather than a stored column.
_COMPUTED = (exp.AggFunc, exp.Window, exp.Subquery, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Case)


def aggregates_unshown(sel: exp.Select) -> bool:
    """The result aggregates (it groups, or filters or sorts on an aggregate) but none of
    its outputs computes anything: the count or total it works out is never shown.

    >>> import sqlglot
    >>> aggregates_unshown(sqlglot.parse_one("SELECT c FROM t GROUP BY c HAVING COUNT(*) > 1"))
    True
    >>> aggregates_unshown(sqlglot.parse_one("SELECT id FROM t ORDER BY id"))
    False
    >>> aggregates_unshown(sqlglot.parse_one("SELECT city, COUNT(*) FROM t GROUP BY city"))
    False
    """
    if not sel.expressions or any(map(is_star, sel.expressions)):
        return False
    order = sel.args.get("order")
    aggregating = (
        sel.args.get("group") is not None
        or sel.args.get("having") is not None
        or (order is not None and contains(order, _AGGREGATE))
    )
    return aggregating and not any(map(shows_figure, sel.expressions))


#: Nodes that make an output a figure: an aggregate, a window, arithmetic.
_FIGURES = (exp.AggFunc, exp.Window, exp.Sub, exp.Mul, exp.Div)


def shows_figure(node: exp.Expr) -> bool:
    """Does the output ``node`` show a figure (a count, a total, a ratio, a sum of two
    columns), rather than a label: a CASE of labels, a subquery that aggregates nothing (a
    list of names built with ``FOR XML``), text glued with ``+``?

    >>> import sqlglot
    >>> [shows_figure(e) for e in sqlglot.parse_one(
    ...     "SELECT (SELECT COUNT(*) FROM v), up + down, CASE WHEN k = 1 THEN 'Q' END,"
    ...     " 'site://' + name, (SELECT name FROM u) FROM t", "tsql").expressions]
    [True, True, False, False, False]
    """
    if contains(node, _FIGURES):
        return True
    return contains(node, _ADD) and not any(lit.is_string for lit in search(node, _LITERALS))


def unlabelled_groups(sel: exp.Select) -> bool:
    """The result groups rows but outputs only aggregates: several rows (one per group)
    that nothing tells apart, as when the grouped column was left out of the SELECT.

    >>> import sqlglot
    >>> unlabelled_groups(sqlglot.parse_one("SELECT COUNT(*) FROM t GROUP BY city"))
    True
    >>> unlabelled_groups(sqlglot.parse_one("SELECT city, COUNT(*) FROM t GROUP BY city"))
    False
    >>> unlabelled_groups(sqlglot.parse_one("SELECT MAX(n) FROM t GROUP BY c ORDER BY 1 LIMIT 1"))
    False
    >>> unlabelled_groups(sqlglot.parse_one("SELECT MIN(u), MIN(id) FROM t GROUP BY u"))
    False
    >>> unlabelled_groups(sqlglot.parse_one("SELECT MAX(x), MIN(x) FROM t GROUP BY x"))
    True
    """
    group = sel.args.get("group")
    if group is None or not group.expressions or not sel.expressions:
        return False
    bound = getattr(sel.args.get("limit"), "expression", None)
    if isinstance(bound, _LITERAL) and bound.name == "1":
        return False
    keys = {k.name.casefold() for k in group.expressions if type(k) is _COLUMN}
    cores = [e.this if isinstance(e, _ALIAS) else e for e in sel.expressions]
    for core in cores:
        if not contains(core, _AGGREGATE) or any(
            not c.find_ancestor(exp.AggFunc) for c in search(core, _COLUMNS)
        ):
            return False
    picked = [_key_picked(c, keys) for c in cores]
    # MIN(user_id), MIN(id) … GROUP BY user_id: the key itself labels the figures of its
    # row; with nothing but the key (MAX(x), MIN(x) … GROUP BY x) there is no figure
    return not (any(picked) and not all(picked))


def _key_picked(core: exp.Expr, keys: set[str]) -> bool:
    """Is ``core`` MIN, MAX or ANY_VALUE of a plain column the rows are grouped by (one
    value per group: the key itself)?"""
    arg = core.this if type(core) in (exp.Min, exp.Max, exp.AnyValue) else None
    return type(arg) is _COLUMN and arg.name.casefold() in keys


def _qualifier(col: exp.Column) -> str:
    return col.table.casefold()


def _equated_sources(sel: exp.Select) -> dict[tuple[str, str], set[str]]:
    """For each column an ``=`` of the SELECT's ON or WHERE conditions ties to another
    column, the qualifiers of those columns (``T1.artist_id = T2.artist_id``:
    ``("t1", "artist_id") → {"t2"}`` and back). One pass over the SELECT."""
    out: dict[tuple[str, str], set[str]] = {}
    for eq in search(sel, _EQ):
        a, b = eq.this, eq.expression
        if type(a) is _COLUMN and type(b) is _COLUMN:
            out.setdefault((_qualifier(a), a.name.casefold()), set()).add(_qualifier(b))
            out.setdefault((_qualifier(b), b.name.casefold()), set()).add(_qualifier(a))
    return out


def unshown_plain_keys(sel: exp.Select) -> list[exp.Column]:
    """Plain GROUP BY columns of ``sel`` that no output shows, beside labels (outputs with a
    column outside any aggregate) that all come from other sources than the key's, nor
    from one an ON or WHERE equality ties it to: the rows are groups of something the
    result never names (``SELECT t1.title … GROUP BY t2.label``).

    A label whose source is unknown (no qualifier, several sources) or a key named like a
    shown column or an output's alias says nothing: no key is returned then.

    >>> import sqlglot
    >>> q = "SELECT a.title, COUNT(*) FROM a JOIN b ON a.id = b.aid GROUP BY b.label"
    >>> [c.sql() for c in unshown_plain_keys(sqlglot.parse_one(q))]
    ['b.label']
    >>> q = "SELECT a.name, COUNT(*) FROM a JOIN b ON a.id = b.aid GROUP BY b.aid"
    >>> unshown_plain_keys(sqlglot.parse_one(q))
    []
    >>> unshown_plain_keys(sqlglot.parse_one("SELECT name, COUNT(*) FROM t GROUP BY id"))
    []
    """
    group = sel.args.get("group")
    if group is None or not sel.expressions or any(map(is_star, sel.expressions)):
        return []
    keys = [k for k in group.expressions if type(k) is _COLUMN and k.name]
    if not keys:
        return []
    names = {e.alias.casefold() for e in sel.expressions if isinstance(e, _ALIAS)}
    labels: set[str] = set()
    for e in sel.expressions:
        for col in search(e, _COLUMNS):
            names.add(col.name.casefold())
            if col.find_ancestor(exp.AggFunc) is None:
                labels.add(_qualifier(col))
    several = bool(sel.args.get("joins"))
    if not labels or (several and "" in labels):
        return []
    out = []
    equated: dict[tuple[str, str], set[str]] | None = None
    for key in keys:
        if key.name.casefold() in names or (several and not key.table):
            continue
        if _qualifier(key) in labels:
            continue
        if equated is None:
            equated = _equated_sources(sel)
        if not labels & equated.get((_qualifier(key), key.name.casefold()), set()):
            out.append(key)
    return out


#: Window functions that rank rows.
RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank)


def rank_cuts(tree: exp.Expr) -> list[int]:
    """The k of each cut of a ranking window's output (``rk <= 5``, ``rn < 4``, ``rnk = 1``,
    in a WHERE, a QUALIFY, a CASE or an aggregate's FILTER): the top k rows it keeps, as a
    LIMIT would.

    >>> import sqlglot
    >>> inner = "SELECT v, RANK() OVER (ORDER BY v DESC) AS rk FROM t"
    >>> q = f"SELECT SUM(v) FILTER (WHERE rk <= 5) FROM ({inner}) s"
    >>> rank_cuts(sqlglot.parse_one(q, read="postgres"))
    [5]
    >>> q = "SELECT c, o FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY c ORDER BY d DESC) = 1"
    >>> rank_cuts(sqlglot.parse_one(q, read="snowflake"))
    [1]
    """
    aliases = {
        a.alias.casefold()
        for a in tree.find_all(exp.Alias)
        if isinstance(a.this, _WINDOW) and isinstance(a.this.this, RANKING)
    }
    out: list[int] = []
    for cmp in tree.find_all(exp.LTE, exp.LT, exp.EQ):
        col, lit = cmp.this, cmp.expression
        if isinstance(col, _WINDOW):
            if not isinstance(col.this, RANKING):
                continue  # QUALIFY ROW_NUMBER() OVER (…) = 1: the window itself is cut
        elif not (isinstance(col, _COLUMN) and col.name.casefold() in aliases):
            continue
        if isinstance(lit, _LITERAL) and lit.is_int:
            out.append(int(lit.this) - (1 if isinstance(cmp, exp.LT) else 0))
    return out


def ungrouped(
    sel: exp.Select, literal: LiteralText | None = None, extreme_row: bool = False
) -> list[str]:
    """Columns a SELECT outputs bare beside an aggregate, with no GROUP BY: each row of
    the group is collapsed into one, so such a column's value is arbitrary (an error in
    most engines; SQLite and MySQL return some row's value). Not a column a WHERE equality
    holds to one value (``literal`` reads a literal's text, :func:`literal_reader`), nor,
    where ``extreme_row`` (SQLite), one beside a lone MIN or MAX, which SQLite takes from
    the extreme's row.

    >>> import sqlglot
    >>> ungrouped(sqlglot.parse_one("SELECT city, COUNT(*) FROM t"))
    ['city']
    >>> ungrouped(sqlglot.parse_one("SELECT city, COUNT(*) FROM t GROUP BY city"))
    []
    >>> ungrouped(sqlglot.parse_one("SELECT city, COUNT(*) OVER (PARTITION BY city) FROM t"))
    []
    >>> q = "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY d), SUM(n) FILTER (WHERE k > 1)"
    >>> ungrouped(sqlglot.parse_one(q + " FROM t", read="postgres"))
    []
    """
    if sel.args.get("group") is not None:
        return []
    aggregates, bare = [], []
    for e in sel.expressions:
        for node in preorder(e, _AGGREGATE_SCOPES):
            if isinstance(node, _AGGREGATING) and not isinstance(node.parent, _WINDOW):
                aggregates.append(node)  # an ordered-set aggregate or a FILTER reads its rows too
            elif type(node) is _COLUMN and not node.find_ancestor(*_AGGREGATE_SCOPES[1:]):
                bare.append(node)
    if not aggregates or not bare:
        return []
    if extreme_row and len(aggregates) == 1 and type(aggregates[0]) in (exp.Min, exp.Max):
        return []  # SQLite takes the bare columns from the extreme's row
    pinned = _pinned_columns(sel, literal)
    tables = source_tables(sel)
    keyed = {q for q, name in pinned if own_key(name, tables.get(q, ""))}
    return list(
        dict.fromkeys(
            c.name.casefold()
            for c in bare
            if (c.table.casefold(), c.name.casefold()) not in pinned
            and c.table.casefold() not in keyed
        )
    )


def own_sources(sel: exp.Select) -> list[exp.Expr]:
    """The SELECT's own sources: its FROM and JOINs' tables, derived tables, functions."""
    from_ = sel.args.get("from_")
    joined = [j.this for j in sel.args.get("joins") or ()]
    return [from_.this, *joined] if from_ is not None else joined


def source_tables(sel: exp.Select) -> dict[str, str]:
    """Table name of each qualifier of the SELECT's own sources (``""`` for a lone one)."""
    tables = own_sources(sel)
    named = [t for t in tables if type(t) is _TABLE]
    out = {t.alias_or_name.casefold(): t.name.casefold() for t in named}
    if len(tables) == 1 and named:
        out[""] = named[0].name.casefold()
    return out


def _pinned_columns(
    sel: exp.Select, literal: LiteralText | None = None
) -> set[tuple[str, str]]:
    """(qualifier, column) of each WHERE equality with a literal: such a column has one
    value, and its source's own key pinned so picks one row of it (``m.molecule_id =
    'TR006'``: the molecule's label has one value beside a COUNT; :func:`own_key`). ``""``
    qualifies the columns of a SELECT from one source only. A scalar subquery that
    aggregates (``= (SELECT MAX(year) FROM movie)``) is one value too.

    >>> import sqlglot
    >>> q = "SELECT COUNT(b.id), m.label FROM bond b JOIN molecule m ON b.mid = m.id"
    >>> sorted(_pinned_columns(sqlglot.parse_one(q + " WHERE m.id = 'T'")))
    [('m', 'id')]
    """
    where = sel.args.get("where")
    if where is None:
        return set()
    joined = bool(sel.args.get("joins"))
    read = literal or _literal_name

    def one_value(node: exp.Expr) -> str | None:
        text = read(node)
        if text is None and type(node) is exp.Subquery and _one_aggregate(node.this):
            return "(subquery)"
        return text

    found = _equalities(where, written_key, one_value)
    return {k for k, _, _ in found if k[0] or not joined}


def _one_aggregate(query: exp.Expr) -> bool:
    """Does ``query`` return one row: a SELECT of aggregates only, with no GROUP BY?"""
    return (
        isinstance(query, exp.Select)
        and query.args.get("group") is None
        and bool(query.expressions)
        and all(_aggregated(e) for e in query.expressions)
    )


def written_key(col: exp.Column) -> tuple[str, str]:
    """A column's (qualifier, name) as written, case-folded."""
    return col.table.casefold(), col.name.casefold()


def _literal_name(node: exp.Expr) -> str | None:
    """A literal's text (None for any other node)."""
    return node.name if type(node) is _LITERAL else None


#: Subtrees whose columns are read row by row into one value (a query, a window, an
#: aggregate, an ordered-set aggregate's WITHIN GROUP, an aggregate's FILTER).
_AGGREGATE_SCOPES = (exp.Query, exp.Window, exp.AggFunc, exp.WithinGroup, exp.Filter)
_AGGREGATING = (exp.AggFunc, exp.WithinGroup, exp.Filter)


def _aggregated(e: exp.Expr) -> bool:
    """Does an output aggregate the rows of its own query (not a subquery's, not a window's)?"""
    stop = (exp.Query, exp.Subquery, exp.Window)
    return any(
        isinstance(n, exp.AggFunc)
        for n in e.walk(bfs=True, prune=lambda n: n is not e and isinstance(n, stop))
    )


def one_row_sorted(sel: exp.Select) -> bool:
    """The query folds all its rows into one (aggregates, no GROUP BY) and then sorts or
    limits that one row: the ORDER BY … LIMIT that should pick the top rows picks nothing.

    >>> import sqlglot
    >>> one_row_sorted(sqlglot.parse_one("SELECT COUNT(*) FROM t ORDER BY cap DESC LIMIT 1"))
    True
    >>> one_row_sorted(sqlglot.parse_one("SELECT c, COUNT(*) FROM t GROUP BY c ORDER BY 2 LIMIT 1"))
    False
    >>> one_row_sorted(sqlglot.parse_one("SELECT SUM(x) OVER (), y FROM t ORDER BY y LIMIT 1"))
    False
    """
    order = sel.args.get("order")
    if sel.args.get("group") is not None or order is None or not sel.expressions:
        return False
    if all(isinstance(k.this, exp.Literal) for k in order.expressions):
        return False
    outputs = [e.unalias() for e in sel.expressions]
    aggregated = [_aggregated(e) for e in outputs]
    return any(aggregated) and all(
        a or isinstance(e, exp.Literal) for a, e in zip(aggregated, outputs, strict=True)
    )


#: How :func:`outputs_pinned` and :func:`contradiction` read a node: a column's (qualifier,
#: name), and a literal's text as written (None for any other node).
ColumnKey = Callable[[exp.Column], tuple[str, str]]
LiteralText = Callable[[exp.Expr], str | None]


def outputs_pinned(sel: exp.Select, key: ColumnKey, value: LiteralText) -> list[str]:
    """The values the WHERE clause holds every output equal to, when each output is a plain
    column that an AND-ed ``col = 'value'`` (or ``col = 94107``) of the same SELECT pins (no
    OR, IN, LIKE or subquery; a GROUP BY only of pinned columns, which makes one group): the
    result can only repeat those values. Else
    ``[]``. ``key`` gives a column's lower-cased (qualifier or "", name); ``value`` the text
    of a literal (None for any other node).

    >>> import sqlglot
    >>> key = lambda c: (c.table.lower(), c.name.lower())
    >>> text = lambda n: n.name if isinstance(n, exp.Literal) and n.is_string else None
    >>> outputs_pinned(sqlglot.parse_one("SELECT founder FROM m WHERE founder = 'Sony'"), key, text)
    ['Sony']
    >>> outputs_pinned(sqlglot.parse_one("SELECT a.name FROM a, b WHERE b.name = 'x'"), key, text)
    []
    >>> grouped = "SELECT zip FROM w WHERE zip = '94107' GROUP BY zip ORDER BY COUNT(*) DESC"
    >>> outputs_pinned(sqlglot.parse_one(grouped), key, text)
    ['94107']
    """
    where, group = sel.args.get("where"), sel.args.get("group")
    if where is None or not sel.expressions:
        return []
    if where.find(exp.Or, exp.In, exp.Like, exp.Query):
        return []
    pinned = {k: text for k, text, _ in _equalities(where, key, value)}
    if group is not None and not all(  # grouped by the pinned columns only: one group
        isinstance(g, exp.Column) and any(n == key(g)[1] for _, n in pinned)
        for g in group.expressions
    ):
        return []
    values: list[str] = []
    for e in sel.expressions:
        out = e.unalias()
        if not isinstance(out, exp.Column) or isinstance(out.this, exp.Star):
            return []
        table, name = key(out)
        hit = next(
            (v for (t, n), v in pinned.items() if n == name and (not t or not table or t == table)),
            None,
        )
        if hit is None:
            return []
        values.append(hit)
    return list(dict.fromkeys(values))


def own_key_counted(sel: exp.Select, ctes: Sequence[exp.CTE] | None = None) -> str | None:
    """The key a SELECT over one stored table (no join, no CTE) groups by when it is that
    table's own id (``id``, or the table's name and ``id``: ``Products.product_id``) and the
    SELECT counts: each group is one row, so every count is 1. Else None. ``ctes``: the
    query's CTEs where the caller has them (searched for in ``sel``'s tree when not).

    >>> import sqlglot
    >>> own_key_counted(sqlglot.parse_one(
    ...     "SELECT name FROM products GROUP BY product_id ORDER BY COUNT(*) DESC LIMIT 1"))
    'product_id'
    >>> own_key_counted(sqlglot.parse_one("SELECT product_id, COUNT(*) FROM orders GROUP BY 1"))
    """
    group = sel.args.get("group")
    source = sel.args.get("from_")
    if group is None or len(group.expressions) != 1 or sel.args.get("joins") or source is None:
        return None
    key, table = group.expressions[0], source.this
    if not isinstance(key, exp.Column) or not isinstance(table, exp.Table):
        return None
    if ctes is None:
        ctes = search(sel.root(), (exp.CTE,))
    if any(c.alias_or_name.casefold() == table.name.casefold() for c in ctes):
        return None  # a CTE may hold several rows per id
    column, name = key.name.casefold(), table.name.casefold()
    if not (own_key(column, name) or own_code(column, name)) or not search(sel, (exp.Count,)):
        return None
    return column


def contradiction(
    sel: exp.Select, key: ColumnKey, value: LiteralText, render: Callable[[exp.Expr], str]
) -> list[str] | None:
    """Two conditions of the WHERE clause's AND chain that hold one column equal to two
    different literals (``year = 0 AND year = 2010``), rendered by ``render``; else None.
    ``key`` and ``value`` read columns and literals as for :func:`outputs_pinned`.

    >>> import sqlglot
    >>> key = lambda c: (c.table.lower(), c.name.lower())
    >>> text = lambda n: n.name if isinstance(n, exp.Literal) else None
    >>> q = sqlglot.parse_one("SELECT * FROM t WHERE y = 0 AND x = 1 AND y = 2010")
    >>> contradiction(q, key, text, lambda n: n.sql())
    ['y = 0', 'y = 2010']
    >>> contradiction(sqlglot.parse_one("SELECT * FROM t WHERE y = 0 OR y = 2"), key, text, str)
    """
    where = sel.args.get("where")
    if where is None:
        return None
    seen: dict[tuple[str, str], tuple[str, exp.Expr]] = {}
    for k, text, c in _equalities(where, key, value, either_side=False):
        if k in seen and seen[k][0] != text.casefold():
            return [render(seen[k][1]), render(c)]
        seen[k] = (text.casefold(), c)
    return None


def _equalities(
    where: exp.Expr, key: ColumnKey, value: LiteralText, either_side: bool = True
) -> list[tuple[tuple[str, str], str, exp.Expr]]:
    """``(column key, literal text, condition)`` of each ``col = literal`` the WHERE clause's
    AND chain holds (``literal = col`` too unless ``either_side`` is False)."""
    found: list[tuple[tuple[str, str], str, exp.Expr]] = []
    for c in conjuncts(where.this):
        if not isinstance(c, exp.EQ):
            continue
        sides = ((c.left, c.right), (c.right, c.left)) if either_side else ((c.left, c.right),)
        for col, other in sides:
            text = value(other)
            if isinstance(col, exp.Column) and text is not None:
                found.append((key(col), text, c))
    return found


def literal_reader(tt: TreeText) -> LiteralText:
    """A literal's text as written (a double-quoted ``"CA"`` that SQLite reads as a string
    too), or None for any other node."""

    def string(node: exp.Expr) -> str | None:
        info = tt.columns.get(id(node)) if isinstance(node, exp.Column) else None
        if info is not None:
            return info.string
        if isinstance(node, exp.Literal) and node.is_string:
            return tt.literal_value(node)
        return None

    def literal(node: exp.Expr) -> str | None:
        text = string(node)
        return text if text is not None or not isinstance(node, exp.Literal) else node.name

    return literal


def output_flags(
    sel: exp.Expr, tt: TreeText, ctes: Sequence[exp.CTE] | None = None
) -> dict[str, Any]:
    """The flags of the effective SELECT's outputs and conditions: :func:`unlabelled_groups`,
    :func:`aggregates_unshown`, whether an output computes anything (``outputs_computed``;
    True for a set operation, whose outputs are not read), :func:`one_row_sorted`,
    :func:`outputs_pinned`, :func:`own_key_counted`, :func:`contradiction`,
    :func:`~stef.sql.carried.carried_columns` and :func:`distinct_on` (none set for a set
    operation). ``tt``
    reads columns and literals as written (a double-quoted ``"Sony"`` that SQLite reads as a
    string); ``ctes``: the query's CTEs, as the spec's walk collected them."""
    if not isinstance(sel, exp.Select):
        return {
            "unlabelled_groups": False,
            "aggregates_unshown": False,
            "outputs_computed": True,
            "one_row_sorted": False,
            "outputs_pinned": [],
            "own_key_counted": None,
            "contradiction": None,
            "carried_columns": [],
            "distinct_on": [],
        }

    def key(col: exp.Column) -> tuple[str, str]:
        info = tt.columns.get(id(col))
        if info is None:
            return col.table.lower(), col.name.lower()
        return info.qualifier or "", info.raw

    literal = literal_reader(tt)
    return {
        "unlabelled_groups": unlabelled_groups(sel),
        "aggregates_unshown": aggregates_unshown(sel),
        "outputs_computed": any(contains(e, _COMPUTED) for e in sel.expressions),
        "one_row_sorted": one_row_sorted(sel),
        "outputs_pinned": outputs_pinned(sel, key, literal),
        "own_key_counted": own_key_counted(sel, ctes),
        "contradiction": contradiction(sel, key, literal, tt.original),
        "carried_columns": carried_columns(sel, tt.columns, ctes),
        "distinct_on": distinct_on(sel),
    }


def distinct_on(sel: exp.Select) -> list[str]:
    """The keys of PostgreSQL's ``DISTINCT ON (…)``, lower-case column names: the SELECT keeps
    each group's first row in its ORDER BY, a top 1 per group.

    >>> import sqlglot
    >>> q = "SELECT DISTINCT ON (c) c, n FROM t ORDER BY c, p"
    >>> distinct_on(sqlglot.parse_one(q, "postgres"))
    ['c']
    """
    distinct = sel.args.get("distinct")
    on = distinct.args.get("on") if isinstance(distinct, exp.Distinct) else None
    keys = on.expressions if isinstance(on, exp.Tuple) else [on] if on is not None else []
    return [k.name.casefold() if isinstance(k, exp.Column) else k.sql().casefold() for k in keys]


def unpartitioned_ranks(windows: Iterable[exp.Window]) -> list[bool]:
    """For each ranking window (``ROW_NUMBER``/``RANK``/``DENSE_RANK``), whether it ranks all
    rows as one (no ``PARTITION BY``).

    >>> import sqlglot
    >>> q = "SELECT RANK() OVER (ORDER BY a), RANK() OVER (PARTITION BY c ORDER BY a) FROM t"
    >>> unpartitioned_ranks(sqlglot.parse_one(q).find_all(exp.Window))
    [True, False]
    """
    return [not w.args.get("partition_by") for w in windows if isinstance(w.this, RANKING)]

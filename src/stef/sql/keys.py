"""Keys read by their names and joins: what a plain COUNT of a key counts (the rows of its
own table, or more), and which columns a query joins on.

Keys are read by their names only (STEF sees no schema): a table's own key is ``id`` or
the table's name with ``_id``/``id`` (``molecule.molecule_id``); a key named for another
table (``bond.molecule_id``) refers to that table's rows. Two habits of wrong SQL follow:

- ``joined``: ``COUNT(m.molecule_id)`` with ``molecule AS m`` joined on that key to a table
  whose column refers to it (``atom.molecule_id``, many atoms to a molecule) counts the
  molecule once per joined atom;
- ``foreign``: ``COUNT(molecule_id) FROM bond`` counts the bonds that name a molecule, not
  the molecules.

The alignment reports either only when the question counts that very entity ("how many
molecules"). Flags of the SQL spec (:mod:`stef.sql.spec`).

>>> import sqlglot
>>> [(c.sql(), e, h) for c, e, h in key_counts(sqlglot.parse_one(
...     "SELECT COUNT(m.molecule_id) FROM molecule AS m JOIN atom AS a"
...     " ON m.molecule_id = a.molecule_id WHERE a.element = 'cl'"))]
[('COUNT(m.molecule_id)', 'molecule', 'joined')]
>>> [(c.sql(), e, h) for c, e, h in key_counts(sqlglot.parse_one(
...     "SELECT COUNT(molecule_id) FROM bond WHERE bond_type = '#'"))]
[('COUNT(molecule_id)', 'molecule', 'foreign')]
>>> key_counts(sqlglot.parse_one("SELECT COUNT(DISTINCT molecule_id) FROM bond"))
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from sqlglot import exp

from stef.sql.nulls import left_joins, null_columns, nullified_outer
from stef.sql.walk import search

#: Node classes the per-node code tests, as constants: compiled, ``exp.Column`` is a
#: look-up in the module's dictionary each time; a ``Final`` name is a C global.
_COLUMN: Final = exp.Column
_SELECT: Final = exp.Select
_TABLE: Final = exp.Table

_EQ, _COUNT = (exp.EQ,), (exp.Count,)
_KEY_ENDS = ("_id", "id")
#: A number (and a unit letter) ending a table's name: ``transactions_1k``.
_NUMBERED = re.compile(r"(?:_?\d+[a-z]?)+$")


def _singular(name: str) -> str:
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


def _entity_of_key(column: str) -> str | None:
    """The entity a key column names (``molecule_id`` → ``molecule``), or None.

    >>> _entity_of_key("molecule_id"), _entity_of_key("CustomerID"), _entity_of_key("id")
    ('molecule', 'customer', None)
    """
    low = column.casefold()
    for end in _KEY_ENDS:
        if low.endswith(end) and len(low) - len(end) >= 3:
            return _singular(low[: -len(end)].rstrip("_"))
    return None


def _own_key(column: str, table: str) -> bool:
    """Is ``column`` the table's own key (``id``, ``molecule_id`` of ``molecule``,
    ``TransactionID`` of ``transactions_1k``)?

    >>> _own_key("TransactionID", "transactions_1k"), _own_key("molecule_id", "atom")
    (True, False)
    >>> _own_key("order_id", "order_items"), _own_key("customer_id", "dim_customer")
    (False, True)
    """
    low = column.casefold()
    entity = _entity_of_key(low)
    if low == "id" or entity is None:
        return low == "id"
    base = _NUMBERED.sub("", table.casefold())  # transactions_1k: the transactions
    return _singular(base) == entity or base.endswith((f"_{entity}", f"_{entity}s"))


def _tables(sel: exp.Select) -> dict[str, str]:
    """Alias (or name) → table name of the plain tables a SELECT reads."""
    out: dict[str, str] = {}
    from_ = sel.args.get("from_")
    sources = [from_.this] if from_ is not None else []
    sources += [j.this for j in sel.args.get("joins") or ()]
    for src in sources:
        if isinstance(src, _TABLE) and src.name:
            out[(src.alias_or_name).casefold()] = src.name.casefold()
    return out


def _join_equalities(sel: exp.Expr) -> Iterator[tuple[exp.Expr, exp.Expr]]:
    """The two sides of each equality in the ON conditions of a SELECT's joins."""
    for join in sel.args.get("joins") or () if isinstance(sel, _SELECT) else ():
        on = join.args.get("on")
        if on is not None:
            yield from _on_equalities(on)


def _on_equalities(on: exp.Expr) -> Iterator[tuple[exp.Expr, exp.Expr]]:
    """The two sides of each equality in one ON condition."""
    for eq in search(on, _EQ):
        yield eq.this, eq.expression


def key_counts(
    sel: exp.Expr, counts: list[exp.Count] | None = None
) -> list[tuple[exp.Count, str, str]]:
    """``(count, entity, habit)`` of each plain COUNT of a key in this SELECT whose rows
    are not the entity's own (see the module's doc). Read it before the tree's text is
    rendered: rendering folds the columns' qualifiers for a while. ``counts``: the
    SELECT's own COUNTs in ``find_all``'s (breadth-first) order, when the caller knows
    them (else they are searched for)."""
    if not isinstance(sel, _SELECT):
        return []
    tables = _tables(sel)
    if not tables:
        return []
    out: list[tuple[exp.Count, str, str]] = []
    grouped = _grouped_by_own_key(sel, tables)
    starred = False  # the first COUNT(*) stands for all of them (they count the same rows)
    for count in search(sel, _COUNT) if counts is None else counts:
        col = count.this
        if count.find_ancestor(exp.Select) is not sel:
            continue
        if isinstance(col, exp.Star):  # COUNT(*): each table the joins repeat
            if not starred:
                out += [(count, _singular(t), "rows") for t in _repeated(sel, tables, grouped)]
            starred = True
            continue
        if not isinstance(col, _COLUMN):
            continue
        alias = col.table.casefold() or (next(iter(tables)) if len(tables) == 1 else "")
        table = tables.get(alias)
        if table is None:
            continue
        name = col.name.casefold()
        if _own_key(name, table):
            child = _child_of(sel, alias, table, tables, name)
            if child is not None and alias not in grouped:
                out.append((count, _singular(table), "joined"))
        elif (entity := _entity_of_key(name)) is not None and entity not in table:
            # a key named for a table the name of this one holds not (``playlist_tracks``
            # lists tracks: its COUNT(track_id) counts them)
            out.append((count, entity, "foreign"))
    return out


def _grouped_by_own_key(sel: exp.Select, tables: dict[str, str]) -> set[str]:
    """Aliases whose own key the SELECT groups by: each group is one of their rows, so a
    COUNT there counts that row's joined rows, never the rows themselves."""
    group = sel.args.get("group")
    keys = group.find_all(_COLUMN) if group is not None else ()
    return {
        c.table.casefold() for c in keys if _own_key(c.name, tables.get(c.table.casefold(), ""))
    }


def _repeated(sel: exp.Select, tables: dict[str, str], grouped: set[str]) -> list[str]:
    """Tables whose own key a joined table refers to, where nothing pins that table (see
    :func:`fanned_sums`): each of their rows comes back once per joined row (customers by
    their orders, orders by their items)."""
    if not sel.args.get("joins"):
        return []
    where = sel.args.get("where")
    absent = {q for q, _ in null_columns(where.this)} if where is not None else set()
    out = []
    pairs = list(_join_equalities(sel))  # read once for every table
    for alias, table in tables.items():
        child = _child_of(sel, alias, table, tables, pairs=pairs) if alias not in grouped else None
        if child is None or child[0] in absent:
            continue  # ``LEFT JOIN logins l … WHERE l.id IS NULL``: rows with none joined
        if not _pinned(sel, child[0], alias):
            out.append(table)  # (pinned: a junction held to one row beyond it, as for SUM)
    return out


#: Functions a join condition may wrap a key in (``UPPER(a.krb) = UPPER(b.member)``).
_KEY_WRAPPERS = (exp.Upper, exp.Lower, exp.Trim, exp.Cast, exp.Paren)


def join_key_columns(sel: exp.Expr) -> list[str]:
    """Lower-case names of the columns this SELECT joins on by equality, through UPPER,
    LOWER, TRIM and CAST: keys, whose SUM or AVG adds up identifiers.

    >>> import sqlglot
    >>> join_key_columns(sqlglot.parse_one(
    ...     "SELECT SUM(d.member) FROM d JOIN p ON UPPER(d.member) = UPPER(p.krb)"))
    ['member', 'krb']
    """
    out: list[str] = []
    for sides in _join_equalities(sel):
        for side in sides:
            while isinstance(side, _KEY_WRAPPERS):
                side = side.this
            if isinstance(side, _COLUMN):
                out.append(side.name.casefold())
    return out


def fanned_sums(aggs: list[exp.AggFunc]) -> list[list[str]]:
    """``[sum, entity, joined table]`` of each plain ``SUM`` of a table's column whose own key
    is joined to another table's column that refers to it: ``SUM(o.total) FROM orders o JOIN
    order_items oi ON oi.order_id = o.id`` adds each order's total once per item. Read it
    before the tree's text is rendered (the columns' qualifiers are needed).

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT SUM(o.total) FROM orders o JOIN order_items oi"
    ...                       " ON oi.order_id = o.id")
    >>> fanned_sums(list(q.find_all(exp.Sum)))
    [['SUM(o.total)', 'order', 'order_items']]
    """
    out: list[list[str]] = []
    for agg in aggs:
        col = agg.this
        if type(agg) is not exp.Sum or not isinstance(col, _COLUMN) or not col.table:
            continue
        sel = agg.find_ancestor(exp.Select)
        if not isinstance(sel, _SELECT) or not sel.args.get("joins"):
            continue
        if agg.find_ancestor(exp.Window) is not None:
            continue
        tables = _tables(sel)
        alias = col.table.casefold()
        table = tables.get(alias)
        child = _child_of(sel, alias, table, tables) if table else None
        if table and child and not _own_key(col.name, table) and not _pinned(sel, child[0], alias):
            out.append([agg.sql(), _singular(table), child[1]])
    return out


def _pinned(sel: exp.Select, child: str, parent: str) -> bool:
    """Does the SELECT group by, or compare with one value, a column of the joined child or
    of a table joined to it (posts joined to their tags, grouped by tag or for one tag:
    each post once per group)?"""
    side = {child}
    for left, right in _join_equalities(sel):
        if isinstance(left, _COLUMN) and isinstance(right, _COLUMN):
            pair = {left.table.casefold(), right.table.casefold()}
            if child in pair:
                side |= pair - {parent}
    group = sel.args.get("group")
    keys = [c for e in group.expressions for c in e.find_all(_COLUMN)] if group else []
    where = sel.args.get("where")
    for eq in search(where, _EQ) if where is not None else ():
        keys += [s for s in (eq.this, eq.expression) if isinstance(s, _COLUMN)]
    for left, right in _join_equalities(sel):  # ``JOIN badges b ON … AND b.name = 'Marshal'``
        for col, value in ((left, right), (right, left)):
            if isinstance(col, _COLUMN) and isinstance(value, exp.Literal):
                keys.append(col)
    return any(c.table.casefold() in side for c in keys if c.table)


def _child_of(
    sel: exp.Select,
    alias: str,
    table: str,
    tables: dict[str, str],
    key: str | None = None,
    pairs: list[tuple[exp.Expr, exp.Expr]] | None = None,
) -> tuple[str, str] | None:
    """(alias, name) of a table joined by equality to ``alias``'s own key (``key`` when
    given, any own key of ``table`` else) by a column that refers to it, not that table's
    own key: many of its rows to one of ``alias``'s. None when there is none."""
    for left, right in _join_equalities(sel) if pairs is None else pairs:
        if not (isinstance(left, _COLUMN) and isinstance(right, _COLUMN)):
            continue
        for mine, other in ((left, right), (right, left)):
            other_table = tables.get(other.table.casefold())
            if mine.table.casefold() != alias or other.table.casefold() == alias:
                continue
            own = mine.name.casefold() == key if key is not None else _own_key(mine.name, table)
            if own and other_table and not _own_key(other.name, other_table):
                return other.table.casefold(), other_table
    return None


def outer_star_counts(sel: exp.Select) -> list[str]:
    """Tables a SELECT LEFT JOINs as children of the rows it groups (``LEFT JOIN orders o ON
    o.customer_id = c.id … GROUP BY c.id``) and counts with ``COUNT(*)``: the row a parent
    with no child keeps, NULLs and all, is counted too, so a customer with no orders counts
    1, not 0 (``COUNT(o.id)`` counts 0). Only where every GROUP BY column is the parent's,
    and no WHERE condition drops the unmatched rows (:func:`nullified_outer`). Names of
    those tables, lower-case.

    >>> import sqlglot
    >>> outer_star_counts(sqlglot.parse_one("SELECT c.id, COUNT(*) FROM customers c LEFT JOIN"
    ...     " orders o ON o.customer_id = c.id GROUP BY c.id"))
    ['orders']
    >>> outer_star_counts(sqlglot.parse_one("SELECT c.id, COUNT(o.id) FROM customers c LEFT JOIN"
    ...     " orders o ON o.customer_id = c.id GROUP BY c.id"))
    []
    """
    group = sel.args.get("group")
    if group is None or not sel.args.get("joins"):
        return []
    clauses = [*sel.expressions, sel.args.get("having"), sel.args.get("order")]
    stars = [  # the outputs, HAVING and ORDER BY only: no walk of the FROM's subqueries
        c
        for part in clauses
        if part is not None
        for c in search(part, _COUNT)
        if isinstance(c.this, (exp.Star, exp.Literal)) and c.find_ancestor(exp.Select) is sel
    ]
    if not stars:
        return []
    keys = [c for e in group.expressions for c in e.find_all(exp.Column)]
    parents = {c.table.casefold() for c in keys}
    if len(parents) != 1 or "" in parents:
        return []
    parent = parents.pop()
    dropped = set(nullified_outer(sel))
    tables = _tables(sel)
    out: list[str] = []
    for j in left_joins(sel):
        child, name = j.this.alias_or_name.casefold(), j.this.name.casefold()
        on = j.args.get("on")
        if on is None or name in dropped or name in out:
            continue
        pairs = list(_on_equalities(on))
        found = _child_of(sel, parent, tables.get(parent, ""), tables, pairs=pairs)
        if found is not None and found[0] == child:
            out.append(name)  # the child's column refers to the parent's own key
    return out

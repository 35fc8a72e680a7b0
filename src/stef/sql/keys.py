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

from collections.abc import Iterator
from typing import Final

from sqlglot import exp

from stef.sql.walk import search

#: Node classes the per-node code tests, as constants: compiled, ``exp.Column`` is a
#: look-up in the module's dictionary each time; a ``Final`` name is a C global.
_COLUMN: Final = exp.Column
_SELECT: Final = exp.Select
_TABLE: Final = exp.Table

_EQ, _COUNT = (exp.EQ,), (exp.Count,)
_KEY_ENDS = ("_id", "id")


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
    """
    low = column.casefold()
    entity = _entity_of_key(low)
    return low == "id" or (entity is not None and table.casefold().startswith(entity))


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
        for eq in search(on, _EQ) if on is not None else ():
            yield eq.this, eq.expression


def _fans_out(sel: exp.Select, alias: str, column: str, tables: dict[str, str]) -> bool:
    """Is ``alias.column`` joined by equality to another table's column that refers to it
    (not that table's own key): one row of ``alias`` to many of the other?"""
    for left, right in _join_equalities(sel):
        if isinstance(left, _COLUMN) and isinstance(right, _COLUMN):
            for mine, other in ((left, right), (right, left)):
                if mine.table.casefold() != alias or mine.name.casefold() != column:
                    continue
                other_table = tables.get(other.table.casefold())
                other_alias = other.table.casefold()
                if other_table and other_alias != alias and not _own_key(other.name, other_table):
                    return True
    return False


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
    for count in search(sel, _COUNT) if counts is None else counts:
        col = count.this
        if not isinstance(col, _COLUMN) or count.find_ancestor(exp.Select) is not sel:
            continue
        alias = col.table.casefold() or (next(iter(tables)) if len(tables) == 1 else "")
        table = tables.get(alias)
        if table is None:
            continue
        name = col.name.casefold()
        if _own_key(name, table):
            if _fans_out(sel, alias, name, tables):
                out.append((count, _singular(table), "joined"))
        elif (entity := _entity_of_key(name)) is not None and entity not in table:
            # a key named for a table the name of this one holds not (``playlist_tracks``
            # lists tracks: its COUNT(track_id) counts them)
            out.append((count, entity, "foreign"))
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

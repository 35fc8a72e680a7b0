"""Conditions that cannot say what they mean (:func:`condition_flags`).

Two bounds on one column, the same way, in one AND or OR chain: ``height > 100 OR
height > 3300`` is ``height > 100``, and ``cost > 1500 AND cost > 5000`` is ``cost > 5000``.
One of the two does nothing, so it was meant for another column ("longer than 3300 or
higher than 100") or for the other side; a correct query states each bound once
(:func:`redundant_bounds`). A column compared with an aggregate of another column
(``salary > (SELECT AVG(min_salary) FROM jobs)`` for "earn more than the average salary")
measures two things against each other (:func:`other_aggregate_compared`). A column
qualified by a name that no table, alias, subquery or CTE of the query has (``fiat.country``
beside ``FROM countries JOIN car_makers``) does not run at all (:func:`unknown_qualifiers`).

Only plain comparisons of a column with a number are read; a range (``x > 1 AND x < 9``)
bounds the column both ways and is never reported.

>>> import sqlglot
>>> redundant_bounds(sqlglot.parse_one("SELECT * FROM t WHERE h > 100 OR h > 3300"))
['h > 100 OR h > 3300']
>>> redundant_bounds(sqlglot.parse_one("SELECT * FROM t WHERE h > 100 AND h < 3300"))
[]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from stef.sql.bare import rolls_up
from stef.sql.outputs import own_sources
from stef.sql.walk import Walk

_UPPER = (exp.LT, exp.LTE)
_LOWER = (exp.GT, exp.GTE)
_CHAINS = (exp.And, exp.Or)


def _links(node: exp.Expr, chain: type[exp.Expr]) -> list[exp.Expr]:
    """The conditions an AND (or OR) chain joins, parentheses opened."""
    out: list[exp.Expr] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is chain:
            stack += [n.expression, n.this]
        elif isinstance(n, exp.Paren) and type(n.this) is chain:
            stack.append(n.this)
        else:
            out.append(n)
    return out


def _bound(node: exp.Expr) -> tuple[tuple[str, str, bool], str] | None:
    """``((qualifier, column, is lower bound), number)`` of ``column < number`` and the like
    (either side), else None."""
    if not isinstance(node, _UPPER + _LOWER):
        return None
    col, num, lower = node.this, node.expression, isinstance(node, _LOWER)
    if isinstance(num, exp.Column) and isinstance(col, exp.Literal):
        col, num, lower = num, col, not lower
    if not isinstance(col, exp.Column) or not isinstance(num, exp.Literal) or num.is_string:
        return None
    return (col.table.casefold(), col.name.casefold(), lower), num.name


def redundant_bounds(tree: exp.Expr, selects: Sequence[exp.Select] | None = None) -> list[str]:
    """The chains (as SQL) holding two bounds on one column the same way with two numbers
    (see the module doc), in the WHERE, HAVING and ON conditions of ``selects`` (all of the
    tree's SELECTs when None)."""
    found: list[str] = []
    seen_chains: set[int] = set()
    for root in _condition_roots(list(tree.find_all(exp.Select)) if selects is None else selects):
        for node in root.find_all(*_CHAINS):
            up = node.parent.parent if isinstance(node.parent, exp.Paren) else node.parent
            if type(up) is type(node) or id(node) in seen_chains:
                continue  # read from the chain's top, once (a subquery's is its own root too)
            seen_chains.add(id(node))
            seen: dict[tuple[str, str, bool], str] = {}
            for link in _links(node, type(node)):
                bound = _bound(link)
                if bound is None:
                    continue
                key, number = bound
                if seen.setdefault(key, number) != number:
                    found.append(node.sql())
                    break
    return found


def _condition_roots(selects: Sequence[exp.Select]) -> list[exp.Expr]:
    """The WHERE, HAVING and JOIN … ON conditions of the SELECTs."""
    roots: list[exp.Expr] = []
    for sel in selects:
        for clause in ("where", "having"):
            part = sel.args.get(clause)
            if part is not None:
                roots.append(part.this)
        roots += [on for j in sel.args.get("joins") or () if (on := j.args.get("on")) is not None]
    return roots


_COMPARISONS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ)
_STATISTICS = (exp.Avg, exp.Max, exp.Min, exp.Sum)


def other_aggregate_compared(tree: exp.Expr) -> list[str]:
    """Comparisons (as SQL) of a column with a scalar subquery that aggregates another
    column.

    >>> import sqlglot
    >>> q = "SELECT id FROM e WHERE salary > (SELECT AVG(min_salary) FROM jobs)"
    >>> other_aggregate_compared(sqlglot.parse_one(q))
    ['salary > (SELECT AVG(min_salary) FROM jobs)']
    >>> q = "SELECT id FROM e WHERE e.salary > (SELECT AVG(salary) FROM e)"
    >>> other_aggregate_compared(sqlglot.parse_one(q))
    []
    """
    found: list[str] = []
    for cmp in tree.find_all(*_COMPARISONS):
        col, sub = cmp.this, cmp.expression
        if isinstance(col, exp.Subquery):
            col, sub = sub, col
        if not isinstance(col, exp.Column) or not isinstance(sub, exp.Subquery):
            continue
        query = sub.this
        if not isinstance(query, exp.Select) or len(query.expressions) != 1:
            continue
        stat = query.expressions[0].unalias()
        arg = stat.this if isinstance(stat, _STATISTICS) else None
        if isinstance(arg, exp.Column) and arg.name.casefold() != col.name.casefold():
            found.append(cmp.sql())
    return found


#: Dialects where ``a.b`` in a query always qualifies a column by its source; BigQuery,
#: Snowflake, DuckDB and Spark also read it as a field of a record column.
_PLAIN_QUALIFIERS = frozenset({"sqlite", "mysql", "tsql", "postgres", "oracle"})


def unknown_qualifiers(tree: exp.Expr, dialect: str | None, w: Walk | None = None) -> list[str]:
    """Columns (as SQL) qualified by a name that no table, alias, subquery or CTE of the
    query has, in a dialect where a qualifier can only be a source. ``w``: the spec's walk
    of the tree (its columns, tables, SELECTs and CTEs), else the tree is searched.

    >>> import sqlglot
    >>> q = "SELECT c.name FROM countries AS c JOIN makers AS m ON c.id = fiat.country"
    >>> unknown_qualifiers(sqlglot.parse_one(q), "sqlite")
    ['fiat.country']
    >>> q = "SELECT t.a FROM (SELECT a FROM x) AS t JOIN y ON y.k = t.a"
    >>> unknown_qualifiers(sqlglot.parse_one(q), "sqlite")
    []
    """
    if (dialect or "").casefold() not in _PLAIN_QUALIFIERS:
        return []
    if w is None:
        w = Walk(
            selects=list(tree.find_all(exp.Select)),
            columns=list(tree.find_all(exp.Column)),
            tables=list(tree.find_all(exp.Table)),
            ctes=list(tree.find_all(exp.CTE)),
        )
    qualified = [c for c in w.columns if c.table]
    if not qualified:
        return []
    names = {t.name.casefold() for t in w.tables} | {t.alias.casefold() for t in w.tables}
    names |= {c.alias.casefold() for c in w.ctes}
    for sel in w.selects:  # derived tables, UNNEST … AS u, table functions
        names |= {s.alias_or_name.casefold() for s in own_sources(sel)}
    unknown = [c.sql() for c in qualified if c.table.casefold() not in names]
    if unknown or len(w.selects) < 2:
        return unknown
    return _unknown_in_scopes(tree)  # a name of another branch: ``fiat`` of the UNION's right


def _unknown_in_scopes(tree: exp.Expr) -> list[str]:
    """Columns qualified by a name that no source of their scope, or of a scope around it
    (a correlated subquery), has."""
    unknown: list[str] = []
    for scope in traverse_scope(tree):
        names: set[str] = set()
        around: Scope | None = scope
        while around is not None:
            for key, source in around.sources.items():
                names.add(key.casefold())
                if isinstance(source, exp.Table):
                    names.add(source.name.casefold())
            around = around.parent
        unknown += [c.sql() for c in scope.columns if c.table and c.table.casefold() not in names]
    return unknown


def text_compared_to_number(selects: Sequence[exp.Select], dialect: str | None) -> list[str]:
    """Comparisons (as SQL) of SQLite's ``strftime(…)``, which is text, with an unquoted
    number: ``strftime('%Y', d) = 2010`` is never true (SQLite orders every number before
    every text), nor ``IN (1, 2)``.

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT 1 FROM t WHERE strftime('%Y', d) = 2010", "sqlite")
    >>> text_compared_to_number([q], "sqlite"), text_compared_to_number([q], "duckdb")
    (["STRFTIME('%Y', d) = 2010"], [])
    >>> q = sqlglot.parse_one("SELECT 1 FROM t WHERE strftime('%Y', d) = '2010'", "sqlite")
    >>> text_compared_to_number([q], "sqlite")
    []
    """
    if (dialect or "").casefold() != "sqlite":
        return []
    found: list[str] = []
    for root in _condition_roots(selects):
        for cmp in root.find_all(*_COMPARISONS, exp.In, exp.Between):
            if not isinstance(cmp.this, exp.TimeToStr):
                continue
            others = [v for k, v in cmp.args.items() if k != "this" and isinstance(v, exp.Expr)]
            others += list(cmp.args.get("expressions") or ())
            if any(isinstance(o, exp.Literal) and not o.is_string for o in others):
                found.append(cmp.sql("sqlite"))
    return found


def null_compared(selects: Sequence[exp.Select]) -> list[str]:
    """Conditions (as SQL) that compare with NULL by ``=``, ``<>`` or an order: never true,
    since NULL is tested with ``IS NULL``.

    >>> import sqlglot
    >>> null_compared([sqlglot.parse_one("SELECT a FROM t WHERE b = NULL")])
    ['b = NULL']
    >>> null_compared([sqlglot.parse_one("SELECT a FROM t WHERE b IS NULL")])
    []
    """
    return [
        cmp.sql()
        for root in _condition_roots(selects)
        for cmp in root.find_all(*_COMPARISONS)
        if isinstance(cmp.this, exp.Null) or isinstance(cmp.expression, exp.Null)
    ]


def condition_flags(tree: exp.Expr, dialect: str | None, w: Walk) -> dict[str, Any]:
    """The spec flags of this module (``redundant_bounds``, ``other_aggregate_compared``,
    ``unknown_qualifiers``, ``text_compared_to_number``) and ``rolled_up``
    (:func:`stef.sql.bare.rolls_up` of any of the query's SELECTs), from the spec's walk
    ``w`` of the tree as written, before the spec renders it."""
    return {
        "redundant_bounds": redundant_bounds(tree, w.selects),
        "other_aggregate_compared": other_aggregate_compared(tree) if w.subqueries else [],
        "unknown_qualifiers": unknown_qualifiers(tree, dialect, w),
        "text_compared_to_number": text_compared_to_number(w.selects, dialect),
        "null_compared": null_compared(w.selects),
        "rolled_up": any(rolls_up(sel) for sel in w.selects),
    }

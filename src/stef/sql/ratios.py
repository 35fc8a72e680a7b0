"""A share computed as a ratio of whole numbers that the dialect truncates to 0 or 1.

``COUNT(*) FILTER (WHERE country = 'France') / COUNT(*)`` in PostgreSQL, SQLite or T-SQL
divides two integers: the part is never larger than the whole, so the result is 0 (or 1
when every row counts). A CAST, a decimal literal or a scaling product in the numerator
(``100.0 * …``, ``… * 100``) keeps the fraction; ``… / COUNT(*) * 100`` does not (the
division truncates first).

>>> import sqlglot
>>> tree = sqlglot.parse_one("SELECT COUNT(CASE WHEN c = 1 THEN 1 END) / COUNT(*) FROM u")
>>> truncated_share(tree, "sqlite")
True
>>> truncated_share(sqlglot.parse_one("SELECT SUM(x) / COUNT(*) FROM u"), "sqlite")
False
"""

from __future__ import annotations

from sqlglot import exp

#: Dialects whose ``/`` truncates a division of integers (``integer_division`` too).
INTEGER_DIVISION_DIALECTS = frozenset({"sqlite", "postgres", "tsql", "redshift", "trino", "presto"})
#: Operands that make a division inexact.
_INEXACT = (exp.Cast, exp.TryCast, exp.Avg, exp.Sqrt, exp.Ln, exp.Log, exp.Exp, exp.Pow)


#: Operators and wrappers whose result is whole when every operand is.
_WHOLE_OPS = (exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.Neg, exp.Paren, exp.Sum, exp.Max, exp.Min)


def integral(node: exp.Expr | None, tsql: bool = False) -> bool:
    """Is ``node`` a whole number whatever the schema: a count, a length, an integer literal,
    a CASE or IF whose results all are, or sums, products and differences of them (an AVG of
    them too in T-SQL)? A column's type is unknown: no column is.

    >>> import sqlglot
    >>> integral(sqlglot.parse_one("SUM(CASE WHEN a THEN 1 ELSE 0 END) * 100"))
    True
    >>> integral(sqlglot.parse_one("SUM(amount)")), integral(sqlglot.parse_one("COUNT(*) + 0.5"))
    (False, False)
    """
    if node is None:
        return True  # a CASE without ELSE: NULL
    if isinstance(node, (exp.Count, exp.Length)):
        return True
    if isinstance(node, exp.Literal):
        return not node.is_string and node.this.isdigit()
    if isinstance(node, exp.Filter):
        return integral(node.this, tsql)
    if (results := branch_results(node)) is not None:
        return all(integral(r, tsql) for r in results)
    if isinstance(node, _WHOLE_OPS) or (tsql and isinstance(node, exp.Avg)):
        parts = [v for k, v in node.args.items() if k in ("this", "expression")]
        return bool(parts) and all(integral(v, tsql) for v in parts if isinstance(v, exp.Expr))
    return False


def branch_results(node: exp.Expr) -> list[exp.Expr | None] | None:
    """The results of a CASE's branches and its ELSE, or of an IF/IIF's two sides (a
    missing ELSE as None); None for any other node.

    >>> import sqlglot
    >>> [r.sql() for r in branch_results(sqlglot.parse_one("CASE WHEN a THEN 1 ELSE 0 END"))]
    ['1', '0']
    """
    if isinstance(node, exp.Case):
        results = [i.args.get("true") for i in node.args.get("ifs") or ()]
        results.append(node.args.get("default"))
        return results
    if isinstance(node, exp.If):
        return [node.args.get("true"), node.args.get("false")]
    return None


def _flag_of_rows(node: exp.Expr) -> bool:
    """A CASE or IF whose results are the integers 0 and 1 (``CASE WHEN … THEN 1 ELSE 0``)."""
    results = branch_results(node)
    return results is not None and all(
        r is None or (isinstance(r, exp.Literal) and not r.is_string and r.this in ("0", "1"))
        for r in results
    )


def _part_count(node: exp.Expr) -> bool:
    """A count of some of the rows: ``COUNT(…) FILTER (…)``, ``COUNT(CASE …)``,
    ``SUM(CASE WHEN … THEN 1 ELSE 0 END)``, ``SUM(IIF(…, 1, 0))``."""
    if isinstance(node, exp.Filter):
        return isinstance(node.this, exp.Count)
    if isinstance(node, exp.Count):
        return isinstance(node.this, (exp.Case, exp.If))
    return isinstance(node, exp.Sum) and _flag_of_rows(node.this)


def _whole_count(node: exp.Expr) -> bool:
    """A count of rows: ``COUNT(*)``, ``COUNT(x)``, a filtered count."""
    return isinstance(node, exp.Count) or (
        isinstance(node, exp.Filter) and isinstance(node.this, exp.Count)
    )


def truncated_share(tree: exp.Expr, dialect: str | None) -> bool:
    """Does ``tree`` divide a count of some rows by a count of rows, both integers, in a
    dialect that truncates the result (see the module doc)?"""
    if (dialect or "").lower() not in INTEGER_DIVISION_DIALECTS:
        return False
    for div in tree.find_all(exp.Div):
        if not (_part_count(div.this) and _whole_count(div.expression)):
            continue
        inexact = any(
            isinstance(n, _INEXACT)
            or (isinstance(n, exp.Literal) and not n.is_string and "." in n.this)
            for n in div.walk()
        )
        if not inexact:
            return True
    return False


def division_sides(divs: list[exp.Div]) -> list[list[list[str]]]:
    """The column names (lower case) of each division's two sides, in reading order
    (the walk's divisions): ``SUM(clicks) / SUM(impressions)`` is
    ``[['clicks'], ['impressions']]``. A side with no column (``/ 100.0``) is empty.

    >>> import sqlglot
    >>> tree = sqlglot.parse_one("SELECT SUM(clicks) / NULLIF(SUM(impressions), 0) FROM t")
    >>> division_sides(list(tree.find_all(exp.Div)))
    [[['clicks'], ['impressions']]]
    """
    return [
        [
            [c.name.casefold() for c in side.find_all(exp.Column)] if side is not None else []
            for side in (div.this, div.expression)
        ]
        for div in divs
    ]

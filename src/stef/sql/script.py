"""SQL scripts: a query behind variable declarations is scored on that query.

Real users' T-SQL (and Snowflake or BigQuery scripting) often declares variables before
the query it runs: ``DECLARE @UserId int = 17034  SELECT … WHERE UserId = @UserId``.
Without semicolons sqlglot cannot split such a script and falls back to an opaque
command. This module splits it on sqlglot's tokens — a new statement begins at
``DECLARE`` or ``SET``, or at a ``SELECT``/``WITH`` that does not continue the statement
before it, outside parentheses — and accepts it when every statement but the last only
sets variables (``DECLARE``, ``SET``, ``SELECT @x = …``) and the last is a query.

>>> from stef.sql.parse import dialect_tools
>>> tsql = dialect_tools("tsql")
>>> split_script("DECLARE @n int = 5\\nSELECT TOP 5 a FROM t WHERE b > @n", tsql)
['DECLARE @n int = 5', 'SELECT TOP 5 a FROM t WHERE b > @n']
>>> split_script("SELECT a FROM t UNION ALL SELECT b FROM u", tsql) is None
True
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, TypeGuard

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

if TYPE_CHECKING:
    from stef.sql.parse import DialectTools

#: Tokens that start a statement wherever they stand outside parentheses.
_STATEMENT_HEADS = {TokenType.DECLARE, TokenType.SET}

#: Tokens after which a SELECT continues the statement (set operations, INSERT … SELECT).
_CONTINUES = {
    TokenType.UNION,
    TokenType.INTERSECT,
    TokenType.EXCEPT,
    TokenType.ALL,
    TokenType.DISTINCT,
    TokenType.L_PAREN,
    TokenType.ALIAS,
    TokenType.INSERT,
    TokenType.INTO,
    TokenType.TABLE,
}

#: Most statements a script may hold before its query.
MAX_PREAMBLE = 50


def _starts(tokens: list[Token]) -> list[int]:
    """Indices of the tokens that begin a statement."""
    starts = [0]
    depth = 0
    for i, tok in enumerate(tokens):
        tt = tok.token_type
        if tt == TokenType.L_PAREN:
            depth += 1
        elif tt == TokenType.R_PAREN:
            depth = max(depth - 1, 0)
        if i == 0 or depth:
            continue
        prev = tokens[i - 1].token_type
        nxt = tokens[i + 1].token_type if i + 1 < len(tokens) else None
        if (
            prev == TokenType.SEMICOLON
            or (tt in _STATEMENT_HEADS and prev != TokenType.UPDATE)
            or (tt == TokenType.SELECT and prev not in _CONTINUES)
            or (tt == TokenType.WITH and nxt != TokenType.L_PAREN)  # not a table hint
        ):
            starts.append(i)
    return sorted(set(starts))


def _sets_variables(node: exp.Expr | None) -> bool:
    """A statement that only declares or assigns variables."""
    if isinstance(node, (exp.Declare, exp.Set)):
        return True
    if isinstance(node, exp.Select) and node.expressions:
        return all(
            isinstance(e, exp.EQ) and isinstance(e.this, (exp.Parameter, exp.Placeholder))
            for e in node.expressions
        )
    return False


def split_script(sql: str, tools: DialectTools) -> list[str] | None:
    """The statements of a variable-setting script ending in a query, or None.

    None when ``sql`` is not such a script: one statement, a statement that does more
    than set variables before the query, or a last statement that is not a query.
    """
    try:
        tokens = tools.tokenizer.tokenize(sql)
    except Exception:
        return None
    starts = _starts(tokens)
    if len(starts) < 2 or len(starts) > MAX_PREAMBLE:
        return None
    bounds = [tokens[i].start for i in starts] + [len(sql)]
    parts = [sql[a:b].strip().rstrip(";").strip() for a, b in pairwise(bounds)]
    parts = [p for p in parts if p]
    if len(parts) < 2:
        return None
    for part in parts[:-1]:
        try:
            statements = tools.parser.parse(tools.tokenizer.tokenize(part), part)
        except Exception:
            return None
        if not all(_sets_variables(s) for s in statements if s is not None):
            return None
    return parts


def bindings(parts: list[str], tools: DialectTools) -> dict[str, exp.Expr]:
    """Variables a script's preamble sets to a literal or another value that reads no table
    (``DECLARE @n int = 5``, ``SET @tag = 'excel'``, ``DECLARE @d date = GETDATE() - 1``), by
    lower-cased name; the last assignment wins.

    >>> from stef.sql.parse import dialect_tools
    >>> b = bindings(["DECLARE @UserId int = 17034", "SET @tag = 'excel'"], dialect_tools("tsql"))
    >>> {k: v.sql() for k, v in b.items()}
    {'userid': '17034', 'tag': "'excel'"}
    """
    out: dict[str, exp.Expr] = {}
    for part in parts:
        try:
            statements = tools.parser.parse(tools.tokenizer.tokenize(part), part)
        except Exception:
            continue
        for st in statements:
            for item in st.find_all(exp.DeclareItem) if st is not None else ():
                targets = item.this if isinstance(item.this, list) else [item.this]
                value = item.args.get("default")
                if _constant(value) and len(targets) == 1:
                    out[targets[0].name.casefold()] = value
            for eq in st.find_all(exp.SetItem) if st is not None else ():
                pair = eq.this
                if (
                    isinstance(pair, exp.EQ)
                    and _constant(pair.expression)
                    and isinstance(pair.this, exp.Parameter)
                ):
                    out[pair.this.name.casefold()] = pair.expression
    return out


#: The most nodes a variable's value may have to be put in the query in its place.
_MAX_VALUE_NODES = 40


def _constant(value: object) -> TypeGuard[exp.Expr]:
    """A value that reads no table: a literal, or an expression of literals and the clock
    (``CAST(DATEADD(day, -1, GETDATE()) AS date)``), small enough to inline."""
    if isinstance(value, exp.Literal):
        return True
    if not isinstance(value, exp.Expr):
        return False
    nodes = list(value.walk())
    return len(nodes) <= _MAX_VALUE_NODES and not any(
        isinstance(n, (exp.Column, exp.Query, exp.Parameter, exp.Placeholder)) for n in nodes
    )


def bind(tree: exp.Expr, values: dict[str, exp.Expr]) -> None:
    """Replace each variable of ``tree`` set in ``values`` by its value, in place."""
    for param in list(tree.find_all(exp.Parameter)):
        value = values.get(param.name.casefold())
        if value is not None:
            literal = value.copy()
            literal.meta.update(param.meta)  # the variable's place in the query's text
            param.replace(literal)


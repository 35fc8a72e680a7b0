"""Parse one SQL query with sqlglot, or say precisely why it cannot be parsed.

Every failure is a :class:`stef.errors.SqlError` whose ``status`` names the cause
(``empty_sql``, ``sql_too_large``, ``sql_too_complex``, ``sql_unparseable``, ``sql_not_query``,
``sql_multiple_statements``, ``sql_unsupported``); nothing is silently accepted.

>>> parse_query("SELECT a FROM t", "sqlite").tree.sql()
'SELECT a FROM t'
>>> parse_query("DROP TABLE t").tree
Traceback (most recent call last):
...
stef.errors.SqlError: expected a SELECT query, got a DROP statement
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, Dialects
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.generator import Generator
from sqlglot.parser import Parser
from sqlglot.tokens import Token, Tokenizer, TokenType

from stef.errors import SqlError
from stef.sql.script import bind, bindings, split_script

#: Longest SQL text (characters) STEF will parse; longer input is ``sql_too_large``.
MAX_SQL_CHARS = 200_000
#: Deepest nesting (parentheses, CASE … END, chains of unary operators) STEF will parse;
#: deeper input is ``sql_too_complex``. sqlglot's compiled parser recurses once or more per
#: level and overflows the C stack (a segfault) somewhere past a few thousand.
MAX_NESTING = 200
_OPEN = frozenset({TokenType.L_PAREN, TokenType.CASE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.END})
_UNARY = frozenset({TokenType.NOT, TokenType.DASH, TokenType.PLUS, TokenType.TILDE})

_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.\w+, text: (.*?), line: .*?>")
_CLASS_REPR = re.compile(r"<class 'sqlglot\.[\w.]*?(\w+)'>")
#: Statements that write; a query holding one (in a CTE or subquery) is refused.
_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop)
#: What a write or an ``INTO`` is written with: sqlglot builds those nodes only after one of
#: these keywords (Teradata also spells ``INS``, ``UPD``, ``DEL``), and the tokenizer reads
#: keywords through ``str.upper()``; SQL in which none occurs needs no search of its tree.
_WRITE_WORDS = ("INS", "INTO", "UPD", "DEL", "MERGE", "CREATE", "DROP", "REPLACE")
_KNOWN_DIALECTS = ", ".join(sorted(d.value for d in Dialects if d.value))


@dataclass
class DialectTools:
    """A dialect with a tokenizer, parser and generator, reused across calls in one thread."""

    dialect: Dialect
    tokenizer: Tokenizer
    parser: Parser
    generator: Generator


_LOCAL = threading.local()


def dialect_tools(dialect: str | None) -> DialectTools:
    """Cached (per thread) sqlglot machinery for ``dialect``; unknown names → ``SqlError``."""
    cache: dict[str | None, DialectTools] | None = getattr(_LOCAL, "tools", None)
    if cache is None:
        cache = _LOCAL.tools = {}
    tools = cache.get(dialect)
    if tools is None:
        dia = get_dialect(dialect)
        tools = DialectTools(
            dia,
            dia.tokenizer(),
            dia.parser(),
            dia.generator(unsupported_level=ErrorLevel.IGNORE),
        )
        if len(cache) > 64:
            cache.clear()
        cache[dialect] = tools
    return tools


def _forget_tools(dialect: str | None) -> None:
    cache = getattr(_LOCAL, "tools", None)
    if cache is not None:
        cache.pop(dialect, None)


@dataclass
class ParsedSql:
    """One parsed statement with the tokens it came from (their positions give fragments)."""

    sql: str
    tree: exp.Expr
    tokens: list[Token]
    tools: DialectTools
    dialect_name: str | None


def get_dialect(dialect: str | None) -> Dialect:
    """The sqlglot dialect named ``dialect`` (``None`` → sqlglot's generic dialect).

    >>> get_dialect("nosuch")
    Traceback (most recent call last):
    ...
    stef.errors.SqlError: unknown SQL dialect 'nosuch'; known: athena, bigquery, ...
    """
    if dialect is not None and not isinstance(dialect, str):
        raise SqlError("sql_unsupported", f"dialect must be a string, got {type(dialect).__name__}")
    try:
        return Dialect.get_or_raise(dialect or None)
    except Exception:
        raise SqlError(
            "sql_unsupported", f"unknown SQL dialect {dialect!r}; known: {_KNOWN_DIALECTS}"
        ) from None


def check_text(sql: object) -> str:
    """Reject non-strings, oversized and empty SQL before any parsing."""
    if not isinstance(sql, str):
        raise SqlError("sql_unparseable", f"SQL must be a string, got {type(sql).__name__}")
    if len(sql) > MAX_SQL_CHARS:
        raise SqlError(
            "sql_too_large",
            f"SQL is {len(sql):,} characters long; the limit is {MAX_SQL_CHARS:,}",
        )
    if not sql.strip():
        raise SqlError("empty_sql", "SQL is empty")
    return sql


def _second_statement(err: ParseError) -> str | None:
    """The message for a query followed by another with no ``;`` between (a T-SQL batch:
    ``SELECT … FROM Users`` then ``SELECT … FROM Posts``), or None for any other error.

    >>> import sqlglot
    >>> try:
    ...     sqlglot.parse("SELECT a FROM t SELECT b FROM u", read="tsql")
    ... except ParseError as e:
    ...     print(_second_statement(e))
    a second statement starts at line 1, col 22 with no ';' before it; STEF scores exactly one query
    """
    first = err.errors[0] if err.errors else {}
    desc = str(first.get("description") or "")
    near = str(first.get("highlight") or "").upper()
    if not desc.startswith("Invalid expression / Unexpected token") or near not in (
        "SELECT",
        "WITH",
    ):
        return None
    return (
        f"a second statement starts at line {first.get('line')}, col {first.get('col')} "
        "with no ';' before it; STEF scores exactly one query"
    )


def _parse_error_message(err: ParseError) -> str:
    first = err.errors[0] if err.errors else {}
    desc = _TOKEN_REPR.sub(lambda m: repr(m.group(1)), str(first.get("description") or err))
    desc = _CLASS_REPR.sub(lambda m: m.group(1), desc)
    desc = desc.split("\n", 1)[0][:200]
    line, col = first.get("line"), first.get("col")
    where = f" at line {line}, col {col}" if line is not None else ""
    near = str(first.get("highlight") or "")[:40]
    near = f" near {near!r}" if near else ""
    return f"cannot parse SQL: {desc}{where}{near}"


def nesting(tokens: list[Token]) -> int:
    """How deep ``tokens`` nest: open parentheses and CASEs, plus a run of unary operators.

    >>> from sqlglot.tokens import Tokenizer
    >>> nesting(Tokenizer().tokenize("SELECT (1 + (2)), CASE WHEN NOT NOT a THEN 1 END"))
    3
    """
    depth = deepest = run = 0
    for tok in tokens:
        tt = tok.token_type
        if tt in _OPEN:
            depth += 1
        elif tt in _CLOSE:
            depth = depth - 1 if depth > 0 else 0
        if tt in _UNARY:
            run += 1
        else:
            run = 0
        if depth + run > deepest:
            deepest = depth + run
    return deepest


def check_nesting(tokens: list[Token]) -> None:
    """Refuse SQL nested deeper than :data:`MAX_NESTING` before it reaches the parser
    (each token deepens the nesting by one at most, so fewer tokens need no count)."""
    if len(tokens) <= MAX_NESTING:
        return
    depth = nesting(tokens)
    if depth > MAX_NESTING:
        raise SqlError(
            "sql_too_complex",
            f"SQL is nested {depth:,} levels deep (parentheses, subqueries, CASE); "
            f"the limit is {MAX_NESTING}",
        )


def tokenize_and_parse(
    sql: str, dialect: str | None, into: type[exp.Expr] | None = None
) -> tuple[list[Token], list[exp.Expr | None], DialectTools]:
    """Tokenize once and parse those tokens (as ``into`` if given); errors become ``SqlError``."""
    tools = dialect_tools(dialect)
    try:
        tokens = tools.tokenizer.tokenize(sql)
        check_nesting(tokens)
        parser = tools.parser
        statements = parser.parse_into(into, tokens, sql) if into else parser.parse(tokens, sql)
    except SqlError:
        raise
    except RecursionError:
        _forget_tools(dialect)
        raise SqlError(
            "sql_unparseable", "cannot parse SQL: it is nested too deeply (recursion limit)"
        ) from None
    except ParseError as err:
        if into is None and (juxtaposed := _second_statement(err)) is not None:
            raise SqlError("sql_multiple_statements", juxtaposed) from None
        raise SqlError("sql_unparseable", _parse_error_message(err)) from None
    except TokenError as err:
        _forget_tools(dialect)
        raise SqlError("sql_unparseable", f"cannot tokenize SQL: {str(err)[:200]}") from None
    except Exception as err:  # sqlglot bugs on hostile input must not crash a batch
        _forget_tools(dialect)
        raise SqlError(
            "sql_unparseable", f"cannot parse SQL: {type(err).__name__}: {str(err)[:200]}"
        ) from None
    return tokens, statements, tools


def _describe(node: exp.Expr) -> str:
    if isinstance(node, exp.Command):
        return f"{node.name.upper()} command"
    if isinstance(node, exp.Condition):
        return f"a bare {node.key.upper()} expression, not a statement"
    article = "an" if node.key[:1].lower() in "aeiou" else "a"
    return f"{article} {node.key.upper()} statement"


def parse_query(sql: str, dialect: str | None = None) -> ParsedSql:
    """Parse exactly one SELECT-like query (SELECT, set operation, parenthesised query).

    A script that only declares or sets variables before its query (``DECLARE @n int = 5
    SELECT …``) is parsed as that final query (:mod:`stef.sql.script`).
    """
    sql = check_text(sql)
    upper = sql.upper()  # the whole script: variables bound below come from its start
    may_write = any(map(upper.__contains__, _WRITE_WORDS))
    tokens, parsed, tools = tokenize_and_parse(sql, dialect or None)
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    if not statements:
        raise SqlError("empty_sql", "SQL holds no statement (only comments or semicolons)")
    if len(statements) > 1 or isinstance(statements[0], exp.Command):
        parts = split_script(sql, tools)
        if parts is not None:
            values = bindings(parts[:-1], tools)
            sql = parts[-1]
            tokens, parsed, tools = tokenize_and_parse(sql, dialect or None)
            statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
            for st in statements:
                bind(st, values)  # the query's variables as the values the script set
    if len(statements) > 1:
        raise SqlError(
            "sql_multiple_statements",
            f"SQL holds {len(statements)} statements; STEF scores exactly one query",
        )
    tree = statements[0]
    if isinstance(tree, exp.Command):
        raise SqlError(
            "sql_unsupported",
            "sqlglot does not understand this statement "
            f"(parsed as an opaque command: {_command_head(tree)!r})",
        )
    if not isinstance(tree, exp.Query) or isinstance(tree, exp.Values):
        raise SqlError("sql_not_query", f"expected a SELECT query, got {_describe(tree)}")
    # one walk finds both (nearly every query has neither); a write is reported before INTO
    found = tree.find(*_WRITES, exp.Into) if may_write else None
    if found is not None:
        writes = found if not isinstance(found, exp.Into) else tree.find(*_WRITES)
        if writes is not None:
            raise SqlError(
                "sql_not_query",
                f"the query writes data: it holds {_describe(writes)} (in a CTE or subquery)",
            )
        raise SqlError("sql_not_query", "the query writes data: SELECT … INTO creates a table")
    first = tree
    while isinstance(first, (exp.SetOperation, exp.Subquery)):
        first = first.this
    if isinstance(first, exp.Select) and not first.expressions:
        raise SqlError("sql_unparseable", "cannot parse SQL: SELECT has no output columns")
    if _may_name_aggregates(sql, upper) and _UNNAMED_AGGREGATE_TEXT.search(sql):
        name_aggregates(tree)
    return ParsedSql(sql, tree, tokens, tools, dialect or None)


#: Aggregate functions of T-SQL that sqlglot leaves as anonymous calls, by the node of
#: the aggregate they are (a population standard deviation, a variance, a big count).
_UNNAMED_AGGREGATES: dict[str, type[exp.AggFunc]] = {
    "STDEVP": exp.StddevPop,
    "VAR": exp.Variance,
    "VARP": exp.VariancePop,
    "COUNT_BIG": exp.Count,
}
_UNNAMED_AGGREGATE_TEXT = re.compile(r"\b(?:STDEVP|VARP?|COUNT_BIG)\s*\(", re.IGNORECASE)
#: A word each match of :data:`_UNNAMED_AGGREGATE_TEXT` holds, upper-cased.
_UNNAMED_AGGREGATE_WORDS = ("VAR", "STDEVP", "COUNT_BIG")


def _may_name_aggregates(sql: str, upper: str) -> bool:
    """May :data:`_UNNAMED_AGGREGATE_TEXT` match ``sql``? ``upper`` is ``str.upper()`` of the
    script ``sql`` was cut from (or of ``sql``). On ASCII text ``re.IGNORECASE`` matches
    what ``str.upper()`` spells the same, so a match needs one of the words; the pattern
    opens with ``\\b`` and would be tried at every position (docs/performance.md, session
    17). Other text is searched.

    >>> _may_name_aggregates("SELECT x FROM t", "SELECT X FROM T")
    False
    >>> _may_name_aggregates("select varp(x) from t", "SELECT VARP(X) FROM T")
    True
    """
    return not sql.isascii() or any(map(upper.__contains__, _UNNAMED_AGGREGATE_WORDS))


def name_aggregates(tree: exp.Expr) -> None:
    """Replace the anonymous calls of :data:`_UNNAMED_AGGREGATES` with their aggregate
    nodes, so that every reading of the tree sees an aggregate (in place).

    >>> import sqlglot
    >>> t = sqlglot.parse_one("SELECT STDEVP(score), VAR(score) FROM posts", read="tsql")
    >>> name_aggregates(t)
    >>> [type(e).__name__ for e in t.expressions]
    ['StddevPop', 'Variance']
    """
    for node in list(tree.find_all(exp.Anonymous)):
        cls = _UNNAMED_AGGREGATES.get(node.name.upper())
        if cls is not None and len(node.expressions) == 1:
            node.replace(cls(this=node.expressions[0]))


def _command_head(tree: exp.Command) -> str:
    """The first words of an opaque command (its ``expression`` may be a node or a string)."""
    rest = tree.expression
    tail = rest.name if isinstance(rest, exp.Expr) else str(rest or "")
    return f"{tree.name} {tail}".strip()[:60]

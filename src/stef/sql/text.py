"""Two views of a SQL fragment: its canonical text and its original text.

*Canonical* text erases surface style: keyword case, identifier quoting and case,
whitespace, table aliases/qualifiers (``T1.name`` → ``name``) and column synonyms, so
``Count ( * )`` and ``COUNT(*)`` both read ``count(*)``. It is sqlglot's own rendering
in the dialect the SQL was read in, lower-cased except inside string literals.
Rather than copying the tree, :meth:`TreeText.render` swaps the ``args`` of the few
nodes under the fragment that carry surface style (columns, quoted identifiers, table
aliases, string literals) for canonical ones, once, and :meth:`TreeText.restore` puts
the originals back, so the caller's tree is unchanged afterwards. Plain columns, stars
and literals are rendered without the generator at all.

*Original* text is the slice of the SQL string a fragment came from, found from the
token positions sqlglot records on leaves and widened over parentheses and keywords.

>>> from stef.sql.parse import parse_query
>>> p = parse_query('SELECT Count ( * ), T1."Name" FROM people AS T1', "sqlite")
>>> tt = TreeText(p.sql, p.tokens, p.tools.generator)
>>> infos = [tt.add_column(c, normalize_column(c.name)) for c in p.tree.find_all(exp.Column)]
>>> [tt.render(e) for e in p.tree.expressions], [tt.original(e) for e in p.tree.expressions]
(['count(*)', 'name'], ['Count ( * )', 'T1."Name"'])
>>> tt.restore(); p.tree.sql()
'SELECT COUNT(*), T1."Name" FROM people AS T1'
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from sqlglot import exp
from sqlglot.generator import Generator
from sqlglot.tokens import Token, TokenType

from stef.spec import normalize_column
from stef.sql.nodes import NATIVE, push_children

_SENTINEL = re.compile("(['\"]?)\ue000(\\d+)\ue001\\1")

#: Tokens that end a clause item (a projection, a WHERE conjunct, an ORDER BY key).
_BOUNDARY = frozenset(
    {
        TokenType.COMMA,
        TokenType.AND,
        TokenType.OR,
        TokenType.SEMICOLON,
        TokenType.SELECT,
        TokenType.FROM,
        TokenType.WHERE,
        TokenType.GROUP_BY,
        TokenType.HAVING,
        TokenType.ORDER_BY,
        TokenType.LIMIT,
        TokenType.OFFSET,
        TokenType.FETCH,
        TokenType.ON,
        TokenType.USING,
        TokenType.JOIN,
        TokenType.LEFT,
        TokenType.RIGHT,
        TokenType.INNER,
        TokenType.OUTER,
        TokenType.FULL,
        TokenType.CROSS,
        TokenType.NATURAL,
        TokenType.UNION,
        TokenType.INTERSECT,
        TokenType.EXCEPT,
        TokenType.WITH,
        TokenType.DISTINCT,
        TokenType.QUALIFY,
        TokenType.WINDOW,
        TokenType.TOP,
        TokenType.INTO,
        TokenType.STRAIGHT_JOIN,
    }
)
_QUERY_START = frozenset({TokenType.SELECT, TokenType.WITH})
_START = attrgetter("start")

#: Aggregates whose one-argument call renders as ``name(arg)`` in every dialect.
_SIMPLE_AGGS: dict[type, str] = {
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
}
_SIMPLE_AGG_KEYS = frozenset({"this", "expressions", "big_int"})

#: Binary operators rendered ``left op right`` once a dialect is shown to render them so.
_BINARY: dict[type, str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.DPipe: "||",
}
_CAST_KEYS = frozenset({"this", "to"})

#: (generator class, node class, flags) → the text template the generator was seen to use
#: on a probe, or ``None`` when its output is not the plain ``a op b`` / ``CAST(a AS t)``.
_CALIBRATED: dict[tuple[Any, ...], str | None] = {}


@dataclass(slots=True)
class ColumnInfo:
    """What one ``exp.Column`` means, captured before canonicalisation.

    ``name`` is canonical; ``raw`` the written name, lower-cased; ``qualifier`` the
    lower-cased table qualifier (or ``None``); ``string`` the text of a double-quoted
    identifier read as a string literal (SQLite / MySQL habit, e.g. ``sex = "M"``), else
    ``None``; ``span`` its character span.
    """

    name: str
    raw: str
    qualifier: str | None
    string: str | None
    span: tuple[int, int] | None


def quote_string(text: str) -> str:
    """Canonical rendering of a string literal.

    >>> quote_string("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


class TreeText:
    """Canonical and original text of fragments of one parsed statement."""

    def __init__(
        self,
        sql: str,
        tokens: list[Token],
        generator: Generator,
        synonyms: dict[str, str] | None = None,
    ) -> None:
        self.sql = sql
        self.tokens = tokens
        self.synonyms = synonyms
        self.columns: dict[int, ColumnInfo] = {}
        self.literal_text: dict[int, str] = {}
        self._gen = generator
        generator.unsupported_messages.clear()  # the generator is reused: keep it from growing
        self._undo: list[tuple[exp.Expr, dict[str, Any]]] = []
        self._swapped: set[int] = set()
        self._strings: list[str] = []
        self._starts: list[int] | None = None
        self._match: list[int] | None = None
        self._parens: list[int] = []
        self._cache: dict[int, str] = {}
        #: Memoised clause walks (token index → where the walk stops), so that widening
        #: every condition of a flat CASE of thousands of WHENs stays linear.
        self._lstop: dict[int, int] = {}
        self._rstop: dict[int, int] = {}

    # ------------------------------------------------------------------ columns
    def add_column(self, col: exp.Expr, name: str, string: str | None = None) -> ColumnInfo:
        """Record a column's canonical ``name`` (and its string reading, if any)."""
        args = col.args
        this = args.get("this")
        qual = args.get("table")
        span = None
        if this is not None:
            hi = this.meta_get("end")
            if hi is not None:
                lo = this.meta_get("start")
                if qual is not None:
                    lo = qual.meta_get("start", lo)
                span = (lo, hi)
        info = ColumnInfo(
            name,
            this.name.lower() if this is not None else "",
            qual.name.lower() if qual is not None else None,
            string,
            span,
        )
        self.columns[id(col)] = info
        return info

    def literal_value(self, lit: exp.Expr) -> str:
        """The original text of a literal (string literals are swapped while canonical)."""
        text = self.literal_text.get(id(lit))
        return text if text is not None else str(lit.this)

    def canonical_column(self, col: exp.Expr) -> str:
        """Canonical name of a recorded column (``normalize_column`` otherwise)."""
        info = self.columns.get(id(col))
        if info is not None:
            return info.name
        return normalize_column(col.name, self.synonyms)

    # ------------------------------------------------------------- canonical text
    def _swap(self, node: exp.Expr, new_args: dict[str, Any]) -> None:
        self._undo.append((node, node.args))
        node.args = new_args

    def _sentinel(self, text: str) -> str:
        self._strings.append(text)
        return f"\ue000{len(self._strings) - 1}\ue001"

    def _canonical_subtree(self, root: exp.Expr) -> None:
        """Swap surface style out of ``root``'s subtree (undone by :meth:`restore`)."""
        done = self._swapped
        for node in root.dfs():
            cls = type(node)
            if cls is exp.Column:
                if id(node) in done:
                    continue
                done.add(id(node))
                this = node.args.get("this")
                info = self.columns.get(id(node))
                if isinstance(this, exp.Star):
                    self._swap(node, {"this": this})
                elif info is not None and info.string is not None:
                    lit = exp.Literal(this=self._sentinel(info.string), is_string=True)
                    done.add(id(lit))
                    self._swap(node, {"this": lit})
                elif info is not None:
                    self._swap(node, {"this": exp.Var(this=info.name)})
            elif cls is exp.Literal:
                if node.args.get("is_string") and id(node) not in done:
                    done.add(id(node))
                    text = str(node.this)
                    self.literal_text[id(node)] = text
                    args = dict(node.args)
                    args["this"] = self._sentinel(text)
                    self._swap(node, args)
            elif cls is exp.Identifier:
                if node.args.get("quoted") and id(node) not in done:
                    done.add(id(node))
                    args = dict(node.args)
                    args["quoted"] = False
                    self._swap(node, args)
            elif (
                (cls is exp.Table or cls is exp.Subquery)
                and node.args.get("alias") is not None
                and id(node) not in done
                and (cls is exp.Table or isinstance(node.parent, (exp.From, exp.Join)))
            ):
                done.add(id(node))
                args = dict(node.args)
                del args["alias"]
                self._swap(node, args)

    def restore(self) -> None:
        """Put back every ``args`` swapped by :meth:`canonicalize` (latest first)."""
        while self._undo:
            node, args = self._undo.pop()
            node.args = args
        self._swapped.clear()
        self._cache.clear()

    def render(self, node: exp.Expr) -> str:
        """Canonical text of ``node``; call :meth:`restore` when done rendering."""
        key = id(node)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        out = self._fast(node)
        if out is None:
            self._canonical_subtree(node)
            out = self._gen.sql(node).lower()
            if "\ue000" in out:
                out = _SENTINEL.sub(self._unsentinel, out)
        self._cache[key] = out
        return out

    def _unsentinel(self, m: re.Match[str]) -> str:
        i = int(m.group(2))
        return quote_string(self._strings[i]) if i < len(self._strings) else m.group(0)

    def _fast(self, node: exp.Expr) -> str | None:
        """Renderings of the commonest nodes without the generator (same output).

        Columns, stars and literals directly; simple aggregates, arithmetic, parentheses
        and casts by joining their children's renderings, once a probe showed the
        dialect's generator writes them that way (sqlglot's SQLite CAST is slow).
        """
        cls = type(node)
        if cls is exp.Column:
            info = self.columns.get(id(node))
            if info is None:
                return None
            if info.string is not None:
                return quote_string(info.string)
            return info.name
        if cls is exp.Star:
            return "*"
        if cls is exp.Literal:
            if node.args.get("is_string"):
                return quote_string(self.literal_value(node))
            return str(node.this).lower()
        name = _SIMPLE_AGGS.get(cls)
        if name is not None:
            args = node.args
            if args.get("expressions") or any(
                v for k, v in args.items() if k not in _SIMPLE_AGG_KEYS
            ):
                return None
            this = args.get("this")
            prefix = ""
            if type(this) is exp.Distinct:
                inner = this.expressions
                if len(inner) != 1 or any(v for k, v in this.args.items() if k != "expressions"):
                    return None
                this, prefix = inner[0], "distinct "
            if this is None:
                return None
            if type(this) is exp.Literal:
                return None
            return f"{name}({prefix}{self.render(this)})"
        op = _BINARY.get(cls)
        if op is not None:
            return self._fast_binary(node, op)
        if cls is exp.Paren:
            body = node.this  # one type per name (``inner`` above is a list)
            return f"({self.render(body)})" if isinstance(body, exp.Expr) else None
        if cls is exp.Cast:
            return self._fast_cast(node)
        return None

    def _fast_binary(self, node: exp.Expr, op: str) -> str | None:
        args = node.args
        flags = tuple(sorted(k for k, v in args.items() if v and k not in ("this", "expression")))
        key = (type(self._gen), type(node), flags)
        if key not in _CALIBRATED:
            probe = type(node)(
                this=exp.column("a"), expression=exp.column("b"), **{k: args[k] for k in flags}
            )
            _CALIBRATED[key] = "ok" if self._gen.sql(probe) == f"a {op} b" else None
        if _CALIBRATED[key] is None:
            return None
        left, right = args.get("this"), args.get("expression")
        if not isinstance(left, exp.Expr) or not isinstance(right, exp.Expr):
            return None
        return f"{self.render(left)} {op} {self.render(right)}"

    def _fast_cast(self, node: exp.Expr) -> str | None:
        args = node.args
        to = args.get("to")
        if type(to) is not exp.DataType or any(v for k, v in args.items() if k not in _CAST_KEYS):
            return None
        if any(v for k, v in to.args.items() if k not in ("this", "nested")):
            return None  # DECIMAL(10, 2), arrays, user types: leave to the generator
        key = (type(self._gen), exp.Cast, to.this)
        if key not in _CALIBRATED:
            written = self._gen.sql(to)
            probe = exp.Cast(this=exp.column("a"), to=to.copy())
            ok = self._gen.sql(probe) == f"CAST(a AS {written})"
            _CALIBRATED[key] = written.lower() if ok else None
        type_sql = _CALIBRATED[key]
        inner = args.get("this")
        if type_sql is None or not isinstance(inner, exp.Expr):
            return None
        return f"cast({self.render(inner)} as {type_sql})"

    # --------------------------------------------------------------- original text
    def _leaf_span(self, node: exp.Expr) -> tuple[int | None, int | None, bool]:
        lo: int | None = None
        hi: int | None = None
        has_query = False
        stack = [node]
        while stack:
            n = stack.pop()
            if type(n) is exp.Column:
                info = self.columns.get(id(n))
                if info is not None:
                    if info.span is not None:
                        cs, ce = info.span  # ints; ``s`` below may be None
                        lo = cs if lo is None or cs < lo else lo
                        hi = ce if hi is None or ce > hi else hi
                    continue
            s = n.meta_get("start")
            if s is not None:
                e = n.meta_get("end", s)
                lo = s if lo is None or s < lo else lo
                hi = e if hi is None or e > hi else hi
            if n is not node and isinstance(n, exp.Query):
                has_query = True
            if NATIVE:
                push_children(n, stack)
            else:
                stack.extend(n.iter_expressions())
        return lo, hi, has_query

    def _prepare(self) -> tuple[list[int], list[int]]:
        """Token start offsets and matching-parenthesis indexes (computed once)."""
        if self._starts is None or self._match is None:
            toks = self.tokens
            starts = self._starts = list(map(_START, toks))
            lp, rp = TokenType.L_PAREN, TokenType.R_PAREN
            sql = self.sql
            parens: list[int] = []
            for char in "()":  # find paren characters, keep those that are paren tokens
                pos = sql.find(char)
                while pos >= 0:
                    k = bisect_left(starts, pos)
                    if k < len(toks) and starts[k] == pos and toks[k].token_type in (lp, rp):
                        parens.append(k)
                    pos = sql.find(char, pos + 1)
            parens.sort()
            match = [-1] * len(toks)
            stack: list[int] = []
            for k in parens:
                if toks[k].token_type is lp:
                    stack.append(k)
                elif stack:
                    o = stack.pop()
                    match[o], match[k] = k, o
            self._parens = [k for k in parens if match[k] >= 0]
            self._match = match
        return self._starts, self._match

    def _balance(self, i: int, j: int, match: list[int]) -> tuple[int, int]:
        """Widen token span ``[i, j]`` until every parenthesis in it has its partner."""
        parens = self._parens
        while True:
            lo, hi = i, j
            for k in parens[bisect_left(parens, i) : bisect_right(parens, j)]:
                m = match[k]
                lo = m if m < lo else lo
                hi = m if m > hi else hi
            if lo == i and hi == j:
                return i, j
            i, j = lo, hi

    def _left_stop(self, i: int, match: list[int]) -> int:
        """Walk left from token ``i`` over plain tokens and whole parenthesised groups; stop
        where the token before is an opening parenthesis, a clause boundary, or two
        tokens after a TOP (a pure function of ``i``, memoised along the path)."""
        toks, memo = self.tokens, self._lstop
        path: list[int] = []
        while i > 0:
            if i in memo:
                i = memo[i]
                break
            path.append(i)
            tt = toks[i - 1].token_type
            if tt == TokenType.R_PAREN and match[i - 1] >= 0:
                i = match[i - 1]
                continue
            if tt == TokenType.L_PAREN or tt in _BOUNDARY:
                break
            if i >= 2 and toks[i - 2].token_type == TokenType.TOP:
                break
            i -= 1
        for k in path:
            memo[k] = i
        return i

    def _right_stop(self, j: int, match: list[int]) -> int:
        """Walk right from token ``j`` the same way, up to a closing parenthesis or a
        boundary (memoised)."""
        toks, memo = self.tokens, self._rstop
        n = len(toks)
        path: list[int] = []
        while j + 1 < n:
            if j in memo:
                j = memo[j]
                break
            path.append(j)
            tt = toks[j + 1].token_type
            if tt == TokenType.L_PAREN and match[j + 1] >= 0:
                j = match[j + 1]
                continue
            if tt == TokenType.R_PAREN or tt in _BOUNDARY:
                break
            j += 1
        for k in path:
            memo[k] = j
        return j

    def original(self, node: exp.Expr, mode: str = "clause") -> str:
        """The SQL text ``node`` came from.

        ``mode`` is ``"clause"`` for a whole clause item (widened to the surrounding
        commas/AND/keywords), ``"func"`` for a call (widened to balance parentheses) or
        ``"window"`` (a call plus its ``OVER (...)``). Falls back to canonical text when
        no token position is known.
        """
        if not self.tokens:
            return self.render(node)
        starts, match = self._prepare()
        toks = self.tokens
        n = len(toks)
        if mode != "clause":
            # a call whose name token sqlglot recorded: name through its closing paren
            first = node.this if type(node) is exp.Window else node
            s = first.meta_get("start") if isinstance(first, exp.Expr) else None
            if s is not None:
                i = bisect_right(starts, s) - 1
                if i + 1 < n and toks[i + 1].token_type == TokenType.L_PAREN and match[i + 1] > i:
                    j = match[i + 1]
                    if mode == "window" and j + 1 < n and toks[j + 1].token_type == TokenType.OVER:
                        j += 1
                        if j + 1 < n:
                            j = match[j + 1] if match[j + 1] >= 0 else j + 1
                    return self.sql[toks[i].start : toks[j].end + 1]
        lo, hi, has_query = self._leaf_span(node)
        if lo is None or hi is None:
            return self.render(node)
        i = max(bisect_right(starts, lo) - 1, 0)
        j = max(bisect_right(starts, hi) - 1, i)
        i, j = self._balance(i, j, match)
        if mode == "clause":
            first = i
            while i > 0:
                i = self._left_stop(i, match)
                if i == 0:
                    break
                tt = toks[i - 1].token_type
                if tt == TokenType.L_PAREN:
                    if match[i - 1] == j + 1:  # parentheses around the whole fragment
                        i, j = i - 1, j + 1
                        continue
                    if has_query and toks[i].token_type in _QUERY_START:
                        i -= 1
                        continue
                    break
                if tt in _BOUNDARY:
                    if (
                        has_query
                        and tt in _QUERY_START
                        and i >= 2
                        and toks[i - 2].token_type == TokenType.L_PAREN
                    ):
                        i -= 2
                        continue
                    break
                break  # a TOP two tokens back
            if i < first:
                i, j = self._balance(i, j, match)
            j = self._right_stop(j, match)
        elif mode == "window" and j + 1 < n and toks[j + 1].token_type == TokenType.OVER:
            j += 1
            if j + 1 < n:
                j = match[j + 1] if match[j + 1] >= 0 else j + 1
        return self.sql[toks[i].start : toks[j].end + 1]

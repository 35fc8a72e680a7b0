"""Plant one cue-visible error into a SQL query (the mutation operators of ``stef selftest``).

Each operator works on the sqlglot AST of the query's final statement and applies only
where the question states the cue the error contradicts (:mod:`stef.accuracy.cues`).
The original and every mutant are rendered by the same printer (``tree.sql(dialect=…)``),
so surface style says nothing about which one is the mutant.

>>> tree = parse_sql("SELECT name FROM t ORDER BY pop DESC LIMIT 3", "sqlite")
>>> m = mutate(tree, "sqlite", "sort_flipped", read_cues("the 3 largest cities"), seed=0)
>>> m.sql, m.detail
('SELECT name FROM t ORDER BY pop LIMIT 3', 'ORDER BY pop DESC → ASC')
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

from stef.accuracy.cues import Cues, read_cues
from stef.errors import StefError
from stef.spec import normalize_number, normalize_value
from stef.sql.parse import dialect_tools
from stef.sql.quiet import fallbacks_quiet
from stef.sql.ratios import branch_results
from stef.sql.script import split_script

__all__ = ["KINDS", "Cues", "Mutant", "mutants", "mutate", "parse_sql", "read_cues", "render"]

#: The kinds of planted error, in report order, with what each plants.
KINDS: dict[str, str] = {
    "filter_dropped": "a WHERE condition whose value the question states, removed",
    "sort_flipped": "the sort of a superlative or stated order flipped (DESC ↔ ASC)",
    "limit_changed": "a stated top-k LIMIT changed to another number",
    "aggregate_swapped": "a named aggregate swapped (SUM ↔ AVG, MAX ↔ MIN, COUNT → SUM)",
    "distinct_dropped": "DISTINCT removed under a different/unique/distinct cue",
    "group_removed": "GROUP BY removed under a per/each/by cue",
    "comparison_changed": "a stated comparison's operator flipped or its number changed",
    "date_shifted": "a stated year, month or date moved by one unit",
    "projection_removed": "an output the question asks for removed",
}


class Statements(list[exp.Expr]):
    """The parsed statements of one SQL text; mutations touch the last one."""

    @property
    def root(self) -> exp.Expr:
        return self[-1]


@dataclass(frozen=True)
class Mutant:
    """One planted error: its kind, the mutant SQL and what changed."""

    kind: str
    sql: str
    detail: str


def parse_sql(sql: str, dialect: str | None) -> Statements | None:
    """The statements of ``sql`` (``None`` when sqlglot cannot read it or it holds no query).

    >>> parse_sql("DECLARE @n INT = 5; SELECT TOP 5 a FROM t", "tsql").root.sql("tsql")
    'SELECT TOP 5 a FROM t'
    >>> parse_sql("SELEC x", "sqlite") is None
    True

    A script without semicolons, which sqlglot reads as one opaque Command, is split as
    the evaluator splits it (:func:`stef.sql.script.split_script`):

    >>> parse_sql("DECLARE @n int = 5\\nSELECT TOP 5 a FROM t", "tsql").root.sql("tsql")
    'SELECT TOP 5 a FROM t'
    """
    try:
        with fallbacks_quiet():  # "falling back to a Command" is the answer here
            trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
            if not trees or not isinstance(trees[-1], exp.Query):
                parts = split_script(sql, dialect_tools(dialect))
                trees = [sqlglot.parse_one(p, read=dialect) for p in parts or ()]
    except (SqlglotError, StefError, ValueError, KeyError, TypeError, RecursionError):
        return None
    if not trees or not isinstance(trees[-1], exp.Query):
        return None
    for tree in trees:  # one spelling of an ascending key on both sides: no "ASC"
        for key in tree.find_all(exp.Ordered):
            if key.args.get("desc") is False:
                key.set("desc", None)
    return Statements(trees)


def render(
    trees: list[exp.Expr], dialect: str | None, scratch: exp.Expr | None = None
) -> str | None:
    """The one printer both sides go through (statements joined by ``; ``).

    ``scratch`` is a tree of ``trees`` that may be changed while printed (a mutant's own
    copy): the printer then spares itself a deep copy of it.
    """
    try:
        return "; ".join(t.sql(dialect=dialect, copy=t is not scratch) for t in trees)
    except (SqlglotError, ValueError, KeyError, TypeError, RecursionError):
        return None


_Operator = Callable[[exp.Expr, Cues, random.Random, "str | None"], "str | None"]


def mutate(
    trees: Statements,
    dialect: str | None,
    kind: str,
    cues: Cues,
    seed: int = 0,
    key: str = "",
    original: str | None = None,
) -> Mutant | None:
    """Plant an error of ``kind``, or ``None`` when the cue or the construct is absent.

    ``seed`` and ``key`` (the record's id) make the choice among candidates reproducible;
    ``original`` is the original's rendering when the caller has it.
    """
    if not _GATES[kind](cues):
        return None
    root = trees.root.copy()
    rng = random.Random(f"{seed}:{key}:{kind}")
    detail = OPERATORS[kind](root, cues, rng, dialect)
    if detail is None:
        return None
    sql = render([*trees[:-1], root], dialect, scratch=root)
    if original is None:
        original = render(trees, dialect)
    if sql is None or sql == original:
        return None
    return Mutant(kind, sql, detail)


def mutants(
    trees: Statements,
    dialect: str | None,
    cues: Cues,
    kinds: list[str] | None = None,
    seed: int = 0,
    key: str = "",
) -> list[Mutant]:
    """One mutant of each kind (in :data:`KINDS` order) that the query and cues allow."""
    out = []
    original = render(trees, dialect)
    for kind in kinds or list(KINDS):
        m = mutate(trees, dialect, kind, cues, seed, key, original)
        if m is not None:
            out.append(m)
    return out


# ------------------------------------------------------------------ operators


def _pick(rng: random.Random, items: list[exp.Expr]) -> exp.Expr | None:
    return rng.choice(items) if items else None


def _text(node: exp.Expr) -> str:
    return node.sql()


def _literal_value(lit: exp.Literal) -> str:
    return normalize_value(lit.this) if lit.is_string else normalize_number(lit.this) or lit.this


#: Dialects that read an unqualified double-quoted name where a value stands as a string.
_DQ_STRING_DIALECTS = (None, "sqlite", "mysql")
_VALUE_SLOTS = (exp.Binary, exp.In, exp.Between, exp.Like)


def _values(node: exp.Expr, dialect: str | None) -> list[str]:
    """The normalised values of a condition: literals, and (SQLite/MySQL, as the SQL reader
    does) an unqualified double-quoted name standing where a value stands."""
    out = [_literal_value(lit) for lit in node.find_all(exp.Literal)]
    if dialect in _DQ_STRING_DIALECTS:
        for col in node.find_all(exp.Column):
            ident = col.this
            if (
                isinstance(ident, exp.Identifier)
                and ident.quoted
                and not col.table
                and isinstance(col.parent, _VALUE_SLOTS)
                and col.arg_key in {"expression", "expressions", "low", "high"}
            ):
                out.append(normalize_value(ident.this))
    return out


def _conjuncts(where: exp.Where) -> list[exp.Expr]:
    """The top-level AND operands of a WHERE, through parentheses around an AND."""
    out: list[exp.Expr] = []
    todo = [where.this]
    while todo:
        node = todo.pop(0)
        inner = node.unnest() if isinstance(node, exp.Paren) else node
        if isinstance(inner, exp.And):
            todo[:0] = list(inner.flatten())
        else:
            out.append(node)
    return out


def filter_dropped(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Remove one WHERE conjunct that holds a literal the question states, and that no other
    conjunct holds too: where the same value still filters another table or another branch
    of a UNION, the question's cue stays answered and the change is no cue-visible error.

    >>> c = read_cues("Customers in Paris")
    >>> t = parse_sql("SELECT id FROM c WHERE city = 'Paris' AND active = 1", "sqlite")
    >>> mutate(t, "sqlite", "filter_dropped", c).sql
    'SELECT id FROM c WHERE active = 1'
    >>> t = parse_sql("SELECT a.id FROM a, b WHERE a.y = 1990 AND b.y = 1990", "sqlite")
    >>> mutate(t, "sqlite", "filter_dropped", read_cues("Awards in 1990")) is None
    True
    """
    stated: list[tuple[exp.Where, exp.Expr, frozenset[str]]] = []
    for where in root.find_all(exp.Where):
        for conj in _conjuncts(where):
            values = frozenset(v for v in _values(conj, dialect) if cues.states_value(v))
            if values:
                stated.append((where, conj, values))
    held = Counter(v for _, _, values in stated for v in values)
    candidates = [(w, c) for w, c, values in stated if any(held[v] == 1 for v in values)]
    if not candidates:
        return None
    where, conj = rng.choice(candidates)
    rest = [c for c in _conjuncts(where) if c is not conj]
    detail = f"WHERE … {_text(conj)} removed"
    if rest:
        where.set("this", exp.and_(*(c.copy() for c in rest)))
    else:
        where.pop()
    return detail


def sort_flipped(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Flip the primary key of an ORDER BY (a ranked one, with LIMIT/TOP, first).

    >>> c = read_cues("the oldest employee")
    >>> t = parse_sql("SELECT TOP 1 name FROM e ORDER BY age DESC", "tsql")
    >>> mutate(t, "tsql", "sort_flipped", c).sql
    'SELECT TOP 1 name FROM e ORDER BY age'
    """
    if not cues.directions:
        return None
    orders = [o for o in root.find_all(exp.Order) if o.expressions]
    if not orders:
        return None
    ranked = [o for o in orders if isinstance(o.parent, exp.Select) and o.parent.args.get("limit")]
    order = (ranked or orders)[0]
    key = order.expressions[0]
    if not isinstance(key, exp.Ordered):
        return None
    desc = bool(key.args.get("desc"))
    if bool(key.args.get("nulls_first")) == _nulls_first(desc, dialect):
        key.set("nulls_first", _nulls_first(not desc, dialect))  # the dialect's default
    key.set("desc", True if not desc else None)
    before, after = ("DESC", "ASC") if desc else ("ASC", "DESC")
    return f"ORDER BY {_text(key.this)} {before} → {after}"


def _nulls_first(desc: bool, dialect: str | None) -> bool:
    """Where the dialect puts NULLs when the ORDER BY says nothing (as sqlglot's parser)."""
    ordering = Dialect.get_or_raise(dialect).NULL_ORDERING
    if ordering == "nulls_are_last":
        return False
    small = ordering == "nulls_are_small"
    return (not desc and small) or (desc and not small)


def _int_literal(node: exp.Expr | None) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


def limit_changed(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Change a LIMIT / TOP / FETCH FIRST that equals a stated top-k.

    >>> t = parse_sql("SELECT a FROM t ORDER BY b DESC LIMIT 5", "sqlite")
    >>> mutate(t, "sqlite", "limit_changed", read_cues("the top 5 a"), seed=1).sql
    'SELECT a FROM t ORDER BY b DESC LIMIT 6'
    """
    if not cues.limits:
        return None
    for node in root.find_all(exp.Limit, exp.Fetch):
        lit = node.args.get("expression" if isinstance(node, exp.Limit) else "count")
        n = _int_literal(lit)
        if n is None or n not in cues.limits:
            continue
        new = rng.choice([2, 3, 5]) if n == 1 else rng.choice([n - 1, n + 1, 2 * n])
        assert isinstance(lit, exp.Literal)
        lit.replace(exp.Literal.number(new))
        return f"LIMIT {n} → {new}"
    return None


_AGG_SWAP: dict[type[exp.Expr], tuple[str, type[exp.Expr]]] = {
    exp.Sum: ("sum", exp.Avg),
    exp.Avg: ("avg", exp.Sum),
    exp.Max: ("max", exp.Min),
    exp.Min: ("min", exp.Max),
    exp.Count: ("count", exp.Sum),
}


def _swap_is_equivalent(node: exp.Expr) -> bool:
    """Would the swap give the same answer, or no aggregate at all?

    COUNT(*) has no SUM twin; SUM(1) and SUM(CASE WHEN c THEN 1 END) count what COUNT(1)
    and COUNT(CASE WHEN c THEN 1 END) count; MAX/MIN over a CASE is the pivot idiom (one
    value per group); a multi-argument MAX/MIN is GREATEST/LEAST.
    """
    arg = node.this
    if arg is None or isinstance(arg, exp.Star):
        return True
    if isinstance(node, exp.Count):
        return isinstance(arg, exp.Literal) or _indicator(arg)
    if isinstance(node, (exp.Max, exp.Min)):
        return isinstance(arg, (exp.Case, exp.If)) or len(node.expressions) > 0
    return False


def _indicator(node: exp.Expr) -> bool:
    """A CASE / IIF whose every result is 1 or NULL (it counts the rows where it holds)."""
    results = branch_results(node)
    return results is not None and all(
        r is None or isinstance(r, exp.Null) or (isinstance(r, exp.Literal) and r.this == "1")
        for r in results
    )


def aggregate_swapped(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Swap an aggregate the question names: SUM ↔ AVG, MAX ↔ MIN, COUNT(x) → SUM(x).

    >>> t = parse_sql("SELECT AVG(salary) FROM e", "sqlite")
    >>> mutate(t, "sqlite", "aggregate_swapped", read_cues("the average salary")).sql
    'SELECT SUM(salary) FROM e'
    """
    candidates: list[exp.Expr] = []
    for node in root.find_all(exp.AggFunc):
        entry = _AGG_SWAP.get(type(node))
        if entry is None or entry[0] not in cues.aggregates or _swap_is_equivalent(node):
            continue
        candidates.append(node)
    agg = _pick(rng, candidates)
    if agg is None:
        return None
    twin = _AGG_SWAP[type(agg)][1](this=agg.this.copy())
    before = _text(agg)
    agg.replace(twin)
    return f"{before} → {_text(twin)}"


def distinct_dropped(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Remove SELECT DISTINCT or COUNT(DISTINCT …) (the outermost first).

    >>> t = parse_sql("SELECT COUNT(DISTINCT city) FROM c", "sqlite")
    >>> mutate(t, "sqlite", "distinct_dropped", read_cues("how many different cities")).sql
    'SELECT COUNT(city) FROM c'
    """
    if not cues.distinct:
        return None
    for node in root.walk():
        if isinstance(node, exp.Select) and node.args.get("distinct"):
            if node.args["distinct"].args.get("on"):
                continue  # DISTINCT ON is a different construct
            node.set("distinct", None)
            return "SELECT DISTINCT → SELECT"
        if isinstance(node, exp.Distinct) and isinstance(node.parent, exp.AggFunc):
            if len(node.expressions) != 1:
                continue
            before = _text(node.parent)
            node.replace(node.expressions[0].copy())
            return f"{before} → DISTINCT removed"
    return None


def group_removed(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Remove a GROUP BY (the outermost first).

    >>> t = parse_sql("SELECT dept, COUNT(*) FROM e GROUP BY dept", "sqlite")
    >>> mutate(t, "sqlite", "group_removed", read_cues("the number of employees per dept")).sql
    'SELECT dept, COUNT(*) FROM e'
    """
    if not cues.group:
        return None
    for node in root.find_all(exp.Select):
        group = node.args.get("group")
        if group is not None:
            before = _text(group)
            group.pop()
            return f"{before} removed"
    return None


_FLIP: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.GT: exp.LT,
    exp.LT: exp.GT,
    exp.GTE: exp.LTE,
    exp.LTE: exp.GTE,
}
_OPS = {exp.GT: ">", exp.LT: "<", exp.GTE: ">=", exp.LTE: "<=", exp.EQ: "="}


def comparison_changed(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Flip a comparison with a stated number (> ↔ <, ≥ ↔ ≤) or change its number.

    >>> t = parse_sql("SELECT a FROM t WHERE n > 10", "sqlite")
    >>> c = read_cues("a with more than 10 n")
    >>> sorted({mutate(t, "sqlite", "comparison_changed", c, seed=s).sql for s in range(6)})
    ['SELECT a FROM t WHERE n < 10', 'SELECT a FROM t WHERE n > 20']
    """
    stated = {n for _, n in cues.comparisons}
    candidates: list[tuple[exp.Expr, exp.Literal]] = []
    for node in root.find_all(*_OPS):
        assert isinstance(node, exp.Binary)
        for lit in (node.left, node.right):
            if (
                isinstance(lit, exp.Literal)
                and not lit.is_string
                and normalize_number(lit.this) in stated
            ):
                candidates.append((node, lit))
    if not candidates:
        return None
    cmp, lit = rng.choice(candidates)
    before = _text(cmp)
    if type(cmp) in _FLIP and rng.random() < 0.5:
        twin = _FLIP[type(cmp)](
            this=cmp.args["this"].copy(), expression=cmp.args["expression"].copy()
        )
        cmp.replace(twin)
        return f"{before} → {_text(twin)}"
    value = float(lit.this)
    new = value * 2 if value else 1.0
    lit.replace(exp.Literal.number(int(new) if new.is_integer() else new))
    return f"{before} → {_text(cmp)}"


_DATE_TEXT = re.compile(r"^(?P<y>\d{4})(?:(?P<s>[-/])(?P<m>\d{1,2})(?:(?P=s)(?P<d>\d{1,2}))?)?")


def _shift(value: str, cues: Cues) -> str | None:
    """``value`` (a literal's text) with its stated date moved by one unit, or ``None``."""
    m = _DATE_TEXT.match(value)
    if m is None or (value[m.end() : m.end() + 1].isdigit()):
        return None
    y = int(m.group("y"))
    if y not in cues.years:
        return None
    sep, mo, d = m.group("s") or "-", m.group("m"), m.group("d")
    if mo and d:
        try:
            day = date(y, int(mo), int(d))
        except ValueError:
            return None
        if day.isoformat() in cues.dates:
            new = day + timedelta(days=1)
            return f"{new.year:04d}{sep}{new.month:02d}{sep}{new.day:02d}" + value[m.end() :]
    if mo and f"{y:04d}-{int(mo):02d}" in cues.months and not cues.dates:
        ny, nm = (y, int(mo) + 1) if int(mo) < 12 else (y + 1, 1)
        head = f"{ny:04d}{sep}{nm:02d}"
        return head + value[m.start("m") + len(mo) :]
    return str(y + 1) + value[4:]


def date_shifted(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Move every literal that carries a stated year, month or date by one unit.

    >>> t = parse_sql("SELECT a FROM t WHERE d BETWEEN '2020-01-01' AND '2020-12-31'", "sqlite")
    >>> mutate(t, "sqlite", "date_shifted", read_cues("orders in 2020")).sql
    "SELECT a FROM t WHERE d BETWEEN '2021-01-01' AND '2021-12-31'"
    """
    if not cues.years:
        return None
    changed = []
    for lit in list(root.find_all(exp.Literal)):
        new = _shift(lit.this, cues)
        if new is None or (not lit.is_string and not new.isdigit()):
            continue
        changed.append(f"{lit.this} → {new}")
        lit.replace(exp.Literal.string(new) if lit.is_string else exp.Literal.number(new))
    return ", ".join(changed) if changed else None


_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])")


def _asked_words(node: exp.Expr, cues: Cues) -> set[str]:
    """The question's words that the output ``node``'s name holds."""
    name = node.alias_or_name
    if not name or name == "*":
        return set()
    words = [w.casefold() for w in _SPLIT.split(name) if len(w) >= 3]
    return {
        w.removesuffix("s") for w in words if w in cues.words or w.removesuffix("s") in cues.words
    }


def _sole_answer(node: exp.Expr, outputs: list[exp.Expr], cues: Cues) -> bool:
    """``node`` holds a question word that no other output's name holds: removing it leaves
    that word of the question unanswered ("average score" stays answered by ``[Ave. score]``
    when ``[Highest score]`` goes). An output that another one repeats (``u.Id AS [User
    Link]`` beside ``u.Id``) or that a ``*`` returns again is no sole answer: without it the
    rows still hold the same values."""
    if any(p.is_star for p in outputs):
        return False
    same = node.unalias()
    if any(p is not node and p.unalias() == same for p in outputs):
        return False
    asked = _asked_words(node, cues)
    others = set().union(*(_asked_words(p, cues) for p in outputs if p is not node))
    return bool(asked - others)


def _inline_references(root: exp.Select, node: exp.Expr) -> None:
    """Keep the SQL valid without ``node``: ORDER BY and GROUP BY positions become the
    outputs they name,
    and a reference to ``node``'s alias (``ORDER BY [Average Views]``) its expression."""
    outputs = list(root.expressions)
    order, group = root.args.get("order"), root.args.get("group")
    keys = [k.this for k in order.expressions] if order else []
    for pos in keys + (list(group.expressions) if group else []):
        if isinstance(pos, exp.Literal) and pos.is_int and 0 < int(pos.this) <= len(outputs):
            pos.replace(outputs[int(pos.this) - 1].unalias().copy())
    alias = node.alias if isinstance(node, exp.Alias) else ""
    if not alias:
        return
    for clause in ("order", "having", "qualify"):
        part = root.args.get(clause)
        for col in list(part.find_all(exp.Column)) if part else []:
            if not col.table and col.name.casefold() == alias.casefold():
                col.replace(node.unalias().copy())


def projection_removed(
    root: exp.Expr, cues: Cues, rng: random.Random, dialect: str | None = None
) -> str | None:
    """Remove one output of the outer SELECT that the question asks for (two outputs or more),
    whose question word no other output answers; ORDER BY positions and references to its
    alias are rewritten so the mutant still runs.

    >>> t = parse_sql("SELECT name, salary FROM e", "sqlite")
    >>> mutate(t, "sqlite", "projection_removed", read_cues("the name and salary of each")).sql
    'SELECT name FROM e'
    >>> t = parse_sql("SELECT name, AVG(pay) AS avg_pay FROM e GROUP BY 1 ORDER BY avg_pay", "")
    >>> mutate(t, "", "projection_removed", read_cues("average pay per dept")).sql
    'SELECT name FROM e GROUP BY name ORDER BY AVG(pay)'
    """
    if not isinstance(root, exp.Select) or len(root.expressions) < 2:
        return None
    outputs = list(root.expressions)
    candidates = [p for p in outputs if _sole_answer(p, outputs, cues)]
    node = _pick(rng, candidates)
    if node is None:
        return None
    _inline_references(root, node)
    root.set("expressions", [p for p in root.expressions if p is not node])
    return f"output {_text(node)} removed"


#: Cheap tests of the cues each kind needs before the tree is copied.
_GATES: dict[str, Callable[[Cues], bool]] = {
    "filter_dropped": lambda c: bool(c.numbers) or bool(c.low),
    "sort_flipped": lambda c: bool(c.directions),
    "limit_changed": lambda c: bool(c.limits),
    "aggregate_swapped": lambda c: bool(c.aggregates),
    "distinct_dropped": lambda c: c.distinct,
    "group_removed": lambda c: c.group,
    "comparison_changed": lambda c: bool(c.comparisons),
    "date_shifted": lambda c: bool(c.years),
    "projection_removed": lambda c: bool(c.words),
}

OPERATORS: dict[str, _Operator] = {
    "filter_dropped": filter_dropped,
    "sort_flipped": sort_flipped,
    "limit_changed": limit_changed,
    "aggregate_swapped": aggregate_swapped,
    "distinct_dropped": distinct_dropped,
    "group_removed": group_removed,
    "comparison_changed": comparison_changed,
    "date_shifted": date_shifted,
    "projection_removed": projection_removed,
}

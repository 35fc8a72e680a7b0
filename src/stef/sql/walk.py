"""The one pass over a parsed query's tree, and what it collects.

:func:`walk_tree` visits every node once, pre-order, and gathers what the spec is built
from into a :class:`Walk` (SELECTs, columns, literals, tables, aggregates, windows, set
operations in reading order, CTEs, IN-subqueries, function names and a few presence
flags). It also records each column's canonical name in the :class:`stef.sql.text.TreeText`
and reads a double-quoted identifier on the value side of a comparison as a string in the
dialects that do so (:data:`DOUBLE_QUOTED_STRING_DIALECTS`).

What the walk cannot answer (a search below one node, after it) goes through
:func:`search`, sqlglot's ``find_all`` without its generators and without the
identifiers under plain columns: sqlglot's traversals cost a few thousand instructions
a node, and a small query's nodes are mostly those identifiers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, TypeVar, cast

from sqlglot import exp

from stef.findings import Finding
from stef.spec import normalize_column
from stef.sql.nodes import NATIVE, preorder, push_children
from stef.sql.parse import ParsedSql
from stef.sql.text import TreeText

#: Dialects in which ``"x"`` on the value side of a comparison is read as a string.
DOUBLE_QUOTED_STRING_DIALECTS = frozenset({"", "sqlite", "mysql"})

_VALUE_BINARY = frozenset(
    {exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike}
)

_NAMES: dict[str, str] = {}

#: The node classes the per-node code below tests, as constants: compiled, ``exp.Column``
#: is a look-up in the module's dictionary each time; a ``Final`` name is a C global.
_COLUMN: Final = exp.Column
_EXPR: Final = exp.Expr
_IDENTIFIER: Final = exp.Identifier
_STAR: Final = exp.Star

E = TypeVar("E", bound=exp.Expr)


def _column_name(raw: str, synonyms: dict[str, str] | None) -> str:
    """``normalize_column(raw, synonyms)``, memoised on ``raw`` (synonyms apply last)."""
    name = _NAMES.get(raw)
    if name is None:
        if len(_NAMES) > 50_000:
            _NAMES.clear()
        name = _NAMES[raw] = normalize_column(raw)
    return synonyms.get(name, name) if synonyms else name


def _is_string_column(node: exp.Expr, sql: str) -> bool:
    if type(node) is not exp.Column or node.args.get("table") is not None:
        return False
    ident = node.this
    if not isinstance(ident, exp.Identifier) or not ident.args.get("quoted"):
        return False
    start = ident.meta_get("start")
    return start is not None and 0 <= start < len(sql) and sql[start] == '"'


def _value_side(node: exp.Expr, sql: str) -> list[exp.Expr]:
    """Operands of a comparison that hold values and are double-quoted identifiers."""
    cls = type(node)
    if cls in _VALUE_BINARY:
        right = node.expression
        return [right] if _is_string_column(right, sql) else []
    if cls is exp.In:
        return [e for e in node.expressions if _is_string_column(e, sql)]
    if cls is exp.Between:
        bounds = (node.args.get("low"), node.args.get("high"))
        return [b for b in bounds if b is not None and _is_string_column(b, sql)]
    return []


def _operand(node: exp.Expr | None) -> exp.Expr | None:
    """A set-operation operand, looking through the parentheses sqlglot adds around one."""
    while type(node) is exp.Subquery and isinstance(node.this, exp.SetOperation):
        node = node.this
    return node


def _set_ops_in_order(root: exp.SetOperation) -> list[exp.SetOperation]:
    """The set operations of a chain in reading order (``A UNION B EXCEPT C``)."""
    out: list[exp.SetOperation] = []
    stack: list[exp.SetOperation] = []
    node: exp.Expr | None = root
    while True:
        while isinstance(node, exp.SetOperation):
            stack.append(node)
            node = _operand(node.this)
        if not stack:
            return out
        top = stack.pop()
        out.append(top)
        node = _operand(top.expression)


def plain_column(node: exp.Expr) -> bool:
    """Is ``node`` a column whose parts are plain names (identifiers, strings, flags)? No
    node a search looks for lies under one, and its parts are most of a small tree's nodes.
    """
    if not isinstance(node, _COLUMN):
        return False
    for v in node.args.values():
        if isinstance(v, _EXPR):
            if type(v) is not _IDENTIFIER:
                return False
        elif isinstance(v, list):
            return False
    return True


def search(node: exp.Expr, classes: tuple[type[E], ...]) -> list[E]:
    """``list(node.find_all(*classes))`` for classes other than ``Identifier``: the same
    nodes in the same (breadth-first) order, without sqlglot's generators and without
    searching the parts of plain columns (:func:`plain_column`).

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT 1 FROM a JOIN b ON a.x = b.y AND (a.z = 1 OR b.w = 2)")
    >>> on = q.args["joins"][0].args["on"]
    >>> [n.sql() for n in search(on, (exp.EQ,))] == [n.sql() for n in on.find_all(exp.EQ)]
    True
    """
    queue = [node]
    out: list[E] = []
    i = 0
    while i < len(queue):
        n = queue[i]
        i += 1
        if isinstance(n, classes):
            out.append(n)
        if not plain_column(n):
            if NATIVE:
                push_children(n, queue)
            else:
                queue.extend(n.iter_expressions())
    return out


def contains(node: exp.Expr, classes: tuple[type[exp.Expr], ...]) -> bool:
    """``bool(search(node, classes))``, stopping at the first node found.

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT a + 1, b FROM t")
    >>> contains(q, (exp.Add,)), contains(q, (exp.Sub,))
    (True, False)
    """
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, classes):
            return True
        if not plain_column(n):
            if NATIVE:
                push_children(n, stack)
            else:
                stack.extend(n.iter_expressions())
    return False


# Node kinds the walk cares about (see _NODE_INFO for the cache per class); ``Final``, so
# that compiled code reads them as constants, not from the module's dictionary.
_COLUMN_KIND: Final = 1
_LITERAL: Final = 2
_SELECT: Final = 3
_TABLE: Final = 4
_SUBQUERY: Final = 5
_WINDOW: Final = 6
_CTE: Final = 7
_AGG: Final = 8
_SETOP: Final = 9
_CASE: Final = 10
_CAST: Final = 11
_COMPARE: Final = 12
_NEGATE: Final = 13
_PSEUDO: Final = 14
_AGG_CLAUSE: Final = 15
_OR: Final = 16
_DIV_KIND: Final = 17
_ADD_KIND: Final = 18


def _kind(cls: type) -> int:
    """The kind of a node class (0: none the walk collects)."""
    if cls is exp.Column:
        kind = _COLUMN_KIND
    elif cls is exp.Literal:
        kind = _LITERAL
    elif cls is exp.Select:
        kind = _SELECT
    elif cls is exp.Table:
        kind = _TABLE
    elif cls is exp.Subquery:
        kind = _SUBQUERY
    elif cls is exp.Window:
        kind = _WINDOW
    elif cls is exp.CTE:
        kind = _CTE
    elif issubclass(cls, exp.AggFunc):
        kind = _AGG
    elif issubclass(cls, exp.SetOperation):
        kind = _SETOP
    elif cls is exp.Case or cls is exp.If:
        kind = _CASE
    elif issubclass(cls, exp.Cast):
        kind = _CAST
    elif cls in _VALUE_BINARY or cls is exp.In or cls is exp.Between:
        kind = _COMPARE
    elif cls is exp.Not or cls is exp.Is:
        kind = _NEGATE
    elif issubclass(cls, exp.Column):
        kind = _PSEUDO
    elif issubclass(cls, (exp.WithinGroup, exp.Filter)):
        kind = _AGG_CLAUSE
    elif cls is exp.Or:
        kind = _OR
    elif issubclass(cls, exp.Div):
        kind = _DIV_KIND
    elif issubclass(cls, exp.Add):
        kind = _ADD_KIND
    else:
        kind = 0
    return kind


_NODE_INFO: dict[type, tuple[int, str] | None] = {}
_UNSEEN = (-1, "")  # what _NODE_INFO gives for a class not seen yet


def _node_info(cls: type) -> tuple[int, str] | None:
    """A node class's kind and, for a function node (``Func``, ``Sub`` or ``Div``), its
    lower-case class name (else ``""``); ``None`` when both are empty. Remembered per
    class in :data:`_NODE_INFO`."""
    name = cls.__name__.lower() if issubclass(cls, (exp.Func, exp.Sub, exp.Div)) else ""
    kind = _kind(cls)
    info = _NODE_INFO[cls] = (kind, name) if kind or name else None
    return info


@dataclass
class Walk:
    """Everything the single tree walk collects, in reading order."""

    selects: list[exp.Select] = field(default_factory=list)
    columns: list[exp.Column] = field(default_factory=list)
    literals: list[exp.Expr] = field(default_factory=list)
    tables: list[exp.Table] = field(default_factory=list)
    aggs: list[exp.AggFunc] = field(default_factory=list)
    windows: list[exp.Window] = field(default_factory=list)
    set_ops: list[exp.SetOperation] = field(default_factory=list)
    ctes: list[exp.CTE] = field(default_factory=list)
    subqueries: int = 0
    case: bool = False
    cast: bool = False
    count_star: bool = False
    negation: bool = False  # NOT, <>, IS [NOT] NULL anywhere
    in_queries: list[exp.In] = field(default_factory=list)  # x IN (SELECT …)
    functions: set[str] = field(default_factory=set)  # lower-case names of Func/Sub/Div
    pseudocolumns: list[exp.Column] = field(default_factory=list)  # Column's subclasses
    #: an ordered-set aggregate's WITHIN GROUP or an aggregate's FILTER anywhere
    aggregate_clause: bool = False
    ors: list[exp.Or] = field(default_factory=list)  # every OR, in reading order
    divs: list[exp.Div] = field(default_factory=list)  # every division, in reading order
    addition: bool = False  # an addition anywhere

    # Written out, not generated by @dataclass: mypyc compiles it (docs/performance.md).
    def __init__(
        self,
        selects: list[exp.Select] | None = None,
        columns: list[exp.Column] | None = None,
        literals: list[exp.Expr] | None = None,
        tables: list[exp.Table] | None = None,
        aggs: list[exp.AggFunc] | None = None,
        windows: list[exp.Window] | None = None,
        set_ops: list[exp.SetOperation] | None = None,
        ctes: list[exp.CTE] | None = None,
        subqueries: int = 0,
        case: bool = False,
        cast: bool = False,
        count_star: bool = False,
        negation: bool = False,
        in_queries: list[exp.In] | None = None,
        functions: set[str] | None = None,
        pseudocolumns: list[exp.Column] | None = None,
        aggregate_clause: bool = False,
        ors: list[exp.Or] | None = None,
        divs: list[exp.Div] | None = None,
        addition: bool = False,
    ) -> None:
        self.selects = [] if selects is None else selects
        self.columns = [] if columns is None else columns
        self.literals = [] if literals is None else literals
        self.tables = [] if tables is None else tables
        self.aggs = [] if aggs is None else aggs
        self.windows = [] if windows is None else windows
        self.set_ops = [] if set_ops is None else set_ops
        self.ctes = [] if ctes is None else ctes
        self.subqueries = subqueries
        self.case = case
        self.cast = cast
        self.count_star = count_star
        self.negation = negation
        self.in_queries = [] if in_queries is None else in_queries
        self.functions = set() if functions is None else functions
        self.pseudocolumns = [] if pseudocolumns is None else pseudocolumns
        self.aggregate_clause = aggregate_clause
        self.ors = [] if ors is None else ors
        self.divs = [] if divs is None else divs
        self.addition = addition


def walk_tree(
    parsed: ParsedSql,
    tt: TreeText,
    synonyms: dict[str, str] | None,
    w: Walk,
    source_name: dict[int, str],
) -> Finding | None:
    """One pre-order pass: collect nodes into ``w``, canonical column names into ``tt``,
    each table's and subquery's alias into ``source_name``, string columns; returns the
    ``double_quoted_string`` finding when it read any."""
    sql = parsed.sql
    check_strings = (parsed.dialect_name or "").lower() in DOUBLE_QUOTED_STRING_DIALECTS
    names: dict[str, str] = {}
    strings: set[int] = set()
    seen_set_ops: set[int] = set()
    node_info, unseen = _NODE_INFO, _UNSEEN
    functions, columns = w.functions, w.columns
    for node in preorder(parsed.tree):
        cls = type(node)
        info = node_info.get(cls, unseen)
        if info is None:  # most nodes: identifiers, keywords, operators
            continue
        if info[0] < 0:  # unseen (a test of the value: mypyc unboxes the tuple)
            info = _node_info(cls)
            if info is None:
                continue
        kind, fname = info
        if fname:
            functions.add(fname)
        if not kind:
            continue
        if kind == _COLUMN_KIND:
            this = node.args.get("this")
            if type(this) is _STAR:
                continue
            raw = this.name if this is not None else ""
            if id(node) in strings:
                tt.add_column(node, raw, string=raw)
                w.literals.append(node)
                continue
            name = names.get(raw)
            if name is None:
                name = names[raw] = _column_name(raw, synonyms) if raw else raw
            tt.add_column(node, name)
            columns.append(node)  # type: ignore[arg-type]  # a Column (no cast() call)
        elif kind == _LITERAL:
            w.literals.append(node)
        elif kind == _COMPARE:
            if cls is exp.NEQ:
                w.negation = True
            elif cls is exp.In and node.args.get("query") is not None:
                w.in_queries.append(cast(exp.In, node))
            if check_strings:
                for col in _value_side(node, sql):
                    strings.add(id(col))
        else:
            _collect_structure(node, cls, kind, w, source_name, seen_set_ops)
    return _double_quoted_finding(strings, tt) if strings else None


def _collect_structure(
    node: exp.Expr,
    cls: type,
    kind: int,
    w: Walk,
    source_name: dict[int, str],
    seen_set_ops: set[int],
) -> None:
    """The node kinds of the walk that carry no column name or value."""
    if kind == _SELECT:
        w.selects.append(cast(exp.Select, node))
    elif kind == _TABLE:
        w.tables.append(cast(exp.Table, node))
        source_name[id(node)] = node.alias_or_name.lower()
    elif kind == _SUBQUERY:
        w.subqueries += 1
        source_name[id(node)] = node.alias_or_name.lower()
    elif kind == _AGG:
        w.aggs.append(cast(exp.AggFunc, node))
        if cls is exp.Count and type(node.this) is exp.Star:
            w.count_star = True
    elif kind == _WINDOW:
        w.windows.append(cast(exp.Window, node))
    elif kind == _CTE:
        w.ctes.append(cast(exp.CTE, node))
    elif kind == _SETOP:
        if id(node) not in seen_set_ops:
            chain = _set_ops_in_order(cast(exp.SetOperation, node))
            seen_set_ops.update(id(s) for s in chain)
            w.set_ops.extend(chain)
    elif kind == _CASE:
        w.case = True
    elif kind == _CAST:
        w.cast = True
    elif kind == _NEGATE:
        w.negation = True
    elif kind == _PSEUDO:
        w.pseudocolumns.append(cast(exp.Column, node))
    elif kind == _AGG_CLAUSE:
        w.aggregate_clause = True
    elif kind == _OR:
        w.ors.append(cast(exp.Or, node))
    elif kind == _DIV_KIND:
        w.divs.append(cast(exp.Div, node))
    elif kind == _ADD_KIND:
        w.addition = True


def _double_quoted_finding(strings: set[int], tt: TreeText) -> Finding:
    """The finding that says which double-quoted identifiers were read as strings."""
    values = sorted({f'"{tt.columns[i].string}"' for i in strings if i in tt.columns})
    shown = ", ".join(values)
    return Finding(
        "double_quoted_string",
        "info",
        f"read double-quoted {shown} as string value(s), as SQLite/MySQL do",
        sql=shown,
        rule="sqlspec",
    )

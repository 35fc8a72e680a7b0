"""Set operations whose two sides are the same query (:func:`identical_set_sides`), and
INTERSECT and EXCEPT whose two sides return different things: ``SELECT state … INTERSECT
SELECT cname …`` keeps the states that are also college names (none, as a rule), and a
``*`` beside one column does not even run. A UNION may list two things in one column on
purpose ("reviewer names and movie titles in one list"), so it is read only for sides of
two widths, which no engine runs.

Two one-column sides differ when their names (alias or column) share no word of three
letters or more, neither holds the other, and neither is an id (``id`` against ``stuid``
compares keys of one entity under two names).

>>> import sqlglot
>>> q = "SELECT state FROM college INTERSECT SELECT cname FROM tryout"
>>> unmatched_set_sides([sqlglot.parse_one(q)])
[('intersect', 'state', 'cname')]
>>> q = "SELECT name FROM dorm EXCEPT SELECT dorm_name FROM dorm_amenity"
>>> unmatched_set_sides([sqlglot.parse_one(q)])
[]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sqlglot import exp

from stef.sql.outputs import own_sources

_WORD = re.compile(r"[a-z]{3,}")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _words(name: str) -> set[str]:
    """Words of three letters or more of a column name (``CollegeName`` → college, name)."""
    return set(_WORD.findall(_CAMEL.sub("_", name).casefold()))


def _output(sel: exp.Select) -> str | None:
    """The name of a one-output SELECT's output, else None: a star over a derived table is
    that table's output (``SELECT * FROM (SELECT name …)``), over a table ``*``.

    >>> import sqlglot
    >>> _output(sqlglot.parse_one("SELECT * FROM (SELECT name FROM t LIMIT 3)"))
    'name'
    """
    if len(sel.expressions) != 1:
        return None
    e = sel.expressions[0]
    if not e.is_star:
        return e.alias_or_name
    inner = _derived(sel)
    if inner is not None:
        return _output(inner)
    from_ = sel.args.get("from_")
    return "*" if from_ is not None and isinstance(from_.this, exp.Table) else None


def _derived(sel: exp.Select) -> exp.Select | None:
    """The SELECT of the one derived table a ``SELECT *`` reads, else None."""
    sources = own_sources(sel)
    source = sources[0] if len(sources) == 1 else None
    if isinstance(source, exp.Subquery) and isinstance(source.this, exp.Select):
        return source.this
    return None


def _width(sel: exp.Select) -> int | None:
    """How many columns a SELECT returns; a star over a derived table counts its columns, any
    other star is unknown (None).

    >>> import sqlglot
    >>> _width(sqlglot.parse_one("SELECT * FROM (SELECT a, b FROM t LIMIT 1)"))
    2
    """
    if not any(e.is_star for e in sel.expressions):
        return len(sel.expressions)
    inner = _derived(sel) if len(sel.expressions) == 1 else None
    return _width(inner) if inner is not None else None


def _differ(a: str, b: str) -> bool:
    """Do two output names name different things (see the module doc)?"""
    if "*" in (a, b):
        return a != b
    low_a, low_b = a.casefold(), b.casefold()
    if not low_a or not low_b or low_a in low_b or low_b in low_a:
        return False
    if low_a.endswith("id") or low_b.endswith("id"):
        return False
    return not (_words(a) & _words(b))


def identical_set_sides(set_ops: Sequence[exp.Expr], render: Callable[[exp.Expr], str]) -> bool:
    """Are the two sides of a set operation the same query (as ``render`` writes them)?

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT a FROM t UNION SELECT a FROM t")
    >>> identical_set_sides([q], lambda e: e.sql())
    True
    """
    return any(render(s.this) == render(s.expression) for s in set_ops)


def unmatched_set_sides(set_ops: Sequence[exp.Expr]) -> list[tuple[str, str, str]]:
    """``(operation, left output, right output)`` of each INTERSECT or EXCEPT of two
    one-output SELECTs that return different things (see the module doc), and of each set
    operation whose two SELECTs return different numbers of columns (``2 columns``, ``1
    column``), which no engine runs.

    >>> import sqlglot
    >>> unmatched_set_sides([sqlglot.parse_one("SELECT a, b FROM t UNION SELECT c FROM u")])
    [('union', '2 columns', '1 column')]
    """
    found: list[tuple[str, str, str]] = []
    for op in set_ops:
        left, right = op.this, op.expression
        if not (isinstance(left, exp.Select) and isinstance(right, exp.Select)):
            continue
        lw, rw = _width(left), _width(right)
        if lw is not None and rw is not None and lw != rw:
            left_width, right_width = (f"{n} column{'s' * (n > 1)}" for n in (lw, rw))
            found.append((op.key, left_width, right_width))
            continue  # no engine runs it: the sides' rows differ in width
        if not isinstance(op, (exp.Intersect, exp.Except)):
            continue
        first, second = _output(left), _output(right)
        if first is not None and second is not None and _differ(first, second):
            found.append((op.key, first, second))
    return found

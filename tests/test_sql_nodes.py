"""``stef.sql.nodes`` gives sqlglot's traversals' nodes in their order, by either path: the
index loop the compiled build takes and the generators the interpreted package takes
(docs/performance.md, session 18)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from stef.sql import nodes

SQL = [
    "SELECT 1",
    "SELECT a, b AS c, COUNT(*) FROM t WHERE x = 1 AND (y > 2 OR z IN (1, 2)) GROUP BY a",
    "SELECT a FROM t JOIN u ON t.id = u.id LEFT JOIN v USING (k) ORDER BY a DESC LIMIT 5",
    "WITH c AS (SELECT x FROM t) SELECT * FROM c WHERE x IN (SELECT y FROM u WHERE y > 1)",
    "SELECT a FROM t UNION SELECT b FROM u EXCEPT SELECT c FROM v",
    "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END, SUM(b) OVER (PARTITION BY c) FROM t",
    "SELECT CAST(a AS REAL) / COUNT(DISTINCT b) * 100 FROM t WHERE d BETWEEN 1 AND 2",
    "SELECT t.a.b, \"q\" FROM db.sch.t AS x WHERE NOT x.y IS NULL AND x.z <> ''",
    "SELECT STRFTIME('%Y', d), IIF(a = 1, 2, 3), COALESCE(a, b, c) FROM t HAVING COUNT(*) > 1",
]

PRUNES: list[tuple[type[exp.Expr], ...]] = [
    (),
    (exp.Query,),
    (exp.Query, exp.Window),
    (exp.Query, exp.Window, exp.AggFunc, exp.WithinGroup, exp.Filter),
    (exp.Column,),
]


def _trees() -> list[exp.Expr]:
    out = []
    for sql in SQL:
        tree = sqlglot.parse_one(sql)
        out.append(tree)
        out.extend(n for n in tree.dfs() if not isinstance(n, exp.Identifier))
    return out


@pytest.mark.parametrize("native", [False, True])
def test_preorder_is_dfs(monkeypatch: pytest.MonkeyPatch, native: bool) -> None:
    monkeypatch.setattr(nodes, "NATIVE", native)  # the interpreted package reads it
    for node in _trees():
        for prune in PRUNES:
            want = (
                list(node.dfs(prune=lambda n, p=prune: isinstance(n, p)))  # type: ignore[misc]
                if prune
                else list(node.dfs())
            )
            got = nodes.preorder(node, prune)
            assert [id(n) for n in got] == [id(n) for n in want]


@pytest.mark.parametrize("native", [False, True])
def test_push_children_is_iter_expressions(monkeypatch: pytest.MonkeyPatch, native: bool) -> None:
    monkeypatch.setattr(nodes, "NATIVE", native)
    for node in _trees():
        out: list[exp.Expr] = [node]
        nodes.push_children(node, out)
        assert [id(n) for n in out] == [id(node)] + [id(n) for n in node.iter_expressions()]

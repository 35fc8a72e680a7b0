"""stef.sql.spec: golden fixture cases, error statuses, surface-style invariance.

The golden cases live in ``tests/fixtures/sql_spec/*.sql`` (format described at the top
of each file); one pytest case per title.
"""

from __future__ import annotations

import importlib.machinery
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from stef.errors import SqlError
from stef.sql.spec import MAX_SQL_CHARS, SqlSpecResult, extract_sql_spec, predicate_filters
from stef.sql.text import TreeText

FIXTURES = Path(__file__).parent / "fixtures" / "sql_spec"


# ------------------------------------------------------------------ fixture loader
@dataclass
class Case:
    title: str
    source: str
    dialect: str | None
    synonyms: dict[str, str] | None
    sql: str
    expect: dict[str, Any]


def load_cases(directory: Path = FIXTURES) -> list[Case]:
    """Every ``# title:`` block of every ``*.sql`` file in ``directory``."""
    cases: list[Case] = []
    for path in sorted(directory.glob("*.sql")):
        for block in re.split(r"(?m)^# title:", path.read_text(encoding="utf-8"))[1:]:
            title, _, body = block.partition("\n")
            meta: dict[str, str] = {}
            sql: list[str] = []
            expect: list[str] = []
            part = "meta"
            for line in body.split("\n"):
                if part != "expect" and line.startswith("# expect:"):
                    part = "expect"
                elif part == "expect":
                    expect.append(line)
                elif part == "meta" and re.match(r"^# \w+:", line):
                    key, _, value = line[2:].partition(":")
                    if key not in ("dialect", "synonyms"):
                        raise ValueError(f"{path.name}: {title.strip()}: unknown key {key!r}")
                    meta[key] = value.strip()
                else:
                    part = "sql"
                    sql.append(line)
            cases.append(
                Case(
                    title=title.strip(),
                    source=path.name,
                    dialect=meta.get("dialect") or None,
                    synonyms=json.loads(meta["synonyms"]) if "synonyms" in meta else None,
                    sql="\n".join(sql).strip(),
                    expect=json.loads("\n".join(expect)),
                )
            )
    return cases


CASES = load_cases()


def _match(got: Any, want: Any, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: got {got!r}, want an object"
        for key, value in want.items():
            assert key in got, f"{where}: no field {key!r} in {got!r}"
            _match(got[key], value, f"{where}.{key}")
    elif isinstance(want, list) and any(isinstance(w, dict) for w in want):
        assert isinstance(got, list) and len(got) == len(want), (
            f"{where}: got {len(got)} items, want {len(want)}: {got!r}"
        )
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _match(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: got {got!r}, want {want!r}"


def check_case(result: SqlSpecResult, expect: dict[str, Any]) -> None:
    actual = result.spec.to_dict()
    for key, want in expect.items():
        if key == "findings":
            assert [f.kind for f in result.findings] == want
        else:
            assert key in actual, f"expectation names unknown spec field {key!r}"
            _match(actual[key], want, key)


def test_fixture_titles_are_unique_and_plenty() -> None:
    titles = [c.title for c in CASES]
    assert len(titles) == len(set(titles))
    assert len(CASES) >= 45


@pytest.mark.parametrize("case", CASES, ids=[c.title for c in CASES])
def test_golden_case(case: Case) -> None:
    check_case(extract_sql_spec(case.sql, case.dialect, case.synonyms), case.expect)


def test_loader_compares_only_given_fields_and_fails_on_a_wrong_value() -> None:
    result = extract_sql_spec("SELECT a FROM t WHERE b = 1")
    check_case(result, {"filters": [{"column": "b"}]})
    with pytest.raises(AssertionError, match=r"filters\[0\]\.values"):
        check_case(result, {"filters": [{"values": ["2"]}]})
    with pytest.raises(AssertionError, match="unknown spec field"):
        check_case(result, {"filterz": []})


# --------------------------------------------------------------------- error cases
ERRORS = [
    ("empty", "", None, "empty_sql", "SQL is empty"),
    ("whitespace", "  \n\t  ", None, "empty_sql", "SQL is empty"),
    ("only a comment", "-- nothing here", None, "empty_sql", "only comments"),
    ("unparseable", "SELECT FROM WHERE", None, "sql_unparseable", "line 1, col 17"),
    ("unterminated string", "SELECT 'abc", None, "sql_unparseable", "cannot tokenize"),
    ("dangling AND", "SELECT a FROM t WHERE a = 1 AND", None, "sql_unparseable", "line 1"),
    ("spaced operator", "SELECT a FROM t WHERE b ! = 'x'", "sqlite", "sql_unparseable", "'!'"),
    ("empty select", "select", None, "sql_unparseable", "no output columns"),
    ("insert", "INSERT INTO t VALUES (1)", None, "sql_not_query", "an INSERT statement"),
    ("update", "UPDATE t SET a = 1", None, "sql_not_query", "an UPDATE statement"),
    ("delete", "DELETE FROM t WHERE a = 1", None, "sql_not_query", "a DELETE statement"),
    ("drop table", "DROP TABLE t", None, "sql_not_query", "a DROP statement"),
    ("create table", "CREATE TABLE t (a INT)", None, "sql_not_query", "a CREATE statement"),
    ("values", "VALUES (1, 2)", None, "sql_not_query", "a VALUES statement"),
    # writes inside a query, in the spellings the keyword pre-check of parse_query must see
    (
        "delete in a CTE, lower case",
        "with d as (delete from t returning *) select * from d",
        "postgres",
        "sql_not_query",
        "a DELETE statement",
    ),
    (
        "insert spelled with a dotless i (upper-cases to INSERT)",
        "WITH d AS (\u0131nsert INTO t VALUES (1) RETURNING *) SELECT * FROM d",
        "postgres",
        "sql_not_query",
        "an INSERT statement",
    ),
    (
        "Teradata DEL in a CTE",
        "WITH d AS (DEL FROM t) SELECT * FROM d",
        "teradata",
        "sql_not_query",
        "a DELETE statement",
    ),
    ("select into", "select * into #tmp from t", "tsql", "sql_not_query", "SELECT … INTO"),
    ("nul byte alone", "\x00", None, "sql_not_query", "bare COLUMN expression"),
    ("two statements", "SELECT 1; SELECT 2", None, "sql_multiple_statements", "2 statements"),
    (
        "a script whose first query is not a variable assignment",
        "SELECT id FROM users; SELECT name FROM posts",
        "tsql",
        "sql_multiple_statements",
        "2 statements",
    ),
    ("a script with no query", "DECLARE @n int = 5; SET @n = 6", "tsql", "sql_not_query", "SET"),
    ("show tables", "SHOW TABLES", None, "sql_unsupported", "'SHOW TABLES'"),
    ("vacuum", "VACUUM", "sqlite", "sql_unsupported", "opaque command: 'VACUUM'"),
    ("explain", "EXPLAIN SELECT 1", None, "sql_unsupported", "opaque command"),
    ("unknown dialect", "SELECT 1", "postgresql9", "sql_unsupported", "unknown SQL dialect"),
    (
        "1 MB of SQL",
        "SELECT '" + "a" * 1_000_000 + "'",
        None,
        "sql_too_large",
        f"the limit is {MAX_SQL_CHARS:,}",
    ),
    (
        "5000 nested parentheses",
        "SELECT " + "(" * 5000 + "1" + ")" * 5000,
        None,
        "sql_too_complex",
        "SQL is nested 5,000 levels deep (parentheses, subqueries, CASE); the limit is 200",
    ),
]


@pytest.mark.parametrize(
    ("sql", "dialect", "status", "message"),
    [e[1:] for e in ERRORS],
    ids=[e[0] for e in ERRORS],
)
def test_error_status(sql: str, dialect: str | None, status: str, message: str) -> None:
    with pytest.raises(SqlError) as info:
        extract_sql_spec(sql, dialect)
    assert info.value.status == status
    assert message in info.value.message
    assert len(info.value.message) < 600


def test_sqlglot_runs_compiled() -> None:
    """sqlglot[c] ships mypyc-compiled modules; the speed budget assumes they are in use."""
    import sqlglot.parser

    assert sqlglot.parser.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


SCRIPTS = [
    (
        "declare without semicolons",
        "DECLARE @UserId int = 17034\n\n"
        "SELECT TOP 25 PostId, Score FROM Comments WHERE UserId = @UserId",
        ["postid", "score"],
        25,
    ),
    (
        "declare and set with semicolons",
        "DECLARE @n int; SET @n = 3; SELECT name FROM users WHERE id > @n ORDER BY name;",
        ["name"],
        None,
    ),
    (
        "a variable assigned by a SELECT",
        "DECLARE @total int\nselect @total = count(1) from Posts where PostTypeId = 1\n"
        "select Id, Score * 100.0 / @total AS share from Posts",
        ["id", "share"],
        None,
    ),
]


@pytest.mark.parametrize(
    ("sql", "projections", "limit"), [s[1:] for s in SCRIPTS], ids=[s[0] for s in SCRIPTS]
)
def test_a_variable_script_is_scored_on_its_final_query(
    sql: str, projections: list[str], limit: int | None
) -> None:
    spec = extract_sql_spec(sql, "tsql").spec
    assert [p.alias or p.expr for p in spec.projections] == projections
    assert spec.limit == limit


def test_trailing_semicolons_and_comments_are_one_statement() -> None:
    spec = extract_sql_spec("-- top\nSELECT a FROM t; ;\n/* end */").spec
    assert [p.expr for p in spec.projections] == ["a"]


@settings(max_examples=150, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("SELECT FROMWHERE()'\"`;,.*=<>!-+/\x00aé1 \n")), max_size=60
    )
)
def test_hostile_text_gives_a_spec_or_an_sql_error(sql: str) -> None:
    try:
        result = extract_sql_spec(sql, "sqlite")
    except SqlError as err:
        assert err.status in {
            "empty_sql",
            "sql_unparseable",
            "sql_not_query",
            "sql_multiple_statements",
            "sql_unsupported",
        }
    else:
        assert isinstance(result.spec.to_dict(), dict)


# ------------------------------------------------------------ predicate_filters
def test_predicate_filters_for_rules_file_predicates() -> None:
    got = [(f.column, f.op, f.values, f.text) for f in predicate_filters("is_deleted = 0")]
    assert got == [("is_deleted", "=", ("0",), "is_deleted = 0")]
    got = [(f.column, f.op, f.values) for f in predicate_filters("T.Tenant_ID = ? AND x IS NULL")]
    assert got == [("tenant_id", "=", ("?",)), ("x", "is null", ())]
    synonyms = {"territory": "region"}
    got = [
        (f.column, f.values) for f in predicate_filters("territory IN ('A', 'b')", None, synonyms)
    ]
    assert got == [("region", ("a", "b"))]


@pytest.mark.parametrize(
    ("predicate", "status"),
    [("", "empty_sql"), ("SELECT 1", "sql_unparseable"), ("a = 1; b = 2", "sql_unparseable")],
)
def test_predicate_filters_errors(predicate: str, status: str) -> None:
    with pytest.raises(SqlError) as info:
        predicate_filters(predicate)
    assert info.value.status == status


# ----------------------------------------------------------- surface-style invariance
def _without_text(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_text(v) for k, v in value.items() if k != "text"}
    if isinstance(value, list):
        return [_without_text(v) for v in value]
    return value


def _spec(sql: str, dialect: str | None = "sqlite") -> dict[str, Any]:
    return _without_text(extract_sql_spec(sql, dialect).spec.to_dict())


STYLE_PAIRS = [
    (
        "SELECT Count ( * ) FROM Student AS T1 WHERE T1.Sex  =  'M'",
        "select count(*) from student as s where s.sex = 'M'",
    ),
    (
        'SELECT T1."Name", MAX(T2.Age) FROM "People" AS T1 JOIN pets AS T2 ON T1.id = T2.owner '
        "GROUP BY T1.Name ORDER BY MAX(T2.Age) DESC LIMIT 1",
        "select p.name , max ( q.age ) from people p join PETS q on p.ID = q.OWNER\n"
        "group by p.NAME order by max(q.age) desc limit 1",
    ),
    (
        "SELECT `Free Meal Count (K-12)` / `Enrollment (K-12)` FROM frpm "
        "WHERE `County Name` = 'Alameda'",
        'SELECT "free meal count (k-12)" / "ENROLLMENT (K-12)" FROM FRPM '
        "WHERE \"county name\" = 'Alameda'",
    ),
    (
        "SELECT name FROM a WHERE id IN (SELECT T9.aid FROM b AS T9 WHERE T9.x > 5)",
        "SELECT NAME FROM A WHERE ID IN (SELECT bb.AID FROM B bb WHERE bb.X > 5)",
    ),
    (
        "WITH c AS (SELECT region, SUM(amt) AS s FROM sales GROUP BY region) SELECT * FROM c",
        "with C as (select REGION, sum(AMT) as S from SALES group by REGION) select * from C",
    ),
    (
        "SELECT name FROM t1 UNION SELECT name FROM t2",
        "SELECT T.Name FROM T1 AS T UNION SELECT U.NAME FROM t2 U",
    ),
]


@pytest.mark.parametrize(("a", "b"), STYLE_PAIRS)
def test_surface_style_does_not_change_the_spec(a: str, b: str) -> None:
    assert _spec(a) == _spec(b)


def _value_side_bare_column(tree: exp.Expr) -> bool:
    """True when a comparison's value side is an unqualified, unquoted column: re-rendered
    with identify=True it reads ``"b"``, which SQLite habit makes a string (see sqlspec)."""
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like):
        right = node.expression
        if isinstance(right, exp.Column) and not right.table and not right.this.quoted:
            return True
    for node in tree.find_all(exp.In, exp.Between):
        items = node.expressions or [node.args.get("low"), node.args.get("high")]
        if any(isinstance(i, exp.Column) and not i.table for i in items if i is not None):
            return True
    return False


def _sample_sql() -> list[str]:
    """The 200 real queries of ``data_sample.sql`` (one per line)."""
    text = (FIXTURES / "data_sample.sql").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


SAMPLE_SQL = _sample_sql()


def test_rerendered_data_sql_gives_the_same_spec() -> None:
    assert len(SAMPLE_SQL) == 200
    compared = 0
    for sql in SAMPLE_SQL:
        try:
            before = _spec(sql)
        except SqlError:
            continue
        tree = sqlglot.parse_one(sql, read="sqlite")
        if _value_side_bare_column(tree):
            continue
        again = tree.sql(
            dialect="sqlite",
            identify=True,
            normalize=True,
            pretty=True,
            normalize_functions="lower",
        )
        if len(list(tree.find_all(exp.Select))) != len(
            list(sqlglot.parse_one(again, read="sqlite").find_all(exp.Select))
        ):
            continue  # sqlglot restructured the query (e.g. wrapped an ORDER BY branch)
        assert _spec(again) == before, sql
        compared += 1
    assert compared >= 150


# -------------------------------------------------------------- tree and rendering
TREE_SQL = [
    (
        "SELECT T1.name, COUNT(*) FROM a AS T1 JOIN b AS T2 ON T1.id = T2.aid "
        'WHERE T2.x = "M" GROUP BY T1.name HAVING COUNT(*) > 1',
        "sqlite",
    ),
    (
        "SELECT CAST(SUM(x) AS REAL) / COUNT(*) FROM (SELECT * FROM t AS u WHERE u.y = 'k') AS s",
        "sqlite",
    ),
    ("SELECT TOP 3 [Name] FROM dbo.People AS p WHERE p.[Age] > 5 ORDER BY 1", "tsql"),
    ('WITH "W" AS (SELECT "A" FROM "T") SELECT "A" FROM "W" UNION SELECT "A" FROM "W"', "postgres"),
]


@pytest.mark.parametrize(("sql", "dialect"), TREE_SQL)
def test_returned_tree_is_the_unchanged_parse(sql: str, dialect: str) -> None:
    result = extract_sql_spec(sql, dialect)
    assert result.tree.sql(dialect=dialect) == sqlglot.parse_one(sql, read=dialect).sql(
        dialect=dialect
    )


def test_fast_renderings_equal_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain columns, literals, simple aggregates, arithmetic and casts are rendered without
    sqlglot's generator for speed; every spec must equal the generator-only one."""
    queries = [(c.sql, c.dialect, c.synonyms) for c in CASES]
    queries += [(sql, "sqlite", None) for sql in SAMPLE_SQL]
    fast = []
    for sql, dialect, synonyms in queries:
        try:
            fast.append(_without_text(extract_sql_spec(sql, dialect, synonyms).spec.to_dict()))
        except SqlError:
            fast.append(None)
    monkeypatch.setattr(TreeText, "_fast", lambda self, node: None)
    for (sql, dialect, synonyms), want in zip(queries, fast, strict=True):
        if want is not None:
            got = _without_text(extract_sql_spec(sql, dialect, synonyms).spec.to_dict())
            assert got == want, sql


def test_double_quoted_string_finding_and_dialects() -> None:
    result = extract_sql_spec('SELECT a FROM t WHERE b = "Yes"', "sqlite")
    assert [(f.column, f.values) for f in result.spec.filters] == [("b", ("yes",))]
    assert [f.kind for f in result.findings] == ["double_quoted_string"]
    assert result.findings[0].sql == '"Yes"'
    mysql = extract_sql_spec('SELECT a FROM t WHERE b = "Yes"', "mysql").spec.filters
    assert [(f.column, f.values) for f in mysql] == [("b", ("yes",))]
    qualified = extract_sql_spec('SELECT a FROM t WHERE b = t."Yes"', "sqlite").spec
    assert qualified.filters == [] and qualified.joins[0]["right"] == "yes"


def test_sample_sql_gives_specs_or_parse_errors() -> None:
    statuses = []
    for sql in SAMPLE_SQL:
        try:
            extract_sql_spec(sql, "sqlite")
            statuses.append("ok")
        except SqlError as err:
            statuses.append(err.status)
    assert set(statuses) <= {"ok", "sql_unparseable"}
    assert statuses.count("ok") >= 190


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("SELECT a.x FROM a JOIN b ON a.id = b.id", "sqlite"),
        ("SELECT a.x FROM a JOIN b ON a.id = b.id WHERE a.s = \"M\"", "sqlite"),
        ("SELECT a.x FROM a JOIN b ON a.id = b.id WHERE y = 1", "sqlite"),
        ("SELECT a.x, c.z FROM a JOIN b ON a.id = b.a JOIN c ON b.c = c.id", "sqlite"),
        ("SELECT a.x FROM a JOIN b ON a.id = b.id WHERE UPPER(a.n) = 'X' GROUP BY a.x", None),
        ("SELECT a.x FROM a JOIN b ON a.id = b.id WHERE a.k IN (SELECT k FROM c)", None),
        ("SELECT COUNT(*) FROM a JOIN b ON a.id = b.id", "postgres"),
    ],
)
def test_redundant_tables_read_the_walks_columns_as_a_search_would(
    sql: str, dialect: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the root SELECT the redundant-table check takes its columns from the walk; the
    flags are those a search of the SELECT's subtree gives."""
    from stef.sql.sources import Sources

    fast = extract_sql_spec(sql, dialect).spec.flags
    monkeypatch.setattr(Sources, "_columns_under", lambda self, sel: sel.find_all(exp.Column))
    slow = extract_sql_spec(sql, dialect).spec.flags
    assert (fast["redundant_tables"], fast["bridge_tables"]) == (
        slow["redundant_tables"],
        slow["bridge_tables"],
    )


def test_set_operation_whose_branch_is_no_query_gets_a_spec() -> None:
    # "* UNION SELECT" parses to a Star on the left; reading the branches' aggregates by
    # .left raised a TypeError (an internal error) before
    spec = extract_sql_spec("* UNION SELECT")
    assert spec.spec.flags["aggregate_aliases"] == []

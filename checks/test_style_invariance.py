"""Surface style must never decide a score (issue 3's first trap). A data check: it needs
``../shared/data`` and runs as its own step of ``.ci/run`` (``pytest checks``), not in the
README's test command.

Every SQL in ``../shared/data`` is re-rendered (in its own dialect) by sqlglot in another style —
pretty-printed over several lines, function names lower-cased, table aliases renamed —
and must get exactly the same status, score, breakdown and finding kinds.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from stef.evaluator import Evaluator

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if not DATA.is_dir():  # a clone with nothing beside it
    pytest.skip(f"data checks need {DATA}", allow_module_level=True)


#: Dialects whose sqlglot printer changes more than style: T-SQL's rewrites divisions and
#: casts (5 of sede_val's 564 rows lose or gain ``integer_division`` when re-rendered), so
#: its re-rendering is no style-only change to compare against. Open in issue 12.
NOT_STYLE_ONLY = frozenset({"tsql"})


def restyle(sql: str, dialect: str = "sqlite") -> str | None:
    """The same query in another surface style, or None when sqlglot cannot re-render it."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    if tree is None:
        return None
    # a renaming that depends on the name alone keeps every scope's references intact, so a
    # derived table's alias is renamed too (``ba`` of a subquery beside ``ba`` of a table)
    renamed: set[str] = set()
    for alias in tree.find_all(exp.TableAlias):
        if alias.name and isinstance(alias.parent, (exp.Table, exp.Subquery)):
            renamed.add(alias.name.lower())
            alias.set("this", exp.to_identifier(f"src_{alias.name.lower()}"))
    for col in tree.find_all(exp.Column):
        if col.table and col.table.lower() in renamed:
            col.set("table", exp.to_identifier(f"src_{col.table.lower()}"))
    try:
        return tree.sql(dialect=dialect, pretty=True, normalize_functions="lower")
    except sqlglot.errors.SqlglotError:
        return None


def _view(e: dict) -> tuple:
    kinds = Counter(f["kind"] for f in e["findings"] if f["kind"] != "double_quoted_string")
    return e["status"], e["score"], e["breakdown"], sorted(kinds.items())


def test_restyle_changes_the_text_but_not_the_query() -> None:
    sql = (
        "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.sid WHERE T2.year = 2014"
    )
    out = restyle(sql)
    assert out is not None and out != sql
    assert "src_t1.name" in out and "\n" in out


def test_every_labelled_sql_scores_the_same_in_another_style() -> None:
    ev = Evaluator()
    rows = [
        json.loads(line) for f in sorted(DATA.glob("*.jsonl")) for line in f.open(encoding="utf-8")
    ]
    assert len(rows) > 9000, f"labelled data not found in {DATA}"
    compared = skipped = 0
    differences = []
    for r in rows:
        dialect = r.get("dialect") or "sqlite"
        if dialect in NOT_STYLE_ONLY:
            continue
        other = restyle(r["sql"], dialect)
        if other is None:
            skipped += 1
            continue
        base = {
            "question": r["question"],
            "enriched_question": r.get("evidence"),
            "dialect": dialect,
        }
        a = ev.evaluate_record({**base, "sql": r["sql"]})
        b = ev.evaluate_record({**base, "sql": other})
        compared += 1
        if _view(a) != _view(b):
            differences.append((r["id"], _view(a), _view(b)))
    assert skipped < 0.05 * len(rows)
    assert not differences, f"{len(differences)} of {compared} differ, e.g. {differences[:3]}"

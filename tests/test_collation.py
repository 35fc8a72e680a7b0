"""Letter case and the dialect: ``=`` on strings ignores case under T-SQL's and MySQL's
default collations, so a literal written in another case than the question is no finding
there; in PostgreSQL, SQLite and the others it is (``value_case_mismatch``)."""

from __future__ import annotations

import pytest

from stef.evaluator import Evaluator

QUESTION = "How many users have a nice answer badge?"
SQL = "SELECT COUNT(DISTINCT UserId) FROM Badges WHERE Name = 'Nice Answer'"


@pytest.mark.parametrize(
    ("dialect", "noted"), [("tsql", False), ("mysql", False), ("postgres", True), ("sqlite", True)]
)
def test_a_literal_in_another_case_is_noted_only_where_case_counts(
    dialect: str, noted: bool
) -> None:
    e = Evaluator().evaluate(question=QUESTION, sql=SQL, dialect=dialect)
    kinds = {f["kind"] for f in e["findings"]}
    assert ("value_case_mismatch" in kinds) is noted
    assert e["score"] == 100.0

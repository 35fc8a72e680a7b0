"""An agent's restatement of the question, against BIRD-style hint notes: which question
words it leaves unexplained, and whose attribute values the SQL must hold."""

from __future__ import annotations

from stef.evaluator import Evaluator

_EV = Evaluator()


def _findings(question: str, enriched: str, sql: str) -> list[tuple[str, str, str]]:
    e = _EV.evaluate(question=question, sql=sql, enriched_question=enriched, dialect="postgres")
    return [(f["kind"], f["severity"], f["message"]) for f in e["findings"]]


BEST = "SELECT customer_name, SUM(amount) AS total FROM orders GROUP BY customer_name"


def test_a_word_the_restatement_leaves_out_is_restated_not_unexplained_nor_hinted() -> None:
    found = _findings(
        "who are my best customers",
        "Top 10 customers ranked by total order amount",
        BEST + " ORDER BY total DESC LIMIT 10",
    )
    about_best = [(k, s) for k, s, m in found if "'best'" in m]
    assert about_best == [("question_term_restated", "info")]


def test_a_hint_note_restates_nothing() -> None:
    found = _findings(
        "who are my best customers",
        "best customers refers to the highest SUM(amount)",
        BEST + " ORDER BY total DESC LIMIT 10",
    )
    assert not [k for k, _, _ in found if k == "question_term_restated"]


def test_an_attribute_value_of_a_restatement_must_be_held_by_the_sql() -> None:
    found = _findings(
        "sales in emea last month",
        "Total sales amount in the EMEA region for the previous calendar month",
        "SELECT SUM(amount) FROM sales WHERE sale_date >= DATE_TRUNC('month', CURRENT_DATE)"
        " - INTERVAL '1 month' AND sale_date < DATE_TRUNC('month', CURRENT_DATE)",
    )
    assert ("attribute_value_unfiltered", "warning") in [(k, s) for k, s, _ in found]


def test_an_attribute_value_of_a_hint_note_is_not_asked_of_the_sql() -> None:
    found = _findings(
        "How many employees are there?",
        "employees refers to the staff table; the History department is left out",
        "SELECT COUNT(*) FROM staff",
    )
    assert "attribute_value_unfiltered" not in [k for k, _, _ in found]

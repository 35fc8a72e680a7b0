"""Bad input: each bad line gets its own error evaluation and the batch completes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from stef.batch import Summary, evaluate_stream
from stef.cli import main
from stef.evaluator import Evaluator

GOOD = {"question": "How many users are there?", "sql": "SELECT COUNT(*) FROM users"}

# (line, expected status, expected error message, or None for "ok")
CASES: list[tuple[str, str, str | None]] = [
    (
        '{"question": "How many users',
        "invalid_json",
        "malformed JSON at column 14: Unterminated string starting at",
    ),
    ("[1, 2]", "invalid_record", "a record must be a JSON object, got list"),
    ('{"sql": "SELECT 1"}', "invalid_record", "field 'question' is required"),
    ('{"question": "q?"}', "invalid_record", "field 'sql' is required"),
    (
        '{"question": ["q"], "sql": "SELECT 1"}',
        "invalid_record",
        "field 'question' must be a string, got list",
    ),
    ('{"question": "q?", "sql": 7}', "invalid_record", "field 'sql' must be a string, got int"),
    ('{"question": "", "sql": "SELECT 1"}', "empty_question", "field 'question' is empty"),
    ('{"question": "q?", "sql": ""}', "empty_sql", "field 'sql' is empty"),
    (
        json.dumps({"question": "q?", "sql": "SELECT 1 -- " + "x" * 1_000_000}),
        "sql_too_large",
        None,
    ),
    (
        json.dumps({"question": "q?", "sql": "SELECT " + "(" * 5000 + "1" + ")" * 5000}),
        "sql_too_complex",
        None,
    ),
    (
        json.dumps({"question": "q\u0000?", "sql": "SELECT 1"}),
        "invalid_record",
        "field 'question' contains a NUL byte",
    ),
    (
        json.dumps({"question": "q?", "sql": "SELECT 1\u0000"}),
        "invalid_record",
        "field 'sql' contains a NUL byte",
    ),
    ('{"question": "q?", "sql": "SELEC 1 FROM"}', "sql_unparseable", None),
    ('{"question": "q?", "sql": "DROP TABLE users"}', "sql_not_query", None),
    ('{"question": "q?", "sql": "SELECT 1; SELECT 2"}', "sql_multiple_statements", None),
    (
        json.dumps(
            {
                "question": "Wie viele Nutzer gibt es in München? 👋",
                "sql": "SELECT COUNT(*) FROM nutzer WHERE stadt = 'München'",
            }
        ),
        "ok",
        None,
    ),
    (
        json.dumps({"question": "\ud800 broken surrogate?", "sql": "SELECT 1"}),
        "invalid_record",
        "field 'question' is not valid Unicode (a lone surrogate)",
    ),
]


def test_each_bad_line_gets_its_own_error_and_the_batch_completes() -> None:
    lines = []
    for line, _, _ in CASES:
        lines.append(line)
        lines.append(json.dumps(GOOD))
    results = list(evaluate_stream(Evaluator(), lines))
    assert len(results) == 2 * len(CASES)
    for i, (line, status, message) in enumerate(CASES):
        e, good = results[2 * i], results[2 * i + 1]
        assert e["status"] == status, (line[:80], e["error"])
        assert good["status"] == "ok"
        if status == "ok":
            assert e["score"] is not None
            continue
        assert e["score"] is None and e["band"] is None and e["breakdown"] is None
        assert e["error"]
        if message is not None:
            assert e["error"].startswith(message), e["error"]


def test_error_messages_for_sql_are_specific() -> None:
    ev = Evaluator()
    big = ev.evaluate(question="q?", sql="SELECT 1 -- " + "x" * 1_000_000)
    assert big["error"] == "SQL is 1,000,012 characters long; the limit is 200,000"
    deep = ev.evaluate(question="q?", sql="SELECT " + "(" * 5000 + "1" + ")" * 5000)
    assert deep["error"] == (
        "SQL is nested 5,000 levels deep (parentheses, subqueries, CASE); the limit is 200"
    )
    drop = ev.evaluate(question="q?", sql="DROP TABLE users")
    assert "DROP" in drop["error"].upper()


def test_error_evaluation_keeps_provenance_and_the_id() -> None:
    e = Evaluator().evaluate_record(
        {"id": "x-1", "agent": "bot", "question": "", "sql": "SELECT 1"}
    )
    assert (e["id"], e["agent"], e["status"]) == ("x-1", "bot", "empty_question")
    assert e["provenance"]["stef_version"]


def test_summary_reports_coverage_over_a_mixed_batch() -> None:
    s = Summary()
    for e in evaluate_stream(Evaluator(), [line for line, _, _ in CASES]):
        s.add(e)
    d = s.to_dict()
    ok = sum(1 for _, status, _ in CASES if status == "ok")
    assert d["records"] == len(CASES)
    assert d["evaluated"] == ok
    assert d["coverage"] == round(ok / len(CASES), 4)
    assert d["statuses"]["invalid_record"] == sum(1 for _, st, _ in CASES if st == "invalid_record")


def test_cli_batch_with_bad_lines_finishes_and_writes_every_line(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(line for line, _, _ in CASES) + "\n\n")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(main, ["eval", str(src), "-o", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    written = [json.loads(x) for x in out.read_text().splitlines()]
    assert [e["status"] for e in written] == [status for _, status, _ in CASES]
    assert "coverage" in res.output
    res = CliRunner().invoke(
        main, ["eval", str(src), "-o", str(out), "--no-progress", "--min-coverage", "0.9"]
    )
    assert res.exit_code == 1
    assert "below 90.0%" in res.output


def test_hostile_metadata_and_labels_become_errors_not_crashes() -> None:
    ev = Evaluator()
    bad_meta = ev.evaluate_line(
        '{"question": "q?", "sql": "SELECT 1", "metadata": {"k": "\\ud800"}}'
    )
    assert bad_meta["status"] == "invalid_record"
    assert (
        bad_meta["error"] == "field 'metadata' is not plain JSON text (invalid Unicode or too deep)"
    )
    bad_agent = ev.evaluate_line(
        '{"question": "q?", "sql": "SELECT 1", "agent": "\\udfff", "id": "\\ud800x"}'
    )
    assert bad_agent["error"] == "field 'id' is not valid Unicode (a lone surrogate)"
    json.dumps(bad_agent, ensure_ascii=False).encode("utf-8")  # the evaluation itself is writable


def test_a_crashing_stage_costs_one_record_not_the_batch() -> None:
    def fragile(question: str, enriched: str | None, rules: object, now: object) -> object:
        if "boom" in question:
            raise AttributeError("'NoneType' object has no attribute 'group'")
        from stef.nl.spec import extract_nl_spec

        return extract_nl_spec(question, enriched)

    ev = Evaluator(nl_extractor=fragile)  # type: ignore[arg-type]
    lines = [json.dumps(GOOD), json.dumps({**GOOD, "question": "boom?"}), json.dumps(GOOD)]
    results = list(evaluate_stream(ev, lines))
    assert [e["status"] for e in results] == ["ok", "internal_error", "ok"]
    assert results[1]["error"] == (
        "internal error in STEF (AttributeError: 'NoneType' object has no attribute 'group'); "
        "please report it"
    )

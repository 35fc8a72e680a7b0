"""What the evaluator reuses between records gives the very evaluations it gave before.

``stef.evaluate()`` reuses one evaluator per set of rules, an evaluator remembers the
text analyses of recent (question, enriched question, time) triples, and the judge's
packaged weights are read once: each must be invisible in the evaluations. And what a
library call leaves on the log: none of sqlglot's notices about SQL STEF has read.
"""

from __future__ import annotations

import json
import logging
import pickle
import random
from pathlib import Path
from typing import Any

import pytest
import sqlglot

import stef
from stef.evaluator import Evaluator, shared_evaluator
from stef.judges.symbolic import SymbolicJudge
from stef.judges.weights import default_weights
from stef.rules import load_rules

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "examples" / "rules.json"
LOGS = ROOT / "examples" / "logs.jsonl"


def canonical(e: dict[str, Any]) -> str:
    """The evaluation without the fields that differ on every run."""
    e = dict(e)
    e.pop("evaluated_at")
    e["provenance"] = {k: v for k, v in e["provenance"].items() if k != "latency_ms"}
    return json.dumps(e, sort_keys=True)


def lines() -> list[str]:
    """The example log's lines (a few of them deliberately broken)."""
    return [line for line in LOGS.read_text().splitlines() if line.strip()]


def pairs() -> list[dict[str, Any]]:
    """The example records that hold a question and a SQL string."""
    out = []
    for line in lines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r.get("question"), str) and isinstance(r.get("sql"), str):
            out.append(r)
    return out


def test_remembered_analyses_give_the_evaluations_of_a_fresh_evaluator() -> None:
    recs = lines()
    rules = load_rules(str(RULES))
    fresh = [canonical(Evaluator(rules=rules).evaluate_line(r)) for r in recs]
    # every record three times, shuffled: most evaluations now reuse an analysis
    order = [i for i in range(len(recs)) for _ in range(3)]
    random.Random(16).shuffle(order)
    ev = Evaluator(rules=rules)
    for i in order:
        assert canonical(ev.evaluate_line(recs[i])) == fresh[i], recs[i]


def test_the_record_time_is_part_of_what_is_remembered() -> None:
    ev = Evaluator()
    pair = {"question": "How many orders were placed last year?", "sql": "SELECT COUNT(*) FROM o"}
    a = ev.evaluate_record({**pair, "timestamp": "2026-03-01T00:00:00Z"})
    b = ev.evaluate_record({**pair, "timestamp": "2024-03-01T00:00:00Z"})
    assert [f["values"] for f in a["nl_spec"]["filters"]] == [["2025"]]
    assert [f["values"] for f in b["nl_spec"]["filters"]] == [["2023"]]


def test_rules_set_on_an_evaluator_replace_what_it_remembers() -> None:
    ev = Evaluator()
    pair = {"question": "What is the total revenue by territory?", "sql": "SELECT 1"}
    before = ev.evaluate_record(pair)["nl_spec"]["columns"]
    ev.rules = load_rules(str(RULES))
    after = ev.evaluate_record(pair)["nl_spec"]["columns"]
    assert (
        after == Evaluator(rules=load_rules(str(RULES))).evaluate_record(pair)["nl_spec"]["columns"]
    )
    assert before != after  # territory → region, revenue → amount under the rules


def test_stef_evaluate_gives_what_a_new_evaluator_gives() -> None:
    rules = json.loads(RULES.read_text())
    for r in pairs()[:12]:
        args = (r["question"], r["sql"], r.get("enriched_question"), r.get("dialect"))
        assert canonical(stef.evaluate(*args)) == canonical(Evaluator().evaluate(*args))
        assert canonical(stef.evaluate(*args, rules=rules)) == canonical(
            Evaluator(rules=rules).evaluate(*args)
        )


def test_stef_evaluate_reuses_one_evaluator_per_content_of_the_rules() -> None:
    rules = load_rules(str(RULES))
    assert shared_evaluator() is shared_evaluator()
    assert shared_evaluator(rules) is shared_evaluator(load_rules(str(RULES)))
    assert shared_evaluator(rules) is not shared_evaluator()
    changed = rules.model_copy(update={"expected_accuracy": 0.5})
    assert shared_evaluator(changed).rules.expected_accuracy == 0.5


def test_each_judge_gets_packaged_weights_of_its_own() -> None:
    a, b = SymbolicJudge(), SymbolicJudge()
    assert a.fitted is not None and b.fitted is not None
    assert a.fitted == b.fitted
    a.fitted.weights.clear()
    a.fitted.meta["held_out"].clear()
    assert b.fitted.weights and b.fitted.meta["held_out"]
    assert default_weights() == b.fitted


def test_a_pickled_evaluator_leaves_what_it_remembers_behind() -> None:
    ev = Evaluator()
    pair = {"question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}
    first = canonical(ev.evaluate_record(pair))
    copy = pickle.loads(pickle.dumps(ev))
    assert len(pickle.dumps(copy)) == len(pickle.dumps(Evaluator()))
    assert canonical(copy.evaluate_record(pair)) == first


SCRIPT = (
    "DECLARE @UserId int = 17034\n"
    "SELECT TOP 25 Id, Score, Text FROM Comments WHERE UserId = @UserId ORDER BY Score DESC"
)


def test_stef_evaluate_keeps_sqlglots_fallback_notice_off_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a T-SQL script is scored on its final query; sqlglot's "Falling back to parsing as a
    # 'Command'" notice for it said nothing a library user could act on
    with caplog.at_level(logging.WARNING, logger="sqlglot"):
        e = stef.evaluate("Top comments of user 17034", SCRIPT, dialect="tsql")
    assert e["status"] == "ok"
    assert not [r for r in caplog.records if r.name.startswith("sqlglot")]


def test_stef_evaluate_keeps_sqlglots_unsupported_notice_off_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # STEF renders parts of the query to compare them; T-SQL's FOR XML PATH in such a part
    # made sqlglot log "Unsupported query option." mid-batch, once per record
    sql = (
        "SELECT u1.EmailHash, COUNT(u1.Id) AS Accounts, (SELECT CAST(u2.Id AS varchar) + ', '"
        " FROM Users u2 WHERE u2.EmailHash = u1.EmailHash FOR XML PATH('')) AS Ids"
        " FROM Users u1 GROUP BY u1.EmailHash"
    )
    with caplog.at_level(logging.WARNING, logger="sqlglot"):
        e = stef.evaluate("Users with several accounts", sql, dialect="tsql")
    assert e["status"] == "ok"
    assert not [r for r in caplog.records if r.name.startswith("sqlglot")]
    with caplog.at_level(logging.WARNING, logger="sqlglot"):
        sqlglot.parse_one(sql, read="tsql").sql()  # a user's own rendering still logs it
    assert any("Unsupported query option" in r.getMessage() for r in caplog.records)


def test_a_users_own_sqlglot_parse_still_logs_its_fallback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stef.evaluate("Top comments of user 17034", SCRIPT, dialect="tsql")  # filter installed
    with caplog.at_level(logging.WARNING, logger="sqlglot"):
        sqlglot.parse(SCRIPT, read="tsql")
    assert any("Falling back to parsing" in r.getMessage() for r in caplog.records)

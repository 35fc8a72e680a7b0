"""LLM NL-spec extraction merged with the deterministic extractor (scripted server on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_server import LLMServer, completion, error
from stef.llm.cache import LLMCache
from stef.llm.client import ChatClient
from stef.llm.nl_extractor import LLMNLExtractor, answer_to_spec, merge_specs, parse_spec_answer
from stef.nl.spec import extract_nl_spec
from stef.rules import Rules
from stef.spec import Aggregation, Filter, OrderKey, Spec

QUESTION = "How many orders came from Berlin in 2023?"
RULES = Rules(column_synonyms={"city": ["town"]}, value_synonyms={"berlin": ["berlin city"]})
ANSWER = {
    "filters": [
        {"column": "Town", "op": "==", "values": ["Berlin City"]},
        {"column": "status", "op": "!=", "values": ["cancelled"]},
    ],
    "aggregations": [{"func": "COUNT", "arg": "order_id", "distinct": True}],
    "group_by": [],
    "order_by": [],
    "limit": None,
    "distinct": False,
    "columns": ["town", "status", "order_id"],
}


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as srv:
        yield srv


def extractor(url: str, cache: LLMCache | None = None) -> LLMNLExtractor:
    return LLMNLExtractor(ChatClient(url, "m", None, backoff=0.01, max_retries=0), cache=cache)


def test_the_answer_is_normalised_like_the_rules_extractor_output() -> None:
    spec = answer_to_spec(parse_spec_answer(json.dumps(ANSWER)), RULES)
    assert [(f.column, f.op, f.values) for f in spec.filters] == [
        ("city", "=", ("berlin",)),
        ("status", "!=", ("cancelled",)),
    ]
    assert spec.aggregations == [Aggregation("count", "order_id", True, text="llm")]
    assert spec.columns == ["city", "status", "order_id"]


def test_a_context_term_the_model_reads_as_a_value_is_no_filter() -> None:
    acme = {"column": None, "op": "=", "values": ["ACME"]}
    bare = {"column": "status", "op": "=", "values": []}
    answer = {**ANSWER, "filters": [*ANSWER["filters"], acme, bare]}
    rules = RULES.model_copy(update={"context_terms": ["Acme"]})
    spec = answer_to_spec(parse_spec_answer(json.dumps(answer)), rules)
    assert [f.values for f in spec.filters] == [("berlin",), ("cancelled",), ()]
    spec = answer_to_spec(parse_spec_answer(json.dumps(answer)), RULES)
    assert [f.values for f in spec.filters] == [("berlin",), ("cancelled",), ("acme",), ()]


def test_merge_fills_gaps_and_never_overrides_the_rules_extractor() -> None:
    base = Spec(
        filters=[Filter(None, "=", ("2023",), func="year", clause="question")],
        aggregations=[Aggregation("count", None)],
        order_by=[OrderKey("revenue", "desc")],
        limit=5,
        cues=["how many"],
    )
    extra = Spec(
        filters=[
            Filter("order_date", "=", ("2023",), clause="question"),
            Filter("city", "=", ("berlin",), clause="question"),
        ],
        aggregations=[Aggregation("count", "order_id", True), Aggregation("sum", "amount")],
        order_by=[OrderKey("amount", "asc")],
        limit=10,
        cues=["llm"],
    )
    m = merge_specs(base, extra)
    assert [(f.column, f.func, f.values) for f in m.filters] == [
        ("order_date", "year", ("2023",)),
        ("city", None, ("berlin",)),
    ]
    assert [(a.func, a.arg, a.distinct) for a in m.aggregations] == [
        ("count", "order_id", True),
        ("sum", "amount", False),
    ]
    assert (m.order_by, m.limit, m.cues) == ([OrderKey("revenue", "desc")], 5, ["how many", "llm"])
    assert m.flags["llm_extractor"] == "merged"


def test_extraction_through_the_endpoint_then_from_the_cache(
    server: LLMServer, tmp_path: Path
) -> None:
    server.enqueue(completion(ANSWER))
    ex = extractor(server.base_url, LLMCache(tmp_path / "c.sqlite"))
    spec = ex(QUESTION, None, RULES)
    again = ex(QUESTION, None, RULES)
    ex.close()
    rules_only = extract_nl_spec(QUESTION, None, rules=RULES)
    assert ("status", "!=", ("cancelled",)) in [(f.column, f.op, f.values) for f in spec.filters]
    assert len(spec.filters) == len(rules_only.filters) + 1
    assert again == spec
    assert len(server.chat_requests) == 1
    assert (ex.usage["requests"], ex.usage["cached"]) == (1, 1)
    user = server.chat_requests[0].body["messages"][1]["content"]
    assert user.splitlines() == [
        f"Question: {QUESTION}",
        "Enriched question: (none)",
        "Your JSON spec:",
    ]
    assert (
        "Columns known to this application: city."
        in server.chat_requests[0].body["messages"][0]["content"]
    )


def test_an_invalid_answer_is_retried_once(server: LLMServer) -> None:
    server.enqueue(completion({"filters": [{"op": "approximately"}]}), completion(ANSWER))
    ex = extractor(server.base_url)
    spec = ex(QUESTION, None, RULES)
    ex.close()
    assert spec.flags["llm_extractor"] == "merged"
    shown = server.chat_requests[1].body["messages"][-1]["content"]
    assert shown.startswith(
        "That answer is not valid: filters.0.op: Value error, op must be one of"
    )


def test_a_failing_endpoint_leaves_the_rules_extractor_spec(server: LLMServer) -> None:
    server.default = error(503, "down")
    ex = extractor(server.base_url)
    spec = ex(QUESTION, "orders in Berlin", RULES)
    ex.close()
    rules_only = extract_nl_spec(QUESTION, "orders in Berlin", rules=RULES)
    assert spec.filters == rules_only.filters and spec.aggregations == rules_only.aggregations
    assert spec.flags["llm_extractor"].startswith("failed: ")
    assert "HTTP 503" in spec.flags["llm_extractor"]
    assert ex.usage["failed"] == 1


def test_the_extractor_cost_goes_into_each_evaluation_and_the_run_summary(
    server: LLMServer, tmp_path: Path
) -> None:
    from stef.accuracy.calibrate import extractor_cost
    from stef.batch import Summary
    from stef.evaluator import Evaluator

    server.enqueue(
        completion({"filters": [{"op": "approximately"}]}, prompt_tokens=300, completion_tokens=20),
        completion(ANSWER, prompt_tokens=340, completion_tokens=45),
    )
    ex = extractor(server.base_url, LLMCache(tmp_path / "c.sqlite"))
    ev = Evaluator(rules=RULES, nl_extractor=ex)
    sql = "SELECT COUNT(*) FROM orders WHERE town = 'Berlin City'"
    cold = ev.evaluate(QUESTION, sql)
    warm = ev.evaluate(QUESTION, sql)
    ex.close()
    first = cold["provenance"]["nl_extractor_usage"]
    assert {k: first[k] for k in ("requests", "prompt_tokens", "completion_tokens", "cached")} == {
        "requests": 2,
        "prompt_tokens": 640,
        "completion_tokens": 65,
        "cached": False,
    }
    again = warm["provenance"]["nl_extractor_usage"]
    assert (again["requests"], again["prompt_tokens"], again["cached"]) == (0, 0, True)
    assert (again["cached_prompt_tokens"], again["cached_completion_tokens"]) == (640, 65)
    # the first ask's time, measured inside the extraction the cold latency wraps
    assert 0 < again["cached_latency_ms"] <= first["latency_ms"]
    assert len(server.chat_requests) == 2

    summary = Summary()
    for e in (cold, warm):
        summary.add(e)
    assert summary.to_dict()["tokens"] == {"prompt_tokens": 640, "completion_tokens": 65}
    cost = extractor_cost([cold, warm])
    assert cost is not None
    assert (cost["requests"], cost["cache_hits"], cost["failed"]) == (2, 1, 0)
    assert cost["cold_tokens_per_record"] == 705.0


def test_a_failed_extraction_says_so_in_the_provenance(server: LLMServer) -> None:
    from stef.evaluator import Evaluator

    server.default = error(503, "down")
    ex = extractor(server.base_url)
    e = Evaluator(rules=RULES, nl_extractor=ex).evaluate(QUESTION, "SELECT COUNT(*) FROM orders")
    ex.close()
    assert e["status"] == "ok"  # the rules extractor's spec carries the record
    usage = e["provenance"]["nl_extractor_usage"]
    assert (usage["failed"], usage["requests"], usage["cached"]) == (True, 0, False)
    assert e["nl_spec"]["flags"]["llm_extractor"].startswith("failed: ")


def test_a_batch_with_an_llm_extractor_stays_in_one_process(server: LLMServer) -> None:
    from stef.batch import evaluate_stream
    from stef.evaluator import Evaluator

    server.enqueue(completion(ANSWER), completion(ANSWER))
    ex = extractor(server.base_url)
    records = [
        {"id": str(i), "question": q, "sql": "SELECT COUNT(*) FROM orders"}
        for i, q in enumerate((QUESTION, "How many orders came from Paris?"))
    ]
    out = list(evaluate_stream(Evaluator(rules=RULES, nl_extractor=ex), records, workers=2))
    ex.close()
    assert [e["id"] for e in out] == ["0", "1"]
    assert ex.usage["requests"] == 2  # counted here: no forked worker asked in its own copy

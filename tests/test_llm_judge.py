"""The LLM and hybrid judges against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_server import LLMServer, completion, error
from stef.align.filters import Alignment
from stef.errors import JudgeError, StefError
from stef.findings import Finding
from stef.judges.base import Judge, JudgeInput, Judgment
from stef.judges.hybrid import HybridJudge
from stef.judges.llm import LLMJudge
from stef.llm.client import ChatClient, CircuitBreaker
from stef.rules import Rules
from stef.spec import Aggregation, Filter, Spec

KEY = "sk-judge-secret-42"
GOOD = {"verdict": "correct", "confidence": 0.9, "rationale": "Counts Berlin orders.", "issues": []}


def case(question: str = "How many orders came from Berlin?", city: str = "berlin") -> JudgeInput:
    """A minimal record: both specs, an alignment with one finding, rules with an instruction."""
    nl = Spec(
        filters=[Filter("city", "=", (city,), text="from Berlin", clause="question")],
        aggregations=[Aggregation("count", None, text="How many")],
        cues=["how many"],
    )
    sql = Spec(
        filters=[Filter("city", "=", (city,), text=f"city = '{city}'")],
        aggregations=[Aggregation("count", "*", text="COUNT(*)")],
        tables=["orders"],
    )
    alignment = Alignment(
        "fully_applied",
        5.0,
        findings=[
            Finding("benign_group_by", "info", "GROUP BY city is pinned by WHERE", rule="R2")
        ],
        matched_filters=[(nl.filters[0], sql.filters[0])],
        evidence=2,
    )
    return JudgeInput(
        question=question,
        sql=f"SELECT COUNT(*) FROM orders WHERE city = '{city.title()}'",
        nl_spec=nl,
        sql_spec=sql,
        alignment=alignment,
        rules=Rules(judge_instructions=["Cancelled orders count as orders."]),
        enriched_question="Count rows of orders where city = 'Berlin'",
        dialect="postgres",
    )


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as srv:
        yield srv


def make_judge(url: str, **kw: Any) -> LLMJudge:
    client_kw = {k: kw.pop(k) for k in ("max_retries", "breaker", "concurrency") if k in kw}
    client = ChatClient(url, "judge-model", KEY, backoff=0.01, timeout=5, **client_kw)
    return LLMJudge(client, **kw)


def test_a_valid_answer_becomes_a_judgment(server: LLMServer) -> None:
    answer = {**GOOD, "verdict": "likely_correct", "confidence": 0.7, "issues": ["no date range"]}
    server.enqueue(completion(answer, prompt_tokens=410, completion_tokens=37))
    judge = make_judge(server.base_url)
    j = judge.judge(case())
    judge.close()
    assert (j.verdict, j.confidence, j.rationale, j.issues) == (
        "likely_correct",
        0.7,
        "Counts Berlin orders.",
        ["no date range"],
    )
    assert [f.to_dict() for f in j.findings] == [
        {
            "kind": "judge_issue",
            "severity": "warning",
            "message": "no date range",
            "nl": None,
            "sql": None,
            "rule": "openai_judge",
        }
    ]
    assert (j.model, j.prompt_version) == ("judge-model", "judge_v1")
    assert {k: j.usage[k] for k in ("prompt_tokens", "completion_tokens", "cached", "samples")} == {
        "prompt_tokens": 410,
        "completion_tokens": 37,
        "cached": False,
        "samples": 1,
    }
    assert j.usage["latency_ms"] > 0


def test_the_prompt_holds_the_record_after_fixed_instructions(server: LLMServer) -> None:
    server.enqueue(completion(GOOD), completion(GOOD))
    judge = make_judge(server.base_url)
    judge.judge(case())
    judge.judge(case("How many orders came from Paris?", city="paris"))
    judge.close()
    first, second = (r.body["messages"] for r in server.chat_requests)
    # the system message (instructions + the application's rules) is the same for every record
    assert first[0] == second[0] and first[0]["role"] == "system"
    assert "- Cancelled orders count as orders." in first[0]["content"]
    assert '"verdict": "correct" | "likely_correct"' in first[0]["content"]
    assert first[1]["content"].splitlines() == [
        "Question: How many orders came from Berlin?",
        "Enriched question: Count rows of orders where city = 'Berlin'",
        "SQL (postgres):",
        "SELECT COUNT(*) FROM orders WHERE city = 'Berlin'",
        "",
        'Question spec: {"aggregations":[{"func":"count"}],'
        '"filters":[{"column":"city","op":"=","values":["berlin"],"clause":"question"}]}',
        'SQL spec: {"aggregations":[{"func":"count","arg":"*"}],'
        '"filters":[{"column":"city","op":"=","values":["berlin"],"clause":"where"}],'
        '"tables":["orders"]}',
        "Filter alignment: fully_applied",
        "Aligner findings:",
        "- [info] benign_group_by: GROUP BY city is pinned by WHERE (rule: R2)",
        "Your JSON verdict:",
    ]


def test_a_malformed_answer_is_retried_with_the_error_shown(server: LLMServer) -> None:
    server.enqueue(
        completion("Sure! The SQL looks right.", prompt_tokens=400, completion_tokens=8),
        completion(GOOD, prompt_tokens=430, completion_tokens=20),
    )
    judge = make_judge(server.base_url)
    j = judge.judge(case())
    judge.close()
    assert (j.verdict, j.usage["prompt_tokens"], j.usage["completion_tokens"]) == (
        "correct",
        830,
        28,
    )
    retry = server.chat_requests[1].body["messages"]
    assert retry[2] == {"role": "assistant", "content": "Sure! The SQL looks right."}
    assert retry[3]["role"] == "user"
    assert retry[3]["content"].startswith(
        "That answer is not valid: the answer contains no JSON object."
    )


def test_an_invalid_verdict_is_retried_with_the_validation_error(server: LLMServer) -> None:
    server.enqueue(completion({"verdict": "mostly fine", "confidence": 0.8}), completion(GOOD))
    judge = make_judge(server.base_url)
    assert judge.judge(case()).verdict == "correct"
    judge.close()
    shown = server.chat_requests[1].body["messages"][3]["content"]
    assert "verdict: Input should be 'correct', 'likely_correct'" in shown


def test_two_bad_answers_are_judge_failed_never_a_guess(server: LLMServer) -> None:
    server.enqueue(completion("{not json"), completion({"verdict": "correct", "confidence": 1.5}))
    judge = make_judge(server.base_url)
    with pytest.raises(JudgeError) as e:
        judge.judge(case())
    judge.close()
    assert e.value.status == "judge_failed"
    assert e.value.message == (
        "openai judge gave no valid verdict (0/1 valid samples): invalid answer twice: "
        "the answer is not valid JSON: Expecting property name enclosed in double quotes at "
        "character 1; then confidence: Input should be less than or equal to 1"
    )
    assert len(server.chat_requests) == 2


def test_spelling_variants_of_a_verdict_are_accepted(server: LLMServer) -> None:
    server.enqueue(
        completion('```json\n{"verdict": "Potentially-Incorrect", "confidence": 0.6}\n```')
    )
    judge = make_judge(server.base_url)
    assert judge.judge(case()).verdict == "potentially_incorrect"
    judge.close()


def test_an_endpoint_that_is_down_is_judge_unavailable(server: LLMServer) -> None:
    server.default = error(503, "maintenance")
    judge = make_judge(server.base_url, max_retries=1)
    with pytest.raises(JudgeError) as e:
        judge.judge(case())
    judge.close()
    assert e.value.status == "judge_unavailable"
    assert "maintenance" in e.value.message


def test_an_open_circuit_fails_the_rest_of_a_batch_fast(server: LLMServer) -> None:
    server.default = error(502, "bad gateway")
    judge = make_judge(server.base_url, max_retries=0, concurrency=1, breaker=CircuitBreaker(2, 60))

    async def batch() -> list[str]:
        out = await asyncio.gather(
            *(judge.ajudge(case()) for _ in range(6)), return_exceptions=True
        )
        return [e.status if isinstance(e, StefError) else "ok" for e in out]

    assert asyncio.run(batch()) == ["judge_unavailable"] * 6
    assert len(server.chat_requests) == 2
    judge.close()


def test_the_plain_text_fallback_still_gives_a_verdict() -> None:
    with LLMServer(reject_response_format=True) as srv:
        srv.enqueue(completion("Verdict follows.\n" + json.dumps(GOOD)))
        judge = make_judge(srv.base_url)
        assert judge.judge(case()).verdict == "correct"
        judge.close()
        assert "response_format" not in srv.chat_requests[-1].body


def test_self_consistency_votes_and_combines_agreement_with_confidence(
    server: LLMServer,
) -> None:
    server.enqueue(
        completion({**GOOD, "confidence": 0.9, "issues": ["a"]}),
        completion({**GOOD, "confidence": 0.7, "issues": ["a", "b"]}),
        completion({**GOOD, "verdict": "incorrect", "confidence": 0.8, "issues": ["c"]}),
    )
    judge = make_judge(server.base_url, samples=3, temperature=0.7)
    j = judge.judge(case())
    judge.close()
    # 2 of 3 agree; their mean stated confidence is 0.8; γ = 2/3 × 0.8
    assert (j.verdict, j.confidence, j.usage["agreement"], j.usage["stated_confidence"]) == (
        "correct",
        0.5333,
        0.6667,
        0.8,
    )
    assert j.issues == ["a", "b"]
    assert j.usage["samples"] == 3 and j.usage["valid_samples"] == 3
    bodies = [r.body for r in server.chat_requests]
    assert sorted(b["seed"] for b in bodies) == [0, 1, 2]
    assert {b["temperature"] for b in bodies} == {0.7}


def test_one_sample_takes_gamma_from_the_stated_confidence(server: LLMServer) -> None:
    server.enqueue(completion({**GOOD, "confidence": 0.66}))
    judge = make_judge(server.base_url)
    j = judge.judge(case())
    judge.close()
    assert (j.confidence, j.usage["agreement"]) == (0.66, 1.0)
    assert "seed" not in server.chat_requests[0].body
    assert server.chat_requests[0].body["temperature"] == 0.0


def test_too_few_valid_samples_is_judge_failed(server: LLMServer) -> None:
    server.enqueue(completion(GOOD), *(completion("nope") for _ in range(4)))
    judge = make_judge(server.base_url, samples=3, temperature=0.5)
    with pytest.raises(JudgeError, match=r"\(1/3 valid samples\)") as e:
        judge.judge(case())
    judge.close()
    assert e.value.status == "judge_failed"


def test_self_consistency_needs_a_temperature() -> None:
    with pytest.raises(ValueError, match="needs a temperature above 0"):
        make_judge("http://127.0.0.1:9/v1", samples=3, temperature=0.0)


def test_describe_names_the_endpoint_but_not_the_key(server: LLMServer) -> None:
    judge = make_judge(server.base_url)
    d = judge.describe()
    judge.close()
    assert d == {
        "name": "openai",
        "model": "judge-model",
        "base_url": server.base_url,
        "prompt_version": "judge_v1",
        "samples": 1,
        "temperature": 0.0,
    }
    assert KEY not in json.dumps(d) and KEY not in repr(judge.client)


# ---------------------------------------------------------------------- hybrid


class Fixed(Judge):
    """An offline judge with a fixed answer."""

    name = "fixed"

    def __init__(self, verdict: str, confidence: float) -> None:
        self.answer = Judgment(verdict, confidence, "offline says so")

    def judge(self, case: JudgeInput) -> Judgment:
        return self.answer


def test_hybrid_keeps_a_confident_offline_verdict_and_spends_nothing(server: LLMServer) -> None:
    hybrid = HybridJudge(make_judge(server.base_url), Fixed("correct", 0.9), threshold=0.85)
    j = hybrid.judge(case())
    hybrid.close()
    assert (j.verdict, j.confidence, j.usage) == ("correct", 0.9, {"path": "offline"})
    by_default = HybridJudge(make_judge(server.base_url), Fixed("likely_correct", 0.6))
    k = by_default.judge(case())  # 0.6 is above the default threshold (0.5)
    by_default.close()
    assert (k.verdict, k.usage) == ("likely_correct", {"path": "offline"})
    assert server.chat_requests == []


@pytest.mark.parametrize(
    ("verdict", "confidence"), [("likely_correct", 0.45), ("potentially_incorrect", 0.95)]
)
def test_hybrid_asks_the_llm_when_the_offline_judge_is_unsure(
    server: LLMServer, verdict: str, confidence: float
) -> None:
    server.enqueue(completion({**GOOD, "verdict": "incorrect", "confidence": 0.8}))
    hybrid = HybridJudge(make_judge(server.base_url), Fixed(verdict, confidence))
    j = asyncio.run(hybrid.ajudge(case()))
    hybrid.close()
    assert (j.verdict, j.confidence, j.model) == ("incorrect", 0.8, "judge-model")
    assert (j.usage["path"], j.usage["offline_verdict"], j.usage["offline_confidence"]) == (
        "llm",
        verdict,
        confidence,
    )
    assert j.usage["prompt_tokens"] == 120


def test_hybrid_falls_back_to_the_offline_verdict_when_the_llm_is_down(
    server: LLMServer,
) -> None:
    server.default = error(503, "down")
    hybrid = HybridJudge(make_judge(server.base_url, max_retries=0), Fixed("likely_correct", 0.45))
    j = hybrid.judge(case())
    assert (j.verdict, j.usage["path"], j.usage["llm_error"]["status"]) == (
        "likely_correct",
        "offline_fallback",
        "judge_unavailable",
    )
    strict = HybridJudge(hybrid.llm, Fixed("likely_correct", 0.45), fallback=False)
    with pytest.raises(JudgeError, match="HTTP 503"):
        strict.judge(case())
    hybrid.close()


def test_hybrid_uses_the_symbolic_judge_by_default(server: LLMServer) -> None:
    server.enqueue(completion(GOOD))
    hybrid = HybridJudge(make_judge(server.base_url))
    d = hybrid.describe()
    hybrid.close()
    assert d["offline"]["name"] == "symbolic" and d["llm"]["name"] == "openai"
    assert hybrid.concurrency == 4


# ---------------------------------------------------------------------- CLI options


def test_build_judge_from_flags_env_and_config_file(
    server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stef.cli.llm import build_judge

    for var in ("STEF_LLM_BASE_URL", "STEF_LLM_MODEL", "STEF_LLM_API_KEY", "STEF_LLM_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(StefError, match="the openai judge needs --base-url/STEF_LLM_BASE_URL"):
        build_judge("openai", model="m")

    monkeypatch.setenv("STEF_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("STEF_LLM_MODEL", "env-model")
    monkeypatch.setenv("STEF_LLM_API_KEY", KEY)
    judge = build_judge("openai", model=None, samples=3, no_cache=True, timeout=7.5)
    assert isinstance(judge, LLMJudge)
    assert (judge.client.model, judge.samples, judge.temperature, judge.cache) == (
        "env-model",
        3,
        0.7,
        None,
    )
    assert judge.client.timeout == 7.5
    assert KEY not in json.dumps(judge.describe())
    judge.close()

    config = tmp_path / "llm.toml"
    config.write_text('[llm]\nmodel = "file-model"\nconcurrency = 9\n')
    judge = build_judge("openai", llm_config=str(config), cache=str(tmp_path / "c.sqlite"))
    assert (judge.client.model, judge.concurrency) == ("env-model", 9)  # env beats the file
    judge.close()

    hybrid = build_judge("hybrid", model="flag-model", no_cache=True, hybrid_threshold=0.7)
    assert isinstance(hybrid, HybridJudge)
    assert (hybrid.threshold, hybrid.describe()["llm"]["model"]) == (0.7, "flag-model")
    hybrid.close()
    default = build_judge("hybrid", model="flag-model", no_cache=True)
    assert default.threshold == 0.5  # type: ignore[attr-defined]
    default.close()


def test_invalid_settings_are_reported_by_name(tmp_path: Path) -> None:
    from stef.cli.llm import build_judge

    bad = tmp_path / "llm.toml"
    bad.write_text('timeout = -1\ncolour = "red"\n')
    with pytest.raises(StefError) as e:
        build_judge("openai", llm_config=str(bad))
    assert e.value.message == (
        "invalid LLM settings: timeout: Input should be greater than 0; "
        "colour: Extra inputs are not permitted"
    )


def test_stef_eval_with_the_openai_judge(server: LLMServer, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from stef.cli import main

    records = [
        {"id": "a", "question": "How many users are there?", "sql": "SELECT COUNT(*) FROM users"},
        {
            "id": "b",
            "question": "How many orders came from Berlin?",
            "sql": "SELECT COUNT(*) FROM orders WHERE city = 'Berlin'",
        },
        {"id": "c", "question": "What is the total revenue?", "sql": "SELECT SUM(amount) FROM t"},
    ]
    data, out = tmp_path / "logs.jsonl", tmp_path / "out.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    good = completion(GOOD, prompt_tokens=500, completion_tokens=50)
    server.enqueue(good, completion("nope"), completion("still nope"), good)
    result = CliRunner().invoke(
        main,
        [
            "eval", str(data), "--output", str(out), "--no-progress", "--judge", "openai",
            "--base-url", server.base_url, "--model", "m", "--api-key", KEY,
            "--no-cache", "--concurrency", "1",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    evaluations = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["id"], e["status"]) for e in evaluations] == [
        ("a", "ok"),
        ("b", "judge_failed"),
        ("c", "ok"),
    ]
    assert evaluations[0]["provenance"]["usage"]["prompt_tokens"] == 500
    assert evaluations[0]["provenance"]["judge"]["base_url"] == server.base_url
    assert KEY not in out.read_text() and KEY not in result.output
    assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in server.chat_requests)


def test_stef_calibrate_with_the_openai_judge_reports_what_it_spent(
    server: LLMServer, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from stef.cli import main

    rows = [
        {"id": f"r{i}", "question": f"How many orders came from city {i}?",
         "evidence": None, "sql": f"SELECT COUNT(*) FROM orders WHERE city = 'c{i}'",
         "correct": i % 2 == 0, "error_types": []}
        for i in range(6)
    ]  # fmt: skip
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    server.enqueue(*[completion(GOOD, prompt_tokens=300, completion_tokens=20)] * 6)
    args = [
        "calibrate", str(data), "--no-progress", "--judge", "openai", "--folds", "2",
        "--base-url", server.base_url, "--model", "m", "--concurrency", "1",
        "--cache", str(tmp_path / "c.sqlite"),
    ]  # fmt: skip
    first = CliRunner().invoke(main, [*args, "--output", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    cost = json.loads((tmp_path / "a" / "metrics.json").read_text())["llm_cost"]
    assert {k: cost[k] for k in ("records", "llm_records", "cache_hits", "requests")} == {
        "records": 6,
        "llm_records": 6,
        "cache_hits": 0,
        "requests": 6,
    }
    assert (cost["prompt_tokens"], cost["completion_tokens"]) == (1800, 120)
    assert cost["cold_tokens_per_llm_record"] == 320.0
    assert "LLM judged 6 of 6 records: 6 requests" in first.output
    assert "## LLM cost" in (tmp_path / "a" / "report.md").read_text()
    # the same records again: nothing asked, the first run's price still told
    again = CliRunner().invoke(main, [*args, "--output", str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    cost = json.loads((tmp_path / "b" / "metrics.json").read_text())["llm_cost"]
    assert (cost["cache_hits"], cost["requests"], cost["prompt_tokens"]) == (6, 0, 0)
    assert (cost["cached_prompt_tokens"], cost["cold_tokens_per_llm_record"]) == (1800, 320.0)
    assert cost["cold_seconds_per_llm_record"] is not None
    assert len(server.chat_requests) == 6

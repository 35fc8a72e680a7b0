"""The persistent LLM answer cache, alone and behind the judge (scripted server on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_server import LLMServer, completion, error
from stef.errors import JudgeError
from stef.judges.llm import LLMJudge
from stef.llm.cache import LLMCache, cache_key
from stef.llm.client import ChatClient
from test_llm_judge import GOOD, case


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as srv:
        yield srv


def judge(url: str, cache_path: Path | None, model: str = "m1", **kw: object) -> LLMJudge:
    client = ChatClient(url, model, None, backoff=0.01, max_retries=0)
    cache = LLMCache(cache_path) if cache_path else None
    return LLMJudge(client, cache=cache, **kw)  # type: ignore[arg-type]


def test_key_depends_on_model_prompt_version_and_inputs_only() -> None:
    k = cache_key("m", "judge_v1", {"messages": [{"role": "user", "content": "x"}], "t": 0})
    assert k == cache_key("m", "judge_v1", {"t": 0, "messages": [{"role": "user", "content": "x"}]})
    assert len(k) == 64
    assert k != cache_key(
        "m2", "judge_v1", {"messages": [{"role": "user", "content": "x"}], "t": 0}
    )
    assert k != cache_key("m", "judge_v2", {"messages": [{"role": "user", "content": "x"}], "t": 0})
    assert k != cache_key("m", "judge_v1", {"messages": [{"role": "user", "content": "y"}], "t": 0})


def test_values_survive_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.sqlite"
    c = LLMCache(path)
    c.put("k1", {"answers": [{"verdict": "correct"}]}, model="m", prompt_version="judge_v1")
    c.put("k1", {"answers": [{"verdict": "incorrect"}]})  # replaces
    c.close()
    c = LLMCache(path)
    assert (c.get("k1"), c.get("k2"), len(c)) == ({"answers": [{"verdict": "incorrect"}]}, None, 1)
    c.close()


def test_the_second_evaluation_of_a_record_costs_nothing(server: LLMServer, tmp_path: Path) -> None:
    server.enqueue(completion(GOOD, prompt_tokens=500, completion_tokens=40))
    j = judge(server.base_url, tmp_path / "c.sqlite")
    first, second = j.judge(case()), j.judge(case())
    j.close()
    assert len(server.chat_requests) == 1
    assert (first.verdict, first.usage["cached"], first.usage["prompt_tokens"]) == (
        "correct",
        False,
        500,
    )
    assert (second.verdict, second.confidence, second.rationale) == (
        first.verdict,
        first.confidence,
        first.rationale,
    )
    assert (second.usage["cached"], second.usage["prompt_tokens"]) == (True, 0)
    assert second.usage["completion_tokens"] == 0
    # what the cached answer cost when it was asked travels with it
    assert (second.usage["cached_prompt_tokens"], second.usage["cached_completion_tokens"]) == (
        500,
        40,
    )
    assert second.usage["cached_latency_ms"] == pytest.approx(first.usage["latency_ms"], rel=0.5)


def test_a_new_process_reuses_the_file(server: LLMServer, tmp_path: Path) -> None:
    server.enqueue(completion(GOOD))
    a = judge(server.base_url, tmp_path / "c.sqlite")
    a.judge(case())
    a.close()
    b = judge(server.base_url, tmp_path / "c.sqlite")
    assert b.judge(case()).usage["cached"] is True
    b.close()
    assert len(server.chat_requests) == 1


def test_another_model_record_or_sampling_misses(server: LLMServer, tmp_path: Path) -> None:
    server.enqueue(*(completion(GOOD) for _ in range(5)))
    path = tmp_path / "c.sqlite"
    for j, c in [
        (judge(server.base_url, path), case()),
        (judge(server.base_url, path, model="m2"), case()),
        (judge(server.base_url, path), case("How many orders came from Rome?", "rome")),
        (judge(server.base_url, path, samples=2, temperature=0.5), case()),
    ]:
        assert j.judge(c).usage["cached"] is False
        j.close()
    assert len(server.chat_requests) == 1 + 1 + 1 + 2


def test_no_cache_asks_every_time(server: LLMServer) -> None:
    server.enqueue(completion(GOOD), completion(GOOD))
    j = judge(server.base_url, None)
    assert [j.judge(case()).usage["cached"] for _ in range(2)] == [False, False]
    j.close()
    assert len(server.chat_requests) == 2


def test_failures_are_not_cached(server: LLMServer, tmp_path: Path) -> None:
    server.enqueue(error(503, "down"), completion(GOOD))
    j = judge(server.base_url, tmp_path / "c.sqlite")
    with pytest.raises(JudgeError):
        j.judge(case())
    assert j.judge(case()).usage["cached"] is False
    j.close()


def _put_in_child(cache: LLMCache) -> None:
    cache.put("from-child", {"ok": True})


def test_a_forked_worker_opens_its_own_connection(tmp_path: Path) -> None:
    import multiprocessing as mp

    cache = LLMCache(tmp_path / "c.sqlite")
    cache.put("from-parent", {"ok": True})
    child = mp.get_context("fork").Process(target=_put_in_child, args=(cache,))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert (cache.get("from-parent"), cache.get("from-child")) == ({"ok": True}, {"ok": True})
    cache.close()

"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1 (tests/llm_server.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest

from llm_server import LLMServer, Reply, completion, error
from stef.llm.client import (
    ChatClient,
    CircuitBreaker,
    CircuitOpenError,
    LLMError,
    LLMUnavailableError,
)
from stef.llm.local import free_port

KEY = "sk-test-7f3a9c1e5b"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as srv:
        yield srv


def client(url: str, **kw: object) -> ChatClient:
    opts: dict[str, object] = {"max_retries": 3, "backoff": 0.01, "timeout": 5.0}
    opts.update(kw)
    return ChatClient(url, "test-model", KEY, **opts)  # type: ignore[arg-type]


def chat(c: ChatClient, **kw: object):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        try:
            return await c.chat(MESSAGES, **kw)  # type: ignore[arg-type]
        finally:
            await c.aclose()

    return asyncio.run(go())


def test_request_is_openai_shaped_with_json_mode_and_bearer_key(server: LLMServer) -> None:
    server.enqueue(completion('{"ok": true}', prompt_tokens=11, completion_tokens=4))
    out = chat(client(server.base_url), temperature=0.3, max_tokens=64)
    assert (out.text, out.prompt_tokens, out.completion_tokens, out.json_mode) == (
        '{"ok": true}',
        11,
        4,
        True,
    )
    (req,) = server.chat_requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.body == {
        "model": "test-model",
        "messages": MESSAGES,
        "temperature": 0.3,
        "max_tokens": 64,
        "response_format": {"type": "json_object"},
    }


def test_5xx_is_retried_until_an_answer_comes(server: LLMServer) -> None:
    server.enqueue(error(503, "overloaded"), error(502, "bad gateway"), completion("fine"))
    assert chat(client(server.base_url)).text == "fine"
    assert len(server.chat_requests) == 3


def test_retry_after_header_sets_the_wait(
    server: LLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.enqueue(
        error(429, "slow down", **{"Retry-After": "0"}),
        error(429, "slow down", **{"Retry-After": "7"}),
        completion("fine"),
    )
    caplog.set_level(logging.WARNING, logger="stef.llm.client")
    # backoff alone would wait 30 s or more; Retry-After says 0, then 7 (capped to 0.05)
    c = client(server.base_url, backoff=60.0, retry_after_max=0.05)
    assert chat(c).text == "fine"
    waits = [r.getMessage().rsplit("retrying in ", 1)[1] for r in caplog.records]
    assert waits == ["0.00s", "0.05s"]


def test_gives_up_after_max_retries_as_unavailable(server: LLMServer) -> None:
    server.default = error(503, "down for maintenance")
    with pytest.raises(LLMUnavailableError) as e:
        chat(client(server.base_url, max_retries=2))
    assert e.value.status == "judge_unavailable"
    assert "failed after 3 attempts: HTTP 503" in e.value.message
    assert "down for maintenance" in e.value.message
    assert len(server.chat_requests) == 3


def test_a_request_that_times_out_is_retried(server: LLMServer) -> None:
    server.enqueue(Reply(body={"late": True}, delay=3.0), completion("on time"))
    assert chat(client(server.base_url, timeout=0.3)).text == "on time"
    assert len(server.chat_requests) == 2


def test_only_timeouts_say_so(server: LLMServer) -> None:
    server.default = Reply(body={}, delay=3.0)
    with pytest.raises(LLMUnavailableError, match=r"after 2 attempts: no answer within 0.2s"):
        chat(client(server.base_url, timeout=0.2, max_retries=1))


def test_a_client_error_is_not_retried(server: LLMServer) -> None:
    server.enqueue(error(400, "maximum context length is 4096 tokens"))
    with pytest.raises(LLMError) as e:
        chat(client(server.base_url))
    assert e.value.status == "judge_failed"
    assert "HTTP 400" in e.value.message and "maximum context length" in e.value.message
    assert len(server.chat_requests) == 1


def test_falls_back_to_plain_text_when_response_format_is_rejected() -> None:
    with LLMServer(reject_response_format=True) as srv:
        srv.enqueue(completion("first"), completion("second"))
        c = client(srv.base_url)

        async def twice() -> list[str]:
            a = await c.chat(MESSAGES)
            b = await c.chat(MESSAGES)
            await c.aclose()
            assert not a.json_mode and not b.json_mode
            return [a.text, b.text]

        assert asyncio.run(twice()) == ["first", "second"]
        # rejected once, then never asked again
        assert ["response_format" in r.body for r in srv.chat_requests] == [True, False, False]


def test_a_reply_that_is_not_a_chat_completion_fails_cleanly(server: LLMServer) -> None:
    server.enqueue(Reply(body="<html>proxy error</html>"))
    with pytest.raises(LLMError, match="not a chat completion: '<html>proxy error</html>'"):
        chat(client(server.base_url))


def test_nobody_listening_is_unavailable() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(LLMUnavailableError, match=r"after 2 attempts: cannot reach http://127"):
        chat(client(url, max_retries=1))


def test_circuit_breaker_fails_the_remaining_calls_fast(server: LLMServer) -> None:
    server.default = error(503, "down")
    c = client(server.base_url, max_retries=0, breaker=CircuitBreaker(failures=3, reset_after=60))

    async def batch() -> list[str]:
        out = []
        for _ in range(10):
            try:
                await c.chat(MESSAGES)
            except LLMUnavailableError as e:
                out.append(type(e).__name__)
        await c.aclose()
        return out

    outcomes = asyncio.run(batch())
    assert outcomes == ["LLMUnavailableError"] * 3 + ["CircuitOpenError"] * 7
    assert len(server.chat_requests) == 3


def test_circuit_open_error_says_why(server: LLMServer) -> None:
    server.default = error(500, "boom")
    c = client(server.base_url, max_retries=5, breaker=CircuitBreaker(failures=2, reset_after=30))
    with pytest.raises(CircuitOpenError) as e:
        chat(c)
    assert e.value.status == "judge_unavailable"
    assert e.value.message == (
        f"circuit open: {server.base_url} failed 2 times in a row; not calling it for 30s"
    )
    assert len(server.chat_requests) == 2


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_breaker_lets_one_trial_through_after_the_reset_time() -> None:
    clock = FakeClock()
    b = CircuitBreaker(failures=2, reset_after=10, clock=clock)
    b.record_failure()
    b.record_failure()
    assert (b.state, b.allow()) == ("open", False)
    clock.now = 10
    assert b.allow() is True  # the trial
    assert b.allow() is False  # only one at a time
    b.record_failure()  # the trial failed: open for another 10 s
    clock.now = 15
    assert (b.state, b.allow()) == ("open", False)
    clock.now = 20
    assert b.allow() is True
    b.record_success()
    assert (b.state, b.allow(), b.allow()) == ("closed", True, True)


def test_a_success_resets_the_count_of_failures() -> None:
    b = CircuitBreaker(failures=2, reset_after=10, clock=FakeClock())
    b.record_failure()
    b.record_success()
    b.record_failure()
    assert b.state == "closed"


def test_the_key_never_shows_in_errors_logs_or_repr(
    server: LLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.enqueue(
        error(503, f"overloaded (request with Bearer {KEY})"),
        error(401, f"Incorrect API key provided: {KEY}"),
    )
    c = client(server.base_url)
    with pytest.raises(LLMUnavailableError) as e:
        chat(c)
    assert e.value.status == "judge_unavailable"
    assert "HTTP 401" in e.value.message and "[redacted]" in e.value.message
    assert KEY not in e.value.message
    assert KEY not in caplog.text and "[redacted]" in caplog.text
    assert KEY not in repr(c)
    # ... though it was sent where it belongs
    assert server.chat_requests[0].headers["Authorization"] == f"Bearer {KEY}"


def test_the_client_works_from_several_event_loops(server: LLMServer) -> None:
    server.enqueue(completion("one"), completion("two"))
    c = client(server.base_url)
    assert asyncio.run(c.chat(MESSAGES)).text == "one"
    assert asyncio.run(c.chat(MESSAGES)).text == "two"


def test_no_more_than_concurrency_requests_are_in_flight(server: LLMServer) -> None:
    for i in range(8):
        reply = completion(str(i))
        reply.delay = 0.05
        server.enqueue(reply)
    c = client(server.base_url, concurrency=2)

    async def many() -> set[str]:
        out = await asyncio.gather(*(c.chat(MESSAGES) for _ in range(8)))
        await c.aclose()
        return {o.text for o in out}

    assert asyncio.run(many()) == {str(i) for i in range(8)}
    assert 1 <= server.max_in_flight <= 2

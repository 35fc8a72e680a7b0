"""An asynchronous client for any OpenAI-compatible chat-completions endpoint.

OpenAI, vLLM, Ollama, llama.cpp's server and LiteLLM proxies all speak
``POST {base_url}/chat/completions``. The client adds what a batch evaluator needs:

* bounded concurrency (``concurrency`` requests in flight at most);
* retries with exponential backoff and jitter on 429, 5xx, timeouts and refused
  connections, honouring ``Retry-After``;
* a per-request timeout;
* a :class:`CircuitBreaker`: after ``failures`` failed attempts in a row the endpoint is
  considered down and every call fails at once with :class:`CircuitOpenError` until a
  trial request succeeds ``reset_after`` seconds later;
* ``response_format: {"type": "json_object"}``, dropped for good when the server rejects it;
* the API key only in the ``Authorization`` header: never in ``repr``, logs or errors.

Errors are :class:`stef.errors.JudgeError` subclasses, so an evaluation records their
status: ``judge_unavailable`` when the endpoint cannot be used, ``judge_failed`` when one
request was refused.

>>> c = ChatClient("http://127.0.0.1:9/v1", "m", api_key="sk-secret")
>>> "sk-secret" in repr(c)
False
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from stef.errors import JudgeError

log = logging.getLogger(__name__)

_BEARER = re.compile(r"(?i)(bearer\s+)(?!\[redacted\])[A-Za-z0-9._~+/=-]+")


class LLMError(JudgeError):
    """One request failed for a reason retrying will not fix (a 4xx, a malformed reply)."""

    status = "judge_failed"


class LLMUnavailableError(LLMError):
    """The endpoint cannot be used: down, timing out, overloaded, or refusing our key."""

    status = "judge_unavailable"


class CircuitOpenError(LLMUnavailableError):
    """Too many failures in a row: calls fail fast until a trial request succeeds."""


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without the ``user:password@`` part, and that part (for Basic auth).

    >>> split_credentials("http://bot:sk-KEY@llm.local:8000/v1")
    ('http://llm.local:8000/v1', ('bot', 'sk-KEY'))
    >>> split_credentials("http://llm.local/v1")
    ('http://llm.local/v1', None)
    """
    from urllib.parse import unquote, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), (unquote(user), unquote(password))


def safe_url(url: str) -> str:
    """``url`` fit to print or store: no credentials in it.

    >>> safe_url("https://u:secret@hooks.example.com/x")
    'https://hooks.example.com/x'
    """
    return split_credentials(url)[0]


def redact(text: str, secrets: Sequence[str | None] = ()) -> str:
    """Remove secrets (and any bearer token) from ``text``.

    >>> redact("401: bad key sk-abc (Bearer sk-abc)", ["sk-abc"])
    '401: bad key [redacted] (Bearer [redacted])'
    """
    for s in secrets:
        if s:
            text = text.replace(s, "[redacted]")
    return _BEARER.sub(r"\1[redacted]", text)


class CircuitBreaker:
    """Counts failed attempts in a row; opens after ``failures`` of them.

    While open, :meth:`allow` is false until ``reset_after`` seconds have passed; then
    one trial attempt is let through (half-open). Its success closes the breaker, its
    failure opens it again for another ``reset_after`` seconds. Thread-safe.

    >>> b = CircuitBreaker(failures=2, reset_after=60)
    >>> b.record_failure(); b.allow()
    True
    >>> b.record_failure(); b.allow(), b.state
    (False, 'open')
    """

    def __init__(
        self,
        failures: int = 5,
        reset_after: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures = failures
        self.reset_after = reset_after
        self._clock = clock
        self._lock = threading.Lock()
        self._count = 0
        self._opened_at: float | None = None
        self._trial = False

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half_open``."""
        with self._lock:
            if self._opened_at is None:
                return "closed"
            if self._trial or self._clock() - self._opened_at >= self.reset_after:
                return "half_open"
            return "open"

    def allow(self) -> bool:
        """May an attempt go out now?"""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._trial or self._clock() - self._opened_at < self.reset_after:
                return False
            self._trial = True
            return True

    def record_success(self) -> None:
        with self._lock:
            self._count = 0
            self._opened_at = None
            self._trial = False

    def record_failure(self) -> None:
        with self._lock:
            self._count += 1
            if self._trial or self._count >= self.failures:
                self._opened_at = self._clock()
            self._trial = False


@dataclass
class Completion:
    """One chat-completion answer and what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    json_mode: bool = True
    model: str | None = None
    finish_reason: str | None = None


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date).

    >>> _retry_after("2"), _retry_after(None), _retry_after("soon")
    (2.0, None, None)
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _rejects_response_format(status: int, body: str) -> bool:
    """Did the server refuse ``response_format``? (4xx, or 500 as llama.cpp does.)"""
    return (400 <= status < 500 or status == 500) and status != 429 and "response_format" in body


class ChatClient:
    """Asynchronous chat-completions client; see the module docstring for its behaviour.

    The client may be used from several event loops (the synchronous judge wrapper owns
    one, a batch runner another): its HTTP pool and semaphore are made per loop, while
    the circuit breaker and the json-mode flag are shared.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 3,
        concurrency: int = 4,
        breaker: CircuitBreaker | None = None,
        backoff: float = 0.5,
        backoff_max: float = 20.0,
        retry_after_max: float = 60.0,
        json_mode: bool = True,
    ) -> None:
        # credentials in the URL go to a Basic-auth header; the URL printed, logged and
        # stored (provenance, cache) never carries them
        self.base_url, self._userinfo = split_credentials(base_url.rstrip("/"))
        self.model = model
        self._api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.breaker = breaker or CircuitBreaker()
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self.json_mode = json_mode
        self._loop: asyncio.AbstractEventLoop | None = None
        self._http: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None

    def __repr__(self) -> str:
        key = "[set]" if self._api_key else None
        return f"ChatClient(base_url={self.base_url!r}, model={self.model!r}, api_key={key})"

    def fork(self) -> ChatClient:
        """A client for the same endpoint, key and breaker, with its own connection pools."""
        client = ChatClient(
            self.base_url, self.model, self._api_key, timeout=self.timeout,
            max_retries=self.max_retries, concurrency=self.concurrency, breaker=self.breaker,
            backoff=self.backoff, backoff_max=self.backoff_max,
            retry_after_max=self.retry_after_max, json_mode=self.json_mode,
        )  # fmt: skip
        client._userinfo = self._userinfo
        return client

    def _redact(self, text: str) -> str:
        secrets = [self._api_key]
        if self._userinfo:
            user, password = self._userinfo
            secrets += [f"{user}:{password}", password if len(password) >= 4 else None]
        return redact(text, secrets)

    def _resources(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._http is None or self._sem is None:
            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            self._http = httpx.AsyncClient(
                auth=None if self._api_key else self._userinfo,  # the key wins
                headers=headers,
                timeout=httpx.Timeout(self.timeout),
                limits=httpx.Limits(max_connections=self.concurrency),
            )
            self._sem = asyncio.Semaphore(self.concurrency)
            self._loop = loop
        return self._http, self._sem

    async def aclose(self) -> None:
        """Close the HTTP pool of the current loop."""
        if self._http is not None and self._loop is asyncio.get_running_loop():
            await self._http.aclose()
        self._http = self._sem = self._loop = None

    def _body(
        self,
        messages: Sequence[dict[str, str]],
        temperature: float,
        max_tokens: int,
        seed: int | None,
        json_mode: bool,
        schema: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if seed is not None:
            body["seed"] = seed
        if json_mode:
            body["response_format"] = {"type": "json_object"}
            if schema is not None:
                body["response_format"]["schema"] = schema
        return body

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.retry_after_max)
        base = min(self.backoff_max, self.backoff * 2 ** (attempt - 1))
        return base * random.uniform(0.5, 1.0)

    def _parse(self, resp: httpx.Response, started: float, json_mode: bool) -> Completion:
        try:
            data = resp.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            snippet = self._redact(resp.text)[:200]
            raise LLMError(
                "judge_failed",
                f"{self.base_url} sent a reply that is not a chat completion: {snippet!r}",
            ) from None
        usage = data.get("usage") or {}
        return Completion(
            text=self._redact(str(text)),  # a server echoing the key must not put it in a store
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_ms=round((time.perf_counter() - started) * 1000, 1),
            json_mode=json_mode,
            model=data.get("model"),
            finish_reason=choice.get("finish_reason"),
        )

    async def chat(
        self,
        messages: Sequence[dict[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
        schema: dict[str, Any] | None = None,
    ) -> Completion:
        """Send one chat completion; retry what may succeed later; raise what will not.

        ``schema`` (a JSON Schema) goes inside ``response_format`` as llama.cpp's server
        accepts it, constraining the output to that shape; other servers may reject it.
        """
        http, sem = self._resources()
        url = f"{self.base_url}/chat/completions"
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                async with sem:  # the breaker is asked only once a slot is free
                    if not self.breaker.allow():
                        raise CircuitOpenError(
                            "judge_unavailable",
                            f"circuit open: {self.base_url} failed {self.breaker.failures} "
                            f"times in a row; not calling it for {self.breaker.reset_after:g}s",
                        )
                    json_mode = self.json_mode
                    body = self._body(messages, temperature, max_tokens, seed, json_mode, schema)
                    started = time.perf_counter()
                    resp = await http.post(url, json=body)
            except httpx.TimeoutException:
                failure = f"no answer within {self.timeout:g}s"
            except httpx.TransportError as e:
                failure = (
                    f"cannot reach {self.base_url}: {type(e).__name__}: {self._redact(str(e))}"
                )
            else:
                if resp.is_success:
                    self.breaker.record_success()
                    return self._parse(resp, started, json_mode)
                text = resp.text
                if json_mode and _rejects_response_format(resp.status_code, text):
                    log.warning(
                        "%s rejected response_format json_object (HTTP %s); asking for plain text",
                        self.base_url,
                        resp.status_code,
                    )
                    self.json_mode = False
                    self.breaker.record_success()
                    continue
                failure = f"HTTP {resp.status_code}: {self._redact(text)[:300]}"
                if resp.status_code in (401, 403, 404):
                    self.breaker.record_failure()
                    raise LLMUnavailableError("judge_unavailable", f"{url} answered {failure}")
                if resp.status_code not in (408, 409, 429) and resp.status_code < 500:
                    self.breaker.record_success()
                    raise LLMError("judge_failed", f"{url} answered {failure}")
                retry_after = _retry_after(resp.headers.get("Retry-After"))
            failure = self._redact(failure)
            self.breaker.record_failure()
            attempt += 1
            if attempt > self.max_retries:
                raise LLMUnavailableError(
                    "judge_unavailable", f"{url} failed after {attempt} attempts: {failure}"
                )
            delay = self._delay(attempt, retry_after)
            log.warning(
                "attempt %d to %s failed (%s); retrying in %.2fs", attempt, url, failure, delay
            )
            await asyncio.sleep(delay)

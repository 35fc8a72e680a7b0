"""Auth and limits of the service, against a real uvicorn server: 401, 403, 413, 429 with
Retry-After, tokens never logged, and a server that refuses to start without tokens."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from service_server import READ, TOKENS, WRITE, LiveServer, auth
from stef.cli import main
from stef.service import ServiceConfig, TokenError, create_app, load_token_file, parse_tokens

RECORD = {"id": "a1", "question": "How many users are there?", "sql": "SELECT COUNT(*) FROM users"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    config = ServiceConfig(
        store=tmp_path_factory.mktemp("auth") / "stef.db",
        tokens=parse_tokens(TOKENS),
        max_body_bytes=20_000,
        max_batch=5,
        rate_limit=None,
    )
    with LiveServer(create_app(config)) as srv:
        yield srv


def _error(r: httpx.Response) -> tuple[int, str, str | None]:
    err = r.json()["error"]
    return r.status_code, err["code"], err["field"]


def test_no_token_or_a_wrong_one_is_401(server: LiveServer) -> None:
    for headers in ({}, auth("not-a-configured-token"), {"Authorization": "Basic abc"}):
        r = httpx.post(server.url + "/v1/evaluate", json=RECORD, headers=headers)
        assert _error(r) == (401, "unauthorized", "Authorization")
        assert r.headers["WWW-Authenticate"] == "Bearer"
    assert httpx.get(server.url + "/metrics").status_code == 401
    assert httpx.get(server.url + "/healthz").status_code == 200  # probes need no token


def test_read_token_on_a_write_is_403(server: LiveServer) -> None:
    r = httpx.post(server.url + "/v1/evaluate", json=RECORD, headers=auth(READ))
    assert _error(r) == (403, "forbidden", "Authorization")
    r = httpx.post(server.url + "/v1/ingest", json={"evaluations": []}, headers=auth(READ))
    assert r.status_code == 403


def test_oversized_body_and_batch_are_413(server: LiveServer) -> None:
    big = {**RECORD, "question": "x" * 30_000}
    r = httpx.post(server.url + "/v1/evaluate", json=big, headers=auth(WRITE))
    assert _error(r) == (413, "payload_too_large", "body")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
        yield b'{"question": "'
        for _ in range(30):
            yield b"y" * 1000
        yield b'", "sql": "SELECT 1"}'

    r = httpx.post(server.url + "/v1/evaluate", content=chunks(), headers=auth(WRITE))
    assert _error(r) == (413, "payload_too_large", "body")
    r = httpx.post(server.url + "/v1/evaluate", json={"records": [RECORD] * 6}, headers=auth(WRITE))
    assert _error(r) == (413, "batch_too_large", "records")
    assert "6 items in one request; at most 5" in r.json()["error"]["message"]


def test_rate_limit_is_429_with_retry_after(tmp_path: Path) -> None:
    config = ServiceConfig(
        store=tmp_path / "s.db", tokens=parse_tokens(TOKENS), rate_limit=0.5, rate_burst=2
    )
    with LiveServer(create_app(config)) as srv, httpx.Client(base_url=srv.url) as c:
        codes = [c.get("/v1/rules", headers=auth(READ)).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        r = c.get("/v1/rules", headers=auth(READ))
        assert _error(r) == (429, "rate_limited", None)
        assert r.headers["Retry-After"] == "2"
        # the limit is per token: another token still gets through
        assert c.get("/v1/rules", headers=auth(WRITE)).status_code == 200


def test_tokens_are_never_logged(server: LiveServer, caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.DEBUG, logger="uvicorn.access"),
        caplog.at_level(logging.DEBUG, logger="uvicorn.error"),
        caplog.at_level(logging.DEBUG, logger="stef"),
    ):
        httpx.get(server.url + "/v1/evaluations", headers=auth(READ))
        httpx.post(server.url + "/login", data={"token": WRITE, "next": "/"})
        httpx.get(server.url + "/v1/evaluations", headers=auth("wrong-token-value"))
    server_side = [r for r in caplog.records if r.name.startswith(("uvicorn", "stef", "fastapi"))]
    text = "\n".join(r.getMessage() for r in server_side)
    assert "GET /v1/evaluations" in text  # the access log is there…
    for secret in (READ, WRITE, "wrong-token-value"):
        assert secret not in text  # …without a token in it


def test_dashboard_asks_for_a_token_and_signs_in_with_a_cookie(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url) as c:
        r = c.get("/evaluations")
        assert r.status_code == 401 and 'name="token"' in r.text
        r = c.post("/login", data={"token": "bad-token-123", "next": "/"})
        assert r.status_code == 401 and "not valid" in r.text
        r = c.post("/login", data={"token": READ, "next": "/evaluations"})
        assert r.status_code == 303 and r.headers["location"] == "/evaluations"
        assert "httponly" in r.headers["set-cookie"].lower()
        assert "samesite=strict" in r.headers["set-cookie"].lower()
        assert c.get("/evaluations").status_code == 200
        # the cookie is for reading pages only: a write needs the header
        assert c.post("/v1/evaluate", json=RECORD).status_code == 401


def test_no_token_refuses_to_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TokenError, match="no token configured"):
        create_app(ServiceConfig(store=tmp_path / "s.db"))
    monkeypatch.delenv("STEF_TOKENS", raising=False)
    r = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "s.db")])
    assert r.exit_code == 1 and "no token configured" in r.output
    r = CliRunner().invoke(
        main, ["serve", "--store", str(tmp_path / "s.db"), "--no-auth", "--host", "0.0.0.0"]
    )
    assert r.exit_code == 1 and "--no-auth binds to loopback only" in r.output


def test_token_lists_and_files(tmp_path: Path) -> None:
    with pytest.raises(TokenError, match="scope 'admin' is not one of read, write"):
        parse_tokens("admin:abcdefgh1")
    with pytest.raises(TokenError, match="at least 8 characters"):
        parse_tokens("read:short")
    with pytest.raises(TokenError, match="each entry is SCOPE:TOKEN") as info:
        parse_tokens("read-abcdefgh1")
    assert "abcdefgh1" not in str(info.value)
    path = tmp_path / "tokens.toml"
    path.write_text(
        'tokens = ["write:w-secret-1"]\n',
        encoding="utf-8",
    )
    assert [t.scope for t in load_token_file(path)] == ["write"]
    path.write_text(
        '[[tokens]]\nscope = "read"\ntoken = "r-secret-1"\napps = ["shop", "books"]\n',
        encoding="utf-8",
    )
    [tok] = load_token_file(path)
    assert (tok.scope, tok.apps) == ("read", frozenset({"shop", "books"}))

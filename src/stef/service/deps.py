"""FastAPI dependencies: who is asking (bearer token, or the dashboard's cookie on a
read), and the per-token rate limit. Other routers (``/v1/traces``) use the same ones:
``Depends(require_write)``.

Tokens are compared by digest and never logged: uvicorn's access log shows the method,
path and status only, and tokens are never accepted in a URL.
"""

from __future__ import annotations

import math

from fastapi import Request

from stef.service.auth import ANONYMOUS, Principal
from stef.service.errors import ApiError

#: The dashboard's cookie (HttpOnly, SameSite=Strict), honoured on GET and HEAD only.
COOKIE = "stef_token"


def _secret(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header:
        kind, _, value = header.partition(" ")
        if kind.lower() != "bearer" or not value.strip():
            raise ApiError(
                401,
                "unauthorized",
                "the Authorization header must be 'Bearer TOKEN'",
                field="Authorization",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return value.strip()
    if request.method in ("GET", "HEAD"):
        return request.cookies.get(COOKIE) or None
    return None


def identify(request: Request) -> Principal | None:
    """The principal of a request, or ``None`` when it carries no valid token."""
    state = request.app.state
    if state.no_auth:
        return ANONYMOUS
    secret = _secret(request)
    return state.tokens.find(secret) if secret else None


def _limit(request: Request, who: Principal) -> None:
    limiter = request.app.state.limiter
    if limiter is None:
        return
    wait = limiter.acquire(who.ident)
    if wait > 0:
        retry = max(1, math.ceil(wait))
        raise ApiError(
            429,
            "rate_limited",
            f"too many requests for this token; retry in {retry} s",
            headers={"Retry-After": str(retry)},
        )


def require_read(request: Request) -> Principal:
    """Any valid token (read or write), rate-limited."""
    who = identify(request)
    if who is None:
        raise ApiError(
            401,
            "unauthorized",
            "a bearer token is required (Authorization: Bearer TOKEN)",
            field="Authorization",
            headers={"WWW-Authenticate": "Bearer"},
        )
    _limit(request, who)
    request.state.principal = who
    return who


def require_write(request: Request) -> Principal:
    """A write token, rate-limited (403 for a read token)."""
    who = require_read(request)
    if not who.can_write:
        raise ApiError(403, "forbidden", "this token may read but not write", field="Authorization")
    return who

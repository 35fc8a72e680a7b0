"""Bearer tokens, their scopes and apps, and the per-token rate limit.

A token is written ``SCOPE[@APP[+APP…]]:TOKEN``: ``read`` may read, ``write`` may read and
write; ``@shop`` limits it to the evaluations of app ``shop``. ``STEF_TOKENS`` holds a
comma-separated list of them; ``--token-file`` a TOML file with the same pairs.

>>> tokens = parse_tokens("write:w-secret,read@shop+books:r-secret")
>>> [(t.scope, sorted(t.apps or ())) for t in tokens]
[('write', []), ('read', ['books', 'shop'])]
>>> TokenSet(tokens).find("r-secret").can_write
False
>>> TokenSet(tokens).find("nope") is None
True
"""

from __future__ import annotations

import hashlib
import hmac
import math
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stef.errors import StefError

SCOPES = ("read", "write")


class TokenError(StefError):
    """A token list or token file is malformed."""

    status = "invalid_tokens"


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: a scope, the apps it may touch (``None``: all) and an id
    safe to log (a hash prefix, never the token)."""

    scope: str
    apps: frozenset[str] | None
    ident: str

    @property
    def can_write(self) -> bool:
        return self.scope == "write"

    def may_see(self, app: Any) -> bool:
        """Whether an evaluation of ``app`` is visible to this principal.

        >>> Principal("read", frozenset({"a"}), "x").may_see("b")
        False
        """
        return self.apps is None or (isinstance(app, str) and app in self.apps)


#: The principal of a server started with ``--no-auth``.
ANONYMOUS = Principal("write", None, "anonymous")


@dataclass(frozen=True)
class Token:
    scope: str
    apps: frozenset[str] | None
    digest: bytes = field(repr=False)

    @property
    def principal(self) -> Principal:
        return Principal(self.scope, self.apps, self.digest.hex()[:12])


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


def parse_token(text: str, where: str = "STEF_TOKENS") -> Token:
    """One ``SCOPE[@APP+APP]:TOKEN`` pair (the error never repeats the secret)."""
    head, sep, secret = text.strip().partition(":")
    if not sep or not secret.strip():
        raise TokenError(message=f"{where}: each entry is SCOPE:TOKEN (e.g. read:…)")
    scope, at, apps_text = head.strip().partition("@")
    if scope not in SCOPES:
        raise TokenError(message=f"{where}: scope {scope!r} is not one of {', '.join(SCOPES)}")
    apps: frozenset[str] | None = None
    if at:
        names = [a.strip() for a in apps_text.split("+") if a.strip()]
        if not names:
            raise TokenError(message=f"{where}: '{scope}@' names no app")
        apps = frozenset(names)
    secret = secret.strip()
    if len(secret) < 8:
        raise TokenError(message=f"{where}: a token must be at least 8 characters long")
    return Token(scope, apps, _digest(secret))


def parse_tokens(text: str, where: str = "STEF_TOKENS") -> list[Token]:
    """Comma-separated token pairs."""
    return [parse_token(p, where) for p in text.split(",") if p.strip()]


def load_token_file(path: str | Path) -> list[Token]:
    """Tokens from a TOML file: ``tokens = ["write:…", "read@shop:…"]`` or tables
    ``[[tokens]]`` with ``scope``, ``token`` and optional ``apps``."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise TokenError(message=f"cannot read token file {where}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TokenError(message=f"{where}: not TOML ({exc})") from None
    entries = data.get("tokens")
    if not isinstance(entries, list):
        raise TokenError(message=f"{where}: expected a 'tokens' list")
    out = []
    for i, entry in enumerate(entries):
        here = f"{where}: tokens[{i}]"
        if isinstance(entry, str):
            out.append(parse_token(entry, here))
        elif isinstance(entry, dict):
            apps = entry.get("apps")
            if apps is not None and (
                not isinstance(apps, list) or not all(isinstance(a, str) for a in apps)
            ):
                raise TokenError(message=f"{here}: 'apps' must be a list of app names")
            head = str(entry.get("scope", "")) + ("@" + "+".join(apps) if apps else "")
            out.append(parse_token(f"{head}:{entry.get('token', '')}", here))
        else:
            raise TokenError(message=f"{here}: a string or a table")
    return out


class TokenSet:
    """The configured tokens, looked up by a constant-time digest comparison."""

    def __init__(self, tokens: Iterable[Token]) -> None:
        self.tokens: Sequence[Token] = tuple(tokens)

    def __len__(self) -> int:
        return len(self.tokens)

    def find(self, secret: str) -> Principal | None:
        digest = _digest(secret)
        found = None
        for token in self.tokens:
            if hmac.compare_digest(token.digest, digest):
                found = token.principal
        return found


class RateLimiter:
    """A token bucket per principal: ``rate`` requests a second, bursts of ``burst``.

    >>> limiter = RateLimiter(rate=1.0, burst=2, clock=lambda: 0.0)
    >>> [limiter.acquire("k") for _ in range(3)]
    [0.0, 0.0, 1.0]
    """

    def __init__(self, rate: float, burst: int | None = None, clock: Any = time.monotonic) -> None:
        self.rate = float(rate)
        self.burst = float(burst if burst is not None else max(1, math.ceil(rate)))
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def acquire(self, key: str) -> float:
        """Take one request from ``key``'s bucket: 0.0 when allowed, else the seconds to
        wait before the next one would be."""
        now = self.clock()
        with self._lock:
            level, last = self._buckets.get(key, (self.burst, now))
            level = min(self.burst, level + (now - last) * self.rate)
            if level >= 1.0:
                self._buckets[key] = (level - 1.0, now)
                return 0.0
            self._buckets[key] = (level, now)
            return (1.0 - level) / self.rate

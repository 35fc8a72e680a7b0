"""``stef serve``: the evaluation service (HTTP API, dashboard, Prometheus metrics).

>>> from stef.service import create_app, ServiceConfig
>>> callable(create_app) and ServiceConfig.__name__
'ServiceConfig'
"""

from __future__ import annotations

from stef.service.app import create_app
from stef.service.auth import Principal, TokenError, load_token_file, parse_tokens
from stef.service.deps import require_read, require_write
from stef.service.engine import Engine, ServiceConfig

__all__ = [
    "Engine",
    "Principal",
    "ServiceConfig",
    "TokenError",
    "create_app",
    "load_token_file",
    "parse_tokens",
    "require_read",
    "require_write",
]

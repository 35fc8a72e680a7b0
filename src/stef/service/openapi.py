"""The OpenAPI document of the service, as committed in ``docs/openapi.json``.

Regenerate it after changing the API: ``python -m stef.service.openapi > docs/openapi.json``
(a test checks that the committed file equals what the server serves).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any


def document_of(app: Any) -> str:
    """The document of an app as committed: sorted keys, two-space indent, final newline."""
    return json.dumps(app.openapi(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def document() -> str:
    """The document of a default service (on a throwaway store)."""
    from stef.service.app import create_app
    from stef.service.engine import ServiceConfig

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(ServiceConfig(store=Path(tmp) / "s.db", no_auth=True))
        try:
            return document_of(app)
        finally:
            app.state.engine.close()


if __name__ == "__main__":  # pragma: no cover
    print(document(), end="")

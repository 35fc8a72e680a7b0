"""One JSON error shape for every failure the service answers with.

``{"error": {"code": "...", "message": "...", "field": "..."}}``; ``code`` is stable (a
client may branch on it), ``field`` names the part of the request at fault when there is
one (``records[3].app``, ``limit``, ``body``).

>>> e = ApiError(403, "forbidden", "this token may only write", field="records[0].app")
>>> e.body()
{'error': {'code': 'forbidden', 'message': 'this token may only write', 'field': 'records[0].app'}}
"""

from __future__ import annotations

from typing import Any

#: Every code the service answers with, and its HTTP status.
CODES: dict[str, int] = {
    "invalid_request": 422,
    "invalid_selection": 422,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "payload_too_large": 413,
    "batch_too_large": 413,
    "unsupported_media_type": 415,
    "rate_limited": 429,
    "store_error": 503,
    "not_ready": 503,
    "internal_error": 500,
}


class ApiError(Exception):
    """An error answered as the service's JSON error shape."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "field": self.field}}


def invalid(message: str, field: str | None) -> ApiError:
    """A 422 ``invalid_request`` naming ``field``."""
    return ApiError(422, "invalid_request", message, field=field)


#: The error body as a JSON Schema, for the OpenAPI document.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "field"],
            "properties": {
                "code": {"type": "string", "enum": sorted(CODES)},
                "message": {"type": "string"},
                "field": {"type": ["string", "null"]},
            },
        }
    },
}

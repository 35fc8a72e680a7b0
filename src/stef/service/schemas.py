"""JSON Schemas of what the API takes and gives, for the OpenAPI document.

Bodies are read and checked by the routes themselves (one error shape, fields named the
way a client wrote them); these schemas document them.
"""

from __future__ import annotations

from typing import Any

from stef.service.errors import ERROR_SCHEMA

_TEXT_OR_NULL = {"type": ["string", "null"]}

RECORD: dict[str, Any] = {
    "type": "object",
    "description": "One agent record (DESIGN.md): question, SQL and provenance. A record of "
    "another shape is evaluated too and answered with an error status (invalid_record, "
    "empty_question …), never refused with an HTTP error.",
    "required": ["question", "sql"],
    "properties": {
        "id": {"type": ["string", "integer"], "description": "Record id (default: a hash)."},
        "question": {"type": "string"},
        "enriched_question": _TEXT_OR_NULL,
        "sql": {"type": "string"},
        "dialect": _TEXT_OR_NULL,
        "agent": _TEXT_OR_NULL,
        "agent_version": _TEXT_OR_NULL,
        "app": _TEXT_OR_NULL,
        "timestamp": {"type": ["string", "null"], "description": "ISO 8601 time."},
        "metadata": {"type": ["object", "null"]},
    },
}

EVALUATION: dict[str, Any] = {
    "type": "object",
    "description": "One evaluation (score, band, breakdown, findings, specs, provenance).",
    "required": ["id", "status"],
    "properties": {
        "id": {"type": "string"},
        "status": {"type": "string"},
        "score": {"type": ["number", "null"]},
        "band": _TEXT_OR_NULL,
        "error": _TEXT_OR_NULL,
    },
}

EVALUATE_BODY: dict[str, Any] = {
    "oneOf": [
        RECORD,
        {
            "type": "object",
            "required": ["records"],
            "properties": {"records": {"type": "array", "items": RECORD}},
        },
    ]
}

INGEST_BODY: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "required": ["evaluations"],
            "properties": {"evaluations": {"type": "array", "items": EVALUATION}},
        },
        EVALUATION,
    ]
}


def body(schema: dict[str, Any]) -> dict[str, Any]:
    """An ``openapi_extra`` declaring a required JSON request body."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": schema}},
        }
    }


def responses(ok: dict[str, Any], *codes: int) -> dict[int | str, dict[str, Any]]:
    """FastAPI ``responses``: the 200 schema and the error shape for ``codes``."""
    out: dict[int | str, dict[str, Any]] = {
        200: {"content": {"application/json": {"schema": ok}}, "description": "OK"}
    }
    for code in codes:
        out[code] = {
            "content": {"application/json": {"schema": ERROR_SCHEMA}},
            "description": "Error (see the code).",
        }
    return out


def obj(**props: Any) -> dict[str, Any]:
    """A JSON object schema with these required properties."""
    return {"type": "object", "required": list(props), "properties": props}


ARRAY_OF_OBJECTS = {"type": "array", "items": {"type": "object"}}
EVALUATIONS_OUT = obj(
    evaluations={"type": "array", "items": EVALUATION}, stored={"type": "boolean"}
)
INGEST_OUT = obj(received={"type": "integer"}, new={"type": "integer"})
LIST_OUT = obj(
    evaluations=ARRAY_OF_OBJECTS,
    next_cursor=_TEXT_OR_NULL,
    total={"type": ["integer", "null"]},
)
STATS_OUT = obj(
    by={"type": "array", "items": {"type": "string"}},
    window=_TEXT_OR_NULL,
    selection={"type": "string"},
    rows=ARRAY_OF_OBJECTS,
)
COMPARE_OUT = obj(verdict={"type": "string"}, reason={"type": "string"})
RULES_OUT = obj(default={"type": "object"}, apps={"type": "object"})
STATUS_OUT = obj(status={"type": "string"})

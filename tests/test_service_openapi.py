"""The committed OpenAPI document is the one the server serves, and the server keeps to
it: schemathesis sends generated requests (a bounded number per operation) to a real
uvicorn server and checks status codes, content types and bodies against the document,
and that no request gets a 5xx."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from service_server import ROOT, TOKENS, WRITE, LiveServer, auth
from stef.service import ServiceConfig, create_app, parse_tokens
from stef.service.openapi import document, document_of

COMMITTED = ROOT / "docs" / "openapi.json"
schema = schemathesis.openapi.from_path(COMMITTED)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    config = ServiceConfig(
        store=tmp_path_factory.mktemp("openapi") / "stef.db",
        tokens=parse_tokens(TOKENS),
        rate_limit=None,
    )
    with LiveServer(create_app(config)) as srv:
        yield srv


def test_committed_document_is_the_served_one(server: LiveServer) -> None:
    committed = COMMITTED.read_text(encoding="utf-8")
    assert committed == document(), "regenerate: python -m stef.service.openapi > docs/openapi.json"
    served = httpx.get(server.url + "/openapi.json").json()
    assert document_of(type("App", (), {"openapi": lambda self: served})()) == committed


def test_document_has_the_interface_names() -> None:
    paths = set(schema.raw_schema["paths"])
    assert {
        "/v1/evaluate", "/v1/ingest", "/v1/evaluations", "/v1/evaluations/{evaluation_id}",
        "/v1/stats", "/v1/compare", "/v1/rules", "/healthz", "/readyz", "/metrics",
    } <= paths  # fmt: skip


@schema.parametrize()
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_server_keeps_to_its_document(case: schemathesis.Case, server: LiveServer) -> None:
    # Selections, times and durations are strings the document cannot constrain further
    # (``since=7d``, ``baseline=agent=a``): a generated one may be refused with a 422 that
    # names it, so "every schema-valid request is accepted" is not one of the checks.
    # And a record of the wrong shape inside a batch is, by design, not an HTTP error: it
    # gets an evaluation with status ``invalid_record`` and the batch finishes (DESIGN.md),
    # so "every schema-invalid body is refused" is not one either.
    case.call_and_validate(
        base_url=server.url,
        headers=auth(WRITE),
        excluded_checks=[checks.positive_data_acceptance, checks.negative_data_rejection],
    )


def test_document_file_exists_in_docs() -> None:
    assert Path(COMMITTED).is_file()

"""Fixtures shared by the store tests: a store of each backend.

``store_target`` is parametrized over SQLite (a file in the test's directory) and
PostgreSQL: a database ``stef_test_<random>`` made once per test process on the server at
``STEF_TEST_POSTGRES`` (default ``postgresql://127.0.0.1:5432/test``) and dropped at the
end, with a fresh schema per test. Without a reachable server the PostgreSQL half skips
with the reason, unless ``CI`` is set: then it fails, for CI must run it.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

PG_URL = os.environ.get("STEF_TEST_POSTGRES", "postgresql://127.0.0.1:5432/test")


def postgres_unreachable(reason: str) -> None:
    """Skip (a user's machine) or fail (``CI`` set) for want of a PostgreSQL server."""
    message = f"PostgreSQL at {PG_URL} is not reachable: {reason}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so the PostgreSQL tests must run)", pytrace=False)
    pytest.skip(message)


def with_database(url: str, name: str) -> str:
    """``url`` naming database ``name`` instead."""
    return urlsplit(url)._replace(path=f"/{name}").geturl()


def with_schema(url: str, schema: str) -> str:
    """``url`` whose connections use ``schema`` (libpq ``options``)."""
    sep = "&" if urlsplit(url).query else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """URL of a fresh database for this test process, dropped at the end."""
    import psycopg

    try:
        admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        postgres_unreachable(" ".join(str(exc).split()))
    name = f"stef_test_{uuid.uuid4().hex[:12]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(PG_URL, name)
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.fixture
def pg_url(pg_database: str) -> Iterator[str]:
    """URL of an empty schema of its own for one test."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    yield with_schema(pg_database, schema)
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '10s'")
        # A store the test left open may hold a lock; the database goes at the end anyway.
        with contextlib.suppress(psycopg.errors.LockNotAvailable):
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path) -> str:
    """Where a test's store lives: a SQLite file, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "stef.db")
    return str(request.getfixturevalue("pg_url"))

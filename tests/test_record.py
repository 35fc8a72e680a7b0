"""Input records: every problem names the field and gets its own status."""

from __future__ import annotations

import pytest

from stef.errors import RecordError
from stef.record import parse_line, parse_record, record_id

OK = {"question": "How many users?", "sql": "SELECT COUNT(*) FROM users"}


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        ({"sql": "SELECT 1"}, "invalid_record", "field 'question' is required"),
        ({"question": "q"}, "invalid_record", "field 'sql' is required"),
        ({"question": "  ", "sql": "SELECT 1"}, "empty_question", "field 'question' is empty"),
        ({"question": "q", "sql": " \n"}, "empty_sql", "field 'sql' is empty"),
        (
            {"question": 42, "sql": "SELECT 1"},
            "invalid_record",
            "field 'question' must be a string, got int",
        ),
        (
            {"question": "q", "sql": ["SELECT 1"]},
            "invalid_record",
            "field 'sql' must be a string, got list",
        ),
        (
            {"question": "q\x00", "sql": "SELECT 1"},
            "invalid_record",
            "field 'question' contains a NUL byte",
        ),
        (
            {"question": "q", "sql": "SELECT 1\x00"},
            "invalid_record",
            "field 'sql' contains a NUL byte",
        ),
        (
            {**OK, "enriched_question": 3.5},
            "invalid_record",
            "field 'enriched_question' must be a string, got float",
        ),
        ({**OK, "metadata": "x"}, "invalid_record", "field 'metadata' must be an object, got str"),
        ({**OK, "agent": {"a": 1}}, "invalid_record", "field 'agent' must be a string, got dict"),
        (
            {"question": "q" * 20_001, "sql": "SELECT 1"},
            "invalid_record",
            "field 'question' is too long (20,001 characters > 20,000)",
        ),
        (["question"], "invalid_record", "a record must be a JSON object, got list"),
    ],
)
def test_bad_records(data: object, status: str, message: str) -> None:
    with pytest.raises(RecordError) as info:
        parse_record(data)
    assert info.value.status == status
    assert info.value.message == message


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"question": "q", "sql": ', "malformed JSON at column 26: Expecting value"),
        ("not json", "malformed JSON at column 1: Expecting value"),
        ("[" * 100_000, "malformed JSON: nested too deeply"),
    ],
)
def test_bad_lines(line: str, message: str) -> None:
    with pytest.raises(RecordError) as info:
        parse_line(line)
    assert info.value.status == "invalid_json"
    assert info.value.message == message


def test_generated_id_is_deterministic_and_given_id_is_kept() -> None:
    a = parse_record(dict(OK))
    b = parse_record(dict(OK))
    assert a.id == b.id == record_id(OK)
    assert parse_record({**OK, "id": 17}).id == "17"


def test_timestamp_and_provenance_fields() -> None:
    r = parse_record(
        {
            **OK,
            "timestamp": "2024-03-01T10:00:00Z",
            "agent_version": 1.4,
            "dialect": " Snowflake ",
            "metadata": {"team": "growth"},
        }
    )
    assert r.time is not None and r.time.year == 2024
    assert r.agent_version == "1.4"
    assert r.dialect == "snowflake"
    assert r.passthrough()["metadata"] == {"team": "growth"}
    for bad, message in [
        ("yesterday", "field 'timestamp' is not an ISO 8601 time: 'yesterday'"),
        ("2024-13-45", "field 'timestamp' is not an ISO 8601 time: '2024-13-45'"),
        (12345, "field 'timestamp' must be an ISO 8601 time such as '2026-01-31T09:30:00Z', "
         "got int 12345"),
    ]:
        with pytest.raises(RecordError) as e:
            parse_record({**OK, "timestamp": bad})
        assert e.value.status == "invalid_record"
        assert e.value.message.startswith(message)

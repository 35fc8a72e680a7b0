"""Trace and log files read into records: each fixture in tests/fixtures/interop/ and what it
must give (question, SQL, agent, version, span)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from stef.cli import main
from stef.interop.assemble import TraceAssembler
from stef.interop.fieldmap import MapError, parse_map
from stef.interop.readers import read_file
from stef.interop.spans import Span

FIXTURES = Path(__file__).parent / "fixtures" / "interop"

#: fixture, format → (question, sql, agent, agent_version, span_id) of each record, in order
CASES: dict[tuple[str, str], list[tuple[str, str, str | None, str | None, str]]] = {
    ("genai_trace.json", "otlp-json"): [
        (
            "How many orders were placed in 2025?",  # the agent's user message, not the LLM prompt
            "SELECT COUNT(*) FROM orders WHERE EXTRACT(YEAR FROM order_date) = 2025",
            "sql-bot",
            "1.4",
            "53995c3f42cd8ad8",
        )
    ],
    ("genai_llm_only.json", "otlp-json"): [
        (  # no tool span: the LLM output's SQL code block
            "What is the total revenue per region?",
            "SELECT region, SUM(amount) FROM sales GROUP BY region",
            "report-bot",
            "0.7",
            "051581bf3cb55c13",  # no agent span: the resource's service
        )
    ],
    ("openinference_trace.json", "openinference"): [
        (  # the TOOL span, not the LLM's tool call
            "Which 5 customers spent the most?",
            "SELECT customer_id, SUM(amount) AS spent FROM orders GROUP BY customer_id "
            "ORDER BY spent DESC LIMIT 5",
            "oi-sql-agent",
            "3.1",
            "c4d2e0f1a2b3c4d5",
        )
    ],
    ("phoenix_spans.jsonl", "openinference"): [
        (
            "How many users signed up last month?",
            "SELECT COUNT(*) FROM users WHERE signup_date >= DATE '2026-11-01' "
            "AND signup_date < DATE '2026-12-01'",
            "oi-sql-agent",
            None,
            "2c0b5a8f3d6e7f91",
        )
    ],
    ("langfuse_export.json", "langfuse"): [
        (
            "What is the average order amount in the North region?",
            "SELECT AVG(amount) FROM orders WHERE region = 'North'",
            "sql-bot",
            "2.0",
            "lf-obs-tool-1",
        ),
        (
            "How many products are out of stock?",
            "SELECT COUNT(*) FROM products WHERE stock = 0",
            "sql-bot",
            "2.0-rc1",
            "lf-obs-gen-2",
        ),
    ],  # lf-trace-0003 (chit-chat, no SQL) is no text-to-SQL call
}


@pytest.mark.parametrize(("name", "fmt"), list(CASES))
def test_fixture_records(name: str, fmt: str) -> None:
    items = list(read_file(FIXTURES / name, fmt))
    assert [i.error for i in items] == [None] * len(items)
    got = [
        (r["question"], r["sql"], r.get("agent"), r.get("agent_version"), r["metadata"]["span_id"])
        for r in (i.record for i in items)
        if r is not None
    ]
    assert got == CASES[(name, fmt)]


def test_ids_and_metadata_point_at_the_span() -> None:
    [item] = read_file(FIXTURES / "genai_trace.json", "otlp-json")
    r = item.record
    assert r is not None
    assert r["id"] == "4bf92f3577b34da6a3ce929d0e0e4736-53995c3f42cd8ad8"
    assert r["metadata"] == {
        "source": "otlp-json",
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
        "span_id": "53995c3f42cd8ad8",
        "span_name": "execute_tool run_sql",
        "agent_span_id": "00f067aa0ba902b7",
    }
    assert r["dialect"] == "postgres"  # db.system.name postgresql, in sqlglot's name
    assert r["timestamp"] == "2025-12-01T10:00:00.900000Z"


def _kv(key: str, value: str) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(string_value=value))


def test_otlp_protobuf_file(tmp_path: Path) -> None:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend([_kv("service.name", "proto-bot"), _kv("service.version", "5")])
    span = rs.scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes.fromhex("ab" * 16), bytes.fromhex("cd" * 8), "t"
    span.attributes.extend(
        [
            _kv("gen_ai.operation.name", "execute_tool"),
            _kv(
                "gen_ai.tool.call.arguments", '{"query": "SELECT name FROM users", "question": "x"}'
            ),
            _kv("stef.question", "Names of all users"),
        ]
    )
    path = tmp_path / "trace.pb"
    path.write_bytes(req.SerializeToString())
    [item] = read_file(path, "otlp-proto", parse_map("question=stef.question"))
    assert item.record is not None
    r = item.record
    assert (r["question"], r["sql"], r["agent"], r["agent_version"]) == (
        "Names of all users",
        "SELECT name FROM users",
        "proto-bot",
        "5",
    )
    assert r["metadata"]["span_id"] == "cd" * 8
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\xff\xff\xff")
    [item] = read_file(bad, "otlp-proto")
    assert item.error is not None and item.error.startswith("not an OTLP protobuf")


def test_field_map_on_any_log() -> None:
    fmap = parse_map("q=q,sql=query,agent=service.name,version=service.version,timestamp=ts")
    items = list(read_file(FIXTURES / "app_log.jsonl", "jsonl", fmap))
    assert [i.record for i in items[:2]] == [
        {
            "question": "How many active users are there?",
            "sql": "SELECT COUNT(*) FROM users WHERE active = 1",
            "agent": "sql-bot",
            "agent_version": "1.5",
            "timestamp": "2026-12-01T09:00:00Z",
        },
        {
            "question": "List the cities of our stores",
            "sql": "SELECT DISTINCT city FROM stores",
            "agent": "sql-bot",
            "agent_version": "1.5",
            "timestamp": "2026-12-01T09:01:00Z",
        },
    ]
    assert (items[2].where, items[2].missing) == ("line 3", ["q"])
    assert (items[3].where, items[3].error) == (
        "line 4",
        "malformed JSON: Expecting value: line 1 column 1 (char 0)",
    )


def test_bad_maps_are_named() -> None:
    with pytest.raises(MapError, match="'question' is not field=path"):
        parse_map("question")
    with pytest.raises(MapError, match="unknown record field 'answer'"):
        parse_map("answer=a")


def test_assembler_reads_a_rootless_trace_after_the_wait() -> None:
    now = [0.0]
    asm = TraceAssembler(wait=5.0, clock=lambda: now[0])
    tool = Span(
        "t",
        "b",
        parent_id="remote-parent",
        attrs={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.arguments": '{"sql": "SELECT 1"}',
        },
    )
    assert asm.add([tool]) == []
    now[0] = 4.9
    assert asm.expire() == []
    now[0] = 5.0
    [r] = asm.expire()
    assert (r["sql"], "question" in r) == ("SELECT 1", False)  # evaluated as invalid_record
    asm.done([r])
    assert asm.add([tool]) == []  # an exporter's retry: the call is not read twice


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_stef_import_writes_records_and_reports_problems(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    res = _cli(
        "import",
        str(FIXTURES / "app_log.jsonl"),
        "--from",
        "jsonl",
        "--map",
        "question=q,sql=query,agent=service.name",
        "-o",
        str(out),
    )
    assert res.exit_code == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r.get("question") for r in rows] == [
        "How many active users are there?",
        "List the cities of our stores",
        None,
    ]
    assert "app_log.jsonl line 3: no 'q'" in res.stderr
    assert "app_log.jsonl line 4: malformed JSON" in res.stderr
    assert "3 record(s) written, 2 problem(s)" in res.stderr


def test_stef_import_eval_stores_langfuse_evaluations(tmp_path: Path) -> None:
    from stef.monitor.store import open_store

    out, db = tmp_path / "ev.jsonl", tmp_path / "stef.db"
    res = _cli(
        "import",
        str(FIXTURES / "langfuse_export.json"),
        "--from",
        "langfuse",
        "--eval",
        "-o",
        str(out),
        "--store",
        str(db),
    )
    assert res.exit_code == 0
    evs = [json.loads(x) for x in out.read_text().splitlines()]
    assert [
        (e["status"], e["agent"], e["metadata"]["trace_id"], e["metadata"]["span_id"]) for e in evs
    ] == [
        ("ok", "sql-bot", "lf-trace-0001", "lf-obs-tool-1"),
        ("ok", "sql-bot", "lf-trace-0002", "lf-obs-gen-2"),
    ]
    store = open_store(db)
    assert store.count() == 2
    store.close()


def test_stef_import_eval_turns_bad_lines_into_error_evaluations(tmp_path: Path) -> None:
    out = tmp_path / "ev.jsonl"
    res = _cli(
        "import",
        str(FIXTURES / "app_log.jsonl"),
        "--from",
        "jsonl",
        "--eval",
        "--map",
        "question=q,sql=query",
        "-o",
        str(out),
    )
    assert res.exit_code == 0
    evs = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(e["status"], e["error"]) for e in evs[2:]] == [
        ("invalid_record", "field 'question' is required"),
        ("invalid_json", "malformed JSON at column 1: Expecting value"),
    ]
    assert [e["status"] for e in evs[:2]] == ["ok", "ok"]


def test_stef_import_bad_map_is_a_usage_error() -> None:
    res = CliRunner().invoke(
        main, ["import", str(FIXTURES / "app_log.jsonl"), "--from", "jsonl", "--map", "answer=a"]
    )
    assert res.exit_code == 2
    assert "unknown record field 'answer'" in res.output

"""The service's HTTP API against a real uvicorn server over a store of 3,000 evaluations:
what comes back, in which order, what is stored, and the figures the CLI gives too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from service_server import (
    BOOKS_MARK,
    EXAMPLES,
    READ,
    SHOP_READ,
    SHOP_WRITE,
    TOKENS,
    WRITE,
    LiveServer,
    auth,
    build_store,
)
from stef.cli import main
from stef.rules import load_rules
from stef.service import ServiceConfig, create_app, parse_tokens


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path_factory.mktemp("service") / "stef.db"
    return path, build_store(path)


@pytest.fixture(scope="module")
def server(stored: tuple[Path, list[dict[str, Any]]]) -> Iterator[LiveServer]:
    config = ServiceConfig(
        store=stored[0],
        rules=load_rules(EXAMPLES / "rules.json"),
        app_rules={"shop": load_rules(EXAMPLES / "rules.json")},
        tokens=parse_tokens(TOKENS),
        rate_limit=None,
        max_batch=200,
    )
    with LiveServer(create_app(config)) as srv:
        yield srv


@pytest.fixture()
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=auth(WRITE), timeout=60) as c:
        yield c


def _records(*ids: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (EXAMPLES / "logs.jsonl").read_text().splitlines()[:41]]
    by_id = {r["id"]: r for r in rows}
    return [dict(by_id[i]) for i in ids]


def test_evaluate_one_record_stores_it_and_reads_back(client: httpx.Client) -> None:
    [rec] = _records("sql-bot-1.3-003")
    rec.update(id="api-one", app="shop")
    r = client.post("/v1/evaluate", json=rec)
    assert r.status_code == 200
    [ev] = r.json()["evaluations"]
    assert (ev["id"], ev["status"], ev["score"], ev["band"]) == ("api-one", "ok", 35.0, "poor")
    assert [f["kind"] for f in ev["findings"] if f["severity"] != "info"] == ["limit_mismatch"]
    got = client.get("/v1/evaluations/api-one").json()
    assert (got["score"], got["question"]) == (35.0, rec["question"])


def test_batch_answers_in_input_order_and_is_idempotent_by_id(client: httpx.Client) -> None:
    recs = _records("sql-bot-1.3-001", "sql-bot-1.3-010", "sql-bot-1.3-004", "sql-bot-1.3-011")
    for i, rec in enumerate(recs):
        rec.update(id=f"api-batch-{i}", agent="batch-bot", app="shop")
    first = client.post("/v1/evaluate", json={"records": recs}).json()["evaluations"]
    assert [(e["id"], e["status"], e["score"]) for e in first] == [
        ("api-batch-0", "ok", 100.0),
        ("api-batch-1", "sql_unparseable", None),
        ("api-batch-2", "ok", 35.0),
        ("api-batch-3", "sql_not_query", None),
    ]
    client.post("/v1/evaluate", json={"records": recs})
    page = client.get("/v1/evaluations", params={"agent": "batch-bot"}).json()
    assert page["total"] == 4
    assert sorted(e["id"] for e in page["evaluations"]) == [f"api-batch-{i}" for i in range(4)]


def test_store_false_evaluates_without_storing(client: httpx.Client) -> None:
    [rec] = _records("sql-bot-1.3-001")
    rec.update(id="api-not-stored", app="shop")
    r = client.post("/v1/evaluate", params={"store": "false"}, json=rec)
    assert r.json()["evaluations"][0]["score"] == 100.0
    assert r.json()["stored"] is False
    missing = client.get("/v1/evaluations/api-not-stored")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"


def test_ingest_is_idempotent_and_names_the_bad_evaluation(client: httpx.Client) -> None:
    [rec] = _records("sql-bot-1.4-023")
    rec.update(id="api-ingested", app="shop")
    ev = client.post("/v1/evaluate?store=false", json=rec).json()["evaluations"][0]
    assert client.post("/v1/ingest", json={"evaluations": [ev]}).json() == {"received": 1, "new": 1}
    assert client.post("/v1/ingest", json={"evaluations": [ev]}).json() == {"received": 1, "new": 0}
    bad = client.post("/v1/ingest", json={"evaluations": [ev, {**ev, "id": "x", "score": 300}]})
    assert bad.status_code == 422
    assert bad.json()["error"] == {
        "code": "invalid_request",
        "message": "score must be a number within [0, 100] when status is ok",
        "field": "evaluations[1]",
    }


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "field", "message"),
    [
        ("post", "/v1/evaluate", {"content": b"{not json"}, "body", "the request body is not JSON"),
        ("post", "/v1/evaluate", {"json": [1, 2]}, "body", "the body must be a JSON object"),
        ("post", "/v1/evaluate", {"json": {"records": "x"}}, "records", "'records' must be a list"),
        ("post", "/v1/evaluate", {"json": {"records": [{}, 3]}}, "records[1]", "each item must"),
        ("post", "/v1/evaluate?store=maybe", {"json": {}}, "store", "store must be true or false"),
        ("get", "/v1/evaluations?limit=abc", {}, "limit", "limit must be an integer"),
        ("get", "/v1/evaluations?limit=0", {}, "limit", "limit must be within [1, 500]"),
        ("get", "/v1/evaluations?sort=bogus", {}, "sort", "sort must be one of"),
        ("get", "/v1/evaluations?band=great", {}, "band", "band must be one of"),
        ("get", "/v1/evaluations?cursor=zzz", {}, "cursor", "cursor is not one this service"),
        ("get", "/v1/evaluations?since=yesterday", {}, "since", "since:"),
        ("get", "/v1/evaluations?where=colour=red", {}, "where", "unknown selection key 'colour'"),
        ("get", "/v1/stats?window=3x", {}, "window", "not a duration"),
        ("get", "/v1/stats?by=colour", {}, "by", "colour"),
        ("get", "/v1/compare?candidate=agent=a", {}, "baseline", "baseline is required"),
    ],
)
def test_bad_input_is_a_4xx_naming_the_field(
    client: httpx.Client, method: str, path: str, kwargs: dict[str, Any], field: str, message: str
) -> None:
    r = getattr(client, method)(path, **kwargs)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert (err["code"], err["field"]) == ("invalid_request", field)
    assert message in err["message"]


def test_unknown_route_uses_the_error_shape(client: httpx.Client) -> None:
    r = client.get("/v1/nothing-here")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"


def test_pages_of_a_filtered_list_cover_the_selection_once(
    client: httpx.Client, stored: tuple[Path, list[dict[str, Any]]]
) -> None:
    wanted = {
        e["id"] for e in stored[1] if e.get("agent") == "insight-agent" and e["app"] == "shop"
    }
    seen: list[str] = []
    params: dict[str, Any] = {"agent": "insight-agent", "app": "shop", "limit": 97, "sort": "time"}
    while True:
        page = client.get("/v1/evaluations", params=params).json()
        assert page["total"] == len(wanted)
        seen += [e["id"] for e in page["evaluations"]]
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert len(seen) == len(set(seen)) and set(seen) == wanted


def test_filters_by_finding_band_text_and_error_status(
    client: httpx.Client, stored: tuple[Path, list[dict[str, Any]]]
) -> None:
    evs = stored[1]
    built = {e["id"] for e in evs}  # other tests add their own records beside these

    def ids(params: dict[str, Any]) -> set[str]:
        page = client.get("/v1/evaluations", params={**params, "limit": 500}).json()
        return {e["id"] for e in page["evaluations"]} & built

    limit_mismatch = {
        e["id"] for e in evs if any(f["kind"] == "limit_mismatch" for f in e["findings"])
    }
    assert ids({"finding": "limit_mismatch"}) == limit_mismatch
    poor_shop = {e["id"] for e in evs if e["band"] == "poor" and e["app"] == "shop"}
    assert ids({"band": "poor", "app": "shop"}) == poor_shop
    top5 = {e["id"] for e in evs if "top 5 customers" in (e.get("question") or "").lower()}
    assert top5 and ids({"q": "TOP 5 customers"}) == top5
    unparseable = {e["id"] for e in evs if e["status"] == "sql_unparseable"}
    assert ids({"status": "sql_unparseable"}) == unparseable


def test_sorting_by_score(client: httpx.Client) -> None:
    page = client.get("/v1/evaluations", params={"sort": "score", "limit": 200}).json()
    scores = [e["score"] for e in page["evaluations"]]
    assert scores == sorted(scores) and scores[0] == 10.0


def test_stats_are_the_cli_figures(client: httpx.Client, stored: tuple[Path, Any]) -> None:
    got = client.get("/v1/stats", params={"by": "agent,agent_version", "window": "1d"}).json()
    cli = CliRunner().invoke(
        main, ["stats", "--store", str(stored[0]), "--window", "1d", "--json", "--top", "3"]
    )
    assert cli.exit_code == 0, cli.output
    assert got["rows"] == json.loads(cli.output)
    assert got["by"] == ["agent", "agent_version"] and got["window"] == "1d"


def test_compare_is_the_cli_result(client: httpx.Client, stored: tuple[Path, Any]) -> None:
    base, cand = "agent=sql-bot,agent_version=1.3", "agent=sql-bot,agent_version=1.4"
    got = client.get("/v1/compare", params={"baseline": base, "candidate": cand}).json()
    cli = CliRunner().invoke(
        main,
        ["compare", "--store", str(stored[0]), "--baseline", base, "--candidate", cand, "--json"],
    )
    assert got == json.loads(cli.output)
    assert got["verdict"] == "better"


def test_rules_health_and_readiness(client: httpx.Client) -> None:
    rules = client.get("/v1/rules").json()
    assert sorted(rules["apps"]) == ["shop"]
    assert rules["default"]["benign_filters"] == rules["apps"]["shop"]["benign_filters"]
    assert client.get("/healthz").json()["status"] == "ok"
    assert client.get("/readyz").json() == {"status": "ready"}


def test_metrics_count_what_the_service_evaluated(client: httpx.Client) -> None:
    [rec] = _records("sql-bot-1.3-007")
    rec.update(id="api-metrics", agent="metrics-bot", agent_version="9", app="shop")
    client.post("/v1/evaluate", json=rec)
    text = client.get("/metrics").text
    assert (
        'stef_evaluations_total{agent="metrics-bot",agent_version="9",app="shop",band="poor",'
        'status="ok"} 1.0'
    ) in text
    assert (
        'stef_score_bucket{agent="metrics-bot",agent_version="9",app="shop",le="50.0"} 1.0' in text
    )
    assert "stef_evaluation_seconds_count" in text and "stef_store_write_seconds_count" in text


# -- tenants --------------------------------------------------------------------------


def test_app_token_sees_only_its_app_everywhere(
    server: LiveServer, stored: tuple[Path, list[dict[str, Any]]]
) -> None:
    books = next(e for e in stored[1] if e["app"] == "books" and e["status"] == "ok")
    with httpx.Client(base_url=server.url, headers=auth(READ), timeout=60) as c:
        every_app = c.get("/v1/stats", params={"by": "app"}).json()["rows"]
    assert {r["app"] for r in every_app} == {"books", "shop"}
    with httpx.Client(base_url=server.url, headers=auth(SHOP_READ), timeout=60) as c:
        page = c.get("/v1/evaluations", params={"limit": 500}).json()
        assert {e["app"] for e in page["evaluations"]} == {"shop"}
        assert c.get(f"/v1/evaluations/{books['id']}").status_code == 404
        forbidden = c.get("/v1/evaluations", params={"app": "books"})
        assert (forbidden.status_code, forbidden.json()["error"]["field"]) == (403, "app")
        rows = c.get("/v1/stats", params={"by": "app"}).json()["rows"]
        assert rows == [r for r in every_app if r["app"] == "shop"]
        cmp = c.get("/v1/compare", params={"baseline": "app=books", "candidate": "app=shop"})
        assert (cmp.status_code, cmp.json()["error"]["field"]) == (403, "baseline")
        assert 'app="books"' not in c.get("/metrics").text
        for path in ("/", "/evaluations?limit=500", "/evaluations?q=books", "/compare"):
            html = c.get(path).text
            assert BOOKS_MARK not in html, path
        assert c.get(f"/evaluations/{books['id']}").status_code == 404


def test_app_token_writes_only_its_app(server: LiveServer) -> None:
    [rec] = _records("sql-bot-1.3-001")
    with httpx.Client(base_url=server.url, headers=auth(SHOP_WRITE), timeout=60) as c:
        r = c.post(
            "/v1/evaluate",
            json={
                "records": [{**rec, "id": "t1", "app": "shop"}, {**rec, "id": "t2", "app": "books"}]
            },
        )
        assert r.status_code == 403
        assert r.json()["error"]["field"] == "records[1].app"
        assert c.get("/v1/evaluations/t1").status_code == 404  # nothing of a refused batch
        filled = c.post("/v1/evaluate", json={**rec, "id": "t3", "app": None}).json()
        assert filled["evaluations"][0]["app"] == "shop"
    with httpx.Client(base_url=server.url, headers=auth(READ), timeout=60) as c:
        assert c.get("/v1/evaluations/t3").json()["app"] == "shop"

"""The dashboard in a real browser: Debian's chromium driven by Playwright (never a
downloaded browser) against a live server over 3,000 stored evaluations. Sign in, filter
by agent and finding, open a record, check what it shows, keep screenshots."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service_server import READ, TOKENS, LiveServer, build_store
from stef.service import ServiceConfig, create_app, parse_tokens

CHROMIUM = os.environ.get("STEF_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveServer, list[dict[str, Any]]]]:
    path = tmp_path_factory.mktemp("browser") / "stef.db"
    evaluations = build_store(path)
    config = ServiceConfig(store=path, tokens=parse_tokens(TOKENS), rate_limit=None)
    with LiveServer(create_app(config)) as srv:
        yield srv, evaluations


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs it with apt-get install chromium")
        pytest.skip(f"no browser at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def test_filter_open_a_record_and_read_it(
    site: tuple[LiveServer, list[dict[str, Any]]], browser: Any, tmp_path: Path
) -> None:
    srv, evaluations = site
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(srv.url + "/")
    assert page.locator("h1").inner_text() == "Sign in"
    page.fill("input[name=token]", READ)
    with page.expect_navigation():  # the sign-in page is served at "/" too: wait for the post
        page.keyboard.press("Enter")  # a real form: Enter submits it
    page.wait_for_url(srv.url + "/")
    assert page.locator("h1").inner_text() == "Overview"
    assert page.locator(".card .v").first.inner_text() == "3000"
    assert page.get_by_role("link", name="insight-agent 2.0").count() == 1
    assert page.locator(".chart svg").count() == 3  # over time, bands, classes
    page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)

    page.get_by_role("link", name="Evaluations", exact=True).click()
    page.select_option("select[name=agent]", "insight-agent")
    page.select_option("select[name=finding]", "filter_missing")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/evaluations?*")
    expected = [
        e
        for e in evaluations
        if e["agent"] == "insight-agent"
        and any(f["kind"] == "filter_missing" for f in e["findings"])
    ]
    rows = page.locator("#evaluations tbody tr")
    assert page.locator("#count").inner_text() == f"1–50 of {len(expected)}"
    assert rows.count() == 50
    for i in range(rows.count()):
        text = rows.nth(i).inner_text()
        assert "insight-agent" in text and "filter_missing" in text
    newest = max(expected, key=lambda e: e["timestamp"])
    page.screenshot(path=str(tmp_path / "list.png"), full_page=True)

    rows.first.get_by_role("link").click()
    page.wait_for_url(f"**/evaluations/{newest['id']}")
    assert page.locator("#question").inner_text() == newest["question"]
    assert page.locator("#score").inner_text() == f"{newest['score']:.1f}"
    findings = page.locator("#findings").inner_text()
    for f in newest["findings"]:
        assert f["kind"] in findings
    marks = page.locator("#sql mark")
    assert marks.count() >= 1
    fragments = [f["sql"] for f in newest["findings"] if f.get("sql")]
    assert any(
        marks.nth(i).inner_text().rstrip("0123456789,") in fragments for i in range(marks.count())
    )
    assert page.locator("#breakdown").inner_text().count("filter status") == 1
    page.screenshot(path=str(tmp_path / "record.png"), full_page=True)
    print("screenshots in", tmp_path)


def test_error_records_are_listed_and_searchable(
    site: tuple[LiveServer, list[dict[str, Any]]], browser: Any, tmp_path: Path
) -> None:
    srv, evaluations = site
    context = browser.new_context()
    page = context.new_page()
    page.goto(srv.url + "/login")
    page.fill("input[name=token]", READ)
    page.get_by_role("button", name="Sign in").click()
    page.goto(srv.url + "/evaluations?status=sql_not_query")
    n = sum(1 for e in evaluations if e["status"] == "sql_not_query")
    assert page.locator("#count").inner_text() == f"1–{min(n, 50)} of {n}"
    assert page.locator("#evaluations .status-err").first.inner_text() == "sql_not_query"
    page.fill("input[name=q]", "DELETE")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=DELETE*")
    assert "DELETE" in page.locator("#evaluations tbody tr").first.inner_text().upper()
    context.close()


def test_the_report_file_pages_offline(
    site: tuple[LiveServer, list[dict[str, Any]]], browser: Any, tmp_path: Path
) -> None:
    """``stef report``'s file, opened from disk with the network cut: the same pages, one
    shown at a time, the list paged inside the file, a record's page a click away."""
    from stef.monitor.store import open_store
    from stef.service.report import build_report

    srv, _ = site
    store = open_store(srv.app.state.engine.config.store)
    try:
        html = build_report(store, max_records=120, page_size=50)
        worst = list(store.query(status="ok", order_by="score", limit=60))
    finally:
        store.close()
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    context = browser.new_context(offline=True)
    page = context.new_page()
    page.goto(path.as_uri())

    def shown() -> list[str]:
        return [s.get_attribute("id") for s in page.locator("section.page").all() if s.is_visible()]

    assert shown() == ["overview"]
    assert page.locator("#overview .card .v").first.inner_text() == "3000"
    assert page.locator("#overview .chart svg").count() == 3
    page.get_by_role("link", name="Evaluations", exact=True).click()
    assert shown() == ["evaluations-1"]
    assert page.locator("#evaluations-1-count").inner_text() == "1–50 of 3000"
    page.locator("#evaluations-1").get_by_role("link", name="Next →").first.click()
    assert shown() == ["evaluations-2"]
    rows = page.locator("#evaluations-2-evaluations tbody tr")
    assert rows.count() == 50
    assert rows.nth(9).locator("td").nth(4).inner_text() == (worst[59]["question"] or "")
    rows.nth(9).get_by_role("link").click()
    [record] = shown()
    assert record.startswith("r-")
    assert page.locator(f"#{record}-question").inner_text() == worst[59]["question"]
    assert page.locator(f"#{record}-score").inner_text() == f"{worst[59]['score']:.1f}"
    page.screenshot(path=str(tmp_path / "report-record.png"), full_page=True)
    page.go_back()
    assert shown() == ["evaluations-2"]
    context.close()

"""``stef report``: the dashboard's pages in one offline HTML file — the overview, the
evaluation list paged inside the file, a page per listed record, a comparison."""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from stef.cli import main
from stef.monitor.store import Selection, open_store
from stef.service.pages import anchor
from stef.service.report import build_report

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import make_evaluations


class Page(HTMLParser):
    """Every URL the file would load or link to, its tags, and its page sections."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.sections: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "section" and a.get("class") == "page":
            self.sections.append(a["id"])
        for name, value in attrs:
            if name in ("src", "href", "action") or name == "xlink:href":
                self.urls.append(value or "")


def _parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


def _section(html: str, section_id: str) -> str:
    return html.split(f'<section class="page" id="{section_id}"')[1].split("</section>")[0]


def _listed_ids(html: str, section_id: str) -> list[str]:
    """The record anchors a list page links to, in order."""
    return re.findall(r'<td><a href="#(r-[0-9a-f]{16})">', _section(html, section_id))


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "stef.db")
    s.write(make_evaluations(300, seed=1, step_s=900, error_rate=0.05))
    s.write(make_evaluations(300, seed=2, agent_version="1.4", quality=-0.25, step_s=900))
    nasty = make_evaluations(1, seed=9, id_prefix="nasty")[0]
    nasty.update(
        question="<script>alert(1)</script> revenue?",
        timestamp="2024-06-01T00:00:00Z",
        status="ok",
        score=1.0,
        band="poor",
        findings=[
            {"kind": "filter_missing", "severity": "error", "message": "region <b>"}
            | {"sql": "orders"}
        ],
    )
    s.write([nasty])
    yield s
    s.close()


def test_the_report_is_self_contained_and_has_every_page(store):
    html = build_report(
        store, baseline="agent_version=1.3", candidate="agent_version=1.4", now=1714521600.0
    )
    page = _parse(html)
    # nothing fetched, every link inside the file, to an element that is there
    assert "script" not in page.tags and "link" not in page.tags and "form" not in page.tags
    assert [u for u in page.urls if not u.startswith("#")] == []
    assert {u[1:] for u in page.urls} <= page.ids
    # 601 records: 13 list pages of 50, a page per record, the comparison, the overview last
    lists = [f"evaluations-{n}" for n in range(1, 14)]
    assert page.sections[:13] == lists and page.sections[-2:] == ["compare", "overview"]
    assert len(page.sections) == 13 + 601 + 2
    for heading in (
        "Overview", "Agents and versions", "Score over time, with coverage", "Bands",
        "Top findings", "Error records", "Evaluations", "Compare two selections",
        "Score distribution", "Question", "Enriched question", "SQL", "Findings",
    ):  # fmt: skip
        assert f">{heading}<" in html, heading
    assert "Generated 2024-05-01T00:00:00Z" in html
    assert "601 of 601 records listed" in html
    assert re.search(r'<p class="verdict verdict-worse" id="compare-verdict">worse', html)
    # user text is escaped, on the list and on the record's page, its finding marked in the SQL
    assert "<script>alert" not in html
    nasty = _section(html, anchor("nasty-0"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt; revenue?" in nasty
    assert "region &lt;b&gt;" in nasty and '<mark class="m-error"' in nasty


def test_the_list_is_paged_in_the_file_lowest_score_first_then_errors(store):
    html = build_report(store, page_size=50)
    scored = list(store.query(status="ok", order_by="score"))
    errors = [ev for ev in store.query(order_by="-time") if ev["status"] != "ok"]
    assert errors  # the factory made some
    listed = [a for n in range(1, 14) for a in _listed_ids(html, f"evaluations-{n}")]
    assert listed == [anchor(ev["id"]) for ev in scored + errors]
    second = _section(html, "evaluations-2")
    assert '<span id="evaluations-2-count">51–100 of 601</span>' in second
    assert '<a href="#evaluations-1" rel="prev">' in second
    assert '<a href="#evaluations-3" rel="next">' in second
    last = _section(html, "evaluations-13")
    assert '<span id="evaluations-13-count">601–601 of 601</span>' in last
    assert 'rel="next"' not in last
    # an error record's page shows its status and error
    err = _section(html, anchor(errors[0]["id"]))
    assert f'<span class="status-err">{errors[0]["status"]}</span>' in err


def test_max_records_bounds_the_list_and_the_record_pages(store):
    html = build_report(store, selection=Selection.parse("agent_version=1.4"), max_records=20)
    page = _parse(html)
    assert len([s for s in page.sections if s.startswith("r-")]) == 20
    assert "selection: agent_version=1.4 · 20 of 300 records listed" in html
    assert '<span id="evaluations-1-count">1–20 of 300</span>' in html


def test_an_empty_store_says_so(tmp_path):
    s = open_store(tmp_path / "empty.db")
    html = build_report(s)
    s.close()
    assert "No evaluations stored for this selection yet." in html
    assert "No evaluations match" in html
    assert "<svg" not in html


def test_stef_report_writes_the_file(tmp_path, store):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        main,
        [
            "report", "--store", str(store.path), "--output", str(out),
            "--where", "agent_version=1.4", "--window", "6h", "--title", "Weekly SQL quality",
            "--page-size", "100",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {out} (")
    html = out.read_text()
    assert "<title>Weekly SQL quality</title>" in html
    assert "selection: agent_version=1.4 · 300 of 300 records listed" in html
    assert "Mean score per 6 h window of record time" in html
    lists = [s for s in _parse(html).sections if s.startswith("evaluations-")]
    assert lists == ["evaluations-1", "evaluations-2", "evaluations-3"]


def test_stef_report_refuses_half_a_comparison(tmp_path, store):
    result = CliRunner().invoke(
        main, ["report", "--store", str(store.path), "--baseline", "agent_version=1.3"]
    )
    assert result.exit_code == 2
    assert "--baseline and --candidate go together" in result.output

"""``stef report``: one offline HTML file with the figures, charts, comparison and worst records."""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from stef.cli import main
from stef.monitor.report_html import build_report
from stef.monitor.store import Selection, open_store

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import make_evaluations


class Links(HTMLParser):
    """Collects every URL the page would load or link to."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") or (
                name == "xlink:href" and value and not value.startswith("#")
            ):
                self.urls.append(value or "")


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "stef.db")
    s.write(make_evaluations(300, seed=1, step_s=900, error_rate=0.05))
    s.write(make_evaluations(300, seed=2, agent_version="1.4", quality=-0.25, step_s=900))
    nasty = make_evaluations(1, seed=9, id_prefix="nasty")[0]
    # Stored last, so it is the first example of its finding kind.
    nasty.update(
        question="<script>alert(1)</script> revenue?",
        timestamp="2024-06-01T00:00:00Z",
        findings=[{"kind": "filter_missing", "severity": "error", "message": "region <b>"}],
    )
    s.write([nasty])
    yield s
    s.close()


def test_the_report_is_self_contained_and_has_every_section(store):
    html = build_report(
        store,
        baseline=Selection.parse("agent_version=1.3"),
        candidate=Selection.parse("agent_version=1.4"),
        now=1714521600.0,
    )
    links = Links()
    links.feed(html)
    assert links.urls == []  # nothing fetched, nothing linked
    assert "script" not in links.tags and "link" not in links.tags
    assert html.count("<svg") == 5  # distribution, over time, bands, classes, comparison
    for heading in (
        "Agents and versions",
        "Score distribution",
        "Mean and P90 over time, with coverage",
        "Bands",
        "Filter classes and verdicts",
        "Comparison",
        "Findings that grew most",
        "Worst-scoring records",
        "Top finding kinds",
    ):
        assert f">{heading}<" in html, heading
    assert "Generated 2024-05-01T00:00:00Z" in html
    assert '<span class="verdict verdict-worse">worse</span>' in html
    assert ">601<" in html  # records card
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert "region &lt;b&gt;" in html
    assert re.search(r"<code>filter_missing</code> — \d+ records", html)


def test_the_worst_records_come_first_with_their_findings(store):
    html = build_report(store, worst=3)
    section = html.split(">Worst-scoring records<")[1].split(">Top finding kinds<")[0]
    worst = list(store.query(status="ok", order_by="score", limit=3))
    shown = re.findall(r'<div class="muted">([^<]+)</div>', section)
    assert shown == [ev["id"] for ev in worst]
    assert section.count('<td class="n">0.0<br>') == sum(ev["score"] == 0 for ev in worst)
    kinds = {f["kind"] for ev in worst for f in ev["findings"] if f["severity"] != "info"}
    assert kinds and all(f"<code>{k}</code>" in section for k in kinds)


def test_an_empty_store_says_so(tmp_path):
    s = open_store(tmp_path / "empty.db")
    html = build_report(s)
    s.close()
    assert "No evaluations stored yet for this selection" in html
    assert "<svg" not in html


def test_stef_report_writes_the_file(tmp_path, store):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        main,
        [
            "report",
            "--store",
            str(store.path),
            "--output",
            str(out),
            "--where",
            "agent_version=1.4",
            "--window",
            "6h",
            "--title",
            "Weekly SQL quality",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {out} (")
    html = out.read_text()
    assert "<title>Weekly SQL quality</title>" in html
    assert "selection: agent_version=1.4" in html
    assert "One point per 6 h window of record time." in html


def test_stef_report_refuses_half_a_comparison(tmp_path, store):
    result = CliRunner().invoke(
        main, ["report", "--store", str(store.path), "--baseline", "agent_version=1.3"]
    )
    assert result.exit_code == 2
    assert "--baseline and --candidate go together" in result.output

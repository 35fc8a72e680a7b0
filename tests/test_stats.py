"""Figures over evaluations: exact quantiles, shares, windows, durations and selections."""

from __future__ import annotations

import numpy as np
import pytest

from stef.monitor.stats import (
    Tally,
    figures,
    flat_row,
    parse_duration,
    rows,
    tally_evaluations,
    weighted_quantile,
)
from stef.monitor.store import Selection, SelectionError


def ev(score, status="ok", **kw):
    base = {"status": status, "score": score if status == "ok" else None, "findings": []}
    return {**base, **kw}


def test_weighted_quantiles_equal_numpy_on_the_expanded_sample():
    rng = np.random.default_rng(0)
    for _ in range(20):
        values = rng.choice(np.arange(0, 101, 4.0), size=8, replace=False)
        counts = rng.integers(1, 30, size=8)
        expanded = np.repeat(values, counts)
        for q in (0.1, 0.5, 0.9):
            assert weighted_quantile(values, counts, q) == pytest.approx(np.quantile(expanded, q))


def test_figures_of_a_small_set_are_exact():
    t = Tally()
    bd = {"filter_status": "fully_applied", "verdict": "correct", "confidence": 0.9}
    t.add(ev(100.0, band="excellent", breakdown=bd))
    t.add(ev(80.0, band="good", breakdown={**bd, "verdict": "likely_correct", "confidence": 0.7}))
    t.add(
        ev(
            40.0,
            band="poor",
            breakdown={**bd, "filter_status": "not_applied"},
            findings=[
                {"kind": "filter_missing", "severity": "error"},
                {"kind": "group_by_inferred", "severity": "info"},
            ],
        )
    )
    t.add(
        ev(
            None,
            status="judge_failed",
            findings=[{"kind": "filter_missing", "severity": "warning"}],
        )
    )
    f = figures(t)
    assert (f.records, f.evaluated, f.coverage) == (4, 3, 0.75)
    assert (f.mean, f.median, f.p10, f.p90) == (73.33, 80.0, 48.0, 96.0)
    assert f.bands == {"excellent": 0.3333, "good": 0.3333, "marginal": 0.0, "poor": 0.3333}
    assert f.filters["fully_applied"] == 0.6667 and f.filters["not_applied"] == 0.3333
    assert f.verdicts["correct"] == 0.6667
    assert f.mean_confidence == 0.8333
    assert f.top_findings == [("filter_missing", 2, 0.5)]
    assert f.errors == {"judge_failed": 1}
    assert dict(t.excused) == {"group_by_inferred": 1}


def test_a_tally_survives_json_and_adding_then_removing_is_a_no_op():
    t = Tally()
    a = ev(64.0, band="marginal", findings=[{"kind": "limit_mismatch", "severity": "error"}])
    t.add(a)
    t.add(ev(90.0, band="excellent"))
    assert Tally.from_dict(t.to_dict()).to_dict() == t.to_dict()
    t.add(a, sign=-1)
    assert (
        figures(t).to_dict()
        == figures(tally_evaluations([ev(90.0, band="excellent")])[((), None)]).to_dict()
    )


def test_windows_follow_the_record_timestamp_then_evaluated_at():
    evs = [
        ev(50.0, agent="a", timestamp="2024-05-01T23:59:59Z"),
        ev(70.0, agent="a", timestamp=None, evaluated_at="2024-05-02T00:00:00+00:00"),
        ev(90.0, agent="b", timestamp="2024-05-02T10:00:00+02:00"),
    ]
    out = rows(tally_evaluations(evs, by=["agent"], window=86400.0), by=["agent"])
    assert [(r.group["agent"], r.to_dict()["window_start"], r.figures.mean) for r in out] == [
        ("a", "2024-05-01T00:00:00Z", 50.0),
        ("a", "2024-05-02T00:00:00Z", 70.0),
        ("b", "2024-05-02T00:00:00Z", 90.0),
    ]
    flat = flat_row(out[0])
    assert flat["agent"] == "a" and flat["bands.excellent"] == 0.0 and flat["top_findings"] == ""


def test_grouping_by_a_metadata_key_and_refusing_unknown_keys():
    evs = [ev(50.0, metadata={"team": "ops"}), ev(70.0, metadata={"team": "hr"}), ev(90.0)]
    keys = sorted(tally_evaluations(evs, by=["metadata.team"]), key=str)
    assert keys == [(("hr",), None), (("ops",), None), ((None,), None)]
    with pytest.raises(
        ValueError, match=r"cannot group by 'team'; use agent, agent_version, app, metadata\.KEY"
    ):
        tally_evaluations(evs, by=["team"])


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("30m", 1800), ("6h", 21600), ("1d", 86400), ("2w", 1209600)]
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_a_bad_duration_says_how_to_write_one():
    with pytest.raises(ValueError, match=r"not a duration: '1 day' \(use e.g. 30m, 6h, 1d, 2w\)"):
        parse_duration("1 day")


def test_selections_parse_and_refuse_unknown_keys():
    s = Selection.parse("agent=sql-bot, since=2024-05-01,until=1d", now=1714608000.0)
    assert (s.agent, s.since, s.until) == ("sql-bot", 1714521600.0, 1714521600.0)
    with pytest.raises(SelectionError, match="unknown selection key 'version'"):
        Selection.parse("version=1.4")
    with pytest.raises(SelectionError, match="selection part 'sql-bot' is not key=value"):
        Selection.parse("sql-bot")
    with pytest.raises(SelectionError, match="since: not an ISO 8601 time: 'yesterday'"):
        Selection.parse("since=yesterday")


def test_stef_stats_as_json_csv_and_table(store_target):
    import csv
    import io
    import json
    import sys
    from pathlib import Path

    from click.testing import CliRunner

    from stef.cli import main
    from stef.monitor.store import open_store

    sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
    from monitor_factory import make_evaluations

    evs = make_evaluations(200, seed=1, step_s=1800) + make_evaluations(
        100, seed=2, agent_version="1.4", error_rate=0.2, step_s=1800
    )
    db = store_target
    store = open_store(db)
    store.write(evs)
    store.close()
    args = ["stats", "--store", db, "--by", "agent_version", "--window", "1d"]
    out = CliRunner().invoke(main, [*args, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    want = rows(tally_evaluations(evs, by=["agent_version"], window=86400.0), ["agent_version"])
    assert [
        (d["agent_version"], d["window_start"], d["records"], d["mean"], d["p90"]) for d in data
    ] == [
        (
            r.group["agent_version"],
            r.to_dict()["window_start"],
            r.figures.records,
            r.figures.mean,
            r.figures.p90,
        )
        for r in want
    ]
    assert data[0]["window_start"] == "2024-05-01T00:00:00Z"
    table = list(csv.DictReader(io.StringIO(CliRunner().invoke(main, [*args, "--csv"]).output)))
    assert len(table) == len(data)
    assert {"coverage", "p10", "bands.poor", "filters.not_applied", "verdicts.incorrect"} <= set(
        table[0]
    )
    text = CliRunner().invoke(main, ["stats", "--store", db]).output
    assert "sql-bot" in text and "1.4" in text and "records" in text
    bad = CliRunner().invoke(main, ["stats", "--store", db, "--by", "team"])
    assert bad.exit_code == 2
    assert "cannot group by 'team'" in bad.output


def test_paused_gc_leaves_no_pending_collection_and_keeps_frozen_objects_frozen():
    """After a pause, what it built is not walked by the next collection (moved, unscanned,
    to the oldest generation); a caller's frozen objects stay frozen; cycles made during
    the pause are still collected by a full collection."""
    import gc

    from stef.monitor.stats import paused_gc

    class Node:
        pass

    with paused_gc():
        made = [{"k": [i]} for i in range(5000)]
        cycle = Node()
        cycle.me = cycle  # type: ignore[attr-defined]
    assert gc.isenabled()
    assert gc.get_count()[0] < 100
    del cycle
    assert gc.collect() >= 1
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_gc():
            made += [{"k": [i]} for i in range(10)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()

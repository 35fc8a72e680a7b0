"""Figures over the rows read in time slices (as SQLite does over large stores) equal the
figures of the same evaluations counted in Python, on both backends."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from stef.monitor.stats import figures, tally_evaluations
from stef.monitor.store import Selection, open_store
from stef.monitor.store.common import record_time

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import make_evaluations


def _figures(tallies):
    out = {}
    for key, tally in tallies.items():
        d = figures(tally).to_dict()
        d["mean_confidence"] = (
            None if d["mean_confidence"] is None else round(d["mean_confidence"], 2)
        )
        out[key] = d
    return out


@pytest.mark.parametrize(
    ("by", "window"),
    [(["metadata.team"], None), (["agent"], 1800.0), (["agent", "app"], 600.0), ([], 7200.0)],
)
def test_figures_read_in_time_slices_equal_figures_counted_in_python(store_target, by, window):
    evs = make_evaluations(
        300, seed=11, error_rate=0.05, step_s=37.0, metadata={"team": "ops"}
    ) + make_evaluations(200, seed=12, agent="other", app="hr", step_s=53.0)
    store = open_store(store_target)
    store.write(evs)
    store.dialect = dataclasses.replace(store.dialect, slice_rows=40)  # 2 to 13 slices
    assert len(store._slices(Selection(), window)) >= 2
    for selection in (
        Selection(),
        Selection(status="ok"),
        Selection(since=1714540000.0, until=1714550000.0),  # within the records' span
    ):
        got = store.tallies(selection, by=by, window=window)
        chosen = [e for e in evs if _in(e, selection)]
        assert _figures(got) == _figures(tally_evaluations(chosen, by=by, window=window))
    store.close()


def _in(ev, sel):
    t = record_time(ev)
    return (
        (sel.status is None or ev["status"] == sel.status)
        and (sel.since is None or t >= sel.since)
        and (sel.until is None or t < sel.until)
    )

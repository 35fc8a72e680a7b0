"""Figures over the rows read in time slices (as SQLite does over large stores) equal the
figures of the same evaluations counted in Python, on both backends."""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

import pytest

from stef.monitor.stats import tally_evaluations
from stef.monitor.store import Selection, open_store
from stef.monitor.store.common import record_time

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import figures_by_key, make_evaluations


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
        Selection(finding="filter_missing"),  # the findings of each range (seq), or by row
        Selection(finding="filter_missing", since=1714540000.0),
    ):
        got = store.tallies(selection, by=by, window=window)
        chosen = [e for e in evs if _in(e, selection)]
        want = tally_evaluations(chosen, by=by, window=window)
        assert figures_by_key(got) == figures_by_key(want)
    store.close()


def _in(ev, sel):
    t = record_time(ev)
    return (
        (sel.finding is None or any(f.get("kind") == sel.finding for f in ev["findings"]))
        and (sel.status is None or ev["status"] == sel.status)
        and (sel.since is None or t >= sel.since)
        and (sel.until is None or t < sel.until)
    )


def test_metadata_groups_of_mixed_json_types_merge_as_their_text(store_target):
    """Grouped by a metadata key, values whose JSON differs but whose text is the same
    (``"1"`` and ``1``, ``true`` and ``"true"``, ``null`` and no key) are one group, as
    counted in Python, read in one scan or in slices of ``seq`` and of time."""
    values = ["1", 1, True, "true", False, None, "missing", 1.5, "1.5", "ops", "o'p\"s", 2]
    evs = make_evaluations(240, seed=5, error_rate=0.05, step_s=41.0)
    for i, ev in enumerate(evs):
        value = values[i % len(values)]
        ev["metadata"] = {"other": i} if value == "missing" else {"team": value, "other": i}
    store = open_store(store_target)
    store.write(evs)
    for slice_rows in (None, 25):
        store.dialect = dataclasses.replace(store.dialect, slice_rows=slice_rows)
        for window, selection in (
            (None, Selection()),
            (None, Selection(status="ok")),
            (3600.0, Selection()),
            (None, Selection(since=1714525000.0)),
            (30.0, Selection()),  # over 200 windows: PostgreSQL's slices too, prefetched
            (30.0, Selection(finding="filter_missing")),
        ):
            if slice_rows:
                assert len(store._slices(selection, window)) >= 2
            got = store.tallies(selection, by=["metadata.team"], window=window)
            chosen = [e for e in evs if _in(e, selection)]
            want = tally_evaluations(chosen, by=["metadata.team"], window=window)
            assert figures_by_key(got) == figures_by_key(want)
            if selection.finding is None:
                assert {k[0][0] for k in got} >= {"1", "true", "false", None, "1.5", "o'p\"s"}
    store.close()


def test_sqlite_slices_cut_seq_for_all_times_else_time(tmp_path):
    store = open_store(str(tmp_path / "s.db"))
    store.write(make_evaluations(100, seed=2, step_s=60.0))
    store.dialect = dataclasses.replace(store.dialect, slice_rows=30)
    assert store._slice_column(Selection(), None) == "seq"
    assert store._slice_column(Selection(), 600.0) == "t"
    assert store._slice_column(Selection(since=0.0), None) == "t"
    ranges = store._slices(Selection(), None)
    assert len(ranges) == 4 and ranges[0][0] == -math.inf and ranges[-1][1] == math.inf
    assert [hi for _, hi in ranges[:-1]] == [30.0, 60.0, 90.0]
    store.close()


def test_cell_fields_count_rows_as_tally_of_cells_counts_cells():
    """Row by row (small groups) and cell by cell (large ones) give the same tally."""
    import random
    from collections import Counter

    from stef.monitor.store.cells import ROW_BY_ROW, CellFields, tally_of_cells

    rng = random.Random(8)
    kinds = [None, '{"a": "error"}', '{"a": "info", "b": "warning"}', '{"c": "info"}']
    cells = {}
    for cell_id in range(1, 120):
        ok = rng.random() < 0.8
        cells[cell_id] = (
            "ok" if ok else rng.choice(["error", "timeout"]),
            rng.choice([None, 0.0, 50.0, 72.5, 100.0]) if ok else None,
            rng.choice([None, "", "good", "poor"]),
            rng.choice([None, "fully_applied"]),
            rng.choice([None, "", "correct"]),
            rng.choice(kinds),
        )
    fields = CellFields(cells, {})
    for size in (0, 1, 7, 300, ROW_BY_ROW, ROW_BY_ROW + 1, 20_000):
        ids = [rng.randint(1, 119) for _ in range(size)]
        got = fields.tally(size, ids, 1.25, 3)
        assert got == tally_of_cells(size, Counter(ids), cells, 1.25, 3, {})
        assert got.records == size and sum(got.statuses.values()) == size


def test_windows_smaller_than_a_slice_are_read_a_few_at_a_time_with_the_same_figures(
    store_target, monkeypatch
):
    """SQLite reads windows that hold fewer rows than a slice about ``window_rows`` rows a
    range (one window a range where a window holds that many: no window start computed per
    row); PostgreSQL reads many windows of a selection in the table's order in ranges of
    whole windows. Tallies equal those of one scan, confidence sums bit for bit, and the
    figures those counted in Python."""
    import stef.monitor.store.postgres as pg

    evs = make_evaluations(400, seed=21, error_rate=0.05, step_s=29.0, metadata={"team": "a"})
    evs += make_evaluations(300, seed=22, agent="other", step_s=41.0, metadata={"team": "b"})
    store = open_store(store_target)
    store.write(evs)
    sqlite = store.dialect.bucket_of is not None
    whole = dataclasses.replace(store.dialect, slice_rows=None)
    monkeypatch.setattr(pg, "WINDOW_SLICE_ROWS", 60)
    for by, window, selection, rows in (  # over 200 windows (PostgreSQL's cell ids)
        (["metadata.team"], 60.0, Selection(), 12),  # ~3.4 rows a window: several a range
        (["agent"], 40.0, Selection(status="ok"), 2),  # one window a range
        (["metadata.team", "app"], 50.0, Selection(metadata={"team": "a"}), 2),
    ):
        if sqlite:
            store.dialect = dataclasses.replace(whole, slice_rows=200, window_rows=rows)
        sliced = store._slices(selection, window)
        assert len(sliced) >= 8
        assert all(float(lo) % window == 0 for lo, _ in sliced[1:])  # whole windows
        got = store.tallies(selection, by=by, window=window)
        store.dialect = whole
        if not sqlite:
            monkeypatch.setattr(pg, "WINDOW_SLICE_ROWS", 10**9)
        assert len(store._slices(selection, window)) == 1
        assert got == store.tallies(selection, by=by, window=window)
        monkeypatch.setattr(pg, "WINDOW_SLICE_ROWS", 60)
        want = tally_evaluations([e for e in evs if _chosen(e, selection)], by=by, window=window)
        assert figures_by_key(got) == figures_by_key(want)
    if not sqlite:  # a row without a cell id (an older STEF's): the ranges' JSON arrays
        import psycopg

        with psycopg.connect(store_target) as conn:
            conn.execute(
                "UPDATE evaluations SET cell = NULL WHERE seq = (SELECT max(seq) FROM evaluations)"
            )
        want = tally_evaluations(evs, by=["agent"], window=40.0)
        assert figures_by_key(store.tallies(by=["agent"], window=40.0)) == figures_by_key(want)
    store.close()


def _chosen(ev, sel):
    team = (ev.get("metadata") or {}).get("team")
    return _in(ev, sel) and all(team == v for v in sel.metadata.values())


def test_postgres_ranges_read_ahead_fail_as_one_store_error(pg_url, monkeypatch):
    """A range the worker thread fails to read fails the whole figures call, once."""
    import stef.monitor.store.postgres as pg
    from stef.monitor.store import StoreError

    store = open_store(pg_url)
    store.write(make_evaluations(400, seed=3, step_s=29.0))
    monkeypatch.setattr(pg, "WINDOW_SLICE_ROWS", 40)
    calls = []
    fetch = store._fetch_grouped

    def failing(sql, params, ordered=False, ranged=False):
        calls.append(params)
        if len(calls) == 3:
            raise StoreError(message="the server went away")
        return fetch(sql, params, ordered, ranged)

    monkeypatch.setattr(store, "_fetch_grouped", failing)
    with pytest.raises(StoreError, match="went away"):
        store.tallies(by=["agent"], window=30.0)
    assert len(calls) >= 3
    store.close()

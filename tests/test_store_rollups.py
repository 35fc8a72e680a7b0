"""Figures from the 10-minute rollups equal figures over the rows and figures counted in
Python, on both backends, after writes, replaces and prunes; and PostgreSQL's straight
COPY of new ids stores an id met again once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stef.monitor.stats import tally_evaluations
from stef.monitor.store import Selection, open_store
from stef.monitor.store.common import covering_rollups, record_time

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import figures_of, make_evaluations

#: 2024-05-01T00:00:00Z, where the factory's records start.
T0 = 1714521600.0


def _evaluations():
    return make_evaluations(
        300, seed=21, error_rate=0.08, step_s=23.0, metadata={"team": "ops"}
    ) + make_evaluations(250, seed=22, agent="other", agent_version="2.0", app="hr", step_s=41.0)


def _in(ev, sel):
    t = record_time(ev)
    return (
        (sel.agent is None or ev["agent"] == sel.agent)
        and (sel.app is None or ev["app"] == sel.app)
        and (sel.since is None or t >= sel.since)
        and (sel.until is None or t < sel.until)
    )


CASES = [
    (["agent"], 1800.0, Selection()),
    (["agent", "app"], 600.0, Selection()),
    (["agent_version"], 1200.0, Selection(agent="other")),
    ([], 600.0, Selection(since=T0 + 1200, until=T0 + 6000)),
    (["app"], None, Selection(since=T0 + 600)),
]


def _check(store, evaluations):
    for by, window, sel in CASES:
        table = covering_rollups(sel, by, window)
        assert table is not None and table.name == "rollups_10m", (by, window, sel)
        got = figures_of(store.tallies(sel, by=by, window=window))
        assert got, (by, window, sel)
        assert got == figures_of(store._tallies_from_rows(sel, by, window))
        chosen = [e for e in evaluations if _in(e, sel)]
        assert got == figures_of(tally_evaluations(chosen, by=by, window=window))


def test_sub_hour_windows_from_fine_rollups_equal_the_rows(store_target):
    evaluations = _evaluations()
    store = open_store(store_target)
    store.chunk = 120  # several chunks, each adding to buckets others added to
    assert store.write(evaluations) == len(evaluations)
    _check(store, evaluations)
    store.close()


def test_fine_rollups_stay_exact_after_replace_and_prune(store_target):
    evaluations = _evaluations()
    store = open_store(store_target)
    store.write(evaluations)
    changed = [
        {**e, "score": 0.0, "band": "poor", "findings": []}
        for e in evaluations[::7]
        if e["status"] == "ok"
    ]
    assert store.write(changed, replace=True) == 0
    by_id = {e["id"]: e for e in evaluations} | {e["id"]: e for e in changed}
    current = list(by_id.values())
    _check(store, current)
    cutoff = T0 + 2345.0  # inside a 10-minute bucket and inside an hour
    pruned = store.prune(cutoff)
    kept = [e for e in current if record_time(e) >= cutoff]
    assert pruned == len(current) - len(kept) > 0
    _check(store, kept)
    store.close()


def test_postgres_copies_new_ids_and_stores_one_met_again_once(pg_url):
    evaluations = _evaluations()
    store = open_store(pg_url)
    store.chunk = 100
    # Chunk 1 holds no stored id, so chunks 2 on are copied without a look-up first:
    # chunk 3 meets ids stored before and goes through the insert's ON CONFLICT.
    assert store.write(evaluations[250:300]) == 50
    assert store.write(evaluations[:400]) == 350
    assert store.count() == 400
    ids = [e["id"] for e in store.query()]
    assert sorted(ids) == sorted(e["id"] for e in evaluations[:400])
    assert store.count({"finding": "filter_missing"}) == sum(
        any(f["kind"] == "filter_missing" for f in e["findings"]) for e in evaluations[:400]
    )
    by, window = ["agent"], 1800.0
    want = figures_of(tally_evaluations(evaluations[:400], by=by, window=window))
    assert figures_of(store.tallies(by=by, window=window)) == want
    assert figures_of(store.tallies(by=by, window=3600.0)) == figures_of(
        tally_evaluations(evaluations[:400], by=by, window=3600.0)
    )
    store.close()


@pytest.mark.parametrize("window", [300.0, 900.0])
def test_windows_not_whole_10_minutes_still_read_the_rows(store_target, window):
    evaluations = _evaluations()
    store = open_store(store_target)
    store.write(evaluations)
    assert covering_rollups(Selection(), ["agent"], window) is None
    got = figures_of(store.tallies(by=["agent"], window=window))
    assert got == figures_of(tally_evaluations(evaluations, by=["agent"], window=window))
    store.close()


def test_sqlite_cell_ids_stay_right_with_two_writers_and_a_rolled_back_chunk(tmp_path, monkeypatch):
    """Two SQLite connections writing in turn (each adding cells the other has not seen),
    a chunk that fails inside its transaction, and a reader opened before any of it:
    figures over the rows (metadata groups, a status selection) equal figures counted in
    Python."""
    evaluations = _evaluations()
    path = tmp_path / "stef.db"
    reader, one, two = open_store(path), open_store(path), open_store(path)
    one.chunk = two.chunk = 60
    half = len(evaluations) // 2
    assert one.write(evaluations[:100]) == 100
    assert two.write(evaluations[100:half]) == half - 100

    def fail(rollups):
        raise OSError("disk full")

    with monkeypatch.context() as m:
        m.setattr(one, "_add_rollups", fail)
        with pytest.raises(OSError):
            one.write([{**evaluations[half], "status": "ok", "score": 99.5, "band": "odd"}])
    assert two.write(evaluations[half:]) == len(evaluations) - half
    ok = [i for i, e in enumerate(evaluations) if e["status"] == "ok"][:2]
    changed = {ok[0]: {**evaluations[ok[0]], "score": 33.125}}  # a cell nobody has seen
    assert two.write([changed[ok[0]]], replace=True) == 0
    changed[ok[1]] = {**evaluations[ok[1]], "score": 12.25}
    assert one.write([changed[ok[1]]], replace=True) == 0
    current = [changed.get(i, e) for i, e in enumerate(evaluations)]
    for by, window, sel in [
        (["metadata.team"], None, Selection()),
        (["agent"], 700.0, Selection()),
        (["agent", "metadata.team"], 3600.0, Selection(status="ok")),
    ]:
        chosen = [e for e in current if sel.status is None or e["status"] == sel.status]
        want = figures_of(tally_evaluations(chosen, by=by, window=window))
        for store in (reader, one, two):
            assert figures_of(store.tallies(sel, by=by, window=window)) == want, (by, sel)
    for store in (reader, one, two):
        store.close()


def test_sqlite_rows_without_a_cell_id_are_still_counted(tmp_path):
    """Rows an older STEF wrote into a migrated store (no cell id) are counted all the
    same: figures over the rows then read the counted columns themselves."""
    evaluations = _evaluations()
    store = open_store(tmp_path / "stef.db")
    store.write(evaluations)
    store.conn.execute("UPDATE evaluations SET cell = NULL WHERE seq % 3 = 0")
    want = figures_of(tally_evaluations(evaluations, by=["metadata.team"], window=1800.0))
    assert figures_of(store.tallies(by=["metadata.team"], window=1800.0)) == want
    store.close()


def test_rollup_deltas_equal_tallies_counted_evaluation_by_evaluation():
    """What a batch adds to each rollup table (cells counted in dicts, taken away again
    with ``sign=-1``) is, key by key, the Tally of ``Tally.add`` per evaluation."""
    from stef.monitor.stats import Tally, finding_kinds
    from stef.monitor.store.common import build_row
    from stef.monitor.store.migrations import rollup_key
    from stef.monitor.store.rollups import ROLLUP_TABLES, Rollups

    evs = _evaluations()
    gone = evs[::7]
    delta = Rollups()
    for sign, batch in ((1, evs), (-1, gone)):
        for ev in batch:
            kinds = finding_kinds(ev)
            delta.add(build_row(ev, record_time(ev), kinds=kinds), kinds, sign)
    got = delta.tallies()
    for table in ROLLUP_TABLES:
        want: dict = {}
        for ev in evs:
            key = rollup_key(ev, record_time(ev), table.width)
            want.setdefault(key, Tally()).add(ev)
        for ev in gone:
            want[rollup_key(ev, record_time(ev), table.width)].add(ev, sign=-1)
        mine = got[table.name]
        assert set(mine) == set(want)
        for key, tally in want.items():
            a, b = mine[key].to_dict(), tally.to_dict()
            assert abs(a.pop("confidence_sum") - b.pop("confidence_sum")) < 1e-9
            assert a == b, key

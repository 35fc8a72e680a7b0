"""Cell ids: counted for all groups at once (``cell_counts``) as group by group
(``CellFields``), and kept in PostgreSQL by writers that share the ``cells`` table."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import psycopg
import pytest

from stef.monitor.stats import figures, tally_evaluations
from stef.monitor.store import common, open_store
from stef.monitor.store.cell_counts import cell_tallies
from stef.monitor.store.cells import CellFields, tally_of_cells

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import figures_by_key, make_evaluations

_KINDS = [None, "", '{"a": "error"}', '{"a": "info", "b": "warning"}', '{"b": "info"}']


def _random_cells(rng: random.Random, n: int) -> dict:
    cells = {}
    for cell_id in rng.sample(range(1, 3 * n), n):
        status = rng.choice(["ok", "ok", "ok", "sql_unparseable", "internal_error"])
        cells[cell_id] = (
            status,
            rng.choice([None, 0.0, 50.0, 72.5, 100.0, 80]),
            rng.choice([None, "", "good", "poor"]),
            rng.choice([None, "", "fully_applied"]),
            rng.choice([None, "", "correct", "incorrect"]),
            rng.choice(_KINDS),
        )
    return cells


@pytest.mark.parametrize("seed", range(5))
def test_cells_counted_at_once_equal_cells_counted_group_by_group(seed):
    rng = random.Random(seed)
    cells = _random_cells(rng, rng.choice([1, 5, 40]))
    ids = list(cells)
    sums = {}
    for g in range(rng.choice([1, 3, 300])):
        rows = [rng.choice(ids) for _ in range(rng.choice([1, 2, 30, 3000]))]
        sums[((f"g{g}",), float(g) if g % 2 else None)] = [len(rows), rows, 1.5, 2]
    fields = CellFields(cells, {})
    expected = {k: fields.tally(*a) for k, a in sums.items()}
    got = cell_tallies(sums, cells)
    assert list(got) == list(expected)
    for key, tally in got.items():
        assert tally == expected[key]
        assert tally == tally_of_cells(*sums[key][:1], _counts(sums[key][1]), cells, 1.5, 2, {})
        assert figures(tally) == figures(expected[key])


def _counts(ids):
    out: dict = {}
    for i in ids:
        out[i] = out.get(i, 0) + 1
    return out


def test_an_unknown_cell_id_is_an_error_not_a_miscount():
    with pytest.raises(KeyError, match="cell ids not in cells"):
        cell_tallies({(("a",), None): [1, [7], 0.0, 0]}, {1: ("ok",) + (None,) * 5})




def _spy(fn, calls):
    def spied(*args, **kwargs):
        calls.append(fn(*args, **kwargs))
        return calls[-1]

    return spied


def test_postgres_writers_share_cells_and_figures_over_many_windows_stay_exact(pg_url, monkeypatch):
    evs = make_evaluations(400, seed=21, error_rate=0.1, step_s=31.0, metadata={"team": "ops"})
    more = make_evaluations(300, seed=22, agent="other", step_s=43.0, id_prefix="m")
    a, b = open_store(pg_url), open_store(pg_url)  # two writers, each with its own cache
    try:
        for i in range(0, 400, 50):
            a.write(evs[i : i + 50])
            b.write(more[i * 3 // 4 : (i + 50) * 3 // 4])
        b.write(evs[:50], replace=True)  # replaced rows keep (or get) their cells
        with psycopg.connect(pg_url) as conn:
            cells = conn.execute(
                "SELECT status, score, band, filter_status, verdict, finding_kinds FROM cells"
            ).fetchall()
            assert len(cells) == len(set(cells))  # each cell stored once
            assert (
                conn.execute("SELECT count(*) FROM evaluations WHERE cell IS NULL").fetchone()[0]
                == 0
            )
        everything = evs + more
        gathered = []
        monkeypatch.setattr(common, "gathered_cells", _spy(common.gathered_cells, gathered))
        for by, window in ((["metadata.team"], 60.0), (["agent"], 50.0), ([], 40.0)):  # > 200
            expected = figures_by_key(tally_evaluations(everything, by=by, window=window))
            for store in (a, b):
                assert figures_by_key(store.tallies(by=by, window=window)) == expected
        assert len(gathered) == 6 and all(g is not None for g in gathered)  # cell ids read
        # A row written by a STEF before 0009 (no cell id): the scan reads the columns.
        with psycopg.connect(pg_url) as conn:
            conn.execute(
                "UPDATE evaluations SET cell = NULL WHERE seq = (SELECT min(seq) FROM evaluations)"
            )
        assert figures_by_key(a.tallies(by=["agent"], window=40.0)) == figures_by_key(
            tally_evaluations(everything, by=["agent"], window=40.0)
        )
        assert gathered[-1] is None
    finally:
        a.close()
        b.close()

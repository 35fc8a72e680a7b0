"""Kill a writer in the middle of a batch, start it again: nothing lost, nothing doubled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from stef.monitor.stats import figures, tally_evaluations
from stef.monitor.store import open_store

FIXTURES = Path(__file__).parent / "fixtures" / "monitor"
sys.path.insert(0, str(FIXTURES))
from monitor_factory import make_evaluations  # noqa: E402

WRITER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from monitor_factory import make_evaluations
    from stef.monitor.store import SQLiteStore

    class Writer(SQLiteStore):
        chunks = 0

        def _add_rollups(self, rollups):
            # Runs inside each chunk's transaction, after its rows were inserted.
            Writer.chunks += 1
            if sys.argv[3] == "stall" and Writer.chunks == 3:
                print("inside chunk 3", flush=True)
                time.sleep(60)
            super()._add_rollups(rollups)

    store = Writer(sys.argv[2], chunk=100)
    print("stored", store.write(make_evaluations(450, seed=7, error_rate=0.1)), flush=True)
    """
)


def start(db: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(FIXTURES), str(db), mode],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_writer_killed_mid_batch_loses_and_doubles_nothing(tmp_path):
    db = tmp_path / "stef.db"
    proc = start(db, "stall")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "inside chunk 3"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)

    store = open_store(db)
    assert store.count() == 200  # the two committed chunks; the third rolled back
    store.close()

    proc = start(db, "run")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert out.strip() == "stored 250"

    evaluations = make_evaluations(450, seed=7, error_rate=0.1)
    store = open_store(db)
    assert store.count() == 450
    ids = [r[0] for r in store.conn.execute("SELECT id FROM evaluations")]  # type: ignore[attr-defined]
    assert sorted(ids) == sorted(e["id"] for e in evaluations)
    by = ["agent_version"]
    got = {k: figures(t).to_dict() for k, t in store.tallies(by=by).items()}
    want = {k: figures(t).to_dict() for k, t in tally_evaluations(evaluations, by=by).items()}
    for fig in (*got.values(), *want.values()):
        fig["mean_confidence"] = round(fig["mean_confidence"], 2)
    assert got == want
    store.close()

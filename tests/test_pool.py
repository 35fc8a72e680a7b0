"""The supervised pool finishes a batch whatever order its workers finish records in."""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: One slow record on the first worker while the other fills the whole window of records
#: in flight: when the slow one lands, every worker is idle and the window empties at once.
#: The pool used to wait then for a worker that had nothing to send, and hung for ever
#: (found by ``benchmarks/workers.py``: ``stef eval --workers 2`` stalled on a real file).
SLOW_FIRST = textwrap.dedent(
    """
    import time
    from stef.pool import SupervisedPool

    def work(x):
        if x == 0:
            time.sleep(0.5)
        return x

    pool = SupervisedPool(work, lambda item, status, msg: status, workers=2, deadline=30, chunk=1)
    print(list(pool.map(range(20))) == list(range(20)))
    pool.close()
    """
)


def test_a_slow_first_record_does_not_stall_the_batch() -> None:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", SLOW_FIRST], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(
            "SupervisedPool.map hung: every worker idle, none sent more work"
        ) from None
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"

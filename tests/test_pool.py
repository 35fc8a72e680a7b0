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


def _double_or_fail(items: list[int]) -> list[int]:
    if -1 in items:
        raise ValueError("the store refused the write")
    return [x * 2 for x in items]


def test_shared_pool_answers_each_thread_its_own_results_in_order() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from stef.pool import SharedPool

    jobs = [list(range(k, k + 10)) for k in range(0, 200, 10)]
    with (
        SharedPool(_double_or_fail, lambda x, s, m: s, workers=2, chunk=3) as pool,
        ThreadPoolExecutor(4) as threads,
    ):
        got = list(threads.map(lambda j: pool.submit(j).result(timeout=60), jobs))
    assert got == [[x * 2 for x in j] for j in jobs]


def test_shared_pool_fails_the_job_whose_chunk_failed_and_goes_on() -> None:
    import pytest

    from stef.pool import PoolError, SharedPool

    with SharedPool(_double_or_fail, lambda x, s, m: s, workers=2, chunk=4) as pool:
        bad = pool.submit([1, 2, -1, 3])
        good = pool.submit([5, 6])
        with pytest.raises(PoolError, match="the store refused the write"):
            bad.result(timeout=60)
        assert good.result(timeout=60) == [10, 12]
    with pytest.raises(PoolError, match="closed"):
        pool.submit([1])

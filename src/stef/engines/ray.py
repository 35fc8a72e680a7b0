"""``stef eval --engine ray``: records evaluated on Ray Data, one evaluator per worker.

Ray reads the records (JSONL or Parquet; a local path, a directory or any URI Ray reads,
such as ``s3://…``), cuts them into blocks, and an actor pool of :class:`EvaluateBatch`
workers evaluates them with :func:`stef.engines.frames.evaluate_rows` — the function the
local engine's lines go through, so the evaluations are the same. Bad records get their
error evaluation and the run goes on, as locally.

The evaluations come back to the driver in input order, which writes them as one file: JSONL
(the lines ``stef eval`` writes; ``-`` is stdout) or, for a name ending in ``.parquet``,
Parquet in the columns of :data:`stef.engines.frames.COLUMNS`; a local path or any URI
pyarrow opens. ``on_evaluations`` gets them too (the CLI writes them into ``--store``).
The driver only writes: the evaluating is what the workers share.

``ray`` is imported when a run starts, never at import: ``pip install 'stef[ray]'``.

>>> is_parquet("s3://logs/2026-01/records.parquet"), is_parquet("logs.jsonl")
(True, False)
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from stef.batch import Summary, supervised, supervised_pool
from stef.engines.frames import COLUMNS, LINE, batch_items, brief, evaluate_rows
from stef.errors import StefError
from stef.evaluator import Evaluator
from stef.pool import DEFAULT_DEADLINE

#: How to get Ray, for the message when it is missing.
RAY_EXTRA = "pip install 'stef[ray]'"

#: Records per block: the unit Ray hands to a worker (small blocks balance the load).
BLOCK_ROWS = 256
#: Bytes per block at most (Ray merges small blocks up to this; its default is 128 MiB,
#: which would put a whole log file in one block, on one worker).
BLOCK_BYTES = 256 * 1024


@dataclass(frozen=True)
class RayJob:
    """One ``stef eval --engine ray`` run.

    ``make_evaluator`` builds the evaluator on each worker (it must pickle: a module-level
    function or class, not a lambda); ``workers`` is the number of evaluating actors
    (``None``: one per CPU of the cluster); ``address`` joins a running cluster (``None``
    starts a local Ray runtime with ``workers`` CPUs); ``deadline`` is the seconds one
    record may take (``--record-timeout``; ``None``: no deadline, records evaluated in the
    actor's own process).
    """

    source: str
    output: str
    make_evaluator: Callable[[], Evaluator]
    workers: int | None = None
    address: str | None = None
    batch_size: int = BLOCK_ROWS
    progress: bool = False
    deadline: float | None = DEFAULT_DEADLINE


class EvaluateBatch:
    """The callable class of ``map_batches``: one evaluator per Ray worker, built once,
    and (with a ``deadline``) one supervised process evaluating its records, as the local
    engine's (a record past the deadline, or one that kills that process, costs only
    itself: status ``timeout`` or ``internal_error``).

    >>> import pyarrow as pa
    >>> work = EvaluateBatch(Evaluator, deadline=None)
    >>> out = work(pa.table({"line": ['{"question": "How many users?", "sql": "SELECT 1"}']}))
    >>> out.column_names == [name for name, _ in COLUMNS], out.column("status").to_pylist()
    (True, ['ok'])
    """

    def __init__(
        self, make_evaluator: Callable[[], Evaluator], deadline: float | None = DEFAULT_DEADLINE
    ) -> None:
        logging.getLogger("sqlglot").setLevel(logging.ERROR)  # as the CLI does
        self.ev = make_evaluator()
        self.pool = (
            supervised_pool(self.ev, 1, deadline) if supervised(self.ev, 1, deadline) else None
        )

    def __call__(self, table: Any) -> Any:
        import pyarrow as pa

        items = batch_items(table.to_pylist(), list(table.column_names))
        rows = evaluate_rows(self.ev, items, self.pool)
        return pa.Table.from_pylist(rows, schema=arrow_schema())


def arrow_schema() -> Any:
    """The Arrow schema of :data:`~stef.engines.frames.COLUMNS`."""
    import pyarrow as pa

    kinds = {"string": pa.string(), "double": pa.float64(), "bigint": pa.int64(),
             "array<string>": pa.list_(pa.string())}
    return pa.schema([(name, kinds[kind]) for name, kind in COLUMNS])


def is_parquet(path: str) -> bool:
    """Is ``path`` a Parquet file or dataset (by its name, or a local folder of them)?"""
    p = path.rstrip("/")
    if p.endswith(".parquet"):
        return True
    local = Path(p)
    return "://" not in p and local.is_dir() and any(local.glob("*.parquet"))


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise StefError(
            "invalid_config", f"--engine ray needs Ray Data, which is not installed: {RAY_EXTRA}"
        ) from None
    return ray


@contextmanager
def ray_runtime(address: str | None, workers: int | None, progress: bool = False
                ) -> Iterator[Any]:
    """Ray, connected: to ``address``, to a runtime this process already started (tests,
    notebooks), or to a local one with ``workers`` CPUs that is shut down afterwards.
    Ray's own log lines stay off the terminal unless ``progress`` is asked for."""
    ray = _import_ray()
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.INFO if progress else logging.ERROR)
    if ray.is_initialized():
        yield ray
        return
    level = logging.INFO if progress else logging.ERROR
    quiet = {"log_to_driver": False, "logging_level": level}
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = f"the Ray cluster at {address}" if address else "a local Ray runtime"
        raise StefError("invalid_config", f"cannot start {where}: {e}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _file_lines(table: Any) -> Iterator[Any]:
    """The non-blank lines of each file of ``table`` (``bytes``), read as the local engine
    reads one (UTF-8 with an optional byte-order mark, undecodable bytes replaced, lines
    ended by LF or CRLF), :data:`BLOCK_ROWS` lines a block."""
    import pyarrow as pa

    for data in table.column("bytes").to_pylist():
        text = bytes(data).decode("utf-8-sig", errors="replace")
        lines = [ln.rstrip("\r") for ln in text.split("\n") if ln.strip()]
        for i in range(0, len(lines), BLOCK_ROWS):
            yield pa.table({LINE: pa.array(lines[i:i + BLOCK_ROWS], pa.string())})


def _blocks(table: Any) -> Iterator[Any]:
    """``table`` (Parquet rows) in blocks of :data:`BLOCK_ROWS`."""
    for i in range(0, table.num_rows, BLOCK_ROWS):
        yield table.slice(i, BLOCK_ROWS)


#: Reading and cutting blocks take no CPU of their own: the evaluating actors hold every
#: CPU, and a task waiting for one would wait forever.
_LIGHT = {"num_cpus": 0}


def _light(reader: Callable[..., Any]) -> dict[str, Any]:
    """``reader``'s keyword for no CPU: ``num_cpus`` (Ray ≥ 2.4x) or ``ray_remote_args``."""
    import inspect

    if "num_cpus" in inspect.signature(reader).parameters:
        return dict(_LIGHT)
    return {"ray_remote_args": dict(_LIGHT)}


def read_records(rd: Any, source: str) -> Any:
    """The records of ``source`` as a Ray dataset of small blocks: Parquet rows, or JSONL
    lines (one ``line`` column)."""
    try:
        if is_parquet(source):
            # read before the actors hold the CPUs (Parquet's reader waits for one)
            ds = rd.read_parquet(source).materialize()
            return ds.map_batches(_blocks, batch_size=None, batch_format="pyarrow", **_LIGHT)
        ds = rd.read_binary_files(source, **_light(rd.read_binary_files))
        return ds.map_batches(_file_lines, batch_size=None, batch_format="pyarrow", **_LIGHT)
    except (OSError, ValueError) as e:  # a path that does not exist, an unknown scheme
        raise StefError("invalid_config", f"cannot read {source}: {e}") from None


def evaluations(ray: Any, job: RayJob) -> Any:
    """The evaluations of ``job.source`` as a lazy Ray dataset, in input order."""
    rd = ray.data
    ctx = rd.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # evaluations in input order
    ctx.enable_progress_bars = job.progress
    with suppress(AttributeError):  # newer Ray prints a plan at every execution
        ctx.print_on_execution_start = False
    ctx.target_max_block_size = BLOCK_BYTES
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    actors = min(job.workers or cpus, cpus)  # more would wait for CPUs forever
    return read_records(rd, job.source).map_batches(
        _bound(job.make_evaluator, job.deadline),
        batch_size=job.batch_size,
        batch_format="pyarrow",
        compute=rd.ActorPoolStrategy(size=actors),
        num_cpus=1,
    )


def _bound(make_evaluator: Callable[[], Evaluator], deadline: float | None
           ) -> type[EvaluateBatch]:
    """:class:`EvaluateBatch` with its arguments built in, so that Ray ships them with the
    class instead of keeping constructor arguments in its object store."""

    class Bound(EvaluateBatch):
        def __init__(self) -> None:
            super().__init__(make_evaluator, deadline)

    Bound.__name__ = Bound.__qualname__ = "EvaluateBatch"
    return Bound


def run(
    job: RayJob, on_evaluations: Callable[[list[str]], None] | None = None
) -> dict[str, Any]:
    """Evaluate ``job`` on Ray; write its output; return the batch summary
    (:meth:`stef.batch.Summary.to_dict`). ``on_evaluations`` gets each batch of evaluation
    JSON lines, in input order (the CLI stores them from there)."""
    summary = Summary()
    with ray_runtime(job.address, job.workers, job.progress) as ray:
        batches = evaluations(ray, job).iter_batches(batch_size=512, batch_format="pyarrow")
        with _output(job.output) as write:
            for table in batches:
                rows = table.select(_BRIEF).to_pylist()
                for r in rows:
                    summary.add(brief(r))
                write(table)
                if on_evaluations is not None:
                    on_evaluations([r["evaluation"] for r in rows])
    return summary.to_dict()


_BRIEF = ["status", "score", "band", "finding_kinds", "prompt_tokens", "completion_tokens",
          "evaluation"]


@contextmanager
def _output(output: str) -> Iterator[Callable[[Any], None]]:
    """A writer of evaluation tables: JSONL lines (stdout for ``-``) or, for a name ending
    in ``.parquet``, one Parquet file in the columns of ``COLUMNS``; a local path or a URI
    that pyarrow opens (``s3://…``, ``gs://…``)."""
    if output == "-":
        yield lambda table: _write_lines(sys.stdout.buffer, table)
        sys.stdout.buffer.flush()
        return
    stream = _open_output(output)
    try:
        if is_parquet(output):
            import pyarrow.parquet as pq

            with pq.ParquetWriter(stream, arrow_schema()) as writer:
                yield writer.write_table
        else:
            yield lambda table: _write_lines(stream, table)
    finally:
        stream.close()


def _write_lines(stream: IO[bytes], table: Any) -> None:
    lines = table.column("evaluation").to_pylist()
    stream.write("".join(ln + "\n" for ln in lines).encode("utf-8"))


def _open_output(output: str) -> Any:
    try:
        if "://" in output:
            from pyarrow import fs

            filesystem, path = fs.FileSystem.from_uri(output)
            return filesystem.open_output_stream(path)
        return open(output, "wb")
    except (OSError, ValueError) as e:
        raise StefError("invalid_config", f"cannot write {output}: {e}") from None

"""The ``stef`` command line: wires the pipeline, the store and the reports together.

Errors meant for users become one clear message and a non-zero exit here, and only here.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from stef._version import __version__
from stef.cli.console import err_console
from stef.cli.llm import build_judging, close_judging, judge_options
from stef.errors import RulesError, StefError


def _load_rules(path: str | None) -> Any:
    from stef.rules import load_rules

    try:
        return load_rules(path)
    except RulesError as e:
        click.echo(f"error: {e.message}", err=True)
        raise SystemExit(2) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="stef")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    envvar="STEF_CONFIG",
    help="Project config file (TOML) giving options' defaults [default: ./stef.toml if "
    "there; env STEF_CONFIG]. `stef config` shows the effective settings.",
)
@click.pass_context
def main(ctx: click.Context, config_file: str | None) -> None:
    """STEF scores text-to-SQL agents' SQL against the user's question, without gold SQL,
    schema or execution, and monitors agents over time.

    \b
    Examples:
      stef eval examples/logs.jsonl --rules examples/rules.json --output results.jsonl
      stef eval --question "How many active users are there?" --sql "SELECT COUNT(*) FROM users"
      stef rules check examples/rules.json
    """
    # sqlglot logs a warning for each statement it cannot fully parse; STEF reports what
    # matters as the record's status or a finding, so its log stays quiet on the terminal
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    from stef.cli.config import apply_config

    apply_config(ctx, config_file)


def _read_lines(stream: IO[str], progress: Any = None, task: Any = None) -> Iterator[str]:
    """Non-blank lines of ``stream`` (opened with ``newline="\\n"``: a raw CR inside a JSON
    line is whitespace, not a line end), without their line ending."""
    for line in stream:
        if progress is not None:
            progress.advance(task, 1)
        if line.strip():
            yield line.rstrip("\r\n")


def _open_input(file: str) -> IO[str]:
    """The records file (or stdin) as text: UTF-8 with an optional byte-order mark,
    undecodable bytes replaced, lines ended by LF (or CRLF) only."""
    import io

    if file == "-":
        return io.TextIOWrapper(
            sys.stdin.buffer, encoding="utf-8-sig", errors="replace", newline="\n"
        )
    try:
        return open(file, encoding="utf-8-sig", errors="replace", newline="\n")
    except OSError as e:
        raise click.ClickException(f"cannot read {file}: {e.strerror or e}") from None


def _same_file(a: str, b: str) -> bool:
    if a == "-" or b == "-":
        return False
    try:
        return Path(a).resolve() == Path(b).resolve() or Path(a).samefile(b)
    except OSError:
        return False


@main.command("eval")
@click.argument("file", required=False, type=click.Path(allow_dash=True))
@click.option(
    "--rules", "rules_path", type=click.Path(dir_okay=False), help="Application rules file (JSON)."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    show_default=True,
    help="Where to write evaluations (JSONL); '-' is stdout.",
)
@click.option("--question", help="Evaluate one question (with --sql) instead of a file.")
@click.option(
    "--enriched", "enriched", help="The agent's enriched question (Q_e), with --question."
)
@click.option("--sql", help="The SQL to evaluate, with --question.")
@click.option(
    "--dialect", help="sqlglot dialect of --sql (postgres, snowflake, bigquery, tsql, sqlite …)."
)
@click.option(
    "--json", "as_json", is_flag=True, help="With --question: print the raw evaluation JSON."
)
@click.option(
    "-w",
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes for a file.",
)
@click.option(
    "--record-timeout",
    type=click.FloatRange(0, min_open=True),
    default=5.0,
    show_default=True,
    help="Seconds one record may take; past it the record gets status 'timeout' and the "
    "batch goes on (records run in supervised worker processes).",
)
@click.option(
    "--calibration",
    type=click.Path(exists=True, dir_okay=False),
    help="Calibration file from `stef calibrate`; adds p_correct to each evaluation.",
)
@click.option(
    "--store",
    "store_target",
    envvar="STEF_STORE",
    help="Also keep every evaluation in this store (SQLite file or postgresql://…) "
    "[env STEF_STORE].",
)
@click.option("--force", is_flag=True, help="With --store: re-evaluate ids already stored.")
@click.option(
    "--min-coverage",
    type=click.FloatRange(0, 1),
    default=None,
    help="Exit 1 when coverage (evaluated/records) ends below this.",
)
@click.option(
    "--min-mean",
    type=click.FloatRange(0, 100),
    default=None,
    help="Exit 1 when the mean score of evaluated records ends below this (or none was).",
)
@click.option(
    "--summary-json",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Also write the summary as JSON to this file ('-' for stdout), e.g. for a CI job.",
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where a FILE is evaluated: here, or on Ray Data (FILE may then be Parquet or a "
    "URI; `pip install 'stef[ray]'`; docs/ray.md).",
)
@click.option("--address", help="With --engine ray: join the Ray cluster at this address.")
@judge_options
def eval_cmd(
    file: str | None,
    rules_path: str | None,
    output: str,
    question: str | None,
    enriched: str | None,
    sql: str | None,
    dialect: str | None,
    as_json: bool,
    workers: int,
    record_timeout: float,
    calibration: str | None,
    store_target: str | None,
    force: bool,
    min_coverage: float | None,
    min_mean: float | None,
    summary_json: str | None,
    progress: bool | None,
    engine: str,
    address: str | None,
    **judge_opts: Any,
) -> None:
    """Evaluate the records of FILE (JSONL, '-' for stdin), or one --question/--sql pair.

    Streams one evaluation per line to --output and prints a summary (records, evaluated,
    coverage, mean, median, P90, band shares) on stderr. A record that cannot be
    evaluated gets an evaluation with an error status; the batch always finishes.
    """
    rules = _load_rules(rules_path)
    from stef.evaluator import Evaluator

    if (question is None) != (sql is None):
        raise click.UsageError("--question and --sql go together")
    if question is None and file is None:
        raise click.UsageError("give a FILE of records, or --question and --sql")
    if question is not None and file is not None:
        raise click.UsageError("give either a FILE or --question/--sql, not both")
    if engine == "ray" and file is None:
        raise click.UsageError("--engine ray evaluates a FILE of records, not one pair")
    if address and engine != "ray":
        raise click.UsageError("--address goes with --engine ray")
    cal = None
    if calibration:
        from stef.accuracy.calibration import Calibration

        try:
            cal = Calibration.load(calibration)
        except (StefError, ValueError, KeyError) as e:
            raise click.ClickException(f"cannot use calibration {calibration}: {e}") from None
    try:
        judge, nl_extractor = build_judging(**judge_opts)
    except StefError as e:
        raise click.ClickException(e.message) from None
    ev = Evaluator(rules=rules, judge=judge, calibration=cal, nl_extractor=nl_extractor)
    try:
        if question is not None:
            assert sql is not None
            _eval_one(ev, question, enriched, sql, dialect, as_json, output)
            return
        assert file is not None
        if engine == "ray":
            from stef.cli.ray_engine import EvaluatorFactory, eval_ray

            factory = EvaluatorFactory(rules_path, calibration, judge_opts)
            summary = eval_ray(file, output, factory, address=address,
                               store_target=store_target, force=force, progress=progress)
            _gates(summary, min_coverage, min_mean, summary_json)
            return
        summary = _eval_file(
            ev, file, output, (workers, record_timeout), store_target, force, progress
        )
    finally:
        close_judging(judge, nl_extractor)
    _gates(summary, min_coverage, min_mean, summary_json)


def _gates(
    summary: dict[str, Any],
    min_coverage: float | None,
    min_mean: float | None,
    summary_json: str | None,
) -> None:
    """Write ``--summary-json``; exit 1 when ``--min-coverage`` or ``--min-mean`` fails."""
    failed = []
    if min_coverage is not None and summary["coverage"] < min_coverage:
        failed.append(f"coverage {summary['coverage']:.1%} is below {min_coverage:.1%}")
    mean = summary["mean"]
    if min_mean is not None and (mean is None or mean < min_mean):
        shown = "—" if mean is None else f"{mean:.2f}"
        failed.append(f"mean score {shown} is below {min_mean:g}")
    if summary_json:
        data = {**summary, "gates_failed": failed}
        with click.open_file(summary_json, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2) + "\n")
    for line in failed:
        err_console().print(f"[bold red]{line}[/]")
    if failed:
        raise SystemExit(1)


def _eval_one(
    ev: Any,
    question: str,
    enriched: str | None,
    sql: str,
    dialect: str | None,
    as_json: bool,
    output: str,
) -> None:
    from rich.console import Console

    from stef.cli.report_text import render_evaluation

    e = ev.evaluate(question=question, sql=sql, enriched_question=enriched, dialect=dialect)
    with click.open_file(output, "w", encoding="utf-8") as out:
        if as_json:
            out.write(json.dumps(e, ensure_ascii=False, indent=2) + "\n")
        else:
            terminal = hasattr(out, "isatty") and out.isatty()
            Console(file=out, width=None if terminal or out is sys.stdout else 120).print(
                render_evaluation(e)
            )


def _eval_file(
    ev: Any,
    file: str,
    output: str,
    workers: tuple[int, float],
    store_target: str | None,
    force: bool,
    progress: bool | None,
) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from stef.batch import Summary, evaluate_encoded
    from stef.cli.report_text import render_summary

    if _same_file(file, output):
        raise click.UsageError(f"--output {output} is the input file; it would be overwritten")
    store = None
    if store_target:
        from stef.monitor.store import open_store

        try:
            store = open_store(store_target)
            _check_writable(store)
        except StefError as e:
            raise click.ClickException(e.message) from None
    show = err_console().is_terminal if progress is None else progress
    summary = Summary()
    stream = _open_input(file)
    total = _count_lines(file) if show and file != "-" else None
    bar = Progress(
        TextColumn("evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("records"),
        TimeElapsedColumn(),
        console=err_console(),
        disable=not show,
        transient=True,
    )
    skipped: list[str] = []
    try:
        with stream as src, click.open_file(output, "w", encoding="utf-8") as out, bar:
            task = bar.add_task("eval", total=total)
            lines: Iterator[str] = _read_lines(src, bar, task)
            if store is not None and not force:
                lines = _skip_stored(lines, store, skipped)
            _run(ev, evaluate_encoded(ev, lines, *workers), out, store, force, summary)
    except StefError as e:  # the store failed mid-run (disk full, damaged file)
        raise click.ClickException(e.message) from None
    finally:
        if store is not None:
            store.close()
    if skipped and store is not None:
        _count_skipped(summary, store_target, skipped)
    data = summary.to_dict()
    if skipped:
        data["skipped_already_stored"] = len(skipped)
    err_console().print(render_summary(data))
    if skipped:
        err_console().print(
            f"skipped {len(skipped)} record(s) already in the store (counted from it; "
            "use --force to redo)"
        )
    return data


def _run(
    ev: Any, encoded: Iterator[Any], out: IO[str], store: Any, force: bool, summary: Any
) -> None:
    batch: list[dict[str, Any]] = []
    for e in encoded:
        out.write(e.line + "\n")
        summary.add(e.brief)
        if store is not None:
            batch.append(e.decoded())
            if len(batch) >= 500:
                store.write(batch, replace=force)
                batch.clear()
    if store is not None and batch:
        store.write(batch, replace=force)


def _count_lines(file: str) -> int | None:
    try:
        with open(file, "rb") as fh:
            return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return None


def _check_writable(store: Any) -> None:
    """Fail before the first record when the store cannot be written (a read-only file)."""
    check = getattr(store, "check_writable", None)
    if check is not None:
        check()


def _count_skipped(summary: Any, store_target: str | None, skipped: list[str]) -> None:
    """Count records skipped as already stored into the summary, from what the store holds
    for them, so coverage and mean describe the whole file asked for."""
    from stef.monitor.store import open_store
    from stef.score import band

    store = open_store(str(store_target))
    try:
        known = getattr(store, "status_scores", None)
        found = known(skipped) if known is not None else {}
    finally:
        store.close()
    for rid in skipped:
        status, score = found.get(rid, ("ok", None))
        summary.add(
            {"status": status, "score": score, "band": band(score) if score is not None else None}
        )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _skip_stored(lines: Iterator[str], store: Any, skipped: list[str]) -> Iterator[str]:
    """Drop lines whose record id is already stored (resume after an interruption, a daily
    job run twice); their ids go to ``skipped``. A line that is not a record has the id of
    its error evaluation, so it is not evaluated again either."""
    import hashlib

    from stef.record import record_id

    window: list[tuple[str, str | None]] = []

    def flush() -> Iterator[str]:
        ids = [i for _, i in window if i]
        known = store.existing_ids(ids) if ids else set()
        for line, rid in window:
            if rid and rid in known:
                skipped.append(rid)
            else:
                yield line
        window.clear()

    for line in lines:
        rid: str | None = None
        try:
            data = json.loads(line)
            if isinstance(data, dict):
                rid = str(data["id"]) if data.get("id") is not None else record_id(data)
        except (ValueError, RecursionError):
            data = None
        if data is None or not isinstance(data, dict):
            rid = "line-" + hashlib.sha256(line.encode("utf-8", "replace")).hexdigest()[:16]
        elif rid is not None and not _encodable(rid):  # the id its error evaluation gets
            rid = rid[:200].encode("utf-8", "replace").decode("utf-8")
        window.append((line, rid))
        if len(window) >= 500:
            yield from flush()
    yield from flush()


@main.group()
def rules() -> None:
    """Validate rules files and print their JSON Schema."""


@rules.command("check")
@click.argument("file", type=click.Path(dir_okay=False))
def rules_check(file: str) -> None:
    """Validate a rules FILE; print every problem with its JSON path (exit 2 if any)."""
    r = _load_rules(file)
    click.echo(f"{file}: valid (sha256 {r.sha256()[:12]})")


@rules.command("schema")
def rules_schema() -> None:
    """Print the JSON Schema of the rules file."""
    from stef.rules import rules_json_schema

    click.echo(json.dumps(rules_json_schema(), indent=2))


from stef.cli.llm import local  # noqa: E402

main.add_command(local)

from stef.cli.calibrate import calibrate, calibrate_diff  # noqa: E402

main.add_command(calibrate)
main.add_command(calibrate_diff)

from stef.cli.monitor import COMMANDS as MONITOR_COMMANDS  # noqa: E402

for _command in MONITOR_COMMANDS:
    main.add_command(_command)


from stef.cli.fit import fit_judge  # noqa: E402

main.add_command(fit_judge)

from stef.cli.selftest import precision, selftest  # noqa: E402

main.add_command(selftest)
main.add_command(precision)

from stef.cli.store import store as store_group  # noqa: E402

main.add_command(store_group)

from stef.cli.interop import COMMANDS as INTEROP_COMMANDS  # noqa: E402

for _command in INTEROP_COMMANDS:
    main.add_command(_command)

from stef.cli.serve import serve  # noqa: E402

main.add_command(serve)

from stef.cli.config import config_cmd  # noqa: E402
from stef.cli.show import COMMANDS as SHOW_COMMANDS  # noqa: E402

main.add_command(config_cmd)
for _command in SHOW_COMMANDS:
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()

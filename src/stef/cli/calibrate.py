"""``stef calibrate``: measure STEF's agreement with labelled data and fit a calibration.

The command line only wires :mod:`stef.accuracy.calibrate` (the measurement) and
:mod:`stef.accuracy.calibrate_report` (the files) to an evaluator; errors meant for users become
one message and a non-zero exit here.
"""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from stef.cli.llm import build_judging, close_judging, judge_options
from stef.errors import StefError

if TYPE_CHECKING:
    from rich.console import Console

    from stef.accuracy.calibrate import Prepared
    from stef.evaluator import Evaluator

#: Options that never go into the reproduce-command (no effect on figures, or secrets).
_NOT_IN_COMMAND = ("workers", "progress", "output", "data")
_SECRET_WORDS = ("key", "token", "secret", "password")


def _command_line(ctx: click.Context, data: str, output: str) -> str:
    """The ``stef calibrate`` command that reproduces these figures (secrets left out)."""
    parts = ["stef", "calibrate", data, "--output", output]
    for param in ctx.command.params:
        name = param.name or ""
        if not isinstance(param, click.Option) or name in _NOT_IN_COMMAND:
            continue
        if any(w in name.lower() for w in _SECRET_WORDS):
            continue
        if ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            continue
        value = ctx.params.get(name)
        if param.is_flag:
            if param.secondary_opts and not value:
                parts.append(param.secondary_opts[0])
            elif value:
                parts.append(param.opts[-1])
            continue
        if value is None:
            continue
        parts += [param.opts[-1], str(value)]
    return shlex.join(parts)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def print_summary(console: Console, metrics: dict[str, Any]) -> None:
    """The compact table printed at the end of a run."""
    from rich.table import Table

    from stef.accuracy.calibrate_report import summary_rows

    run = metrics["run"]
    table = Table(
        title=f"stef calibrate · {Path(run['data']).name} · judge {run['judge']}",
        title_justify="left",
    )
    table.add_column("figure")
    table.add_column("default threshold", justify="right")
    table.add_column("fitted, held out", justify="right")
    for label, at_default, at_fitted in summary_rows(metrics):
        table.add_row(label, at_default, at_fitted)
    console.print(table)
    from stef.accuracy.calibrate_report import cost_line, extractor_line

    if metrics.get("llm_cost"):
        console.print(cost_line(metrics["llm_cost"]), highlight=False)
    if metrics.get("nl_extractor_cost"):
        console.print(extractor_line(metrics["nl_extractor_cost"]), highlight=False)


@click.command("calibrate")
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for report.md, metrics.json, rows.jsonl, roc.svg, reliability.svg and "
    "calibration.json.",
)
@click.option(
    "--rules", "rules_path", type=click.Path(dir_okay=False), help="Application rules file (JSON)."
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help="Use a seeded random sample of whole questions holding at most this many rows.",
)
@click.option(
    "--sample-seed",
    "seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the --limit sample and of the fold assignment.",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="Folds grouped by question: fit on the others, report on each held-out fold.",
)
@click.option(
    "-w",
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes for the evaluator.",
)
@click.option(
    "--dialect",
    default="sqlite",
    show_default=True,
    help="sqlglot dialect of the labelled SQL (the bundled sets are SQLite).",
)
@click.option(
    "--style-normalise/--no-style-normalise",
    "style_normalise",
    default=True,
    show_default=True,
    help="Re-render every SQL in one style first, so keyword case, quoting and spacing "
    "cannot leak labels.",
)
@click.option(
    "--isotonic/--no-isotonic",
    default=True,
    show_default=True,
    help="Fit a score → P(correct) map (isotonic) and write calibration.json.",
)
@click.option(
    "--objective",
    type=click.Choice(["balanced_accuracy", "accuracy"]),
    default="balanced_accuracy",
    show_default=True,
    help="What the fitted threshold maximises on the training folds.",
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."
)
@judge_options
@click.pass_context
def calibrate(
    ctx: click.Context,
    data: str,
    output: str,
    rules_path: str | None,
    limit: int | None,
    seed: int,
    folds: int,
    workers: int,
    dialect: str,
    style_normalise: bool,
    isotonic: bool,
    objective: str,
    progress: bool | None,
    **judge_opts: Any,
) -> None:
    """Measure how well STEF's score separates correct from incorrect SQL in DATA.

    DATA is labelled JSONL: {"id","question","evidence","sql","correct","error_types"}.
    The evaluator sees the question, the evidence (as the enriched question) and the SQL,
    never the label. Thresholds and the calibration are fitted on training folds and
    reported on held-out folds, grouped by question.

    \b
    Examples:
      stef calibrate ../shared/data/nl2sql_bugs.jsonl --output calib/
      stef calibrate data.jsonl --judge local --limit 300 --output calib-local/
    """
    from stef.accuracy import calibrate as C
    from stef.accuracy.calibrate_report import write_outputs
    from stef.evaluator import Evaluator
    from stef.rules import load_rules

    try:
        rows = C.load_labelled(data)
        rules = load_rules(rules_path)
        prepared = C.prepare(
            rows,
            dialect=dialect,
            normalise_style=style_normalise,
            folds=folds,
            seed=seed,
            limit=limit,
        )
        judge, nl_extractor = build_judging(**judge_opts)
    except StefError as err:
        raise click.ClickException(err.message) from None

    ev = Evaluator(rules=rules, judge=judge, nl_extractor=nl_extractor)
    try:
        evaluations = _evaluate_all(ev, prepared.records, workers=workers, progress=progress)
    finally:
        close_judging(judge, nl_extractor)

    measurement = C.measure(
        prepared.rows, evaluations, prepared.folds, objective=objective, isotonic=isotonic
    )
    run = _run_facts(
        ctx,
        ev.describe(),
        prepared,
        data=data,
        output=output,
        rows_in_file=len(rows),
        judge_opts=judge_opts,
    )
    measurement.metrics = {"run": run, **measurement.metrics}
    if measurement.calibration is not None:
        measurement.calibration = replace(
            measurement.calibration,
            meta=_calibration_meta(run, measurement.metrics, style_normalise),
        )
    paths = write_outputs(measurement, Path(output))
    from rich.console import Console

    print_summary(Console(), measurement.metrics)
    click.echo("wrote " + ", ".join(str(p) for p in paths.values()))


def _evaluate_all(
    ev: Evaluator, records: list[dict[str, Any]], *, workers: int, progress: bool | None
) -> list[dict[str, Any]]:
    """Evaluate every record, with a progress bar on stderr (by default on a terminal)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    err_console = Console(stderr=True)
    evaluations = []
    show = err_console.is_terminal if progress is None else progress
    with Progress(
        "evaluating",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=not show,
        transient=True,
    ) as bar:
        task = bar.add_task("eval", total=len(records))
        for evaluation in ev.evaluate_many(records, workers=workers):
            evaluations.append(evaluation)
            bar.advance(task)
    return evaluations


def _run_facts(
    ctx: click.Context,
    describe: dict[str, Any],
    prepared: Prepared,
    *,
    data: str,
    output: str,
    rows_in_file: int,
    judge_opts: dict[str, Any],
) -> dict[str, Any]:
    """``metrics.json``'s ``run``: what was run on which data, and how to reproduce it."""
    from stef._version import __version__
    from stef.accuracy import calibrate as C
    from stef.accuracy.calibrate_report import reference_for

    p = ctx.params
    return {
        "command": _command_line(ctx, data, output),
        "data": data,
        "data_sha256": _sha256(Path(data)),
        "rows_in_file": rows_in_file,
        "rows_used": len(prepared.rows),
        "limit": p["limit"],
        "seed": p["seed"],
        "folds": p["folds"],
        "question_overlap_between_folds": C.question_overlap(prepared.rows, prepared.folds),
        "judge": judge_opts.get("judge", "symbolic"),
        "judge_detail": describe.get("judge"),
        "nl_extractor": judge_opts.get("nl_extractor") or "rules",
        "rules": p["rules_path"],
        "rules_sha256": describe.get("rules_sha256"),
        "dialect": p["dialect"],
        "style": prepared.style,
        "isotonic": p["isotonic"],
        "objective": p["objective"],
        "stef_version": __version__,
        "reference": reference_for(prepared.rows),
    }


def _calibration_meta(
    run: dict[str, Any], metrics: dict[str, Any], style_normalised: bool
) -> dict[str, Any]:
    """What ``calibration.json`` records about the run that fitted it."""
    from stef._version import __version__

    return {
        "data": run["data"],
        "data_sha256": run["data_sha256"],
        "rows": metrics["coverage"]["evaluated"],
        "judge": run["judge"],
        "rules_sha256": run["rules_sha256"],
        "style_normalised": style_normalised,
        "stef_version": __version__,
    }


@click.command("calibrate-diff")
@click.argument("run_a", type=click.Path(exists=True))
@click.argument("run_b", type=click.Path(exists=True))
@click.option(
    "--boot",
    type=click.IntRange(100, 100_000),
    default=2000,
    show_default=True,
    help="Bootstrap draws (whole questions resampled).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def calibrate_diff(run_a: str, run_b: str, boot: int, seed: int, as_json: bool) -> None:
    """Compare two `stef calibrate` runs on the same labelled rows, row by row.

    RUN_A and RUN_B are output folders of `stef calibrate` (or their rows.jsonl). Only
    rows both runs scored are compared; each figure is shown for A and B with B − A
    and its 95% interval from a paired bootstrap over questions.

    Example:
      stef calibrate-diff calib-local/ calib-local-k3/
    """
    import json

    from stef.accuracy.calibrate_diff import load_rows, paired_diff

    try:
        d = paired_diff(load_rows(run_a), load_rows(run_b), n_boot=boot, seed=seed)
    except (OSError, ValueError, KeyError) as e:
        raise click.ClickException(f"cannot compare the runs: {e}") from None
    if as_json:
        click.echo(json.dumps(d, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(
        f"{d['shared']} rows of {d['questions']} questions scored by both "
        f"(A scored {d['scored_a']} of {d['rows_a']}, B {d['scored_b']} of {d['rows_b']})",
        highlight=False,
    )
    table = Table(title="B − A, 95% interval from a paired bootstrap over questions")
    table.add_column("figure", no_wrap=True)
    for col in ("A", "B", "B − A", "interval", "B better in"):
        table.add_column(col, justify="right")

    def fmt(v: float | None) -> str:
        return "—" if v is None else f"{v:.3f}"

    for f in d["figures"].values():
        iv = f["interval"]
        share = f["share_of_draws_b_better"]
        table.add_row(
            f["what"] + (" ↓" if f["lower_is_better"] else ""),
            fmt(f["a"]),
            fmt(f["b"]),
            fmt(f["difference"]),
            "—" if iv is None else f"[{iv[0]:+.3f}, {iv[1]:+.3f}]",
            "—" if share is None else f"{share:.0%} of draws",
        )
    console.print(table)
    console.print(
        "↓ lower is better. score/100: the raw score read as P(correct); isotonic: the "
        "held-out isotonic P(correct); accuracy: at the held-out fitted threshold.",
        highlight=False,
    )

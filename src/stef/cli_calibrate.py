"""``stef calibrate``: measure STEF's agreement with labelled data and fit a calibration.

The command line only wires :mod:`stef.calibrate` (the measurement) and
:mod:`stef.calibrate_report` (the files) to an evaluator; errors meant for users become
one message and a non-zero exit here.
"""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console
from rich.table import Table

from stef.cli_llm import build_judging, close_judging, judge_options
from stef.errors import StefError

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
    from stef.calibrate_report import summary_rows

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
    from stef.calibrate_report import cost_line, extractor_line

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
    help="Folder for report.md, metrics.json, roc.svg, reliability.svg, calibration.json.",
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
    from stef import calibrate as C
    from stef._version import __version__
    from stef.calibrate_report import reference_for, write_outputs
    from stef.evaluator import Evaluator
    from stef.rules import load_rules

    err_console = Console(stderr=True)
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
    evaluations = []
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

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
            task = bar.add_task("eval", total=len(prepared.records))
            for evaluation in ev.evaluate_many(prepared.records, workers=workers):
                evaluations.append(evaluation)
                bar.advance(task)
    finally:
        close_judging(judge, nl_extractor)

    measurement = C.measure(
        prepared.rows, evaluations, prepared.folds, objective=objective, isotonic=isotonic
    )
    describe = ev.describe()
    run = {
        "command": _command_line(ctx, data, output),
        "data": data,
        "data_sha256": _sha256(Path(data)),
        "rows_in_file": len(rows),
        "rows_used": len(prepared.rows),
        "limit": limit,
        "seed": seed,
        "folds": folds,
        "question_overlap_between_folds": C.question_overlap(prepared.rows, prepared.folds),
        "judge": judge_opts.get("judge", "symbolic"),
        "judge_detail": describe.get("judge"),
        "nl_extractor": judge_opts.get("nl_extractor") or "rules",
        "rules": rules_path,
        "rules_sha256": describe.get("rules_sha256"),
        "dialect": dialect,
        "style": prepared.style,
        "isotonic": isotonic,
        "objective": objective,
        "stef_version": __version__,
        "reference": reference_for(prepared.rows),
    }
    measurement.metrics = {"run": run, **measurement.metrics}
    if measurement.calibration is not None:
        measurement.calibration = replace(
            measurement.calibration,
            meta={
                "data": data,
                "data_sha256": run["data_sha256"],
                "rows": measurement.metrics["coverage"]["evaluated"],
                "judge": run["judge"],
                "rules_sha256": run["rules_sha256"],
                "style_normalised": style_normalise,
                "stef_version": __version__,
            },
        )
    paths = write_outputs(measurement, Path(output))
    print_summary(Console(), measurement.metrics)
    click.echo("wrote " + ", ".join(str(p) for p in paths.values()))

"""``stef fit-judge``: fit the symbolic judge's weights on labelled data.

Reports held-out figures (folds grouped by question) before fitting on every row and
writing the weights file that ``stef eval --judge-weights`` (or the packaged default)
uses.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from stef.errors import StefError

if TYPE_CHECKING:
    from rich.progress import Progress

    from stef.accuracy.judge_fit import Aligned, HeldOut


def _fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "—"
    return f"{v * 100:.1f}%" if pct else f"{v:.3f}"


@click.command("fit-judge")
@click.argument("data", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    required=True,
    help="Where to write the fitted weights (JSON).",
)
@click.option(
    "--folds",
    type=click.IntRange(2, 20),
    default=5,
    show_default=True,
    help="Folds for the held-out figures (grouped by question).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--dialect", default="sqlite", show_default=True, help="Dialect of the labelled SQL.")
@click.option("--rules", "rules_path", type=click.Path(dir_okay=False), help="Rules file.")
@click.option(
    "--c",
    "c",
    type=click.FloatRange(min=1e-4),
    default=None,
    help="Inverse L2 regularisation strength of the logistic fit (default: chosen by each "
    "fit on inner folds of its own training rows, from 0.05, 0.1, 0.2, 0.5, 1).",
)
@click.option(
    "--no-style-normalise",
    is_flag=True,
    help="Keep the SQL as written (default: re-render it so surface style can't leak).",
)
@click.option(
    "--exclude-questions",
    "exclude",
    type=click.Path(exists=True),
    default=None,
    help="Leave out every row whose question is in this JSONL file (rows with a "
    "'question'), e.g. the rows.jsonl of a `stef calibrate --limit` run, so that run's "
    "sample stays unseen by the weights.",
)
@click.option(
    "--mutants/--no-mutants",
    default=True,
    show_default=True,
    help="Give a gold-only file (every row correct) its planted errors (`stef selftest`'s "
    "mutants) as incorrect rows, in the fold of their original.",
)
@click.option("--name", default=None, help="Name recorded in the weights file.")
@click.option("--json", "as_json", is_flag=True, help="Print the held-out figures as JSON.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bars on stderr: rows aligned, then fits done (default: on a terminal).",
)
def fit_judge(
    data: tuple[str, ...],
    output: str,
    folds: int,
    seed: int,
    dialect: str,
    rules_path: str | None,
    c: float | None,
    no_style_normalise: bool,
    exclude: str | None,
    mutants: bool,
    name: str | None,
    as_json: bool,
    progress: bool | None,
) -> None:
    """Fit the offline judge's weights on labelled DATA files (JSONL with `correct`).

    Each row is aligned once (labels are never shown to the evaluator); for each fold
    the weights and verdict thresholds are fitted on the other folds and the held-out
    rows are scored with the score formula. Every dataset weighs the same in the fit.
    Then the weights are fitted on all rows and written to --output.
    """
    from stef.accuracy.judge_fit import cross_validate, fit

    left_out = _questions(exclude) if exclude else set()
    with _bars(progress) as bar:
        try:
            items, excluded = _aligned_items(
                data,
                left_out,
                rules_path=rules_path,
                dialect=dialect,
                folds=folds,
                seed=seed,
                normalise_style=not no_style_normalise,
                mutants=mutants,
                bar=bar,
            )
        except StefError as e:
            raise click.ClickException(e.message) from None
        task = bar.add_task(f"fitting ({folds} held-out folds, then all rows)", total=folds + 1)
        held = cross_validate(items, folds, c=c, on_fold=lambda: bar.advance(task))
        weights = fit(items, c=c)
        bar.advance(task)
    weights.meta = {
        "name": name or Path(output).stem,
        "data": [Path(p).name for p in data],
        "rows": len(items),
        "folds": folds,
        "seed": seed,
        "c": weights.meta["c"],
        "style_normalised": not no_style_normalise,
        "mutants": mutants,
        **({"excluded": {"questions_of": exclude, "rows": excluded}} if exclude else {}),
        # the fit weighs every dataset the same, so the effective base rate is their mean
        "base_rate": round(_base_rate(items), 4),
        "held_out": [h.to_dict() for h in held],
    }
    weights.save(output)
    if as_json:
        click.echo(json.dumps([h.to_dict() for h in held], indent=2))
        return
    _print_held_out(held, folds)
    click.echo(f"wrote {output}")


def _aligned_items(
    data: tuple[str, ...],
    left_out: set[str],
    *,
    rules_path: str | None,
    dialect: str,
    folds: int,
    seed: int,
    normalise_style: bool,
    mutants: bool = True,
    bar: Progress | None = None,
) -> tuple[list[Aligned], int]:
    """Every file's rows aligned once, less those whose question is left out (and how
    many). A gold-only file (every row correct) gets its planted errors as negatives.
    ``bar`` gets one task counting the rows aligned."""
    from stef.accuracy.calibrate import load_labelled, question_key
    from stef.accuracy.judge_fit import align_rows, planted_errors
    from stef.rules import load_rules

    rules = load_rules(rules_path)
    items: list[Aligned] = []
    excluded = 0
    task = bar.add_task("aligning rows", total=0) if bar is not None else None
    for path in data:
        rows = load_labelled(path)
        kept = [r for r in rows if question_key(r.question) not in left_out]
        excluded += len(rows) - len(kept)
        if mutants and all(r.correct for r in kept):
            kept += planted_errors(kept, dialect, seed)
        tick = None
        if bar is not None and task is not None:
            bar.update(task, total=(bar.tasks[task].total or 0) + len(kept))
            tick = functools.partial(bar.advance, task)
        items += align_rows(
            kept,
            Path(path).stem,
            dialect=dialect,
            rules=rules,
            folds=folds,
            seed=seed,
            normalise_style=normalise_style,
            on_row=tick,
        )
    return items, excluded


def _bars(show: bool | None) -> Progress:
    """Progress bars on stderr, on a terminal unless ``show`` says otherwise."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not (err.is_terminal if show is None else show),
        transient=True,
    )


def _print_held_out(held: list[HeldOut], folds: int) -> None:
    """The held-out figures of each data file as a table."""
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"held-out figures ({folds} folds grouped by question)")
    for col in (
        "data",
        "rows",
        "evaluated",
        "AUROC (score)",
        "AUROC (p)",
        "accuracy",
        "balanced acc.",
        "accuracy at 75",
    ):
        t.add_column(col, justify="right" if col != "data" else "left")
    for h in held:
        t.add_row(
            h.dataset,
            str(h.rows),
            str(h.evaluated),
            _fmt(h.auroc_score),
            _fmt(h.auroc_p),
            _fmt(h.accuracy, True),
            _fmt(h.balanced_accuracy, True),
            _fmt(h.accuracy_at_75, True),
        )
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(t)


def _questions(path: str) -> set[str]:
    """Grouping keys of the questions in a JSONL file (or a calibrate folder's rows.jsonl)."""
    from stef.accuracy.calibrate import question_key
    from stef.accuracy.calibrate_diff import load_rows

    try:
        rows = load_rows(path)
    except (OSError, json.JSONDecodeError) as e:
        raise click.ClickException(f"cannot read --exclude-questions {path}: {e}") from None
    keys = set()
    for n, row in enumerate(rows, 1):
        q = row.get("question") if isinstance(row, dict) else None
        if not isinstance(q, str):
            raise click.ClickException(f"{path}: row {n}: no 'question' to leave out")
        keys.add(question_key(q))
    return keys


def _base_rate(items: list[Any]) -> float:
    rates = []
    for name in dict.fromkeys(a.dataset for a in items):
        labels = [a.row.correct for a in items if a.dataset == name and a.alignment is not None]
        if labels:
            rates.append(sum(labels) / len(labels))
    return sum(rates) / len(rates) if rates else 0.5


def summary(weights_path: str) -> dict[str, Any]:
    """The metadata of a weights file (for reports)."""
    return dict(json.loads(Path(weights_path).read_text(encoding="utf-8")).get("meta") or {})

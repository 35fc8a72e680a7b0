"""``stef selftest``: how sensitive STEF is on your own traffic (planted errors, no labels).

The command line only wires :mod:`stef.accuracy.selftest` to an evaluator and prints or
writes its report; errors meant for users become one message and a non-zero exit here.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from stef.cli.console import err_console
from stef.cli.llm import build_judging, close_judging, judge_options
from stef.errors import StefError


def _kinds(value: str | None) -> list[str] | None:
    from stef.accuracy.mutants import KINDS

    if not value:
        return None
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise click.BadParameter(
            f"unknown kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}", param_hint="--kinds"
        )
    return kinds


def evaluate_with_bar(
    evaluator: Any, cases: Sequence[Any], workers: int, progress: bool | None, label: str
) -> list[Any]:
    """Evaluate the cases' originals and mutants behind a progress bar (on a terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from stef.accuracy.selftest import evaluate_cases

    show = err_console().is_terminal if progress is None else progress
    total = sum(1 + len(c.mutants) for c in cases)
    with Progress(
        label,
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
        disable=not show,
        transient=True,
    ) as bar:
        task = bar.add_task("eval", total=total)
        return evaluate_cases(evaluator, cases, workers, lambda n: bar.advance(task, n))


#: Options that do not change the figures (left out of the reproduce-command).
_NOT_IN_COMMAND = ("workers", "progress", "output", "pairs", "as_json", "json_path", "gate_path")


def _command(ctx: click.Context, positional: Sequence[str]) -> str:
    """The command that reproduces these figures: the options given on the command line
    (secrets and output paths left out)."""
    parts = ["stef", ctx.info_name or "", *positional]
    for param in ctx.command.params:
        name = param.name or ""
        if not isinstance(param, click.Option) or name in _NOT_IN_COMMAND:
            continue
        if any(w in name.lower() for w in ("key", "token", "secret", "password")):
            continue
        if ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            continue
        value = ctx.params.get(name)
        flag = max(param.opts, key=len)
        if param.is_flag and not param.secondary_opts:
            parts.append(flag)
        elif param.is_flag:
            parts.append(flag if value else max(param.secondary_opts, key=len))
        else:
            parts += [flag, str(value)]
    return shlex.join(parts)


def _load(
    file: str, dialect: str | None, correct_only: bool, limit: int | None, seed: int
) -> tuple[list[Any], int, list[str]]:
    """The rows selftest uses, the rows in the file (after --correct-only), the problems."""
    from stef.accuracy import selftest as S

    rows, problems = S.load_rows(file, dialect)
    if correct_only:
        rows = [r for r in rows if r.correct is True]
        if not rows:
            raise S.SelftestError(message=f"{file} holds no rows marked correct")
    return S.sample(rows, limit, seed), len(rows), problems


def _warn(problems: list[str]) -> None:
    for p in problems[:5]:
        err_console().print(f"[yellow]skipped[/] {p}")
    if len(problems) > 5:
        err_console().print(f"[yellow]skipped {len(problems) - 5} more unusable line(s)[/]")


@click.command("selftest")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--rules", "rules_path", type=click.Path(dir_okay=False), help="Application rules file (JSON)."
)
@click.option(
    "--kinds",
    help="Comma-separated mutation kinds (default: all): filter_dropped, sort_flipped, "
    "limit_changed, aggregate_swapped, distinct_dropped, group_removed, comparison_changed, "
    "date_shifted, projection_removed.",
)
@click.option("--limit", type=click.IntRange(1), help="A seeded sample of this many records.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of sample and mutants.")
@click.option(
    "--dialect", help="sqlglot dialect of records that name none (default: sqlglot's own)."
)
@click.option(
    "--correct-only",
    is_flag=True,
    help="Labelled files: keep only rows marked correct (the label goes no further).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Also write the report (markdown)."
)
@click.option(
    "--pairs",
    type=click.Path(dir_okay=False),
    help="Write one JSONL line per (original, mutant) pair: SQL, scores, new findings.",
)
@click.option(
    "-w",
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes.",
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."
)
@judge_options
def selftest(
    file: str,
    rules_path: str | None,
    kinds: str | None,
    limit: int | None,
    seed: int,
    dialect: str | None,
    correct_only: bool,
    as_json: bool,
    output: str | None,
    pairs: str | None,
    workers: int,
    progress: bool | None,
    **judge_opts: Any,
) -> None:
    """Plant one cue-visible error of each kind into the SQL of FILE and measure STEF's catch.

    FILE is JSONL records {question, enriched_question, sql, dialect} (your logged
    traffic, assumed mostly correct), or labelled rows {question, evidence, sql, correct}
    (evidence = the enriched question; the label is ignored). Where the question states
    the cue, each SQL gets one mutant per kind (a stated filter dropped, a superlative's
    sort flipped, a stated LIMIT changed, …); originals and mutants are re-rendered by
    one printer and scored by the same evaluator. Reported per kind: mutants made,
    detection (mutant below original; ties half), flagged (mutant < 75, original ≥ 75),
    the findings that caught it; and the originals' share scored < 75 and < 50.

    \b
    Examples:
      stef selftest logs.jsonl --rules rules.json
      stef selftest logs.jsonl --limit 500 --kinds sort_flipped,limit_changed --json
    """
    from stef._version import __version__
    from stef.accuracy import selftest as S
    from stef.evaluator import Evaluator
    from stef.rules import load_rules

    kind_list = _kinds(kinds)
    try:
        rows, in_file, problems = _load(file, dialect, correct_only, limit, seed)
        rules = load_rules(rules_path)
        judge, nl_extractor = build_judging(**judge_opts)
    except StefError as err:
        raise click.ClickException(err.message) from None
    _warn(problems)
    cases = [S.build_case(r, kind_list, seed) for r in rows]
    ev = Evaluator(rules=rules, judge=judge, nl_extractor=nl_extractor)
    try:
        results = evaluate_with_bar(ev, cases, workers, progress, "selftest")
    finally:
        close_judging(judge, nl_extractor)
    report = S.summarise(results, kind_list)
    report = {
        "run": {
            "command": _command(click.get_current_context(), [file]),
            "file": file,
            "records_in_file": in_file,
            "records_used": len(rows),
            "skipped_lines": len(problems),
            "limit": limit,
            "seed": seed,
            "rules": rules_path,
            "judge": ev.describe().get("judge"),
            "stef_version": __version__,
        },
        **report,
    }
    _write_selftest(report, results, Path(file).name, output, pairs, as_json)


def _write_selftest(
    report: dict[str, Any],
    results: list[Any],
    name: str,
    output: str | None,
    pairs: str | None,
    as_json: bool,
) -> None:
    from stef.accuracy import selftest as S

    md = S.markdown(report, title=f"stef selftest {name}")
    if output:
        Path(output).write_text(md, encoding="utf-8")
    if pairs:
        with open(pairs, "w", encoding="utf-8") as out:
            for line in S.pair_lines(results):
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        click.echo(md)


@click.command("precision")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--rules", "rules_path", type=click.Path(dir_okay=False), help="Application rules file (JSON)."
)
@click.option("--limit", type=click.IntRange(1), help="A seeded sample of this many rows per file.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of samples and mutants.")
@click.option(
    "--mutants/--no-mutants",
    default=True,
    show_default=True,
    help="Plant mutants into the correct rows (the negatives of gold-only files).",
)
@click.option("--dialect", help="sqlglot dialect of rows that name none.")
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), help="Write the table (JSON)."
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the table (markdown).")
@click.option(
    "--write-gate",
    "gate_path",
    type=click.Path(dir_okay=False),
    help="Write the precision gate these counts give (stef/data/finding_precision.json format).",
)
@click.option(
    "-w",
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes.",
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."
)
def precision(
    files: tuple[str, ...],
    rules_path: str | None,
    limit: int | None,
    seed: int,
    mutants: bool,
    dialect: str | None,
    json_path: str | None,
    output: str | None,
    gate_path: str | None,
    workers: int,
    progress: bool | None,
) -> None:
    """How often each finding kind fires on correct rows, incorrect rows and mutants, per file.

    FILES are labelled JSONL ({question, evidence, sql, correct, …}; gold-only files have
    every row correct). Per finding kind and file: fires on correct rows, on incorrect
    rows and on mutants planted into the correct rows (as `stef selftest`), and the lift
    P(negative | fires) / P(negative), negatives being the incorrect rows of a labelled
    file and the mutants of a gold-only one. Kinds with lift ≤ 1 on a file where they fire
    at least 5 times are flagged. Labels are read for the table only, never evaluated.
    Also reports each file's selftest figures on its correct rows. --write-gate writes
    the precision gate (kinds demoted to info), measured apart with and without an
    enriched question.

    \b
    Example:
      stef precision ../shared/data/*.jsonl --limit 500 --output precision.md --json precision.json
    """
    from stef._version import __version__
    from stef.accuracy import precision as P
    from stef.accuracy import selftest as S
    from stef.align.precision import PrecisionGate
    from stef.evaluator import Evaluator
    from stef.rules import load_rules

    try:
        rules = load_rules(rules_path)
        loaded = [(f, *S.load_rows(f, dialect)) for f in files]
    except StefError as err:
        raise click.ClickException(err.message) from None
    per_file, selftests = _evaluate_files(
        # every finding at its own severity: the table measures the findings themselves,
        # not the gate it may write
        Evaluator(rules=rules, precision=PrecisionGate()),
        loaded,
        limit,
        seed,
        mutants,
        workers,
        progress,
    )
    t = P.table(per_file)
    t = {
        "run": {
            "command": _command(click.get_current_context(), files),
            "files": list(files),
            "limit": limit,
            "seed": seed,
            "mutants": mutants,
            "rules": rules_path,
            "min_fires": P.MIN_FIRES,
            "stef_version": __version__,
        },
        **t,
        "selftest": selftests,
    }
    _write_precision(t, per_file, output, json_path, gate_path)
    flagged = t["flagged"]
    err_console().print(
        f"{len(t['kinds'])} finding kinds; lift ≤ 1 where they fire ≥ {P.MIN_FIRES} times: "
        + (", ".join(flagged) if flagged else "none")
    )


def _evaluate_files(
    ev: Any,
    loaded: list[tuple[str, list[Any], list[str]]],
    limit: int | None,
    seed: int,
    mutants: bool,
    workers: int,
    progress: bool | None,
) -> tuple[list[Any], dict[str, Any]]:
    """Each file's results (mutants planted into rows not marked incorrect) and selftest."""
    from stef.accuracy import precision as P
    from stef.accuracy import selftest as S

    per_file: list[P.FileResults] = []
    selftests: dict[str, Any] = {}
    for f, rows, problems in loaded:
        _warn(problems)
        sample = S.sample(rows, limit, seed)
        cases = [
            S.build_case(r, None, seed, plant=mutants and r.correct is not False) for r in sample
        ]
        name = Path(f).stem
        results = evaluate_with_bar(ev, cases, workers, progress, name)
        per_file.append(P.FileResults(name, results))
        selftests[name] = S.summarise([r for r in results if r.case.row.correct is not False])
    return per_file, selftests


def _write_precision(
    t: dict[str, Any],
    per_file: list[Any],
    output: str | None,
    json_path: str | None,
    gate_path: str | None,
) -> None:
    from stef.accuracy import precision as P
    from stef.accuracy import selftest as S

    selftests = t["selftest"]
    md = "### Selftest across files\n\n" + S.overview(selftests) + "\n### Precision\n\n"
    md += P.markdown(t) + "".join(
        "\n" + S.markdown(report, title=f"selftest {name} (rows marked correct)")
        for name, report in selftests.items()
    )
    if output:
        Path(output).write_text(md, encoding="utf-8")
    if json_path:
        Path(json_path).write_text(json.dumps(t, ensure_ascii=False, indent=2), encoding="utf-8")
    if gate_path:
        P.gate(per_file, meta=t["run"]).save(gate_path)
    if not output:
        click.echo(md)

"""Monitoring commands: ``stef ingest``, ``stats``, ``compare``, ``report`` and ``watch``.

Each is a click command registered on the main group in :mod:`stef.cli.main`. Errors meant
for users (bad selection, unreadable store, invalid alert rules) become one message and
exit code 2 here; ``compare --fail-on`` uses 1 for a regression and 2 for undecided.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from stef.cli.console import err_console
from stef.errors import StefError

if TYPE_CHECKING:
    from rich.console import Console


class UserError(click.ClickException):
    """A message for the user and exit code 2."""

    exit_code = 2


def _fail(message: str) -> click.ClickException:
    return UserError(message)


def _open(target: str, create: bool = True, write: bool = False) -> Any:
    from stef.monitor.store import open_store

    try:
        store = open_store(target, create=create)
        check = getattr(store, "check_writable", None)
        if write and check is not None:
            check()
        return store
    except StefError as e:
        raise _fail(e.message) from None


def _selection(text: str | None, since: str | None = None, until: str | None = None) -> Any:
    from stef.monitor.store import Selection

    now = time.time()
    try:
        sel = Selection.parse(text, now=now)
        extra = Selection.from_mapping({"since": since, "until": until}, now=now)
    except StefError as e:
        raise _fail(e.message) from None
    if extra.since is not None:
        sel = sel.narrowed(since=extra.since)
    if extra.until is not None:
        sel = sel.narrowed(until=extra.until)
    return sel


store_option = click.option(
    "--store",
    "store_target",
    required=True,
    envvar="STEF_STORE",
    help="The store: a SQLite file (stef.db), sqlite:///path or postgresql://user@host/db. "
    "Env: STEF_STORE.",
)
since_option = click.option(
    "--since", help="Records from this time: ISO 8601 or a duration ago (7d)."
)
until_option = click.option("--until", help="Records before this time: ISO 8601 or a duration ago.")


def _check_selection(store: Any, sel: Any, option: str = "--where") -> None:
    """A selection that matches nothing is a mistake to say, with what the store holds
    (and a did-you-mean for a value close to one that exists)."""
    import difflib

    if sel.describe() == "all" or store.count(sel):
        return
    groups = sorted(
        {k[0] for k in store.tallies(None, by=["agent", "agent_version", "app"])},
        key=lambda g: tuple(str(v) for v in g),
    )
    if not groups:
        raise _fail(f"the store holds no evaluations (nothing matches {option} {sel.describe()})")
    hints = []
    for i, key in enumerate(("agent", "agent_version", "app")):
        value = getattr(sel, key, None)
        known = sorted({str(g[i]) for g in groups if g[i] is not None})
        if value is not None and value not in known:
            close = difflib.get_close_matches(str(value), known, n=1)
            hints.append(
                f"{key}={value!r} is not stored"
                + (f"; did you mean {close[0]!r}?" if close else "")
            )
    listing = ", ".join("/".join(str(v) if v is not None else "-" for v in g) for g in groups[:20])
    more = f" … ({len(groups)} in all)" if len(groups) > 20 else ""
    hint = (" " + "; ".join(hints) + ".") if hints else ""
    raise _fail(
        f"{option} {sel.describe()} matches no stored evaluation.{hint} "
        f"Stored agent/version/app: {listing}{more}"
    )


# -- ingest ----------------------------------------------------------------------------


def _evaluations(
    files: tuple[str, ...], problems: list[str], counts: dict[str, int]
) -> Iterator[dict[str, Any]]:
    import orjson

    from stef.monitor.store import check_evaluation
    from stef.monitor.store.sqlite import record_time

    for name in files:
        try:
            stream: IO[bytes] = click.open_file(name, "rb")
        except OSError as e:
            raise _fail(f"cannot read {name}: {e.strerror or e}") from None
        with stream as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                counts["lines"] += 1
                try:
                    ev = orjson.loads(raw)
                except orjson.JSONDecodeError as e:
                    problems.append(f"{name}:{number}: not JSON ({e})")
                    continue
                problem = check_evaluation(ev)
                if problem is None:
                    try:
                        record_time(ev)
                    except ValueError as e:
                        problem = str(e)
                if problem:
                    problems.append(f"{name}:{number}: {problem}")
                    continue
                yield ev


@click.command("ingest")
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True, dir_okay=False))
@store_option
@click.option("--replace", is_flag=True, help="Overwrite evaluations whose id is already stored.")
def ingest_cmd(files: tuple[str, ...], store_target: str, replace: bool) -> None:
    """Store evaluations made elsewhere (JSONL files of `stef eval` output, '-' for stdin).

    Idempotent by evaluation id: ingesting a file twice stores nothing twice. Invalid
    lines are listed on stderr and make the exit code 1; valid ones are stored anyway.
    """
    store = _open(store_target, write=True)
    problems: list[str] = []
    counts = {"lines": 0}
    started = time.perf_counter()
    try:
        new = store.write(_evaluations(files, problems, counts), replace=replace)
    except StefError as e:
        raise _fail(e.message) from None
    finally:
        store.close()
    took = time.perf_counter() - started
    valid = counts["lines"] - len(problems)
    verb = "replaced or stored" if replace else "stored"
    click.echo(
        f"{verb} {new} new evaluation(s) of {valid} valid line(s)"
        + ("" if replace else f", {valid - new} already stored")
        + f" in {took:.1f} s"
    )
    if problems:
        for line in problems[:20]:
            click.echo(f"invalid: {line}", err=True)
        if len(problems) > 20:
            click.echo(f"… and {len(problems) - 20} more invalid line(s)", err=True)
        sys.exit(1)


# -- stats -----------------------------------------------------------------------------


def _split(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


@click.command("stats")
@store_option
@click.option(
    "--by",
    default="agent,agent_version",
    show_default=True,
    help="Group by: agent, agent_version, app, metadata.KEY (comma-separated; '' for none).",
)
@click.option("--window", help="Time windows of record time: 1h, 6h, 1d, 1w… (default: none).")
@click.option("--where", "where", help="Selection, e.g. agent=sql-bot,app=sales,metadata.team=ops.")
@since_option
@until_option
@click.option("--top", default=3, show_default=True, help="Finding kinds listed per row.")
@click.option("--json", "as_json", is_flag=True, help="JSON (one object per row in a list).")
@click.option("--csv", "as_csv", is_flag=True, help="CSV with one flat column per figure.")
def stats_cmd(
    store_target: str,
    by: str,
    window: str | None,
    where: str | None,
    since: str | None,
    until: str | None,
    top: int,
    as_json: bool,
    as_csv: bool,
) -> None:
    """Figures per group and time window: records, coverage, mean, median, P10, P90,
    band / filter-class / verdict shares, mean confidence and top finding kinds.
    """
    from stef.monitor.stats import check_group_keys, flat_row, parse_duration, rows

    if as_json and as_csv:
        raise click.UsageError("--json and --csv are exclusive")
    keys = _split(by)
    try:
        check_group_keys(keys)
        width = parse_duration(window) if window else None
    except ValueError as e:
        raise _fail(str(e)) from None
    sel = _selection(where, since, until)
    store = _open(store_target, create=False)
    try:
        _check_selection(store, sel)
        result = rows(store.tallies(sel, by=keys, window=width), by=keys, top=top)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in result], indent=2))
    elif as_csv:
        flat = [flat_row(r) for r in result]
        fields: dict[str, None] = {}
        for row in flat:
            fields.update(dict.fromkeys(row))
        writer = csv.DictWriter(sys.stdout, fieldnames=list(fields), lineterminator="\n")
        writer.writeheader()
        writer.writerows(flat)
    else:
        _stats_table(result, keys, window is not None, sel.describe())


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def _console() -> Console:
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=200)


def _stats_table(result: list[Any], keys: list[str], windowed: bool, where: str) -> None:
    from rich.table import Table

    console = _console()
    if not result:
        console.print(f"no evaluations stored for {where}")
        return
    table = Table(title=f"STEF figures ({where})", title_justify="left", header_style="bold")
    for key in keys:
        table.add_column(key)
    if windowed:
        table.add_column("window")
    for name in (
        "records",
        "cov",
        "mean",
        "median",
        "P10",
        "P90",
        "bands E/G/M/P %",
        "filters ok",
        "correct",
        "conf",
    ):
        table.add_column(name, justify="right")
    table.add_column("top findings (share of records)")
    for r in result:
        f = r.figures
        cells = [str(v) if v is not None else "—" for v in r.group.values()]
        if windowed:
            cells.append(r.to_dict()["window_start"] or "")
        bands = "/".join(
            f"{100 * f.bands.get(b, 0):.0f}" for b in ("excellent", "good", "marginal", "poor")
        )
        cells += [
            str(f.records),
            _pct(f.coverage),
            _num(f.mean),
            _num(f.median),
            _num(f.p10),
            _num(f.p90),
            bands if f.evaluated else "–",
            _pct(
                f.filters.get("fully_applied", 0) + f.filters.get("fully_applied_with_extras", 0)
                if f.evaluated
                else None
            ),
            _pct(
                f.verdicts.get("correct", 0) + f.verdicts.get("likely_correct", 0)
                if f.evaluated
                else None
            ),
            "–" if f.mean_confidence is None else f"{f.mean_confidence:.2f}",
            ", ".join(f"{k} {_pct(s)}" for k, _, s in f.top_findings) or "—",
        ]
        table.add_row(*cells)
    console.print(table)


# -- compare ---------------------------------------------------------------------------


@click.command("compare")
@store_option
@click.option(
    "--baseline", required=True, help="Baseline selection, e.g. agent=sql-bot,agent_version=1.3."
)
@click.option(
    "--candidate", required=True, help="Candidate selection, e.g. agent=sql-bot,agent_version=1.4."
)
@since_option
@until_option
@click.option(
    "--alpha",
    default=0.05,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="Significance level.",
)
@click.option(
    "--min-records",
    default=10,
    show_default=True,
    help="Fewer evaluated records on a side: undecided.",
)
@click.option("--seed", default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--fail-on",
    "fail_on",
    default="",
    help="'regression' (exit 1 if worse, 2 if undecided) and/or 'coverage' (exit 1 if "
    "coverage is significantly lower), comma-separated.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare_cmd(
    store_target: str,
    baseline: str,
    candidate: str,
    since: str | None,
    until: str | None,
    alpha: float,
    min_records: int,
    seed: int,
    fail_on: str,
    as_json: bool,
) -> None:
    """Compare two selections (agents, versions, apps, time ranges): mean and P90
    differences with bootstrap intervals, coverage, band shift, a paired test on shared
    questions, the findings that grew most, and a verdict at --alpha.
    """
    from stef.monitor.compare import compare
    from stef.monitor.stats import Tally

    gates = set(_split(fail_on))
    if gates - {"regression", "coverage"}:
        raise click.UsageError("--fail-on takes regression and/or coverage")
    sels = [_selection(baseline, since, until), _selection(candidate, since, until)]
    store = _open(store_target, create=False)
    try:
        for name, sel in zip(("--baseline", "--candidate"), sels, strict=True):
            _check_selection(store, sel, name)
        tallies, pairs = [], []
        for sel in sels:
            t = Tally()
            for part in store.tallies(sel).values():
                t.merge(part)
            tallies.append(t)
            pairs.append(store.score_pairs(sel))
    finally:
        store.close()
    result = compare(
        tallies[0], tallies[1], pairs[0], pairs[1], alpha=alpha, seed=seed, min_records=min_records
    )
    if as_json:
        data = result.to_dict()
        data["baseline"]["selection"] = sels[0].describe()
        data["candidate"]["selection"] = sels[1].describe()
        click.echo(json.dumps(data, indent=2))
    else:
        _print_comparison(result, sels[0].describe(), sels[1].describe())
    code = 0
    if "regression" in gates:
        code = {"worse": 1, "undecided": 2}.get(result.verdict, 0)
    if "coverage" in gates and result.coverage_verdict == "lower":
        code = 1
    sys.exit(code)


def _ci(est: Any) -> str:
    if est.value is None:
        return "–"
    if est.low is None:
        return f"{est.value:+.2f}"
    return f"{est.value:+.2f} [{est.low:+.2f}, {est.high:+.2f}]"


def _pts(est: Any) -> str:
    if est.value is None:
        return "–"
    return f"{100 * est.value:+.1f} pts [{100 * est.low:+.1f}, {100 * est.high:+.1f}]"


def _print_comparison(r: Any, base: str, cand: str) -> None:
    from rich.table import Table

    console = _console()
    colour = {"worse": "red", "better": "green", "undecided": "yellow"}.get(r.verdict, "default")
    console.print(f"baseline  {base}\ncandidate {cand}")
    table = Table(header_style="bold")
    for name in ("", "baseline", "candidate", f"difference [{1 - r.alpha:.0%} CI]"):
        table.add_column(name, justify="right" if name else "left")
    b, c = r.baseline, r.candidate
    table.add_row("records", str(b["records"]), str(c["records"]), "")
    table.add_row("evaluated", str(b["evaluated"]), str(c["evaluated"]), "")
    table.add_row(
        "coverage",
        _pct(b["coverage"]),
        _pct(c["coverage"]),
        _pts(r.coverage_diff) + f" ({r.coverage_verdict})",
    )
    table.add_row("mean", _num(b["mean"]), _num(c["mean"]), _ci(r.mean_diff))
    table.add_row("P90", _num(b["p90"]), _num(c["p90"]), _ci(r.p90_diff))
    wil = "" if r.wilcoxon_p is None else f", Wilcoxon p={r.wilcoxon_p:.3g}"
    table.add_row(f"paired ({r.paired_n} questions)", "", "", _ci(r.paired_mean_diff) + wil)
    for band, s in r.band_shift.items():
        table.add_row(
            f"{band} share",
            _pct(s["baseline"]),
            _pct(s["candidate"]),
            f"{100 * s['diff']:+.1f} pts",
        )
    console.print(table)
    if r.findings_grew:
        grew = ", ".join(
            f"{f['kind']} {_pct(f['baseline'])}→{_pct(f['candidate'])}" for f in r.findings_grew
        )
        console.print(f"findings that grew most: {grew}")
    console.print(f"verdict: [bold {colour}]{r.verdict}[/] — {r.reason} ({r.test})")


# -- report ----------------------------------------------------------------------------


@click.command("report")
@store_option
@click.option(
    "--output", "-o", default="report.html", show_default=True, type=click.Path(dir_okay=False)
)
@click.option("--where", "where", help="Only these evaluations, e.g. app=sales.")
@since_option
@until_option
@click.option("--baseline", help="Selection to compare (with --candidate).")
@click.option("--candidate", help="Selection to compare with --baseline.")
@click.option("--window", help="Time window of the over-time chart (default: about 40 points).")
@click.option("--title", default="STEF report", show_default=True)
@click.option(
    "--page-size", default=50, show_default=True, type=click.IntRange(1, 1000),
    help="Rows per page of the evaluation list.",
)  # fmt: skip
@click.option(
    "--max-records", default=1000, show_default=True, type=click.IntRange(0),
    help="Records listed (each with its own page): lowest score first, then error records.",
)  # fmt: skip
def report_cmd(
    store_target: str,
    output: str,
    where: str | None,
    since: str | None,
    until: str | None,
    baseline: str | None,
    candidate: str | None,
    window: str | None,
    title: str,
    page_size: int,
    max_records: int,
) -> None:
    """Write the dashboard's pages into one self-contained HTML file (works offline, no
    script): the overview (figures per agent and version, score over time with coverage,
    bands, top findings, error records), the evaluation list paged in the file, a page per
    listed record with its findings marked in the SQL, and a comparison.
    """
    from stef.monitor.stats import parse_duration
    from stef.service.report import build_report

    if (baseline is None) != (candidate is None):
        raise click.UsageError("--baseline and --candidate go together")
    try:
        width = parse_duration(window) if window else None
    except ValueError as e:
        raise _fail(str(e)) from None
    sel = _selection(where, since, until)
    base = _selection(baseline) if baseline else None
    cand = _selection(candidate) if candidate else None
    store = _open(store_target, create=False)
    try:
        _check_selection(store, sel)
        for name, part in (("--baseline", base), ("--candidate", cand)):
            if part is not None:
                _check_selection(store, part, name)
        html = build_report(
            store,
            selection=sel,
            baseline=baseline,
            candidate=candidate,
            title=title,
            window=width,
            page_size=page_size,
            max_records=max_records,
        )
    finally:
        store.close()
    Path(output).write_text(html, encoding="utf-8")
    click.echo(f"wrote {output} ({len(html) / 1024:.0f} KiB)")


# -- watch -----------------------------------------------------------------------------


def _judge_options(func: Any) -> Any:
    try:
        from stef.cli.llm import judge_options
    except ImportError:  # pragma: no cover - the judge options live with the core CLI
        return func
    return judge_options(func)


@click.command("watch")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@store_option
@click.option(
    "--rules",
    "rules_path",
    type=click.Path(dir_okay=False),
    help="Rules file (R_app) for evaluation.",
)
@click.option(
    "--alerts", "alerts_path", type=click.Path(dir_okay=False), help="Alert rules (JSON)."
)
@click.option("--alert-webhook", help="POST each alert and recovery as JSON to this URL.")
@click.option(
    "--alert-webhook-format",
    type=click.Choice(["json", "slack", "teams"]),
    default="json",
    show_default=True,
    help="Payload: STEF's event JSON, or a Slack / Microsoft Teams incoming-webhook message.",
)
@click.option("--interval", default=2.0, show_default=True, help="Seconds between polls.")
@click.option(
    "--pattern", default="*.jsonl", show_default=True, help="Files followed in DIRECTORY."
)
@click.option(
    "--batch-size",
    default=200,
    show_default=True,
    help="Records stored (and alerts checked) per batch.",
)
@click.option("--once", is_flag=True, help="Process what is there now and exit (tests, cron).")
@click.option(
    "--record-timeout",
    type=click.FloatRange(0, min_open=True),
    default=5.0,
    show_default=True,
    help="Seconds one record may take (status 'timeout' past it).",
)
@_judge_options
def watch_cmd(
    directory: str,
    store_target: str,
    rules_path: str | None,
    alerts_path: str | None,
    alert_webhook: str | None,
    alert_webhook_format: str,
    interval: float,
    pattern: str,
    batch_size: int,
    once: bool,
    record_timeout: float,
    **judge_opts: Any,
) -> None:
    """Follow DIRECTORY's JSONL logs: evaluate each new record once, store it, and check
    alert rules after each batch. Stops on Ctrl-C; a restart resumes where it stopped.
    """
    from stef.evaluator import Evaluator
    from stef.monitor.alerts import AlertConfig, AlertMonitor, format_event
    from stef.monitor.watch import PollResult, Watcher
    from stef.rules import load_rules

    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise _fail(f"--pattern {pattern!r} must name files inside DIRECTORY (no '..', no '/')")
    try:
        rules = load_rules(rules_path)
        config = AlertConfig.load(alerts_path) if alerts_path else None
    except StefError as e:
        raise _fail(e.message) from None
    if alert_webhook and config is None:
        raise click.UsageError("--alert-webhook needs --alerts (the rules to check)")
    sink = _webhook(alert_webhook, alert_webhook_format)
    from stef.cli.llm import build_judging, close_judging

    judge = None
    nl_extractor = None
    if judge_opts:
        try:
            judge, nl_extractor = build_judging(**judge_opts)
        except StefError as e:
            raise _fail(e.message) from None
    evaluator = Evaluator(rules=rules, judge=judge, nl_extractor=nl_extractor)
    store = _open(store_target, write=True)
    pool, evaluate = _watch_evaluate(evaluator, record_timeout)

    def echo(event: dict[str, Any]) -> None:
        click.echo(format_event(event))
        sys.stdout.flush()

    sinks: list[Any] = [echo]
    if sink is not None:
        sinks.append(sink)
    monitor = AlertMonitor(store, config, sinks) if config else None
    watcher = Watcher(directory, store, evaluate, monitor, pattern=pattern, batch_size=batch_size)

    def report(result: PollResult) -> None:
        for note in result.notes:
            err_console().print(note)
        if result.lines:
            err_console().print(
                f"{result.lines} new line(s), {result.stored} new evaluation(s) stored"
            )

    try:
        watcher.run(interval=interval, once=once, report=report)
    except KeyboardInterrupt:
        err_console().print("stopped")
    finally:
        if pool is not None:
            pool.close()
        store.close()
        close_judging(judge, nl_extractor)


def _webhook(url: str | None, fmt: str) -> Any:
    """The webhook sink of ``--alert-webhook`` (checked now), or ``None``."""
    from stef.monitor.alerts import WebhookSink

    if not url:
        return None
    try:
        return WebhookSink(url, fmt=fmt)
    except ValueError as e:
        raise _fail(f"--alert-webhook: {e}") from None


def _watch_evaluate(evaluator: Any, deadline: float) -> tuple[Any, Any]:
    """``line -> evaluation`` for ``stef watch``: through one supervised worker process
    (a deadline per record; a record that kills it costs only itself), or in this process
    for network judges."""
    from stef.batch import supervised, supervised_pool
    from stef.monitor.watch import evaluator_function

    if not supervised(evaluator, 1, deadline):
        return None, evaluator_function(evaluator)
    pool = supervised_pool(evaluator, 1, deadline)

    def run(line: str) -> dict[str, Any]:
        [encoded] = pool.map([line])
        return encoded.decoded()

    return pool, run


COMMANDS = (ingest_cmd, stats_cmd, compare_cmd, report_cmd, watch_cmd)

"""``stef import`` (traces and logs in) and ``stef export`` (results out)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import click

from stef.cli.llm import build_judging, close_judging, judge_options
from stef.errors import StefError


def _echo_err(text: str) -> None:
    click.echo(text, err=True)


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--from",
    "fmt",
    required=True,
    type=click.Choice(["otlp-json", "otlp-proto", "openinference", "langfuse", "jsonl"]),
    help="The file's format.",
)
@click.option(
    "--map",
    "field_map",
    help="field=path pairs: a log's (dotted) paths, or for traces the span attributes, "
    "that hold each record field, e.g. question=q,sql=query,agent=service.name.",
)
@click.option("--eval", "evaluate", is_flag=True, help="Evaluate the records; write evaluations.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    show_default=True,
    help="Where to write records (or evaluations with --eval), JSONL.",
)
@click.option("--rules", "rules_path", type=click.Path(dir_okay=False), help="With --eval.")
@click.option("--store", "store_target", help="With --eval: also keep the evaluations here.")
@judge_options
def import_cmd(
    file: str,
    fmt: str,
    field_map: str | None,
    evaluate: bool,
    output: str,
    rules_path: str | None,
    store_target: str | None,
    **judge_opts: Any,
) -> None:
    """Read FILE (an OTLP trace export, OpenInference/Phoenix spans, a Langfuse export, or any
    JSON log) and write one STEF record per text-to-SQL call, or its evaluation with --eval.

    \b
    Examples:
      stef import traces.json --from otlp-json --eval --store stef.db
      stef import app.log --from jsonl --map question=q,sql=query,agent=service.name
    """
    from stef.interop.fieldmap import MapError, parse_map
    from stef.interop.readers import Item, read_file

    try:
        fmap = parse_map(field_map)
    except MapError as e:
        raise click.UsageError(e.message) from None
    items = read_file(file, fmt, fmap)
    if not evaluate:
        n, problems = _write_records(items, output, file)
        _echo_err(
            f"{file}: {n} record(s) written" + (f", {problems} problem(s)" if problems else "")
        )
        return
    from stef.errors import RulesError
    from stef.evaluator import Evaluator
    from stef.rules import load_rules

    try:
        rules = load_rules(rules_path)
    except RulesError as e:
        click.echo(f"error: {e.message}", err=True)
        raise SystemExit(2) from None
    try:
        judge, nl_extractor = build_judging(**judge_opts)
    except StefError as e:
        raise click.ClickException(e.message) from None
    ev = Evaluator(rules=rules, judge=judge, nl_extractor=nl_extractor)

    def inputs() -> Iterator[Any]:
        for item in items:
            if isinstance(item, Item) and item.record is not None:
                _note_missing(file, item)
                yield item.record
            elif item.raw is not None:
                yield item.raw  # evaluated as a line: an invalid_json evaluation names it
            else:
                _echo_err(f"{file} {item.where}: {item.error}")

    try:
        _eval_items(ev, inputs(), output, store_target)
    finally:
        close_judging(judge, nl_extractor)


def _note_missing(file: str, item: Any) -> None:
    if item.missing:
        _echo_err(f"{file} {item.where}: no {', '.join(repr(p) for p in item.missing)}")


def _write_records(items: Iterator[Any], output: str, file: str) -> tuple[int, int]:
    n = problems = 0
    with click.open_file(output, "w", encoding="utf-8") as out:
        for item in items:
            if item.record is None:
                problems += 1
                _echo_err(f"{file} {item.where}: {item.error}")
                continue
            if item.missing:
                problems += 1
                _note_missing(file, item)
            out.write(json.dumps(item.record, ensure_ascii=False) + "\n")
            n += 1
    return n, problems


def _eval_items(ev: Any, inputs: Iterator[Any], output: str, store_target: str | None) -> None:
    from stef.batch import Summary
    from stef.cli.report_text import render_summary
    from stef.monitor.store import open_store

    store = None
    if store_target:
        try:
            store = open_store(store_target)
        except StefError as e:
            raise click.ClickException(e.message) from None
    summary = Summary()
    batch: list[dict[str, Any]] = []
    with click.open_file(output, "w", encoding="utf-8") as out:
        for x in inputs:
            evaluation = ev.evaluate_line(x) if isinstance(x, str) else ev.evaluate_record(x)
            out.write(json.dumps(evaluation, ensure_ascii=False) + "\n")
            summary.add(evaluation)
            batch.append(evaluation)
            if store is not None and len(batch) >= 500:
                store.write(batch, replace=True)
                batch.clear()
    if store is not None:
        if batch:
            store.write(batch, replace=True)
        store.close()
    from rich.console import Console

    Console(stderr=True).print(render_summary(summary.to_dict()))


def _sink(to: str, url: str) -> Any:
    from stef.interop.sinks import SinkConfigError, sink_from_env

    try:
        return sink_from_env(to, url)
    except SinkConfigError as e:
        raise click.UsageError(e.message) from None


def _evaluations(store_target: str | None, path: str | None, where: str | None) -> Iterator[Any]:
    if path:
        with click.open_file(path, "r", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    try:
                        yield json.loads(line)
                    except ValueError:
                        continue
        return
    from stef.monitor.store import Selection, open_store

    assert store_target is not None
    try:
        store = open_store(store_target)
        selection = Selection.parse(where)
    except StefError as e:
        raise click.ClickException(e.message) from None
    try:
        yield from store.query(selection=selection, order_by="time")
    finally:
        store.close()


@click.command("export")
@click.argument("url")
@click.option(
    "--to",
    "to",
    required=True,
    type=click.Choice(["otlp", "langfuse", "phoenix"]),
    help="otlp: gen_ai.evaluation.result events (OTLP/HTTP logs); langfuse: scores; "
    "phoenix: span annotations.",
)
@click.option("--store", "store_target", envvar="STEF_STORE", help="Read evaluations here.")
@click.option(
    "--evaluations",
    "evaluations_path",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True),
    help="Or read them from this JSONL file (what `stef eval` wrote).",
)
@click.option("--where", help="With --store: a selection, e.g. agent=sql-bot,since=7d.")
@click.option("--max-attempts", type=click.IntRange(1, 20), default=5, show_default=True)
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds, in all.")
def export_cmd(
    url: str,
    to: str,
    store_target: str | None,
    evaluations_path: str | None,
    where: str | None,
    max_attempts: int,
    timeout: float,
) -> None:
    """Send evaluations to URL, each against the span it evaluated (metadata.trace_id and
    span_id, as `stef import` and /v1/traces record them).

    Keys come from the environment, never the command line: LANGFUSE_PUBLIC_KEY and
    LANGFUSE_SECRET_KEY, PHOENIX_API_KEY, OTEL_EXPORTER_OTLP_HEADERS. Batched, retried with
    backoff on 429/5xx (honouring Retry-After); exits 1 when any failed.
    """
    from stef.interop.delivery import Delivery

    if bool(store_target) == bool(evaluations_path):
        raise click.UsageError("give either --store or --evaluations")
    sink = _sink(to, url)
    delivery = Delivery(sink, max_queue=1_000_000, max_attempts=max_attempts, flush_interval=0.05)
    for ev in _evaluations(store_target, evaluations_path, where):
        delivery.submit(ev)
    stats = delivery.close(timeout)
    _echo_err(
        f"{to}: sent {stats['sent']}, failed {stats['failed']}, "
        f"skipped {stats['skipped']} (no trace/span id), retries {stats['retries']}"
        + (f"; last error: {stats['last_error']}" if stats["last_error"] else "")
    )
    if stats["failed"] or stats["pending"]:
        raise SystemExit(1)


COMMANDS = [import_cmd, export_cmd]

"""``stef serve``: run the evaluation service on uvicorn.

Tokens come from ``STEF_TOKENS`` (``write:TOKEN,read:TOKEN,write@shop:TOKEN``) or
``--token-file`` (TOML); with none the server refuses to start unless ``--no-auth``, and
then it binds to loopback only.
"""

from __future__ import annotations

import ipaddress
import json
import os
from typing import Any

import click

from stef.cli.llm import build_judging, close_judging, judge_options
from stef.errors import StefError


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _app_rules(pairs: tuple[str, ...]) -> dict[str, Any]:
    from stef.rules import load_rules

    out = {}
    for pair in pairs:
        app, sep, path = pair.partition("=")
        if not sep or not app.strip() or not path.strip():
            raise click.UsageError(f"--app-rules takes APP=FILE, got {pair!r}")
        try:
            out[app.strip()] = load_rules(path.strip())
        except StefError as e:
            raise click.ClickException(e.message) from None
    return out


def _tokens(token_file: str | None) -> list[Any]:
    from stef.service.auth import load_token_file, parse_tokens

    tokens = list(parse_tokens(os.environ.get("STEF_TOKENS", "")))
    if token_file:
        tokens += load_token_file(token_file)
    return tokens


def _trace_map(text: str | None) -> Any:
    from stef.interop.calls import TraceMap
    from stef.interop.fieldmap import MapError, parse_map

    try:
        return TraceMap(source="otlp").with_overrides(parse_map(text))
    except MapError as e:
        raise click.UsageError(e.message.replace("--map:", "--trace-map:", 1)) from None


def default_eval_workers() -> int:
    """``--eval-workers`` when not given: one per CPU this process may use, none (evaluate
    in the server's process) on a single CPU, where a worker would only add copying."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return cpus if cpus >= 2 else 0


def _sink(kind: str, url: str) -> Any:
    from stef.interop.sinks import SinkConfigError, sink_from_env

    try:
        return sink_from_env(kind, url)
    except SinkConfigError as e:
        raise click.UsageError(f"--export {kind}: {e.message}") from None


def _checked_tokens(token_file: str | None, no_auth: bool, host: str) -> Any:
    """The service's tokens, or a usage error: none configured without ``--no-auth``, or
    ``--no-auth`` on an address other than loopback."""
    try:
        tokens = _tokens(token_file)
    except StefError as e:
        raise click.ClickException(e.message) from None
    if not tokens and not no_auth:
        raise click.ClickException(
            "no token configured: set STEF_TOKENS (write:TOKEN,read:TOKEN) or --token-file, "
            "or pass --no-auth to serve without auth on loopback"
        )
    if no_auth and not _loopback(host):
        raise click.ClickException(
            f"--no-auth binds to loopback only; {host} is not a loopback address"
        )
    return tokens


@click.command("serve")
@click.option(
    "--store",
    "store_target",
    required=True,
    envvar="STEF_STORE",
    help="The store: a SQLite file (stef.db), sqlite:///path or postgresql://… [env STEF_STORE].",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--rules", "rules_path", type=click.Path(dir_okay=False), help="Default rules file.")
@click.option(
    "--app-rules",
    "app_rules",
    multiple=True,
    metavar="APP=FILE",
    help="Rules for the records of one app (repeatable).",
)
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False),
    help='TOML file of tokens: tokens = ["write:…", "read@shop:…"] (besides STEF_TOKENS).',
)
@click.option(
    "--no-auth", is_flag=True, help="No tokens: everyone may read and write (loopback only)."
)
@click.option(
    "--max-body", default=10 * 1024 * 1024, show_default=True, help="Bytes per request body."
)
@click.option("--max-batch", default=1000, show_default=True, help="Records per request.")
@click.option(
    "--rate-limit",
    default=50.0,
    show_default=True,
    help="Requests per second per token (0: no limit).",
)
@click.option(
    "--cors-origin", "cors", multiple=True, help="Allow this origin (CORS is off by default)."
)
@click.option(
    "--export",
    "exports",
    multiple=True,
    nargs=2,
    type=(click.Choice(["otlp", "langfuse", "phoenix"]), str),
    metavar="KIND URL",
    help="Send every evaluation made here to URL, against its span (repeatable): otlp "
    "(gen_ai.evaluation.result events), langfuse (scores), phoenix (span annotations). "
    "Batched and retried in the background; keys from the environment as for stef export.",
)
@click.option(
    "--trace-map",
    help="For /v1/traces: field=attribute pairs naming the span attribute of a record "
    "field, e.g. app=deployment.environment,question=app.user_question.",
)
@click.option(
    "--trace-wait",
    default=10.0,
    show_default=True,
    help="Seconds a trace waits on /v1/traces for its root span before it is read.",
)
@click.option(
    "--eval-workers",
    type=click.IntRange(0, 256),
    default=None,
    help="Worker processes that evaluate and store records (/v1/traces, /v1/evaluate); "
    "0: in the server's process. Default: one per CPU when there are two or more. Offline "
    "judging only; network judges are awaited in the server's process.",
)
@click.option("--log-level", default="info", show_default=True)
@click.option("--print-openapi", is_flag=True, help="Print the OpenAPI document and exit.")
@judge_options
def serve(
    store_target: str,
    host: str,
    port: int,
    rules_path: str | None,
    app_rules: tuple[str, ...],
    token_file: str | None,
    no_auth: bool,
    max_body: int,
    max_batch: int,
    rate_limit: float,
    cors: tuple[str, ...],
    exports: tuple[tuple[str, str], ...],
    trace_map: str | None,
    trace_wait: float,
    eval_workers: int | None,
    log_level: str,
    print_openapi: bool,
    **judge_opts: Any,
) -> None:
    """Run the evaluation service: HTTP API under /v1 (OTLP/HTTP traces at /v1/traces), the
    dashboard at /, /metrics.

    \b
    Example:
      STEF_TOKENS=write:$(openssl rand -hex 16) stef serve --store stef.db --rules rules.json
    """
    from stef.rules import load_rules
    from stef.service import ServiceConfig, create_app

    tokens = _checked_tokens(token_file, no_auth, host)
    try:
        rules = load_rules(rules_path)
    except StefError as e:
        raise click.ClickException(e.message) from None
    try:
        judge, nl_extractor = build_judging(**judge_opts)
    except StefError as e:
        raise click.ClickException(e.message) from None
    config = ServiceConfig(
        store=store_target,
        rules=rules,
        app_rules=_app_rules(app_rules),
        judge=judge,
        nl_extractor=nl_extractor,
        tokens=tokens,
        no_auth=no_auth,
        max_body_bytes=max_body,
        max_batch=max_batch,
        rate_limit=rate_limit or None,
        cors_origins=cors,
        trace_map=_trace_map(trace_map),
        traces_wait=trace_wait,
        exports=[_sink(kind, url) for kind, url in exports],
        eval_workers=0
        if print_openapi
        else (default_eval_workers() if eval_workers is None else eval_workers),
    )
    try:
        app = create_app(config)
    except StefError as e:
        raise click.ClickException(e.message) from None
    if print_openapi:
        click.echo(json.dumps(app.openapi(), indent=2, sort_keys=True))
        app.state.engine.close()
        return
    import uvicorn

    try:
        uvicorn.run(app, host=host, port=port, log_level=log_level, server_header=False)
    finally:
        close_judging(judge, nl_extractor)

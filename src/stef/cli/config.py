"""The project config file (``stef.toml``) and ``stef config``.

``stef.toml`` in the working directory, or the file of ``stef --config FILE`` (env
``STEF_CONFIG``), gives the defaults of command-line options, so that a daily job is
``stef eval logs.jsonl``. Precedence: a flag, then the environment (``STEF_STORE``,
``STEF_LLM_BASE_URL`` / ``_MODEL`` / ``_API_KEY`` / ``_CONFIG``), then the file, then the
option's own default. The file holds:

- top-level keys shared by every command that has the option: ``store``, ``rules``,
  ``dialect``, ``workers``, ``record_timeout``, ``progress``;
- ``[judge]``: the judge options (``judge``, ``judge_weights``, ``base_url``, ``model``,
  ``samples`` …) of every command that takes ``--judge``;
- ``[COMMAND]`` (``[eval]``, ``[watch]``, ``[stats]`` …): any option of that command,
  winning over the two above.

Keys are option names without the dashes (``min_coverage`` or ``min-coverage``); relative
paths are read from the config file's folder. An unknown key, table or a value of the wrong
type is refused with the file and key named (exit 2).

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "stef.toml"
>>> _ = p.write_text('store = "s.db"\\n[eval]\\nmin-coverage = 0.8\\n')
>>> cfg = load_config(p)
>>> cfg.shared["store"], cfg.sections["eval"]["min_coverage"]
(Entry(value='s.db', where='store'), Entry(value=0.8, where='[eval]'))
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: The file looked for in the working directory when no ``--config`` is given.
DEFAULT_NAME = "stef.toml"
#: Top-level keys: options several commands share.
SHARED_KEYS = ("store", "rules", "dialect", "workers", "record_timeout", "progress")
#: Environment variables the LLM settings read themselves (not through click), which win
#: over the file for commands that take ``--judge``.
LLM_ENV = {
    "base_url": "STEF_LLM_BASE_URL",
    "model": "STEF_LLM_MODEL",
    "api_key": "STEF_LLM_API_KEY",
    "llm_config": "STEF_LLM_CONFIG",
}
#: Keys whose (non-URL) value is a path although their click type is a plain string.
_PATH_KEYS = ("store", "judge_weights")
_META = "stef.config"
_GROUP_TABLE = (
    '`stef {}` is a group of commands; its commands take the top-level keys (store = "…")'
)
#: click's "no default" marker (click >= 8.2), shown as no value.
_UNSET: Any = getattr(click.core, "UNSET", None)


class ConfigError(click.ClickException):
    """A config file that cannot be used: its message names the file and the key."""

    exit_code = 2


@dataclass(frozen=True)
class Entry:
    """One value of the file and where it was written (``[eval] min_coverage``)."""

    value: Any
    where: str


@dataclass
class ProjectConfig:
    """A parsed config file: shared keys, ``[judge]`` and per-command tables."""

    path: Path
    origin: str
    shared: dict[str, Entry] = field(default_factory=dict)
    judge: dict[str, Entry] = field(default_factory=dict)
    sections: dict[str, dict[str, Entry]] = field(default_factory=dict)

    def fail(self, where: str, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: {where}: {message}")


@dataclass(frozen=True)
class Setting:
    """The effective value of one option of one command, and where it comes from."""

    key: str
    value: Any
    source: str


def normal_key(key: str) -> str:
    """``min-coverage`` and ``min_coverage`` are the same key.

    >>> normal_key("min-coverage")
    'min_coverage'
    """
    return key.strip().replace("-", "_")


def option_key(param: click.Parameter) -> str | None:
    """The config key of an option (its first long name), ``None`` for what a file cannot
    set (arguments, --help, --version)."""
    if not isinstance(param, click.Option) or param.is_eager or param.name is None:
        return None
    long = [o for o in param.opts if o.startswith("--")]
    return normal_key(long[0][2:]) if long else normal_key(param.name)


def judge_keys() -> set[str]:
    """The keys of the ``[judge]`` table: the options :func:`stef.cli.llm.judge_options`
    adds."""
    from stef.cli.llm import judge_options

    probe = click.command()(judge_options(lambda **kw: None))
    return {k for k in (option_key(p) for p in probe.params) if k}


# -- reading the file -----------------------------------------------------------------


def find_config(explicit: str | None, origin: str = "--config") -> tuple[Path, str] | None:
    """The config file to use and how it was chosen: ``explicit`` (it must exist), else
    ``stef.toml`` in the working directory when there is one."""
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"{origin} {explicit}: no such file")
        return path, origin
    here = Path.cwd() / DEFAULT_NAME
    return (here, f"./{DEFAULT_NAME}") if here.is_file() else None


def load_config(path: Path, origin: str = "--config") -> ProjectConfig:
    """Parse ``path``: shared keys, ``[judge]``, command tables (values checked later,
    against the command that uses them)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read config {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    cfg = ProjectConfig(path=path, origin=origin)
    known_judge = judge_keys()
    for raw, value in data.items():
        key = normal_key(raw)
        if isinstance(value, dict):
            where = f"[{raw}]"
            table = {normal_key(k): Entry(v, where) for k, v in value.items()}
            if key == "judge":
                unknown = sorted(set(table) - known_judge)
                if unknown:
                    raise cfg.fail(
                        f"[judge] {unknown[0]}",
                        "unknown judge option" + _hint(unknown[0], known_judge),
                    )
                cfg.judge = table
            else:
                cfg.sections[raw] = table
        elif key in SHARED_KEYS:
            cfg.shared[key] = Entry(value, raw)
        else:
            raise cfg.fail(
                raw,
                "unknown top-level key"
                + _hint(key, SHARED_KEYS)
                + f" Top-level keys are {', '.join(SHARED_KEYS)}; a command's own option "
                f"goes in its table (e.g. [eval] min_coverage = 0.8), judge options in [judge]",
            )
    return cfg


def _resolve(value: Any, base: Path) -> Any:
    """A relative path, read from the config file's folder; a URL, ``-`` or ``none``
    unchanged."""
    if not isinstance(value, str) or not value or value in ("-", "none") or "://" in value:
        return value
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else base / p)


def _hint(key: str, known: Any) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else "."


# -- one command's settings -------------------------------------------------------------


def settings(
    cfg: ProjectConfig | None,
    name: str,
    command: click.Command,
    env: Mapping[str, str] | None = None,
) -> list[Setting]:
    """Every option of ``command`` (called ``name``, e.g. ``eval`` or ``store prune``):
    its value from the environment, the file or its default, checked against its type."""
    env = os.environ if env is None else env
    keys: dict[str, click.Parameter] = {}
    for p in command.params:
        k = option_key(p)
        if k is not None:
            keys[k] = p
    has_judge = "judge" in keys
    table = cfg.sections.get(name, {}) if cfg else {}
    for key in table:
        if key not in keys:
            raise cfg.fail(  # type: ignore[union-attr]
                f"[{name}] {key}",
                f"`stef {name}` has no option --{key.replace('_', '-')}"
                + _hint(key, [k for k in keys if k]),
            )
    ctx = click.Context(command, info_name=name)
    out = []
    for key, param in keys.items():
        entry = table.get(key)
        if entry is None and cfg is not None and has_judge:
            entry = cfg.judge.get(key)
        if entry is None and cfg is not None:
            entry = cfg.shared.get(key)
        envvar = _envvar(param, key, has_judge, env)
        if envvar is not None:
            out.append(Setting(key, env[envvar], f"env {envvar}"))
        elif entry is not None:
            assert cfg is not None
            value = _checked(cfg, entry, key, param, ctx)
            where = f" {entry.where}" if entry.where.startswith("[") else ""
            out.append(Setting(key, value, f"{cfg.path}{where}"))
        else:
            default = param.get_default(ctx, call=True)
            out.append(Setting(key, None if default is _UNSET else default, "default"))
    return out


def _envvar(
    param: click.Parameter, key: str, has_judge: bool, env: Mapping[str, str]
) -> str | None:
    declared = param.envvar
    names = [declared] if isinstance(declared, str) else list(declared or ())
    if has_judge and key in LLM_ENV:
        names = [*names, LLM_ENV[key]]
    for n in names:
        if n and env.get(n):
            return str(n)
    return None


def _checked(
    cfg: ProjectConfig, entry: Entry, key: str, param: click.Parameter, ctx: click.Context
) -> Any:
    """``entry``'s value as ``param`` takes it; a wrong type is refused, naming the key."""
    where = f"{entry.where} {key}" if entry.where.startswith("[") else key
    value = entry.value
    if isinstance(param.type, click.Path) or key in _PATH_KEYS:
        base = cfg.path.parent
        value = (
            [_resolve(v, base) for v in value] if isinstance(value, list) else _resolve(value, base)
        )
    if param.multiple or param.nargs != 1:
        if not isinstance(value, list):
            raise cfg.fail(where, f"must be a list, got {_shown(value)}")
        return [_one(cfg, where, v, param, ctx) for v in value]
    return _one(cfg, where, value, param, ctx)


def _one(
    cfg: ProjectConfig, where: str, value: Any, param: click.Parameter, ctx: click.Context
) -> Any:
    t = param.type
    if (isinstance(param, click.Option) and param.is_flag) or isinstance(
        t, click.types.BoolParamType
    ):
        want, ok = "true or false", isinstance(value, bool)
    elif isinstance(t, click.types.IntParamType):
        want, ok = "an integer", isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(t, click.types.FloatParamType):
        want, ok = "a number", isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        want, ok = "a string", isinstance(value, str)
    if not ok:
        raise cfg.fail(where, f"must be {want}, got {_shown(value)}")
    try:
        return t.convert(value, param, ctx)
    except click.BadParameter as e:
        raise cfg.fail(where, e.format_message()) from None


def _shown(value: Any) -> str:
    names = {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "table",
    }
    return f"{names.get(type(value), type(value).__name__)} {value!r}"[:200]


def default_map(
    cfg: ProjectConfig, name: str, command: click.Command, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The click ``default_map`` of ``command`` (nested for a group): the values the file
    gives and no flag or environment variable overrides."""
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=name)
        out: dict[str, Any] = {}
        for sub in command.list_commands(ctx):
            cmd = command.get_command(ctx, sub)
            if cmd is not None:
                out[sub] = default_map(cfg, f"{name} {sub}", cmd, env)
        return out
    by_key = {option_key(p): p.name for p in command.params}
    return {
        by_key[s.key]: s.value
        for s in settings(cfg, name, command, env)
        if not s.source.startswith(("default", "env "))
    }


def apply_config(ctx: click.Context, explicit: str | None) -> None:
    """In the ``stef`` group's callback: read the config file and give the invoked command
    its defaults from it (``ctx.default_map``)."""
    origin = "STEF_CONFIG" if explicit and not _from_flag(ctx) else "--config"
    found = find_config(explicit, origin)
    cfg = load_config(*found) if found else None
    ctx.meta[_META] = cfg
    name = ctx.invoked_subcommand
    if cfg is None or name is None or name == "config":
        return
    group = ctx.command
    assert isinstance(group, click.Group)
    check_sections(cfg, group, ctx)
    command = group.get_command(ctx, name)
    if command is not None:
        ctx.default_map = {name: default_map(cfg, name, command)}


def check_sections(cfg: ProjectConfig, group: click.Group, ctx: click.Context) -> None:
    """Every table of the file names a command (``[judge]`` aside), and not a group."""
    for section in cfg.sections:
        found = group.get_command(ctx, section)
        if found is None:
            raise cfg.fail(
                f"[{section}]", "no such command" + _hint(section, group.list_commands(ctx))
            )
        if isinstance(found, click.Group):
            raise cfg.fail(f"[{section}]", _GROUP_TABLE.format(section))


def _from_flag(ctx: click.Context) -> bool:
    from click.core import ParameterSource

    return ctx.get_parameter_source("config_file") == ParameterSource.COMMANDLINE


# -- stef config ------------------------------------------------------------------------


def _walk(
    group: click.Group, ctx: click.Context, prefix: str = ""
) -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for sub in group.list_commands(ctx):
        cmd = group.get_command(ctx, sub)
        name = f"{prefix}{sub}"
        if cmd is None or name == "config":
            continue
        if isinstance(cmd, click.Group):
            out += _walk(cmd, click.Context(cmd, info_name=sub, parent=ctx), name + " ")
        else:
            out.append((name, cmd))
    return out


def shown_value(key: str, value: Any) -> Any:
    """A value fit to print: an API key only said to be set, no credentials in a URL.

    >>> shown_value("api_key", "sk-1"), shown_value("store", "postgresql://u:pw@db/x")
    ('[set]', 'postgresql://db/x')
    """
    if key == "api_key" and value:
        return "[set]"
    if isinstance(value, str) and "://" in value:
        from stef.llm.client import safe_url

        return safe_url(value)
    return value


def _rows(
    cfg: ProjectConfig | None, commands: list[tuple[str, click.Command]]
) -> list[dict[str, Any]]:
    """Settings that do not come from a default, each once with the commands that use it."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for name, cmd in commands:
        for s in settings(cfg, name, cmd):
            if s.source == "default":
                continue
            value = shown_value(s.key, s.value)
            row = merged.setdefault(
                (s.key, repr(value), s.source),
                {"key": s.key, "value": value, "source": s.source, "commands": []},
            )
            row["commands"].append(name)
    return sorted(merged.values(), key=lambda r: (r["key"], r["source"]))


@click.command("config")
@click.argument("command", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
@click.pass_context
def config_cmd(ctx: click.Context, command: tuple[str, ...], as_json: bool) -> None:
    """Show the effective settings and where each comes from (env, config file, default).

    Without COMMAND: every setting the config file or the environment gives, with the
    commands it applies to (this checks the whole file). With COMMAND (e.g. `eval` or
    `store prune`): every option of that command. A flag given on a command line wins
    over all of them.

    \b
    Examples:
      stef config
      stef --config ci/stef.toml config eval
    """
    import json

    from rich.console import Console
    from rich.table import Table

    cfg: ProjectConfig | None = ctx.meta.get(_META)
    root = ctx.find_root()
    assert isinstance(root.command, click.Group)
    every = _walk(root.command, root)
    if cfg is not None:
        check_sections(cfg, root.command, root)
    if command:
        name = " ".join(command)
        chosen = [(n, c) for n, c in every if n == name]
        if not chosen:
            raise click.UsageError(f"no command `stef {name}`" + _hint(name, [n for n, _ in every]))
        rows = [
            {"key": s.key, "value": shown_value(s.key, s.value), "source": s.source}
            for s in settings(cfg, name, chosen[0][1])
        ]
    else:
        rows = _rows(cfg, every)
    head = (
        f"config file: {cfg.path} ({cfg.origin})"
        if cfg
        else (
            f"config file: none ({DEFAULT_NAME} is not in {Path.cwd()}; "
            "--config FILE or STEF_CONFIG name one)"
        )
    )
    if as_json:
        data = {"config_file": str(cfg.path) if cfg else None, "settings": rows}
        click.echo(json.dumps(data, indent=2, default=str))
        return
    click.echo(head)
    t = Table(*[c for c in ("key", "value", "source", "commands") if rows and c in rows[0]])
    for r in rows:
        cells = [str(r["key"]), _cell(r["value"]), str(r["source"])]
        if "commands" in r:
            cells.append(", ".join(r["commands"]))
        t.add_row(*cells)
    if rows:
        Console(width=None if sys.stdout.isatty() else 160).print(t)
    else:
        click.echo("every option has its default")


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "–"
    return str(value)

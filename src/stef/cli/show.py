"""``stef show ID`` and ``stef list``: stored evaluations, one as the one-pair report, many
as a table.

``stef show ID --store DB`` prints the report ``stef eval --question … --sql …`` prints
(``--json``: the evaluation itself). ``stef list --store DB`` prints a table of the newest
stored evaluations, or with ``--worst N`` the N lowest-scored ones (``--json``: the rows
as a JSON list). Both refuse a store that does not exist and an id or a selection that
matches nothing (exit 2).

>>> [c.name for c in COMMANDS]
['show', 'list']
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.table import Table

from stef.cli.monitor import (
    _check_selection,
    _fail,
    _open,
    _selection,
    since_option,
    store_option,
    until_option,
)

#: The columns of ``stef list``, in order (also the keys of each ``--json`` row).
LIST_COLUMNS = (
    "id",
    "time",
    "agent",
    "agent_version",
    "app",
    "status",
    "score",
    "band",
    "findings",
)


@click.command("show")
@click.argument("evaluation_id", metavar="ID")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print the stored evaluation as JSON.")
def show_cmd(evaluation_id: str, store_target: str, as_json: bool) -> None:
    """Print the stored evaluation ID as the one-pair report of `stef eval --question`.

    \b
    Example:
      stef show r-0042 --store stef.db
    """
    from stef.cli.report_text import render_evaluation
    from stef.errors import StefError

    store = _open(store_target, create=False)
    try:
        evaluation = store.get(evaluation_id)
    except StefError as e:
        raise _fail(e.message) from None
    finally:
        store.close()
    if evaluation is None:
        raise _fail(
            f"no evaluation with id {evaluation_id!r} in {store_target} "
            "(`stef list --store …` lists the stored ids)"
        )
    if as_json:
        click.echo(json.dumps(evaluation, ensure_ascii=False, indent=2))
        return
    # as `stef eval --question` prints it: the terminal's width, else 120 columns
    from rich.console import Console

    Console(width=None if sys.stdout.isatty() else 120).print(render_evaluation(evaluation))


@click.command("list")
@store_option
@click.option(
    "--where", "where", help="Selection, e.g. agent=sql-bot,status=ok,finding=limit_mismatch."
)
@since_option
@until_option
@click.option(
    "--worst",
    type=click.IntRange(1),
    default=None,
    metavar="N",
    help="The N lowest-scored evaluated records (status ok), lowest first.",
)
@click.option(
    "--limit",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="Without --worst: this many evaluations, newest record time first.",
)
@click.option("--json", "as_json", is_flag=True, help="The rows as a JSON list.")
def list_cmd(
    store_target: str,
    where: str | None,
    since: str | None,
    until: str | None,
    worst: int | None,
    limit: int,
    as_json: bool,
) -> None:
    """List stored evaluations as a table: the newest, or the --worst N scores.

    \b
    Examples:
      stef list --store stef.db --where agent=sql-bot --worst 10
      stef list --store stef.db --where status=sql_unparseable --since 1d --json
    """
    from stef.errors import StefError

    sel = _selection(where, since, until)
    if worst is not None:
        if sel.status not in (None, "ok"):
            raise _fail(f"--worst ranks scores, and status={sel.status} records have none")
        sel = sel.narrowed(status="ok")
    store = _open(store_target, create=False)
    try:
        _check_selection(store, sel)
        if worst is not None:
            found = store.query(selection=sel, order_by="score", limit=worst)
        else:
            found = store.query(selection=sel, order_by="-time", limit=limit)
        rows = [list_row(e) for e in found]
    except StefError as e:
        raise _fail(e.message) from None
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    title = f"{'worst ' + str(worst) if worst else 'newest'} of {sel.describe()}"
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(_table(rows, title))


def list_row(evaluation: dict[str, Any]) -> dict[str, Any]:
    """The ``stef list`` columns of one evaluation.

    >>> list_row({"id": "a", "status": "ok", "score": 41.0, "band": "poor",
    ...           "findings": [{"kind": "limit_mismatch"}], "timestamp": "2026-01-01T00:00:00Z"})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'id': 'a', 'time': '2026-01-01T00:00:00Z', 'agent': None, 'agent_version': None,
     'app': None, 'status': 'ok', 'score': 41.0, 'band': 'poor', 'findings': ['limit_mismatch']}
    """
    findings = evaluation.get("findings") or []
    return {
        "id": evaluation.get("id"),
        "time": evaluation.get("timestamp") or evaluation.get("evaluated_at"),
        "agent": evaluation.get("agent"),
        "agent_version": evaluation.get("agent_version"),
        "app": evaluation.get("app"),
        "status": evaluation.get("status"),
        "score": evaluation.get("score"),
        "band": evaluation.get("band"),
        "findings": [str(f.get("kind")) for f in findings if isinstance(f, dict)],
    }


def _table(rows: list[dict[str, Any]], title: str) -> Table:
    from rich.table import Table
    from rich.text import Text

    t = Table(title=title, title_justify="left")
    for col in LIST_COLUMNS:
        t.add_column(col, justify="right" if col == "score" else "left", overflow="fold")
    for r in rows:
        score = "–" if r["score"] is None else f"{r['score']:.1f}"
        t.add_row(
            *(
                Text(str(r[c]) if r[c] is not None else "–")
                for c in ("id", "time", "agent", "agent_version", "app", "status")
            ),
            score,
            r["band"] or "–",
            Text(_kinds(r["findings"])),
        )
    return t


def _kinds(kinds: list[str], shown: int = 3) -> str:
    """Distinct finding kinds, the first ``shown`` of them and how many more.

    >>> _kinds(["a", "b", "a", "c", "d", "e"])
    'a, b, c +2'
    """
    distinct = list(dict.fromkeys(kinds))
    more = f" +{len(distinct) - shown}" if len(distinct) > shown else ""
    return ", ".join(distinct[:shown]) + more


COMMANDS = (show_cmd, list_cmd)

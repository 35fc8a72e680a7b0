"""Command-line options that choose and configure the judge (shared by eval and calibrate).

>>> import click
>>> @click.command()
... @judge_options
... def cmd(**kw): pass
>>> [p.name for p in cmd.params][:1]
['judge']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from stef.judges.base import Judge

F = Callable[..., Any]


def judge_options(func: F) -> F:
    """Add ``--judge`` (and the options of the judges it can build) to a click command."""
    return click.option(
        "--judge",
        "judge",
        type=click.Choice(["symbolic"]),
        default="symbolic",
        show_default=True,
        help="Which judge gives the verdict: the offline symbolic judge.",
    )(func)


def build_judge(judge: str = "symbolic", **options: Any) -> Judge:
    """Build the judge chosen on the command line."""
    from stef.judges.symbolic import SymbolicJudge

    if judge == "symbolic":
        return SymbolicJudge()
    raise click.BadParameter(f"unknown judge {judge!r}", param_hint="--judge")

"""``stef eval FILE --engine ray``: the command-line side of :mod:`stef.engines.ray`.

It builds what each Ray worker needs to make its own evaluator (the rules file, the
calibration, the judge options: plain values that pickle), opens ``--store`` on the driver
and writes every evaluation into it as the evaluations come back, and prints the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click

from stef.batch import Encoded
from stef.errors import StefError
from stef.evaluator import Evaluator

#: Evaluations per store write (as the local engine writes them).
STORE_CHUNK = 500


@dataclass(frozen=True)
class EvaluatorFactory:
    """Builds, on a Ray worker, the evaluator ``stef eval`` builds: the same rules file,
    calibration and judge options. Picklable, so Ray ships it to every worker.

    >>> ev = EvaluatorFactory(None, None, {})()
    >>> ev.evaluate(question="How many users?", sql="SELECT COUNT(*) FROM users")["status"]
    'ok'
    """

    rules_path: str | None
    calibration: str | None
    judge_opts: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> Evaluator:
        from stef.cli.llm import build_judging
        from stef.rules import load_rules

        cal = None
        if self.calibration:
            from stef.accuracy.calibration import Calibration

            cal = Calibration.load(self.calibration)
        judge, nl_extractor = build_judging(**self.judge_opts)
        return Evaluator(
            rules=load_rules(self.rules_path), judge=judge, calibration=cal,
            nl_extractor=nl_extractor,
        )


def eval_ray(
    file: str,
    output: str,
    factory: EvaluatorFactory,
    *,
    address: str | None,
    store_target: str | None,
    force: bool,
    progress: bool | None,
) -> dict[str, Any]:
    """Run ``stef eval FILE --engine ray``; print and return the summary.

    ``--workers`` counts evaluating Ray actors when given on the command line; otherwise
    a local runtime uses every CPU of this machine, a cluster every CPU it has.
    """
    from click.core import ParameterSource

    from stef.cli.report_text import render_summary
    from stef.engines.ray import RayJob, run

    ctx = click.get_current_context()
    given = ctx.get_parameter_source("workers") is ParameterSource.COMMANDLINE
    job = RayJob(
        source=file,
        output=output,
        make_evaluator=factory,
        workers=ctx.params["workers"] if given else None,
        address=address,
        progress=bool(progress),
        deadline=ctx.params["record_timeout"],
    )
    store = _open(store_target)
    try:
        data = run(job, None if store is None else _writer(store, force))
    except StefError as e:
        raise click.ClickException(e.message) from None
    finally:
        if store is not None:
            store.close()
    from rich.console import Console

    Console(stderr=True).print(render_summary(data))
    return data


def _open(store_target: str | None) -> Any:
    if not store_target:
        return None
    from stef.monitor.store import open_store

    try:
        store = open_store(store_target)
        check = getattr(store, "check_writable", None)
        if check is not None:
            check()
    except StefError as e:
        raise click.ClickException(e.message) from None
    return store


def _writer(store: Any, force: bool) -> Any:
    """Write each batch of evaluation lines into ``store``: an id already stored is kept,
    or overwritten with ``--force``."""

    def write(lines: list[str]) -> None:
        for i in range(0, len(lines), STORE_CHUNK):
            chunk = lines[i:i + STORE_CHUNK]
            store.write([Encoded(ln, {}).decoded() for ln in chunk], replace=force)

    return write

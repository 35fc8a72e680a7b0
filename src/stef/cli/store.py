"""Store administration: ``stef store migrate``, ``stef store copy`` and ``stef store prune``.

A click group registered on the main group in :mod:`stef.cli.main`. Messages meant for
users (an unreachable server, a bad time) exit with code 2; ``migrate --check`` exits 1
when migrations are pending.
"""

from __future__ import annotations

import time
from typing import Any

import click

from stef.cli.monitor import UserError, store_option
from stef.errors import StefError


def _open(target: str, migrate: bool = True) -> Any:
    from stef.monitor.store import open_store

    try:
        return open_store(target, migrate=migrate)
    except StefError as e:
        raise UserError(e.message) from None


@click.group("store")
def store() -> None:
    """Administer a store: apply migrations, copy between stores, prune old evaluations.

    Stores are SQLite files (stef.db, sqlite:///path) or PostgreSQL databases
    (postgresql://user@host:5432/db). See docs/store.md.
    """


@store.command("migrate")
@store_option
@click.option(
    "--check", is_flag=True, help="Apply nothing; list pending migrations (exit 1 if any)."
)
def migrate_cmd(store_target: str, check: bool) -> None:
    """Apply the schema migrations a store lacks, and print which.

    Every command that opens a store migrates it too; run this to do it ahead of a
    deployment, or with --check to see whether a store is current.
    """
    from stef.monitor.store.migrations import MIGRATIONS

    st = _open(store_target, migrate=False)
    try:
        pending = st.pending_migrations()
        if check:
            for name in pending:
                click.echo(f"pending {name}")
            click.echo(f"{st.location}: {len(pending)} migration(s) pending")
            if pending:
                raise SystemExit(1)
            return
        ran = st.migrate()
    except StefError as e:
        raise UserError(e.message) from None
    finally:
        st.close()
    for name in ran:
        click.echo(f"applied {name}")
    state = f"{len(ran)} migration(s) applied" if ran else "nothing to apply"
    click.echo(f"{st.location}: {state}; schema current ({len(MIGRATIONS)} migrations)")


@store.command("copy")
@click.argument("source", metavar="SRC")
@click.argument("destination", metavar="DST")
@click.option(
    "--batch",
    "batch_size",
    type=click.IntRange(1),
    default=5000,
    show_default=True,
    help="Evaluations per write (one transaction each).",
)
@click.option("--replace", is_flag=True, help="Overwrite evaluations whose id DST already has.")
def copy_cmd(source: str, destination: str, batch_size: int, replace: bool) -> None:
    """Copy every evaluation of store SRC into store DST (SQLite to PostgreSQL and back).

    In SRC's storage order, in batches; idempotent by evaluation id, so a copy that
    stopped can be run again. Watch offsets and alert states DST lacks come along.
    """
    if _same(source, destination):
        raise UserError("SRC and DST are the same store")
    src = _open(source)
    try:
        dst = _open(destination)
    except UserError:
        src.close()
        raise
    started = time.perf_counter()
    try:
        read, new = _copy(src, dst, batch_size, replace)
        known = dst.offsets()
        offsets = {p: o for p, o in src.offsets().items() if p not in known}
        if offsets:
            dst.save_offsets(offsets)
        had = dst.alert_states()
        alerts = {n: s for n, s in src.alert_states().items() if n not in had}
        for name, state in alerts.items():
            dst.save_alert_state(name, state)
        total = dst.count()
    except StefError as e:
        raise UserError(e.message) from None
    finally:
        src.close()
        dst.close()
    took = time.perf_counter() - started
    already = "replaced" if replace else "already there"
    click.echo(
        f"copied {new} new evaluation(s) of {read} read from {src.location} to "
        f"{dst.location} ({read - new} {already}); {len(offsets)} watch offset(s), "
        f"{len(alerts)} alert state(s); {dst.location} holds {total} in {took:.1f} s"
    )


def _copy(src: Any, dst: Any, batch_size: int, replace: bool) -> tuple[int, int]:
    read = new = 0
    batch: list[dict[str, Any]] = []
    for ev in src.query():
        batch.append(ev)
        if len(batch) >= batch_size:
            new += dst.write(batch, replace=replace)
            read += len(batch)
            batch = []
    if batch:
        new += dst.write(batch, replace=replace)
        read += len(batch)
    return read, new


def _same(a: str, b: str) -> bool:
    from pathlib import Path

    def norm(t: str) -> str:
        t = t[len("sqlite:///") :] if t.startswith("sqlite:///") else t
        return t if "://" in t else str(Path(t).resolve())

    return norm(a) == norm(b)


@store.command("prune")
@store_option
@click.option(
    "--before",
    required=True,
    help="Delete evaluations recorded before this: a duration ago (90d) or ISO 8601.",
)
@click.option("--dry-run", is_flag=True, help="Count what would go; delete nothing.")
def prune_cmd(store_target: str, before: str, dry_run: bool) -> None:
    """Delete evaluations recorded before a time, with their findings (retention).

    The record's time is its timestamp, else its evaluated_at. Rollups are kept
    consistent: figures over what remains are the figures of what remains. SQLite files
    do not shrink until VACUUM; PostgreSQL reuses the space after (auto)vacuum.
    """
    from stef.monitor.stats import iso, parse_time
    from stef.monitor.store import Selection

    try:
        cutoff = parse_time(before, now=time.time())
    except ValueError as e:
        raise UserError(f"--before: {e}") from None
    st = _open(store_target)
    try:
        if dry_run:
            n = st.count(Selection(until=cutoff))
            click.echo(f"would prune {n} evaluation(s) recorded before {iso(cutoff)}")
            return
        gone = st.prune(cutoff)
        left = st.count()
    except StefError as e:
        raise UserError(e.message) from None
    finally:
        st.close()
    click.echo(f"pruned {gone} evaluation(s) recorded before {iso(cutoff)}; {left} remain")

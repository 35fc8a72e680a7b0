"""Render one evaluation as a readable terminal report (rich renderables, no I/O).

>>> import io
>>> from stef.evaluator import evaluate
>>> from rich.console import Console
>>> c = Console(file=io.StringIO(), width=100, color_system=None)
>>> c.print(render_evaluation(evaluate("How many users?", "SELECT COUNT(*) FROM users")))
>>> "Score:" in c.file.getvalue()
True
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

_BAND_STYLE = {"excellent": "bold green", "good": "green", "marginal": "yellow", "poor": "bold red"}
_SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def render_evaluation(e: dict[str, Any]) -> RenderableType:
    """A panel with the score, band, breakdown and every finding with its evidence."""
    parts: list[RenderableType] = []
    head = Text()
    if e.get("status") != "ok":
        head.append(f"Status: {e.get('status')}\n", style="bold red")
        head.append(f"Error:  {e.get('error')}\n")
        parts.append(head)
    else:
        style = _BAND_STYLE.get(str(e.get("band")), "")
        head.append("Score: ", style="bold")
        head.append(f"{e['score']:.1f}", style=style)
        head.append(f"  ({e.get('band')})", style=style)
        if "p_correct" in e:
            head.append(f"   p(correct) = {e['p_correct']:.2f}")
        parts.append(head)
        b = e.get("breakdown")
        try:
            parts.append(_breakdown(b))
        except (KeyError, TypeError, ValueError):  # a stored evaluation made elsewhere
            parts.append(Text(f"Breakdown: {b!r}"[:500]))
        j = e.get("judgment") or {}
        if j.get("rationale"):
            parts.append(Text(f"Judge: {j['rationale']}", style="italic"))
    findings = e.get("findings") or []
    if findings:
        ft = Table(title="Findings", title_justify="left", show_lines=False, expand=True)
        ft.add_column("severity", no_wrap=True)
        ft.add_column("kind", no_wrap=True)
        ft.add_column("what")
        ft.add_column("question says")
        ft.add_column("SQL says")
        ft.add_column("rule", no_wrap=True)
        for f in findings:
            sev = str(f.get("severity"))
            ft.add_row(
                Text(sev, style=_SEV_STYLE.get(sev, "")),
                str(f.get("kind")),
                str(f.get("message")),
                f.get("nl") or "",
                f.get("sql") or "",
                f.get("rule") or "",
            )
        parts.append(ft)
    enr = e.get("enrichment") or {}
    if enr.get("findings"):
        et = Table(title="Enrichment drift (Q_e vs Q_u)", title_justify="left", expand=True)
        et.add_column("kind", no_wrap=True)
        et.add_column("what")
        for f in enr["findings"]:
            et.add_row(str(f.get("kind")), str(f.get("message")))
        parts.append(et)
    title = f"STEF evaluation {e.get('id')}"
    return Panel(Group(*parts), title=title, title_align="left")


def _breakdown(b: Any) -> Table:
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_row("Filters", f"{b['filter_status']}", f"{b['filter_points']:g} pts")
    t.add_row("Verdict", f"{b['verdict']}", f"{b['verdict_points']:g} pts")
    if b["leniency_boost"]:
        t.add_row("Leniency boost", "every extra filter is benign", f"+{b['leniency_boost']:g}")
    t.add_row("Base B", "", f"{b['base']:g} / 10")
    t.add_row("Confidence γ", f"{b['confidence']:.2f}", f"Γ = {b['confidence_multiplier']:g}")
    return t


def render_summary(summary: dict[str, Any]) -> RenderableType:
    """The end-of-batch table: records, evaluated, coverage, mean, median, P90, bands."""
    t = Table(title="STEF summary", title_justify="left")
    t.add_column("figure")
    t.add_column("value", justify="right")

    def fmt(v: Any) -> str:
        return "—" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))

    t.add_row("records", fmt(summary["records"]))
    t.add_row("evaluated", fmt(summary["evaluated"]))
    t.add_row("coverage", f"{summary['coverage'] * 100:.1f}%")
    for k in ("mean", "median", "p90"):
        t.add_row(k if k != "p90" else "P90", fmt(summary[k]))
    for name, share in summary["bands"].items():
        t.add_row(f"band {name}", f"{share * 100:.1f}%")
    for status, n in summary["statuses"].items():
        if status != "ok":
            t.add_row(f"status {status}", str(n))
    for k, n in summary.get("tokens", {}).items():
        t.add_row(k.replace("_", " "), str(n))
    return t

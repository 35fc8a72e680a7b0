"""How precise each finding kind is, file by file (the engine of ``stef precision``).

For every file (scored evaluations only): the rows marked correct, the rows marked
incorrect (labelled files only) and the mutants planted into the correct rows
(:mod:`stef.accuracy.selftest`). Per finding kind and file: how often it fires on each
of the three, and its lift, P(negative | fires) over the base rate of negatives, where
the negatives are the incorrect rows of a labelled file and the mutants of a gold-only
one (``lift_mutants`` gives the mutant lift on every file). A kind is flagged when its
lift is ≤ 1 on some file where it fires at least :data:`MIN_FIRES` times in that
population: it then speaks against the SQL no more often on wrong SQL than on right
SQL, and may not carry ``warning``/``error`` weight.

Labels are read here only; the evaluator never sees them.

>>> lift(fires_neg=8, fires_pos=2, n_neg=50, n_pos=50)
1.6
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stef.accuracy.selftest import Result, Scored
from stef.align.precision import Fires, PrecisionGate, gate_from_counts

#: A kind must fire this many times in a file's population for its lift there to count.
MIN_FIRES = 5


@dataclass
class FileResults:
    """One file's evaluated cases (originals with their label, mutants of correct rows)."""

    name: str
    results: Sequence[Result]

    @property
    def labelled(self) -> bool:
        """Does the file hold incorrect rows (negatives of its own)?"""
        return any(r.case.row.correct is False for r in self.results)


def lift(fires_neg: int, fires_pos: int, n_neg: int, n_pos: int) -> float | None:
    """P(negative | fires) / P(negative); ``None`` when it never fires or has no negatives."""
    fires, n = fires_neg + fires_pos, n_neg + n_pos
    if not fires or not n_neg or not n:
        return None
    return round((fires_neg / fires) / (n_neg / n), 3)


def _fires(evals: Sequence[Scored]) -> Counter[str]:
    return Counter(k for e in evals for k in e.findings)


def file_table(fr: FileResults) -> dict[str, dict[str, Any]]:
    """Per finding kind: fires on correct / incorrect / mutants, lifts, severities."""
    scored = [r for r in fr.results if r.original.score is not None]
    correct = [r.original for r in scored if r.case.row.correct is not False]
    incorrect = [r.original for r in scored if r.case.row.correct is False]
    muts = [
        m
        for r in scored
        if r.case.row.correct is not False
        for m in r.mutants
        if m.score is not None
    ]
    fc, fi, fm = _fires(correct), _fires(incorrect), _fires(muts)
    severities: dict[str, Counter[str]] = {}
    for e in [*correct, *incorrect, *muts]:
        for k, sev in e.findings.items():
            severities.setdefault(k, Counter()).update(sev)
    out: dict[str, dict[str, Any]] = {}
    for kind in sorted(set(fc) | set(fi) | set(fm)):
        lift_l = lift(fi[kind], fc[kind], len(incorrect), len(correct)) if incorrect else None
        lift_m = lift(fm[kind], fc[kind], len(muts), len(correct)) if muts else None
        primary, support = (
            (lift_l, fc[kind] + fi[kind]) if fr.labelled else (lift_m, fc[kind] + fm[kind])
        )
        out[kind] = {
            "fires_correct": fc[kind],
            "n_correct": len(correct),
            "fires_incorrect": fi[kind],
            "n_incorrect": len(incorrect),
            "fires_mutants": fm[kind],
            "n_mutants": len(muts),
            "lift": primary,
            "lift_mutants": lift_m,
            "support": support,
            "severity": dict(severities.get(kind, Counter()).most_common()),
            "flag": primary is not None and primary <= 1 and support >= MIN_FIRES,
        }
    return out


def table(files: Sequence[FileResults]) -> dict[str, Any]:
    """The precision table over files: per kind, per file, and the flagged kinds."""
    per_file = {f.name: file_table(f) for f in files}
    kinds = sorted({k for t in per_file.values() for k in t})
    summary: dict[str, Any] = {}
    for kind in kinds:
        cells = {name: t[kind] for name, t in per_file.items() if kind in t}
        sev: Counter[str] = Counter()
        for c in cells.values():
            sev.update(c["severity"])
        flagged = sorted(name for name, c in cells.items() if c["flag"])
        lifts = [(c["lift"], name) for name, c in cells.items() if c["lift"] is not None]
        summary[kind] = {
            "severity": dict(sev.most_common()),
            "flagged_on": flagged,
            "min_lift": min(lifts) if lifts else None,
            "fires_on_correct": sum(c["fires_correct"] for c in cells.values()),
        }
    return {
        "files": {
            f.name: {
                "labelled": f.labelled,
                "rows": len(f.results),
                "correct": sum(1 for r in f.results if r.case.row.correct is not False),
                "mutants": sum(
                    len(r.mutants) for r in f.results if r.case.row.correct is not False
                ),
            }
            for f in files
        },
        "kinds": summary,
        "per_file": per_file,
        "flagged": [k for k, s in summary.items() if s["flagged_on"]],
        "flagged_weighted": [
            k
            for k, s in summary.items()
            if s["flagged_on"] and set(s["severity"]) & {"warning", "error"}
        ],
    }


def gate_counts(fr: FileResults) -> dict[str, Fires]:
    """The counts the precision gate reads, per finding key: ``kind`` on rows without an
    enriched question, ``kind+qe`` on rows with one (a mutant goes with its original).

    Negatives are the incorrect rows of a labelled file, the mutants of a gold-only one.
    """
    out: dict[str, Fires] = {}
    for qe in (False, True):
        rows = [
            r
            for r in fr.results
            if r.original.score is not None and bool(r.case.row.enriched) == qe
        ]
        pos = [r.original for r in rows if r.case.row.correct is not False]
        if fr.labelled:
            neg = [r.original for r in rows if r.case.row.correct is False]
        else:
            neg = [m for r in rows for m in r.mutants if m.score is not None]
        fp, fn = _fires(pos), _fires(neg)
        for kind in sorted(set(fp) | set(fn)):
            out[kind + ("+qe" if qe else "")] = Fires(fn[kind], fp[kind], len(neg), len(pos))
    return out


def gate(files: Sequence[FileResults], meta: dict[str, Any] | None = None) -> PrecisionGate:
    """The precision gate (:mod:`stef.align.precision`) these files' counts give."""
    g = gate_from_counts({f.name: gate_counts(f) for f in files})
    return PrecisionGate(g.demoted, dict(meta or {}))


def _sev(sev: dict[str, int]) -> str:
    return "/".join(sev) if sev else "—"


def _rate(n: int, d: int) -> str:
    return f"{n} ({100 * n / d:.0f}%)" if d else "—"


def _lift(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def markdown(t: dict[str, Any]) -> str:
    """The table as markdown: a summary per kind, then one row per kind and file."""
    names = list(t["files"])
    lines = ["| file | labelled | rows | correct rows | mutants |", "|---|---|---|---|---|"]
    for name, f in t["files"].items():
        lines.append(
            f"| {name} | {'yes' if f['labelled'] else 'no (negatives: mutants)'} | {f['rows']} |"
            f" {f['correct']} | {f['mutants']} |"
        )
    lines += [
        "",
        "### Lift per finding kind and file",
        "",
        "Lift = P(negative | fires) / P(negative); negatives are the incorrect rows of a labelled"
        " file, the mutants of a gold-only file. **bold** = lift ≤ 1 where the kind fires ≥"
        f" {MIN_FIRES} times (flagged). Severity: as the findings carry it now.",
        "",
        "| finding kind | severity | " + " | ".join(names) + " | flagged on |",
        "|---|---|" + "---|" * len(names) + "---|",
    ]
    for kind, s in t["kinds"].items():
        cells = []
        for name in names:
            c = t["per_file"][name].get(kind)
            if c is None:
                cells.append("·")
                continue
            text = f"{_lift(c['lift'])} ({c['support']})"
            cells.append(f"**{text}**" if c["flag"] else text)
        lines.append(
            f"| {kind} | {_sev(s['severity'])} | " + " | ".join(cells) + f" |"
            f" {', '.join(s['flagged_on']) or '—'} |"
        )
    weighted = ", ".join(t["flagged_weighted"]) or "none"
    lines += [
        "",
        "Cells: lift (times it fired in the lift's population). `·` = never fires.",
        "",
        f"Flagged kinds that carry warning or error weight: {weighted}.",
        "",
        "### Fires per file: on correct rows, incorrect rows, mutants",
        "",
        "| finding kind | file | on correct | on incorrect | on mutants | lift | lift vs mutants |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in t["kinds"]:
        for name in names:
            c = t["per_file"][name].get(kind)
            if c is None:
                continue
            lines.append(
                f"| {kind} | {name} | {_rate(c['fires_correct'], c['n_correct'])} |"
                f" {_rate(c['fires_incorrect'], c['n_incorrect'])} |"
                f" {_rate(c['fires_mutants'], c['n_mutants'])} | {_lift(c['lift'])} |"
                f" {_lift(c['lift_mutants'])} |"
            )
    lines.append("")
    return "\n".join(lines)

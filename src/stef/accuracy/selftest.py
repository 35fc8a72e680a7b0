"""How sensitive is STEF on a user's own traffic (the engine of ``stef selftest``).

The user's records (their logged SQL, assumed mostly correct) are read; into each SQL one
error of each kind is planted where the question states the cue
(:mod:`stef.accuracy.mutants`); originals and mutants go through the same evaluator, and
the report says per kind how many mutants were made, how often the mutant scores below
its original (ties count half), how often it is flagged (mutant < 75 while the original
≥ 75), and which finding kinds caught it; and how often the originals are scored
below 75 and below 50 (false alarms, if the traffic is correct).

Labelled rows (``{question, evidence, sql, correct, …}``) are accepted too: the evidence is
the enriched question and the label is ignored (``correct_only`` keeps the rows marked
correct, and the label goes no further).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from stef.accuracy.mutants import KINDS, Mutant, mutants, parse_sql, read_cues, render
from stef.errors import StefError

#: The score at or above which a query counts as "good" (the band boundary).
GOOD = 75.0
#: The score below which a query counts as "poor".
POOR = 50.0


class SelftestError(StefError):
    """The records file or the selftest options cannot be used."""

    status = "invalid_selftest_input"


class BatchEvaluator(Protocol):
    """What selftest needs from :class:`stef.evaluator.Evaluator`."""

    def evaluate_many(
        self, records: Iterable[dict[str, Any]], workers: int = 1
    ) -> Iterator[dict[str, Any]]: ...


@dataclass
class Row:
    """One input record as selftest reads it (``correct`` only for labelled files)."""

    id: str
    question: str
    sql: str
    enriched: str | None = None
    dialect: str | None = None
    correct: bool | None = None


@dataclass
class Case:
    """One original (re-rendered) with the mutants planted into it."""

    row: Row
    sql: str
    mutants: list[Mutant] = field(default_factory=list)
    #: Why no mutant could be planted (an error of the planting itself), or None.
    plant_error: str | None = None

    def records(self) -> list[dict[str, Any]]:
        """The evaluator's input: the original, then each mutant (no label)."""
        base: dict[str, Any] = {"question": self.row.question, "dialect": self.row.dialect}
        if self.row.enriched:
            base["enriched_question"] = self.row.enriched
        out = [{**base, "id": self.row.id, "sql": self.sql}]
        out += [{**base, "id": f"{self.row.id}#{m.kind}", "sql": m.sql} for m in self.mutants]
        return out


@dataclass(frozen=True)
class Scored:
    """What the report keeps of one evaluation."""

    score: float | None
    status: str
    #: Finding kind → its severities on this evaluation.
    findings: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, evaluation: dict[str, Any]) -> Scored:
        kinds: dict[str, list[str]] = {}
        for f in evaluation.get("findings") or []:
            kinds.setdefault(str(f.get("kind")), []).append(str(f.get("severity")))
        return cls(
            evaluation.get("score"),
            str(evaluation.get("status")),
            {k: tuple(v) for k, v in kinds.items()},
        )


@dataclass
class Result:
    """One case evaluated: the original's and each mutant's evaluation."""

    case: Case
    original: Scored
    mutants: list[Scored]


def load_rows(path: str | Path, default_dialect: str | None = None) -> tuple[list[Row], list[str]]:
    """Read records (JSONL); returns the rows and one problem message per unusable line."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as err:
        raise SelftestError(message=f"cannot read {p}: {err.strerror or err}") from None
    rows: list[Row] = []
    problems: list[str] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(_row(json.loads(line), n, default_dialect))
        except json.JSONDecodeError as err:
            problems.append(f"{p.name}:{n}: not JSON ({err.msg})")
        except (ValueError, RecursionError) as err:
            problems.append(f"{p.name}:{n}: {err}")
    if not rows:
        raise SelftestError(message=f"{p} holds no usable records ({len(problems)} unusable)")
    return rows, problems


def _row(obj: Any, n: int, default_dialect: str | None) -> Row:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    for key in ("question", "sql"):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            raise ValueError(f"field {key!r} is required and must be a non-empty string")
    enriched = obj.get("enriched_question", obj.get("evidence"))
    if enriched is not None and not isinstance(enriched, str):
        raise ValueError("field 'enriched_question' (or 'evidence') must be a string or null")
    dialect = obj.get("dialect") or default_dialect
    if dialect is not None and not isinstance(dialect, str):
        raise ValueError("field 'dialect' must be a string")
    correct = obj.get("correct")
    return Row(
        id=str(obj.get("id", f"line-{n}")),
        question=obj["question"],
        sql=obj["sql"],
        enriched=enriched or None,
        dialect=dialect,
        correct=correct if isinstance(correct, bool) else None,
    )


def sample(rows: Sequence[Row], limit: int | None, seed: int) -> list[Row]:
    """A seeded sample of ``limit`` rows, in file order (all rows when ``limit`` is None).

    >>> [r.id for r in sample([Row(str(i), "q", "s") for i in range(5)], 2, seed=3)]
    ['1', '4']
    """
    if limit is None or limit >= len(rows):
        return list(rows)
    if limit < 1:
        raise SelftestError(message="--limit must be at least 1")
    chosen = sorted(random.Random(seed).sample(range(len(rows)), limit))
    return [rows[i] for i in chosen]


def build_case(row: Row, kinds: list[str] | None, seed: int, plant: bool = True) -> Case:
    """Re-render the row's SQL and plant its mutants (none when sqlglot cannot read it)."""
    trees = parse_sql(row.sql, row.dialect)
    if trees is None:
        return Case(row, row.sql)  # evaluated as given: the evaluator says why it fails
    sql = render(trees, row.dialect) or row.sql
    if not plant:
        return Case(row, sql)
    try:
        cues = read_cues(row.question, row.enriched)
        planted = mutants(trees, row.dialect, cues, kinds, seed=seed, key=row.id)
    except Exception as err:  # a planting bug costs this row its mutants, not the run
        return Case(row, sql, plant_error=f"{type(err).__name__}: {str(err)[:200]}")
    return Case(row, sql, planted)


def evaluate_cases(
    evaluator: BatchEvaluator,
    cases: Sequence[Case],
    workers: int = 1,
    advance: Callable[[int], None] | None = None,
) -> list[Result]:
    """Evaluate every original and mutant with the same evaluator, in one stream."""
    records = [r for c in cases for r in c.records()]
    scored = []
    for evaluation in evaluator.evaluate_many(records, workers=workers):
        scored.append(Scored.of(evaluation))
        if advance is not None:
            advance(1)
    out, i = [], 0
    for c in cases:
        n = 1 + len(c.mutants)
        out.append(Result(c, scored[i], scored[i + 1 : i + n]))
        i += n
    return out


def _share(num: float, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _seen(original: Scored, mutant: Scored) -> bool:
    """Does the mutant carry a weighted (non-info) finding more than its original: STEF saw
    the planted error, whether or not the score moved?"""
    return any(
        sum(s != "info" for s in sevs) > sum(s != "info" for s in original.findings.get(k, ()))
        for k, sevs in mutant.findings.items()
    )


def _kind_block(pairs: list[tuple[Scored, Scored, str]], made: int) -> dict[str, Any]:
    """Detection, flagged and the findings that caught it, over (original, mutant) pairs."""
    scored: list[tuple[float, float, Scored, Scored]] = [
        (o.score, m.score, o, m) for o, m, _ in pairs if o.score is not None and m.score is not None
    ]
    wins = sum(1.0 if ms < os else 0.5 if ms == os else 0.0 for os, ms, _, _ in scored)
    good = [ms for os, ms, _, _ in scored if os >= GOOD]
    flagged = sum(1 for ms in good if ms < GOOD)
    caught: Counter[str] = Counter()
    for _, _, o, m in scored:
        caught.update(k for k in m.findings if k not in o.findings)
    drops = [os - ms for os, ms, _, _ in scored]
    return {
        "mutants": made,
        "scored_pairs": len(scored),
        "detection": _share(wins, len(scored)),
        "ties": sum(1 for os, ms, _, _ in scored if ms == os),
        # ties where a new weighted finding fired: seen, but the score did not move
        "ties_seen": sum(1 for os, ms, o, m in scored if ms == os and _seen(o, m)),
        "flagged": flagged,
        "flag_base": len(good),
        "flag_rate": _share(flagged, len(good)),
        "mean_drop": round(sum(drops) / len(drops), 2) if drops else None,
        "caught_by": dict(caught.most_common()),
    }


def summarise(results: Sequence[Result], kinds: list[str] | None = None) -> dict[str, Any]:
    """The selftest figures: originals' false alarms, then per kind and overall."""
    originals = [r.original for r in results]
    ok = [o.score for o in originals if o.score is not None]
    report: dict[str, Any] = {
        "originals": {
            "records": len(originals),
            "scored": len(ok),
            "coverage": _share(len(ok), len(originals)),
            "mean_score": round(sum(ok) / len(ok), 2) if ok else None,
            "share_below_75": _share(sum(1 for s in ok if s < GOOD), len(ok)),
            "share_below_50": _share(sum(1 for s in ok if s < POOR), len(ok)),
            "unscored_statuses": dict(Counter(o.status for o in originals if o.score is None)),
        }
    }
    by_kind: dict[str, list[tuple[Scored, Scored, str]]] = {k: [] for k in kinds or KINDS}
    for r in results:
        for m, s in zip(r.case.mutants, r.mutants, strict=True):
            by_kind.setdefault(m.kind, []).append((r.original, s, m.kind))
    report["kinds"] = {k: _kind_block(v, len(v)) for k, v in by_kind.items()}
    everything = [p for v in by_kind.values() for p in v]
    report["overall"] = _kind_block(everything, len(everything))
    report["overall"]["records_with_a_mutant"] = sum(1 for r in results if r.case.mutants)
    report["overall"]["planting_errors"] = sum(1 for r in results if r.case.plant_error)
    return report


def pair_lines(results: Sequence[Result]) -> Iterator[dict[str, Any]]:
    """One line per (original, mutant) pair, for reading what was planted and caught."""
    for r in results:
        for m, s in zip(r.case.mutants, r.mutants, strict=True):
            yield {
                "id": r.case.row.id,
                "kind": m.kind,
                "detail": m.detail,
                "question": r.case.row.question,
                "original_sql": r.case.sql,
                "mutant_sql": m.sql,
                "original_score": r.original.score,
                "mutant_score": s.score,
                "mutant_status": s.status,
                "new_findings": [k for k in s.findings if k not in r.original.findings],
            }


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def markdown(report: dict[str, Any], title: str = "stef selftest") -> str:
    """The report as markdown: the originals' false alarms and one table row per kind."""
    o, run = report["originals"], report.get("run", {})
    lines = [f"## {title}", ""]
    if run:
        lines += [f"`{run.get('command', '')}`", ""]
    lines += [
        f"Originals: {o['records']} records, {o['scored']} scored (coverage {_pct(o['coverage'])}),"
        f" mean score {o['mean_score']}; scored < 75: {_pct(o['share_below_75'])},"
        f" < 50: {_pct(o['share_below_50'])}.",
        "",
        "| kind | mutants | detection | ties (seen) | flagged | mean drop"
        " | caught by (new findings) |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, b in [*report["kinds"].items(), ("**all kinds**", report["overall"])]:
        caught = ", ".join(f"{k} {n}" for k, n in list(b["caught_by"].items())[:4]) or "—"
        flagged = f"{b['flagged']}/{b['flag_base']} ({_pct(b['flag_rate'])})"
        lines.append(
            f"| {kind} | {b['mutants']} | {_pct(b['detection'])} | {b['ties']} ({b['ties_seen']})"
            f" | {flagged} |"
            f" {b['mean_drop'] if b['mean_drop'] is not None else '—'} | {caught} |"
        )
    lines += [
        "",
        "detection: share of pairs where the mutant scores below its original (ties count half);"
        " seen: ties where the mutant has a new warning or error all the same (STEF noticed the"
        " planted error, the score did not move); flagged: mutants scored < 75 whose original"
        " scored ≥ 75.",
        "",
    ]
    if report["overall"].get("planting_errors"):
        lines += [
            f"**{report['overall']['planting_errors']} record(s) got no mutant: planting failed**"
            " (an error of `stef selftest` itself; `--pairs` lists the pairs made).",
            "",
        ]
    return "\n".join(lines)


def overview(reports: dict[str, dict[str, Any]]) -> str:
    """Several files' selftest reports side by side (markdown): the originals' false alarms,
    then detection and flagged per kind, one column per file."""
    names = list(reports)
    head = "| kind | " + " | ".join(f"`{n}`" for n in names) + " |"
    rule = "|---|" + "---|" * len(names)
    lines = [
        "| file | originals | coverage | mean score | scored < 75 | scored < 50 |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in reports.items():
        o = r["originals"]
        mean = "—" if o["mean_score"] is None else f"{o['mean_score']:.1f}"
        lines.append(
            f"| `{name}` | {o['records']} | {_pct(o['coverage'])} | {mean} |"
            f" {_pct(o['share_below_75'])} | {_pct(o['share_below_50'])} |"
        )
    kinds = list(dict.fromkeys(k for r in reports.values() for k in r["kinds"]))

    def block(k: str, r: dict[str, Any]) -> dict[str, Any]:
        return r["overall"] if k == "overall" else r["kinds"].get(k) or _kind_block([], 0)

    for title, cell in (
        (
            "Detection (mutant below its original, ties half; mutants in brackets)",
            lambda b: "—" if b["detection"] is None else f"{_pct(b['detection'])} ({b['mutants']})",
        ),
        (
            "Flagged (mutant < 75 where the original ≥ 75)",
            lambda b: f"{b['flagged']}/{b['flag_base']}" if b["flag_base"] else "—",
        ),
    ):
        lines += ["", f"{title}:", "", head, rule]
        for k in [*kinds, "overall"]:
            label = "**all kinds**" if k == "overall" else k
            cells = [cell(block(k, reports[n])) for n in names]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"

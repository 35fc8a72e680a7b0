"""Write what ``stef calibrate`` measured: report.md, metrics.json, two SVGs, calibration.json.

>>> fmt_pct(0.6812), fmt_num(0.71234), fmt_pct(None)
('68.1%', '0.712', '—')
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stef.accuracy.calibrate import DEFAULT_THRESHOLD, LabelledRow, Measurement

#: Published detection accuracy on NL2SQL-Bugs (the models were given the schema; STEF is not).
PUBLISHED: dict[str, list[tuple[str, float]]] = {
    "NL2SQL-Bugs": [
        ("GPT-4o", 76.81),
        ("Gemini-2.0-Flash", 76.81),
        ("Claude-3.5-Sonnet", 76.36),
        ("DeepSeek-V3", 75.02),
        ("Qwen2.5-72B", 74.38),
        ("GPT-4o-mini", 71.56),
    ]
}

#: The summary lines: (label, key in a detection-metrics dict, formatter name).
SUMMARY = (
    ("accuracy", "accuracy", "pct"),
    ("balanced accuracy", "balanced_accuracy", "pct"),
    ("Cohen's κ", "kappa", "num"),
    ("negative precision", "negative_precision", "pct"),
    ("negative recall (errors caught)", "negative_recall", "pct"),
    ("positive precision", "positive_precision", "pct"),
    ("positive recall", "positive_recall", "pct"),
)


def fmt_pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def fmt_num(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def _fmt(kind: str, v: float | None) -> str:
    return fmt_pct(v) if kind == "pct" else fmt_num(v)


def reference_for(rows: Sequence[LabelledRow]) -> str | None:
    """The published benchmark these rows come from, when their ``source`` names one."""
    for name in PUBLISHED:
        if any(name.lower() in (r.source or "").lower() for r in rows):
            return name
    return None


def summary_rows(metrics: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(figure, at the default threshold, at the fitted threshold held out) for a summary table."""
    cov = metrics["coverage"]
    o = metrics["overall"]
    d, f = o["at_default"], o["at_fitted"]
    thresholds = ", ".join(f"{t:g}" for t in f["thresholds"])
    rows = [
        (
            "coverage",
            f"{fmt_pct(cov['coverage'])} ({cov['evaluated']}/{cov['received']})",
            "",
        ),
        ("AUROC", fmt_num(o["auroc"]), f"fold mean {fmt_num(o['auroc_fold_mean'])}"),
        ("threshold", f"{d['threshold']:g}", thresholds),
    ]
    rows += [(label, _fmt(kind, d[key]), _fmt(kind, f[key])) for label, key, kind in SUMMARY]
    return rows


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def cost_line(cost: dict[str, Any]) -> str:
    """One sentence on what the LLM judge spent (see :func:`stef.accuracy.calibrate.llm_cost`).

    >>> print(cost_line({"llm_records": 2, "records": 2, "requests": 1, "prompt_tokens": 800,
    ...     "completion_tokens": 60, "seconds": 25.0, "cache_hits": 1,
    ...     "cold_tokens_per_llm_record": 800.0, "cold_seconds_per_llm_record": 23.0}))
    ... # doctest: +NORMALIZE_WHITESPACE
    LLM judged 2 of 2 records: 1 requests, 800 prompt + 60 completion tokens, 25.0 s;
    1 answered from the cache. A cold run costs 800 tokens and 23.0 s per LLM-judged record.
    """
    cold_s = cost.get("cold_seconds_per_llm_record")
    return (
        f"LLM judged {cost['llm_records']} of {cost['records']} records: "
        f"{cost['requests']} requests, {cost['prompt_tokens']} prompt + "
        f"{cost['completion_tokens']} completion tokens, {cost['seconds']} s; "
        f"{cost['cache_hits']} answered from the cache. A cold run costs "
        f"{cost['cold_tokens_per_llm_record']:g} tokens"
        + (f" and {cold_s} s" if cold_s is not None else "")
        + " per LLM-judged record."
    )


def extractor_line(cost: dict[str, Any]) -> str:
    """One sentence on what the LLM NL extractor spent
    (:func:`stef.accuracy.calibrate.extractor_cost`).

    >>> print(extractor_line({"extracted": 2, "records": 2, "requests": 1, "prompt_tokens": 300,
    ...     "completion_tokens": 50, "seconds": 8.0, "cache_hits": 1, "failed": 0,
    ...     "cold_tokens_per_record": 350.0})) # doctest: +NORMALIZE_WHITESPACE
    LLM NL extractor read 2 of 2 records: 1 requests, 300 prompt + 50 completion tokens,
    8.0 s; 1 answered from the cache; 0 fell back to the rules extractor. A cold run costs
    350 tokens per record.
    """
    return (
        f"LLM NL extractor read {cost['extracted']} of {cost['records']} records: "
        f"{cost['requests']} requests, {cost['prompt_tokens']} prompt + "
        f"{cost['completion_tokens']} completion tokens, {cost['seconds']} s; "
        f"{cost['cache_hits']} answered from the cache; {cost['failed']} fell back to the "
        f"rules extractor. A cold run costs {cost['cold_tokens_per_record']:g} tokens per record."
    )


def render_markdown(metrics: dict[str, Any]) -> str:
    """The human report (report.md) built from ``metrics.json``'s content."""
    out = ["# STEF calibration report", ""]
    for section in (
        _md_run,
        _md_cost,
        _md_summary,
        _md_published,
        _md_coverage,
        _md_probability,
        _md_per_type,
        _md_finding_kinds,
        _md_bands,
    ):
        out += section(metrics)
    return "\n".join(out)


def _md_run(metrics: dict[str, Any]) -> list[str]:
    """What was run: data, judge, style normalisation, folds, and the command to reproduce it."""
    run, o = metrics["run"], metrics["overall"]
    style = run["style"]
    out = []
    data = f"`{run['data']}` ({run['rows_in_file']} rows"
    if run.get("limit") is not None:
        data += f"; seeded sample of whole questions: {run['rows_used']} rows"
    out.append(f"- Data: {data})")
    out.append(
        f"- Judge: `{run['judge']}`; rules: {run['rules'] or 'defaults'}; "
        f"dialect: `{run['dialect']}`; STEF {run['stef_version']}"
    )
    if style["normalised"]:
        out.append(
            f"- SQL style-normalised through sqlglot ({style['rerendered']} re-rendered, "
            f"{style['kept_as_is']} kept as written because sqlglot could not parse them)"
        )
    else:
        out.append(
            "- SQL scored as written (`--no-style-normalise`): surface style may leak labels"
        )
    out.append(
        f"- {run['folds']} folds grouped by question (seed {run['seed']}); "
        f"threshold fitted to maximise {o['at_fitted']['objective'].replace('_', ' ')} "
        "on the training folds"
    )
    out += ["", "Reproduce:", "", "```", run["command"], "```", ""]
    return out


def _md_cost(metrics: dict[str, Any]) -> list[str]:
    """The LLM judge's and the NL extractor's cost, when either ran."""
    cost = metrics.get("llm_cost")
    extraction = metrics.get("nl_extractor_cost")
    out: list[str] = []
    if cost or extraction:
        out += ["## LLM cost", ""]
        out += [cost_line(cost), ""] if cost else []
        out += [extractor_line(extraction), ""] if extraction else []
    return out


def _md_summary(metrics: dict[str, Any]) -> list[str]:
    """The detection figures at the default and the fitted threshold."""
    out = ["## Summary", ""]
    out.append(
        _table(
            [
                "figure",
                f"at the default threshold ({DEFAULT_THRESHOLD:g})",
                "at the fitted threshold (held out)",
            ],
            summary_rows(metrics),
        )
    )
    out += [
        "",
        "Positive = the SQL is correct (score ≥ threshold). Negative precision / recall are "
        "NL2SQL-Bugs' figures for the rows flagged incorrect: of the rows flagged, how many "
        "are wrong; of the wrong rows, how many are flagged.",
        "",
    ]
    return out


def _md_published(metrics: dict[str, Any]) -> list[str]:
    """STEF's accuracy beside the published detectors' on the same benchmark, if known."""
    run, o = metrics["run"], metrics["overall"]
    ref = run.get("reference")
    if ref not in PUBLISHED:
        return []
    out = [f"## Beside the published figures ({ref})", ""]
    rows = [
        (
            "STEF, offline" if run["judge"] == "symbolic" else f"STEF, judge {run['judge']}",
            "no",
            fmt_pct(o["at_fitted"]["accuracy"]),
            "fitted threshold, held-out folds",
        ),
        (
            "STEF",
            "no",
            fmt_pct(o["at_default"]["accuracy"]),
            f"default threshold {DEFAULT_THRESHOLD:g}",
        ),
    ]
    rows += [(m, "yes", f"{a:.2f}%", "published") for m, a in PUBLISHED[ref]]
    out += [_table(["detector", "schema given", "accuracy", "note"], rows), ""]
    return out


def _md_coverage(metrics: dict[str, Any]) -> list[str]:
    """How many rows got a score, and the statuses of the others."""
    cov = metrics["coverage"]
    out = ["## Coverage", ""]
    out.append(
        f"{cov['evaluated']} of {cov['received']} rows evaluated. Rows without a score "
        f"(status other than `ok`) are left out of every other figure: "
        f"{cov['not_covered_correct']} correct, {cov['not_covered_incorrect']} incorrect."
    )
    out += [
        "",
        _table(["status", "rows"], [(f"`{k}`", str(v)) for k, v in cov["statuses"].items()]),
        "",
    ]
    return out


def _md_probability(metrics: dict[str, Any]) -> list[str]:
    """Brier score and ECE of P(correct), raw and isotonic, and the two plots."""
    out = ["## Probability calibration", ""]
    prob = metrics["overall"]["probability"]
    prob_rows = [
        ("score / 100, uncalibrated", fmt_num(prob["raw"]["brier"]), fmt_num(prob["raw"]["ece"]))
    ]
    if "isotonic_held_out" in prob:
        iso = prob["isotonic_held_out"]
        prob_rows.append(
            ("isotonic, fitted on training folds", fmt_num(iso["brier"]), fmt_num(iso["ece"]))
        )
    out += [_table(["P(correct)", "Brier", "ECE (10 bins)"], prob_rows), ""]
    if "isotonic_held_out" in prob:
        out += [
            "`calibration.json` holds the isotonic map fitted on all evaluated rows; "
            "`stef eval --calibration calibration.json` adds `p_correct` to each evaluation.",
            "",
        ]
    out += ["![reliability diagram](reliability.svg)", "", "![ROC curve](roc.svg)", ""]
    return out


def _md_per_type(metrics: dict[str, Any]) -> list[str]:
    """One line per labelled error type with enough rows: how many of them are caught."""
    pt = metrics["per_error_type"]
    out = ["## Per error type", ""]
    if pt["types"]:
        out += [
            "Each line: every evaluated correct row plus the incorrect rows of that type. "
            f"Types with fewer than {pt['min_support']} evaluated rows are left out.",
            "",
        ]
        type_rows = [
            (
                ("**" + t["type"] + "**") if t["level"] == "category" else t["type"],
                f"{t['evaluated']}/{t['received']}",
                fmt_num(t["auroc"]),
                fmt_pct(t["at_default"]["negative_recall"]),
                fmt_pct(t["at_fitted"]["negative_recall"]),
                fmt_pct(t["at_fitted"]["balanced_accuracy"]),
            )
            for t in pt["types"]
        ]
        out.append(
            _table(
                [
                    "error type",
                    "rows evaluated",
                    "AUROC",
                    "caught at default",
                    "caught at fitted",
                    "balanced accuracy at fitted",
                ],
                type_rows,
            )
        )
        out.append("")
    if pt["free_text_types_skipped"]:
        out += [
            "Some error types are free text (e.g. SPLASH's human feedback), not a taxonomy; "
            "they get no per-type line.",
            "",
        ]
    if not pt["types"] and not pt["free_text_types_skipped"]:
        out += ["No error type has enough rows for its own line.", ""]
    return out


def _md_finding_kinds(metrics: dict[str, Any]) -> list[str]:
    """Each finding kind as a detector of incorrect SQL on its own."""
    out = ["## Finding kinds as signals", ""]
    kinds = metrics["finding_kinds"]
    if not kinds:
        return [*out, "No finding fired on the evaluated rows.", ""]
    out += [
        'Each finding kind taken alone as "fired → incorrect": rows where it fired, the share '
        "of those that are incorrect (precision), the share of incorrect rows it fired on "
        "(recall) and its AUROC (0.5 = no information).",
        "",
        _table(
            ["kind", "rows", "precision", "recall", "AUROC"],
            [
                (
                    f"`{k['kind']}`",
                    str(k["support"]),
                    fmt_pct(k["precision"]),
                    fmt_pct(k["recall"]),
                    fmt_num(k["auroc"]),
                )
                for k in kinds
            ],
        ),
        "",
    ]
    return out


def _md_bands(metrics: dict[str, Any]) -> list[str]:
    """Correct and incorrect rows per score band."""
    bands = metrics["bands"]
    order = ["excellent", "good", "marginal", "poor"]
    names = [b for b in order if b in bands] + sorted(b for b in bands if b not in order)
    return [
        "## Score bands",
        "",
        _table(
            ["band", "correct", "incorrect", "share correct"],
            [
                (
                    b,
                    str(bands[b]["correct"]),
                    str(bands[b]["incorrect"]),
                    fmt_pct(
                        bands[b]["correct"] / max(1, bands[b]["correct"] + bands[b]["incorrect"])
                    ),
                )
                for b in names
            ],
        ),
        "",
    ]


def plot_roc(measurement: Measurement, path: Path, fitted_threshold: float | None) -> None:
    """ROC curve of the score (positive = correct), with the two thresholds marked."""
    from stef.accuracy.metrics import auroc, roc_points

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 5))
    labels, scores = measurement.labels, measurement.scores
    a = auroc(labels, scores)
    if a is not None:
        fpr, tpr, _ = roc_points(labels, scores)
        ax.plot(fpr, tpr, color="#1f77b4", label=f"STEF score (AUROC {a:.3f})")
        marks = [(DEFAULT_THRESHOLD, "o", "default")]
        if fitted_threshold is not None:
            marks.append((fitted_threshold, "s", "fitted"))
        n_pos = sum(labels)
        n_neg = len(labels) - n_pos
        for t, marker, name in marks:
            tp = sum(1 for y, s in zip(labels, scores, strict=True) if y and s >= t)
            fp = sum(1 for y, s in zip(labels, scores, strict=True) if not y and s >= t)
            ax.plot(
                [fp / n_neg],
                [tp / n_pos],
                marker=marker,
                linestyle="",
                label=f"{name} threshold {t:g}",
            )
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="chance")
    ax.set_xlabel("false-positive rate (incorrect SQL passed)")
    ax.set_ylabel("true-positive rate (correct SQL passed)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title("ROC")
    ax.legend(loc="lower right", fontsize="small")
    _save(fig, path)


def plot_reliability(metrics: dict[str, Any], path: Path) -> None:
    """Reliability diagram: mean P(correct) per bin against the observed share correct."""
    plt = _pyplot()
    fig, (ax, hist) = plt.subplots(
        2, 1, figsize=(5, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    prob = metrics["overall"]["probability"]
    series = [("raw", "score / 100", "#7f7f7f", "o")]
    if "isotonic_held_out" in prob:
        series.append(("isotonic_held_out", "isotonic (held out)", "#d62728", "s"))
    for key, name, color, marker in series:
        bins = [b for b in prob[key]["bins"] if b["n"]]
        ax.plot(
            [b["mean_p"] for b in bins],
            [b["frac_correct"] for b in bins],
            marker=marker,
            color=color,
            label=f"{name}, ECE {fmt_num(prob[key]['ece'])}",
        )
        width = 1 / max(1, len(prob[key]["bins"]))
        offset = 0 if key == "raw" else width / 2
        hist.bar(
            [b["lo"] + offset for b in bins],
            [b["n"] for b in bins],
            width=width / 2,
            align="edge",
            color=color,
        )
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect")
    ax.set_ylabel("observed share correct")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title("Reliability")
    ax.legend(loc="upper left", fontsize="small")
    hist.set_xlabel("P(correct)")
    hist.set_ylabel("rows")
    _save(fig, path)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "stef"  # stable SVG ids: same data, same file
    return plt


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def write_outputs(measurement: Measurement, outdir: Path) -> dict[str, Path]:
    """Write every output file into ``outdir`` (created if needed); returns them by name."""
    outdir.mkdir(parents=True, exist_ok=True)
    metrics = measurement.metrics
    paths = {
        "metrics": outdir / "metrics.json",
        "report": outdir / "report.md",
        "roc": outdir / "roc.svg",
        "reliability": outdir / "reliability.svg",
    }
    paths["metrics"].write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    if measurement.per_row:
        paths["rows"] = outdir / "rows.jsonl"
        paths["rows"].write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in measurement.per_row),
            encoding="utf-8",
        )
    paths["report"].write_text(render_markdown(metrics), encoding="utf-8")
    cal = measurement.calibration
    plot_roc(measurement, paths["roc"], metrics["overall"]["at_fitted"].get("threshold_all_rows"))
    plot_reliability(metrics, paths["reliability"])
    if cal is not None:
        paths["calibration"] = outdir / "calibration.json"
        cal.save(paths["calibration"])
    return paths

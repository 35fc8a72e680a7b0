"""Comparisons on synthetic evaluations: an injected regression is found, none is invented."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from stef.monitor.compare import boot_quantiles, compare, paired_differences
from stef.monitor.stats import Tally, tally_evaluations
from stef.monitor.store import question_key

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import make_evaluations


def sample(evs):
    tally = tally_evaluations(evs)[((), None)]
    pairs = [(question_key(e["question"]), e["score"]) for e in evs if e["status"] == "ok"]
    return tally, pairs


def run(base, cand, paired=True, **kw):
    (ta, pa), (tb, pb) = sample(base), sample(cand)
    return compare(ta, tb, pa if paired else (), pb if paired else (), **kw)


def test_an_injected_regression_is_found_with_the_paired_test():
    base = make_evaluations(300, seed=1)
    cand = make_evaluations(300, seed=2, agent_version="1.4", quality=-0.2)
    result = run(base, cand)
    assert result.test == "paired bootstrap"
    assert result.verdict == "worse"
    assert result.regression
    assert result.mean_diff.value is not None and result.mean_diff.value < -10
    assert result.mean_diff.high is not None and result.mean_diff.high < 0
    assert result.paired_n >= 90  # of the 120 questions in the pool
    assert result.wilcoxon_p is not None and result.wilcoxon_p < 0.001
    assert result.findings_grew[0]["kind"] == "filter_missing"
    assert result.band_shift["poor"]["diff"] > 0
    assert result.reason.startswith("mean score -")
    assert "shared questions" in result.reason


def test_an_improvement_is_better_and_unpaired_without_shared_questions():
    base = make_evaluations(300, seed=1, quality=-0.2)
    cand = make_evaluations(300, seed=2, agent_version="1.4")
    result = run(base, cand, paired=False)
    assert (result.test, result.verdict, result.paired_n) == ("unpaired bootstrap", "better", 0)


@pytest.mark.parametrize("paired", [True, False])
def test_no_regression_is_rarely_flagged_across_seeds(paired):
    alpha, seeds = 0.05, 50
    flagged = 0
    for seed in range(seeds):
        base = make_evaluations(200, seed=1000 + seed)
        cand = make_evaluations(200, seed=5000 + seed, agent_version="1.4")
        result = run(base, cand, paired=paired, alpha=alpha, n_boot=1000, seed=seed)
        flagged += result.verdict != "no detectable difference"
    # Expected alpha * seeds = 2.5; P(Binomial(50, 0.05) >= 8) is about 0.003.
    assert flagged <= 7


def test_too_few_records_cannot_be_decided():
    base = make_evaluations(5, seed=1)
    cand = make_evaluations(40, seed=2, quality=-0.5)
    result = run(base, cand)
    assert result.verdict == "undecided"
    assert result.reason == (
        "too few evaluated records (baseline 5, candidate 40; at least 10 each needed)"
    )


def test_a_small_sample_states_the_difference_it_could_have_detected():
    base = make_evaluations(25, seed=3)
    cand = make_evaluations(25, seed=4, quality=-0.02)
    result = run(base, cand, paired=False)
    assert result.verdict == "no detectable difference"
    assert result.min_detectable_diff is not None and result.min_detectable_diff > 10
    assert f"smaller than about {result.min_detectable_diff} points" in result.reason


def test_a_coverage_drop_is_reported_on_its_own():
    base = make_evaluations(400, seed=1)
    cand = make_evaluations(400, seed=2, error_rate=0.3)
    result = run(base, cand)
    assert result.coverage_verdict == "lower"
    assert result.coverage_diff.value == pytest.approx(result.candidate["coverage"] - 1.0)
    assert result.coverage_p is not None and result.coverage_p < 1e-6


def test_the_verdict_is_reproducible_with_a_seed():
    base, cand = make_evaluations(80, seed=1), make_evaluations(80, seed=2, quality=-0.1)
    assert run(base, cand, seed=7).to_dict() == run(base, cand, seed=7).to_dict()


def test_multinomial_bootstrap_of_a_quantile_matches_resampling_records():
    values = np.array([0.0, 40.0, 64.0, 80.0, 100.0])
    counts = np.array([5, 20, 30, 25, 20])
    dist = boot_quantiles(values, counts, 0.9, 4000, np.random.default_rng(0))
    expanded = np.repeat(values, counts)
    rng = np.random.default_rng(1)
    direct = np.quantile(rng.choice(expanded, size=(4000, len(expanded))), 0.9, axis=1)
    assert abs(dist.mean() - direct.mean()) < 1.0
    assert set(np.unique(dist)) <= set(np.unique(direct)) | {80.0, 90.0, 100.0}


def test_paired_differences_average_repeated_questions():
    d = paired_differences([("a", 80.0), ("a", 60.0), ("b", 10.0)], [("a", 50.0), ("b", 30.0)])
    assert d.tolist() == [-20.0, 20.0]


def test_compare_refuses_a_silly_alpha():
    with pytest.raises(ValueError, match=r"alpha must be within \(0, 1\)"):
        compare(Tally(), Tally(), alpha=1.5)


@pytest.mark.parametrize(
    ("candidate_quality", "n", "code", "verdict"),
    [(-0.25, 300, 1, "worse"), (0.0, 300, 0, "no detectable difference"), (0.0, 4, 2, "undecided")],
)
def test_stef_compare_exit_codes_gate_a_release(store_target, candidate_quality, n, code, verdict):
    import json

    from click.testing import CliRunner

    from stef.cli import main
    from stef.monitor.store import open_store

    store = open_store(store_target)
    store.write(make_evaluations(300, seed=1))
    store.write(make_evaluations(n, seed=2, agent_version="1.4", quality=candidate_quality))
    store.close()
    args = [
        "compare",
        "--store",
        store_target,
        "--baseline",
        "agent=sql-bot,agent_version=1.3",
        "--candidate",
        "agent=sql-bot,agent_version=1.4",
    ]
    gated = CliRunner().invoke(main, [*args, "--fail-on", "regression", "--json"])
    assert gated.exit_code == code, gated.output
    data = json.loads(gated.output)
    assert data["verdict"] == verdict
    assert data["candidate"]["selection"] == "agent=sql-bot,agent_version=1.4"
    plain = CliRunner().invoke(main, args)
    assert plain.exit_code == 0
    assert f"verdict: {verdict}" in plain.output

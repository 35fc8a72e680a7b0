"""Metrics checked against values computed by hand on one six-row set.

The set (score, label), "correct" = positive, predicted correct when score >= threshold:

    row     1     2     3     4     5     6
    score   90    80    70    60    50    30
    label   ok    ok    bad   ok    bad   bad

AUROC: pairs (correct, incorrect) where the correct row scores higher:
    90 > 70, 50, 30 (3); 80 > 70, 50, 30 (3); 60 > 50, 30 (2)  →  8 / 9.

Threshold 75 → predicted [ok, ok, bad, bad, bad, bad]:
    tp = 2 (90, 80), fn = 1 (60), fp = 0, tn = 3 (70, 50, 30)
    accuracy = 5/6; balanced accuracy = (2/3 + 3/3) / 2 = 5/6
    κ: p_o = 5/6, p_e = (3/6)(2/6) + (3/6)(4/6) = 1/2  →  κ = (5/6 − 1/2) / (1 − 1/2) = 2/3
    negative precision = tn / (tn + fn) = 3/4; negative recall = tn / (tn + fp) = 1
    positive precision = tp / (tp + fp) = 1;   positive recall = tp / (tp + fn) = 2/3

Threshold 55 → predicted [ok, ok, ok, ok, bad, bad]: tp 3, fn 0, fp 1, tn 2
    negative precision = 2/2 = 1, negative recall = 2/3, accuracy = 5/6.

Fitted threshold (balanced accuracy over 30, 50, 60, 70, 80, 90, 91):
    0.5, 2/3, 5/6, 2/3, 5/6, 2/3, 0.5 — 60 and 80 tie at 5/6; 80 is nearer the default 75.

P(correct) = score/100: Brier = (.01 + .04 + .49 + .16 + .25 + .09) / 6 = 1.04 / 6;
    every row alone in its 10-bin, gaps .1 .2 .7 .4 .5 .3 → ECE = 2.2 / 6.

Isotonic (pool adjacent violators over 30 50 60 70 80 90 → 0 0 1 0 1 1):
    60/70 pool to 0.5 → 0 0 .5 .5 1 1; between breakpoints it interpolates linearly.
"""

from __future__ import annotations

import pytest

from stef.accuracy import metrics as M
from stef.accuracy.calibration import Calibration, CalibrationError

SCORES = [90.0, 80.0, 70.0, 60.0, 50.0, 30.0]
LABELS = [True, True, False, True, False, False]


def test_auroc_counts_ordered_pairs():
    assert M.auroc(LABELS, SCORES) == pytest.approx(8 / 9)


def test_auroc_is_undefined_with_one_class():
    assert M.auroc([True, True], [10.0, 90.0]) is None


def test_detection_metrics_at_75():
    m = M.detection_metrics(LABELS, M.predict(SCORES, 75))
    assert m["confusion"] == {"tp": 2, "fn": 1, "fp": 0, "tn": 3}
    assert m["accuracy"] == pytest.approx(5 / 6)
    assert m["balanced_accuracy"] == pytest.approx(5 / 6)
    assert m["kappa"] == pytest.approx(2 / 3)
    assert m["negative_precision"] == pytest.approx(3 / 4)
    assert m["negative_recall"] == pytest.approx(1.0)
    assert m["positive_precision"] == pytest.approx(1.0)
    assert m["positive_recall"] == pytest.approx(2 / 3)


def test_detection_metrics_at_55():
    m = M.detection_metrics(LABELS, M.predict(SCORES, 55))
    assert m["confusion"] == {"tp": 3, "fn": 0, "fp": 1, "tn": 2}
    assert m["negative_precision"] == pytest.approx(1.0)
    assert m["negative_recall"] == pytest.approx(2 / 3)
    assert m["accuracy"] == pytest.approx(5 / 6)


def test_undefined_ratios_are_none_not_zero():
    # nothing flagged incorrect: negative precision has no denominator
    m = M.detection_metrics([True, False], [True, True])
    assert m["negative_precision"] is None
    assert m["negative_recall"] == 0.0
    assert M.cohen_kappa([True, True], [True, True]) is None
    assert M.balanced_accuracy([True, True], [True, False]) is None


def test_fit_threshold_prefers_the_tie_nearest_the_default():
    assert M.fit_threshold(SCORES, LABELS) == 80.0
    assert M.fit_threshold(SCORES, LABELS, default=50) == 60.0


def test_fit_threshold_can_flag_everything():
    # every row incorrect: accuracy is best with a threshold above every score
    assert M.fit_threshold([10.0, 20.0], [False, False], objective="accuracy") == 21.0


def test_fit_threshold_rejects_unknown_objective():
    with pytest.raises(ValueError, match="objective must be one of"):
        M.fit_threshold(SCORES, LABELS, objective="f1")


def test_brier_and_ece_of_score_over_100():
    probs = [s / 100 for s in SCORES]
    assert M.brier_score(LABELS, probs) == pytest.approx(1.04 / 6)
    assert M.expected_calibration_error(LABELS, probs, 10) == pytest.approx(2.2 / 6)


def test_reliability_bins():
    bins = M.reliability_bins(LABELS, [s / 100 for s in SCORES], n_bins=5)
    assert [b.n for b in bins] == [0, 1, 1, 2, 2]
    assert bins[3].mean_p == pytest.approx(0.65)
    assert bins[3].frac_correct == pytest.approx(0.5)
    assert bins[4].frac_correct == 1.0
    assert bins[0].mean_p is None


def test_isotonic_pools_violators_and_interpolates():
    cal = M.fit_isotonic(SCORES, LABELS)
    assert [cal.p_correct(s) for s in (20, 30, 55, 65, 75, 90, 100)] == pytest.approx(
        [0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0]
    )
    assert M.apply_calibration(cal, [65.0, 75.0]) == pytest.approx([0.5, 0.75])


def test_calibration_round_trips_through_json(tmp_path):
    cal = M.fit_isotonic(SCORES, LABELS)
    cal = Calibration(x=cal.x, y=cal.y, threshold=80.0, meta={"rows": 6})
    path = tmp_path / "calibration.json"
    cal.save(path)
    back = Calibration.load(path)
    assert back == cal
    assert back.threshold == 80.0
    assert back.meta == {"rows": 6}
    assert back.p_correct(65) == 0.5


def test_calibration_rejects_a_file_that_is_not_one(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"x": [1], "y": [0.5]}')
    with pytest.raises(CalibrationError, match="is not a STEF calibration file"):
        Calibration.load(path)
    path.write_text('{"format": "stef-calibration", "version": 1, "x": [1, 2], "y": [0.5, 1.5]}')
    with pytest.raises(CalibrationError, match=r"y values must lie within \[0, 1\]"):
        Calibration.load(path)


def test_signal_metrics_of_one_finding_kind():
    # fired on rows 3, 4, 6: two of the three are incorrect; it catches 2 of 3 incorrect rows;
    # AUROC of "not fired" = (TPR 2/3 + TNR 2/3) / 2 = 2/3
    s = M.signal_metrics(LABELS, [False, False, True, True, False, True])
    assert s["support"] == 3
    assert s["precision"] == pytest.approx(2 / 3)
    assert s["recall"] == pytest.approx(2 / 3)
    assert s["auroc"] == pytest.approx(2 / 3)

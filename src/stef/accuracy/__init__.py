"""Measuring STEF itself on labelled data.

``metrics`` (AUROC, accuracy, thresholds), ``calibration`` (score → P(correct)),
``calibrate`` (folds grouped by question over labelled rows), ``calibrate_report`` and
``calibrate_diff`` (outputs of a run, two runs compared), ``judge_fit`` (fit the offline
judge's weights).

May import: everything of the pipeline (it runs the evaluator). Nothing of the pipeline
imports it, except that ``stef.evaluator`` accepts a calibration through a protocol.
"""

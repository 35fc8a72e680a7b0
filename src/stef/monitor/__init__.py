"""Monitoring: keep every evaluation and say how an agent is doing.

``stats`` (figures per agent / version / app / window) and ``compare`` (two selections,
with an interval and a paired test) are pure; ``store`` keeps evaluations (SQLite);
``alerts`` checks rules over the store, ``watch`` follows a directory of logs, and
``report_html`` holds the chart helpers of the dashboard and ``stef report`` (whose pages
``stef.service`` renders).

May import: the shared shapes and, in ``watch``, a function that evaluates (passed in by
the CLI). Never the CLI.
"""

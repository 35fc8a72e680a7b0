"""The ``stef`` command line: one module per command group, wired in :mod:`stef.cli.main`.

``main`` (eval, rules, the group), ``llm`` (judge options, ``stef local``), ``monitor``
(ingest, stats, compare, watch, report), ``calibrate`` (calibrate, calibrate-diff),
``fit`` (fit-judge), ``report_text`` (the readable one-pair report), ``console`` (the
stderr console, built on first use so ``stef --help`` does not import rich). The top
layer: it may import anything; nothing imports it. Errors meant for users become messages
here.
"""

from stef.cli.main import main

__all__ = ["main"]

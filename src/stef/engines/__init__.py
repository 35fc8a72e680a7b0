"""Engines: evaluate record sets too large for one machine, on a cluster.

``frames`` is the evaluation function every engine shares: rows of records (JSONL lines or
decoded records, from Arrow tables or pandas frames) into rows of evaluations with a fixed
columnar schema; ``evaluate_batches`` is that function shaped for Spark's ``mapInPandas``.
``ray`` runs it on Ray Data (``stef eval --engine ray``), with ``ray`` imported only when a
run starts (``pip install 'stef[ray]'``).

May import: the pipeline (``evaluator``, ``batch``) and the store (``monitor.store``), like
the other users of evaluations in its layer. Never the CLI: the CLI hands in a function
that builds the evaluator on each worker.
"""

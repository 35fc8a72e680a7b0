"""NL side of the pipeline: read the user's question and the agent's enriched question.

``lexicon`` holds the word lists (aggregation, order, comparison cues), ``request`` the
output items a question asks for, ``spec`` the deterministic extractor that turns Q_u and
Q_e into a :class:`stef.spec.Spec`, and ``enrichment`` the check that Q_e keeps Q_u's
intent. ``spec`` runs reading steps kept by cue family: ``code`` (code in a text),
``hints`` (Q_e hints), ``values`` (quoted and capitalised values, numbers), ``dates``
(dates and periods), ``cues`` (order, top-k, superlatives, aggregations, grouping, flags),
over ``context`` (the reading context and result shapes) and ``words`` (word helpers).
Inside the package imports run one way: words → context → code → hints → the step
modules → spec → enrichment.

May import: the shared shapes (``stef.spec``, ``stef.rules``, ``stef.findings``,
``stef.errors``). Never the SQL side, alignment, judges or anything above them.
"""

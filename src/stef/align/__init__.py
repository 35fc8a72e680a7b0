"""Alignment: compare the NL spec with the SQL spec and say what is missing, extra or wrong.

``filters`` gives the filter class (fully applied, with extras, partially, not applied)
and the checks of aggregation, grouping, ordering and limit with the four production
normalisation rules; ``intent`` checks what the question asks to see against what the
SQL returns.

May import: the shared shapes and the NL lexicon (``stef.nl.lexicon``,
``stef.nl.request``) for its word lists. Never the judges, the score or anything above.
Pure and deterministic: no I/O, no clock.
"""

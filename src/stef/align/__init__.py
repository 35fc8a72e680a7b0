"""Alignment: compare the NL spec with the SQL spec and say what is missing, extra or wrong.

``filters`` gives the filter class (fully applied, with extras, partially, not applied)
and the entry point ``align``; ``aggregation``, ``grouping`` and ``order`` check
aggregates, GROUP BY, ORDER BY and LIMIT with the four production normalisation rules;
``hints`` checks literals, the enrichment's hints and schema linking; ``structure`` the
query's shape; ``intent`` what the question asks to see against what the SQL returns;
``matching`` holds the word and value matching they share.

May import: the shared shapes and the NL lexicon (``stef.nl.lexicon``,
``stef.nl.request``) for its word lists. Never the judges, the score or anything above.
Pure and deterministic: no I/O, no clock.
"""

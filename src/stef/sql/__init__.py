"""SQL side of the pipeline: parse the agent's SQL with sqlglot and read its spec.

``parse`` guards and parses (size limits, one statement, a query), ``text`` maps tree
nodes back to the SQL as written, ``predicates`` reads WHERE/HAVING/JOIN conditions into
filters, and ``spec`` walks the scopes (CTEs, subqueries, joins, set operations) into a
:class:`stef.spec.Spec`.

May import: the shared shapes (``stef.spec``, ``stef.findings``, ``stef.errors``) and
sqlglot. Never the NL side, alignment, judges or anything above them.
"""

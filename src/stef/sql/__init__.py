"""SQL side of the pipeline: parse the agent's SQL with sqlglot and read its spec.

``parse`` guards and parses (size limits, one statement, a query), ``text`` maps tree
nodes back to the SQL as written, ``predicates`` reads WHERE/HAVING/JOIN conditions into
filters, ``walk`` makes the one pass over the tree that collects its nodes, ``sources``
resolves the scopes (CTEs, subqueries, joins, set operations) and the tables behind each
alias, and ``spec`` builds a :class:`stef.spec.Spec` from them.

May import: the shared shapes (``stef.spec``, ``stef.findings``, ``stef.errors``) and
sqlglot. Never the NL side, alignment, judges or anything above them.
"""

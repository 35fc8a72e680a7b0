r"""sqlglot's notices about STEF's own parses and renderings, dropped while STEF reads SQL.

sqlglot logs "Falling back to parsing as a 'Command'" when it reads a statement it does
not know (a T-SQL ``DECLARE``) as a bare Command, and "Unsupported query option." (or
another "unsupported" line) when it renders a node that the target dialect lacks, as STEF
does to compare parts of a query (a T-SQL ``FOR XML PATH('')`` rendered for a grouping
check). STEF reports what it made of the SQL itself (a record's status, a finding, a
script scored on its final query), so while STEF reads a query these notices are noise on
the user's stderr. A filter on sqlglot's logger drops them in the thread that reads, inside
:func:`fallbacks_quiet` only: every parse or rendering that is not STEF's (a user's own
``sqlglot.parse_one``) still logs.

>>> import sqlglot
>>> with fallbacks_quiet():  # no notice on stderr
...     [t.key for t in sqlglot.parse("DECLARE @n int = 5\nSELECT TOP 5 a FROM t", read="tsql")]
['command']
>>> with fallbacks_quiet():  # nor "Unsupported query option." for T-SQL's FOR XML
...     sqlglot.parse_one("SELECT a FROM t FOR XML PATH('')", read="tsql").sql()
'SELECT a FROM t'
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

_SQLGLOT_LOG = logging.getLogger("sqlglot")
_QUIET = threading.local()


def _drop_fallback_notice(record: logging.LogRecord) -> bool:
    """The logger's filter: False (drop) for sqlglot's notices inside
    :func:`fallbacks_quiet` in this thread (STEF's own parses and renderings); True for
    everything else."""
    return not getattr(_QUIET, "on", False)


_SQLGLOT_LOG.addFilter(_drop_fallback_notice)


@contextlib.contextmanager
def fallbacks_quiet() -> Iterator[None]:
    """Drop sqlglot's notices in this thread while the block runs."""
    before = getattr(_QUIET, "on", False)
    _QUIET.on = True
    try:
        yield
    finally:
        _QUIET.on = before

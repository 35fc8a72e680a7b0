r"""sqlglot's "falling back to parsing as a Command" notice, dropped while STEF parses.

sqlglot logs that notice when it reads a statement it does not know (a T-SQL ``DECLARE``)
as a bare Command. STEF reports what it made of such SQL itself (a record's status, a
finding, a script scored on its final query), so while STEF parses, the notice is noise on
the user's stderr. A filter on sqlglot's logger drops it in the thread that parses, inside
:func:`fallbacks_quiet` only: every other message, and every parse that is not STEF's
(a user's own ``sqlglot.parse_one``), still logs.

>>> import sqlglot
>>> with fallbacks_quiet():  # no notice on stderr
...     [t.key for t in sqlglot.parse("DECLARE @n int = 5\nSELECT TOP 5 a FROM t", read="tsql")]
['command']
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

_SQLGLOT_LOG = logging.getLogger("sqlglot")
_QUIET = threading.local()


def _drop_fallback_notice(record: logging.LogRecord) -> bool:
    """The logger's filter: False (drop) for the fallback notice inside
    :func:`fallbacks_quiet` in this thread; True for everything else."""
    return not (getattr(_QUIET, "on", False) and "Falling back to parsing" in record.getMessage())


_SQLGLOT_LOG.addFilter(_drop_fallback_notice)


@contextlib.contextmanager
def fallbacks_quiet() -> Iterator[None]:
    """Drop sqlglot's fallback notice in this thread while the block runs."""
    before = getattr(_QUIET, "on", False)
    _QUIET.on = True
    try:
        yield
    finally:
        _QUIET.on = before

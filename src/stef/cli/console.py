"""The command line's stderr console, built on first use so that ``stef --help`` does not
import rich.

rich's ``Console(stderr=True)`` looks ``sys.stderr`` up on every write, so one shared
console follows a redirected or captured stderr just as a module-level one did.

>>> err_console() is err_console()
True
>>> err_console().stderr
True
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


@functools.cache
def err_console() -> Console:
    """The one rich console writing to stderr (progress bars, summaries, notes)."""
    from rich.console import Console

    return Console(stderr=True)

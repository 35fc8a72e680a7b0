"""STEF: Schema-agnostic Text-to-SQL Evaluation Framework.

Score a text-to-SQL agent's SQL against the user's question without gold SQL, schema or
execution::

    >>> import stef
    >>> e = stef.evaluate(question="How many users?", sql="SELECT COUNT(*) FROM users")
    >>> e["status"], e["score"] is not None
    ('ok', True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stef._version import __version__

if TYPE_CHECKING:
    from stef.evaluator import Evaluator, evaluate
    from stef.interop.sdk import capture

__all__ = ["Evaluator", "__version__", "capture", "evaluate"]


def __getattr__(name: str) -> Any:
    # lazy, so `import stef` stays cheap for the CLI's --help and --version
    if name in ("Evaluator", "evaluate"):
        from stef import evaluator

        return getattr(evaluator, name)
    if name == "capture":
        from stef.interop.sdk import capture

        return capture
    raise AttributeError(name)

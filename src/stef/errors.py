"""One error root for STEF, and the status kinds an evaluation can carry.

A record that cannot be evaluated still yields an evaluation; its ``status`` is one of
:data:`STATUSES` and its ``error`` the message of the :class:`StefError` raised.

>>> RecordError("invalid_record", "field 'sql' is required").status
'invalid_record'
"""

from __future__ import annotations

#: Every ``status`` an evaluation may carry.
STATUSES = (
    "ok",
    "invalid_json",
    "invalid_record",
    "empty_question",
    "empty_sql",
    "sql_unparseable",
    "sql_not_query",
    "sql_multiple_statements",
    "sql_unsupported",
    "sql_too_large",
    "sql_too_complex",
    "judge_failed",
    "judge_unavailable",
    "timeout",
    "internal_error",
)


class StefError(Exception):
    """Root of STEF's errors. ``status`` is the evaluation status it maps to."""

    status = "internal_error"

    def __init__(self, status: str | None = None, message: str = "") -> None:
        if status is not None:
            self.status = status
        super().__init__(message or self.status)

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.status


class RecordError(StefError):
    """The input record is not usable (bad JSON, missing or mistyped field, empty text)."""

    status = "invalid_record"


class SqlError(StefError):
    """The SQL cannot be turned into a spec (unparseable, not a query, several statements)."""

    status = "sql_unparseable"


class JudgeError(StefError):
    """The judge gave no valid verdict (bad output after retries, endpoint down)."""

    status = "judge_failed"


class RulesError(StefError):
    """The rules file is invalid; ``problems`` lists ``(json_path, message)`` pairs."""

    status = "invalid_rules"

    def __init__(self, problems: list[tuple[str, str]], source: str = "rules") -> None:
        self.problems = problems
        lines = "\n".join(f"  {path}: {msg}" for path, msg in problems)
        super().__init__("invalid_rules", f"{source} is invalid:\n{lines}")

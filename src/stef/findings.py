"""Typed diagnostics: what is missing, extra or wrong, with the evidence behind it.

>>> f = Finding("filter_missing", "error", "question asks for region = 'north'", nl="in the North")
>>> f.to_dict()["kind"]
'filter_missing'
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

#: Severities, from harmless to damning.
SEVERITIES = ("info", "warning", "error")


def by_constructor(obj: Any) -> tuple[Any, ...]:
    """``__reduce__`` of a frozen dataclass: pickle and copy it through its constructor, its
    fields in order. A frozen class compiled with mypyc refuses the field-by-field restore
    (docs/performance.md, session 17).

    >>> by_constructor(Finding("filter_missing", "error", "m"))[1]
    ('filter_missing', 'error', 'm', None, None, None)
    """
    return (type(obj), tuple(getattr(obj, f.name) for f in fields(obj)))


@dataclass(frozen=True)
class Finding:
    """One diagnostic.

    ``kind`` is a stable machine name (``filter_missing``, ``limit_mismatch`` …);
    ``severity`` is ``info`` (excused or neutral), ``warning`` (suspicious) or ``error``
    (contradicts the question); ``nl`` and ``sql`` quote the phrase and the SQL fragment
    that support it; ``rule`` names the normalisation rule or signal that produced or
    excused it.
    """

    kind: str
    severity: str
    message: str
    nl: str | None = None
    sql: str | None = None
    rule: str | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "nl": self.nl,
            "sql": self.sql,
            "rule": self.rule,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        return cls(
            kind=str(d["kind"]),
            severity=str(d["severity"]),
            message=str(d.get("message", "")),
            nl=d.get("nl"),
            sql=d.get("sql"),
            rule=d.get("rule"),
        )


class FindingCollector:
    """Where the alignment checks report their findings, in order.

    >>> out = FindingCollector()
    >>> out.add("filter_missing", "error", "m", nl="in the North", sql="")
    >>> [(f.kind, f.nl, f.sql) for f in out.findings]
    [('filter_missing', 'in the North', None)]
    """

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(
        self,
        kind: str,
        severity: str,
        message: str,
        nl: str | None = None,
        sql: str | None = None,
        rule: str | None = None,
    ) -> None:
        """Record a finding (empty evidence strings are stored as ``None``)."""
        self.findings.append(Finding(kind, severity, message, nl or None, sql or None, rule))

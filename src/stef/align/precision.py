"""The precision gate: a finding kind carries weight only where it has earned it.

STEF runs on traffic where most SQL is right, so a finding that fires on correct SQL is a
false alarm. Every finding kind has a measured lift on every corpus it was measured on —
P(incorrect | it fires) over the corpus's share of incorrect rows, where the incorrect
rows of a gold-only corpus are its planted errors (``stef selftest``'s mutants). A kind
whose lift is at most 1 on some corpus where it fires at least :data:`MIN_FIRES` times has
not earned its weight: it stays visible as ``info`` (rule ``precision``) and never lowers
the verdict. Kinds are measured apart with and without an enriched question (``+qe``),
since an agent's hints make a missing column or value far stronger evidence.

The packaged table (``stef/data/finding_precision.json``) is written by
``stef precision --write-gate``; :func:`gate_from_counts` is the rule it applies.

>>> counts = {"a": {"x": Fires(1, 9, 20, 80)}, "b": {"x": Fires(10, 10, 50, 50)}}
>>> gate = gate_from_counts(counts)
>>> sorted(gate.demoted), gate.demoted["x"]
(['x'], 'lift 0.50 on a (fires 10 times)')
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from stef.findings import Finding, by_constructor

#: A kind is judged on a corpus only where it fires at least this often.
MIN_FIRES = 5

#: The rule a demoted finding carries.
PRECISION_RULE = "precision"

#: Filter finding kinds that decide the filter points (see ``excused_filter_kinds``).
_FILTER_KINDS = (
    "filter_wrong_operator",
    "filter_wrong_column",
    "filter_wrong_value",
    "filter_extra",
)


@dataclass(frozen=True)
class Fires:
    """How often a kind fired on one corpus: on incorrect and correct rows, out of all."""

    on_incorrect: int
    on_correct: int
    incorrect: int
    correct: int

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)

    @property
    def fires(self) -> int:
        return self.on_incorrect + self.on_correct

    def lift(self) -> float | None:
        """P(incorrect | fires) / P(incorrect); None when it cannot be measured."""
        total = self.incorrect + self.correct
        if not self.fires or not total or not self.incorrect:
            return None
        return (self.on_incorrect / self.fires) / (self.incorrect / total)


@dataclass(frozen=True)
class PrecisionGate:
    """Finding keys (``kind`` or ``kind+qe``) demoted to info, each with the reason."""

    demoted: Mapping[str, str] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)

    def reason(self, kind: str, enriched: bool) -> str | None:
        """Why ``kind`` carries no weight in this context, or None when it does."""
        return self.demoted.get(f"{kind}+qe" if enriched else kind)

    def apply(self, findings: Iterable[Finding], enriched: bool) -> list[Finding]:
        """The findings with every demoted warning or error turned into ``info``.

        >>> g = PrecisionGate({"tables_unexplained": "lift 0.97 on x (fires 40 times)"})
        >>> [f] = g.apply([Finding("tables_unexplained", "warning", "m")], enriched=False)
        >>> f.severity, f.rule
        ('info', 'precision')
        """
        out = []
        for f in findings:
            if f.severity != "info" and self.reason(f.kind, enriched) is not None:
                # dataclasses.replace(f, severity=…, rule=…), without its field walk
                f = Finding(f.kind, "info", f.message, f.nl, f.sql, PRECISION_RULE)
            out.append(f)
        return out

    def excused_filter_kinds(self, enriched: bool) -> frozenset[str]:
        """The filter finding kinds that cost no filter points in this context, since the
        gate found them no evidence of an error: a wrong operator, column or value (the
        near miss still answers its filter), an extra filter (it counts as benign for the
        leniency boost). A finding without weight costs no points anywhere.

        >>> PrecisionGate({"filter_wrong_operator": "lift 0.98"}).excused_filter_kinds(False)
        frozenset({'filter_wrong_operator'})
        >>> sorted(PrecisionGate({"filter_extra": "lift 0.99"}).excused_filter_kinds(False))
        ['filter_extra']
        >>> PrecisionGate({"filter_extra": "lift 0.99"}).excused_filter_kinds(True)
        frozenset()
        """
        return frozenset(k for k in _FILTER_KINDS if self.reason(k, enriched) is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "stef-finding-precision/1",
            "min_fires": MIN_FIRES,
            "demoted": dict(sorted(self.demoted.items())),
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PrecisionGate:
        if d.get("format") != "stef-finding-precision/1":
            raise ValueError("not a STEF precision table (format stef-finding-precision/1)")
        return cls(dict(d.get("demoted") or {}), dict(d.get("meta") or {}))

    @classmethod
    def load(cls, path: str | Path) -> PrecisionGate:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")


def gate_from_counts(counts: Mapping[str, Mapping[str, Fires]]) -> PrecisionGate:
    """Demote every key whose lift is at most 1 on some corpus where it fires at least
    :data:`MIN_FIRES` times, or that fires that often on a corpus with no incorrect rows.

    ``counts`` maps corpus → finding key → :class:`Fires`.
    """
    demoted: dict[str, str] = {}
    for corpus in sorted(counts):
        for key, f in sorted(counts[corpus].items()):
            if f.fires < MIN_FIRES or key in demoted:
                continue
            lift = f.lift()
            if lift is None:
                demoted[key] = f"fires {f.fires} times on {corpus}, which has no incorrect rows"
            elif lift <= 1.0:
                demoted[key] = f"lift {lift:.2f} on {corpus} (fires {f.fires} times)"
    return PrecisionGate(demoted)


@lru_cache(maxsize=1)
def default_gate() -> PrecisionGate:
    """The table shipped with STEF, or an empty gate when none is packaged."""
    try:
        text = resources.files("stef").joinpath("data/finding_precision.json").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return PrecisionGate()
    return PrecisionGate.from_dict(json.loads(text))

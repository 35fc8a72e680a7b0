"""A fitted score → P(correct) map, stored as a small JSON file of breakpoints.

``stef calibrate`` fits it (isotonic regression) on labelled data; ``stef eval
--calibration FILE`` applies it to add ``p_correct`` to each evaluation. Applying it is
plain piecewise-linear interpolation between the breakpoints, clamped at both ends — no
pickle, no numpy, no scikit-learn.

>>> cal = Calibration(x=[20.0, 60.0, 90.0], y=[0.2, 0.5, 0.8])
>>> cal.p_correct(40), cal.p_correct(0), cal.p_correct(100), cal.p_correct(None)
(0.35, 0.2, 0.8, None)
>>> Calibration.from_dict(cal.to_dict()) == cal
True
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from stef.errors import StefError

#: The ``format`` tag every calibration file carries.
FORMAT = "stef-calibration"
#: The file layout version this module reads and writes.
VERSION = 1


class CalibrationError(StefError):
    """The calibration file is missing, not JSON, or not a valid calibration."""

    status = "invalid_calibration"


@dataclass(frozen=True)
class Calibration:
    """Monotone breakpoints ``(x[i], y[i])``: score ``x`` maps to P(correct) ``y``.

    ``threshold`` is the score threshold fitted on the same data (predict correct when
    ``score >= threshold``), when one was fitted; ``meta`` records where it came from.
    """

    x: list[float]
    y: list[float]
    method: str = "isotonic"
    threshold: float | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not self.x or len(self.x) != len(self.y):
            raise CalibrationError(
                message="calibration needs as many x as y breakpoints, at least one"
            )
        if any(b < a for a, b in zip(self.x, self.x[1:], strict=False)):
            raise CalibrationError(message="calibration x breakpoints must be non-decreasing")
        if any(not (0.0 <= v <= 1.0) or math.isnan(v) for v in self.y):
            raise CalibrationError(message="calibration y values must lie within [0, 1]")

    @overload
    def p_correct(self, score: float) -> float: ...
    @overload
    def p_correct(self, score: None) -> None: ...

    def p_correct(self, score: float | None) -> float | None:
        """P(correct) for ``score``; ``None`` when there is no score.

        >>> Calibration(x=[50.0, 50.0, 80.0], y=[0.1, 0.3, 0.9]).p_correct(50)
        0.3
        """
        if score is None:
            return None
        if math.isnan(score):
            raise ValueError("cannot calibrate a NaN score")
        xs, ys = self.x, self.y
        if score < xs[0]:
            return ys[0]
        if score >= xs[-1]:
            return ys[-1]
        i = bisect_right(xs, score)  # xs[i - 1] <= score < xs[i]
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return round(y0 + (y1 - y0) * (score - x0) / (x1 - x0), 12)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape written to disk."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "method": self.method,
            "x": list(self.x),
            "y": list(self.y),
            "threshold": self.threshold,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Any, source: str = "calibration") -> Calibration:
        """Validate and build from the JSON shape; raises :class:`CalibrationError`."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CalibrationError(message=f"{source} is not a STEF calibration file")
        if data.get("version") != VERSION:
            raise CalibrationError(
                message=f"{source}: unsupported calibration version {data.get('version')!r}"
            )
        try:
            x = [float(v) for v in data["x"]]
            y = [float(v) for v in data["y"]]
            threshold = data.get("threshold")
            return cls(
                x=x,
                y=y,
                method=str(data.get("method", "isotonic")),
                threshold=None if threshold is None else float(threshold),
                meta=dict(data.get("meta") or {}),
            )
        except CalibrationError as err:
            raise CalibrationError(message=f"{source}: {err.message}") from None
        except (KeyError, TypeError, ValueError) as err:
            raise CalibrationError(message=f"{source}: bad breakpoints ({err})") from None

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        """Read a calibration file written by ``stef calibrate``."""
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except OSError as err:
            raise CalibrationError(message=f"cannot read calibration {p}: {err}") from None
        except json.JSONDecodeError as err:
            raise CalibrationError(message=f"{p} is not JSON: {err}") from None
        return cls.from_dict(data, source=str(p))

    def save(self, path: str | Path) -> None:
        """Write the calibration as indented JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

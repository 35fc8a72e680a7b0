"""Where each finding's SQL fragment sits in the record's SQL, for the record page.

A finding quotes the fragment it is about (``sql``); it is looked up in the SQL text
case-insensitively, runs of whitespace matching any whitespace. The SQL is then cut into
segments, each carrying the numbers of the findings that cover it.

>>> segs = segments("SELECT a FROM t WHERE x = 1", ["x  = 1", "missing"])
>>> [(s.text, s.findings) for s in segs]
[('SELECT a FROM t WHERE ', ()), ('x = 1', (1,))]
>>> located("SELECT 1", ["missing"])
[None]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise


@dataclass(frozen=True)
class Segment:
    text: str
    findings: tuple[int, ...]  # 1-based numbers of the findings covering this text


def _pattern(fragment: str) -> re.Pattern[str] | None:
    words = fragment.split()
    if not words:
        return None
    return re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)


def located(sql: str, fragments: Sequence[str | None]) -> list[tuple[int, int] | None]:
    """(start, end) of each fragment's first occurrence in ``sql``, or ``None``."""
    out: list[tuple[int, int] | None] = []
    for fragment in fragments:
        pattern = _pattern(fragment) if fragment else None
        m = pattern.search(sql) if pattern else None
        out.append((m.start(), m.end()) if m else None)
    return out


def segments(sql: str, fragments: Sequence[str | None]) -> list[Segment]:
    """``sql`` cut where any located fragment starts or ends."""
    spans = located(sql, fragments)
    cuts = {0, len(sql)}
    for span in spans:
        if span:
            cuts.update(span)
    points = sorted(cuts)
    out = []
    for a, b in pairwise(points):
        covering = tuple(i + 1 for i, s in enumerate(spans) if s and s[0] <= a and b <= s[1])
        out.append(Segment(sql[a:b], covering))
    return out

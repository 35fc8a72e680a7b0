"""Tallies from figures grouped in SQL: the two shapes the store's row scan returns.

:func:`tally_of_arrays` reads one group's JSON arrays of counted columns (SQLite);
:func:`fold_cells` adds up rows grouped by every counted column (PostgreSQL).

>>> t = tally_of_arrays([2, '["ok","ok"]', '[80.0,80.0]', '["good","good"]', None, None,
...                      None, 1.5, 2], {})
>>> (t.records, dict(t.scores), dict(t.bands), t.confidence_n)
(2, {80.0: 2}, {'good': 2}, 2)
>>> rows = [("bot", "ok", 80.0, "good", None, None, '{"k":"info"}', 3, 2.4, 3)]
>>> t = fold_cells(rows, 1, 1, False)[(("bot",), None)]
>>> (t.records, dict(t.scores), dict(t.excused))
(3, {80.0: 3}, {'k': 3})
"""

from __future__ import annotations

from collections import Counter, _count_elements  # type: ignore[attr-defined]
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from stef.monitor.stats import GroupKey, Tally

#: Parsed finding-kind maps of a row (``{"kind": "severity"}`` JSON), memoised per query.
KindsCache = dict[str, list[tuple[str, bool]]]


def parsed_kinds(text: str, cache: KindsCache) -> list[tuple[str, bool]]:
    """``(kind, is_info)`` of a row's finding-kind JSON, parsed once per distinct text.

    >>> parsed_kinds('{"filter_missing": "error", "order_by_tolerated": "info"}', {})
    [('filter_missing', False), ('order_by_tolerated', True)]
    """
    parsed = cache.get(text)
    if parsed is None:
        parsed = cache[text] = [(k, v == "info") for k, v in orjson.loads(text).items()]
    return parsed


def _counts(values: Iterable[Any]) -> Counter[Any]:
    """``Counter(values)`` without its Python-level checks (thousands of small groups)."""
    out: Counter[Any] = Counter.__new__(Counter)
    _count_elements(out, values)
    return out


def tally_of_arrays(row: Sequence[Any], kinds_cache: KindsCache) -> Tally:
    """The tally of one group from :meth:`~stef.monitor.store.common.SQLReader._tallies_from_rows`'s
    aggregates:
    count, JSON arrays (statuses, scores, bands, filters, verdicts and finding kinds of its
    rows; the last five of evaluated rows only), confidence sum and count."""
    records, statuses, scores, bands, filters, verdicts, found, conf_sum, conf_n = row
    loads = orjson.loads

    def count(text: str | None) -> Counter[Any]:
        """Counts of a JSON array's values, without nulls and empty strings."""
        if not text:
            return Counter()
        out = _counts(loads(text))
        out.pop(None, None)
        out.pop("", None)
        return out

    score_counts = count(scores)
    if set(map(type, score_counts)) - _FLOAT:  # PostgreSQL writes 80.0 as 80
        score_counts = Counter({float(k): n for k, n in score_counts.items()})
    findings: Counter[str] = Counter()
    excused: Counter[str] = Counter()
    if found:
        for text, n in _counts(loads(found)).items():
            for kind, info in parsed_kinds(text, kinds_cache):
                (excused if info else findings)[kind] += n
    return Tally(
        records=int(records),
        statuses=count(statuses),
        scores=score_counts,
        bands=count(bands),
        filters=count(filters),
        verdicts=count(verdicts),
        confidence_sum=float(conf_sum or 0.0),
        confidence_n=int(conf_n or 0),
        findings=findings,
        excused=excused,
    )


_FLOAT = {float}


def fold_cells(
    rows: Iterable[Sequence[Any]], n: int, nby: int, windowed: bool
) -> dict[GroupKey, Tally]:
    """Tallies from rows of ``n`` group columns (the last the window start when
    ``windowed``, the first ``nby`` the group values), then status, score, band, filter,
    verdict, finding kinds, count, confidence sum and count."""
    sums: dict[GroupKey, list[Any]] = {}
    kinds_cache: KindsCache = {}
    for row in rows:
        key = (tuple(row[:nby]), float(row[n - 1]) if windowed else None)
        acc = sums.get(key)
        if acc is None:
            acc = sums[key] = [0, {}, {}, {}, {}, {}, {}, {}, 0.0, 0]
        status, score, band, filt, verdict, found, count, conf_sum, conf_n = row[n:]
        acc[0] += count
        acc[1][status] = acc[1].get(status, 0) + count
        if status == "ok":
            if score is not None:
                score = float(score)
                acc[2][score] = acc[2].get(score, 0) + count
            for i, value in ((3, band), (4, filt), (5, verdict)):
                if value:
                    acc[i][value] = acc[i].get(value, 0) + count
            acc[8] += conf_sum or 0.0
            acc[9] += conf_n or 0
        if found:
            for kind, info in parsed_kinds(found, kinds_cache):
                part = acc[7 if info else 6]
                part[kind] = part.get(kind, 0) + count
    return {
        key: Tally(
            records=a[0],
            statuses=Counter(a[1]),
            scores=Counter(a[2]),
            bands=Counter(a[3]),
            filters=Counter(a[4]),
            verdicts=Counter(a[5]),
            confidence_sum=float(a[8]),
            confidence_n=int(a[9]),
            findings=Counter(a[6]),
            excused=Counter(a[7]),
        )
        for key, a in sums.items()
    }

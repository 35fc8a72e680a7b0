"""What a question states that a planted error can contradict (the cues of ``stef selftest``).

The cues are read from the question and its enriched question with the NL lexicon's own
patterns (:mod:`stef.nl.lexicon`): superlatives and top-k, named aggregates, "different",
"per"/"each", comparatives, dates and years, and the words and numbers the text holds.
They decide *where* an error may be planted; they are deliberately read from the raw
patterns, not from the extractor's final spec, so a cue the extractor later drops still
yields a mutant (and a miss, if STEF cannot see it).

>>> c = read_cues("What are the top 3 cities with more than 10 stores in 2020?")
>>> sorted(c.limits), sorted(c.directions), c.comparisons, sorted(c.years)
([3], ['desc'], (('>', '10'),), [2020])
>>> read_cues("How many different products are sold per store?").group
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dateutil import parser as date_parser

from stef.nl import lexicon as lx
from stef.nl.values import comparative_op
from stef.nl.words import _parse_number
from stef.spec import normalize_number

_AGG_GROUPS = {
    "howmany": "count",
    "total_number": "count",
    "number": "count",
    "number_sign": "count",
    "count": "count",
    "sum": "sum",
    "avg": "avg",
    "max": "max",
    "min": "min",
}
_WORDS = re.compile(r"[a-z0-9]+")
#: A text date that a month name opens: "May 2010", "May 5, 2010".
_MONTH_FIRST = re.compile(r"^[a-z]+\.?,?\s+(?:of\s+)?\d{4}$", re.I)


@dataclass(frozen=True)
class Cues:
    """The cues of one question (with its enriched question)."""

    #: Case-folded question and enriched question, one text.
    low: str
    #: Sort directions that superlatives or ordering words state (``"desc"``/``"asc"``).
    directions: frozenset[str]
    #: Top-k counts stated ("top 5", "the three largest").
    limits: frozenset[int]
    #: Aggregates named (count, sum, avg, max, min).
    aggregates: frozenset[str]
    #: A different/unique/distinct cue.
    distinct: bool
    #: A per/each/grouped-by cue.
    group: bool
    #: Comparisons stated: (operator, canonical number).
    comparisons: tuple[tuple[str, str], ...]
    #: Years, year-months (``YYYY-MM``) and dates (``YYYY-MM-DD``) stated.
    years: frozenset[int]
    months: frozenset[str]
    dates: frozenset[str]
    #: Canonical numbers the text holds.
    numbers: frozenset[str]
    #: Words of the text (case-folded, a trailing plural "s" also dropped).
    words: frozenset[str]

    def states_value(self, value: str) -> bool:
        """Does the text state ``value`` (a normalised literal) as a whole phrase?

        >>> read_cues("Orders shipped to New York").states_value("new york")
        True
        >>> read_cues("Orders shipped to New Yorkshire").states_value("new york")
        False
        """
        v = value.strip("%").strip()
        if not v:
            return False
        if normalize_number(v) is not None:
            return normalize_number(v) in self.numbers
        return re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", self.low) is not None


def read_cues(question: str, enriched: str | None = None) -> Cues:
    """Read the cues of a question and its enriched question."""
    text = question if not enriched else f"{question}\n{enriched}"
    low = text.translate(lx.TRANSLATE).casefold()
    years, months, dates = _dates(low)
    directions = _directions(low)
    return Cues(
        low=low,
        directions=frozenset(directions),
        limits=frozenset(_limits(low)),
        aggregates=frozenset(_aggregates(low, directions)),
        distinct=_distinct(low),
        group=_group(low),
        comparisons=tuple(_comparisons(low)),
        years=frozenset(years),
        months=frozenset(months),
        dates=frozenset(dates),
        numbers=frozenset(_numbers(low)),
        words=frozenset(w for t in _WORDS.findall(low) for w in (t, t.removesuffix("s"))),
    )


def _number(text: str) -> str | None:
    """``"$1,000"`` → ``"1000"``; ``"five"`` → ``"5"``; ``"2 million"`` → ``"2000000"``;
    ``"10k"`` → ``"10000"`` (as the NL reader takes them)."""
    parsed = _parse_number(text)
    return parsed[0] if parsed else None


def _prev_word(low: str, pos: int) -> str:
    words = lx.PREV_WORD.findall(low[max(0, pos - 30) : pos])
    return words[-1] if words else ""


def _next_word(low: str, pos: int) -> str:
    words = lx.PREV_WORD.findall(low[pos : pos + 30])
    return words[0] if words else ""


def _directions(low: str) -> set[str]:
    out: set[str] = set()
    for m in lx.SUP_RE.finditer(low):
        word = " ".join(m.group("w").split())
        prev, nxt = _prev_word(low, m.start()), _next_word(low, m.end())
        if word in {"most", "least"} and (prev == "at" or nxt in {"of", "likely", "part"}):
            continue
        if word in {"first", "last"} and (prev != "the" or nxt in lx.NOT_RANKED):
            continue
        base = word.split()[0]
        if word.startswith("most recent"):
            out.add("desc")
        else:
            out.add(lx.SUPERLATIVES.get(base, "asc" if base == "first" else "desc"))
    for m in lx.TOPK_RE.finditer(low):
        if m.group("tb") == "bottom":
            out.add("asc")  # "the bottom 10 stores"
    for m in lx.DIRECTION.finditer(low):
        out.add("desc" if m.group("desc") else "asc")
    for m in lx.IN_ORDER_RE.finditer(low):
        phrase = m.group(0)
        out.add("desc" if re.search(r"desc|decreas|reverse", phrase) else "asc")
    return out


def _limits(low: str) -> set[int]:
    out: set[int] = set()
    for m in lx.TOPK_RE.finditer(low):
        g = next(k for k in ("a", "b", "c", "d") if m.group(k))
        if g == "c" and _prev_word(low, m.start()) not in lx.TOPK_LEADS:
            continue  # "room 111 most recently"
        n = _number(m.group(g))
        if n is not None and n.isdigit() and int(n) > 0:
            out.add(int(n))
    if lx.SUP_RE.search(low):
        for m in lx.WHICH_N_RE.finditer(low):
            n = _number(m.group("n"))
            if n is not None and n.isdigit() and 1 < int(n) <= 100:
                out.add(int(n))
    return out


def _aggregates(low: str, directions: set[str]) -> set[str]:
    out = {_AGG_GROUPS[m.lastgroup] for m in lx.AGG_RE.finditer(low) if m.lastgroup}
    # "the highest X" may be answered by MAX(X): the superlative names the aggregate.
    for m in lx.SUP_RE.finditer(low):
        direction = lx.SUPERLATIVES.get(m.group("w").split()[0])
        if direction is not None:
            out.add("max" if direction == "desc" else "min")
    return out


def _distinct(low: str) -> bool:
    for m in lx.DISTINCT_RE.finditer(low):
        if m.group(0)[0] not in "kts":
            return True
        if re.search(r"how\s+many\s+(?:different\s+)?$", low[max(0, m.start() - 20) : m.start()]):
            return True  # "how many kinds of"
    return False


def _group(low: str) -> bool:
    for m in lx.GROUP_RE.finditer(low):
        cue = " ".join(m.group("cue").split())
        prev = lx.PREV_WORD.findall(low[max(0, m.start() - 40) : m.start()])[-4:]
        p = prev[-1] if prev else ""
        if cue == "by" and (not any(w in lx.AGGREGATE_WORDS for w in prev) or p in lx.NOT_GROUP_BY):
            continue
        nxt = _next_word(low, m.start("rest"))
        if cue == "per" and (nxt in lx.RATE_UNITS or p.isdigit()):
            continue
        if nxt in {"other", "others", "one", "way", "time", "times"}:
            continue
        return True
    return False


def _comparisons(low: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in lx.CMP_RE.finditer(low):
        n = _number(m.group("n"))
        if n is not None:
            out.append((comparative_op(" ".join(m.group("cue").casefold().split())), n))
    for m in lx.POSTFIX_RE.finditer(low):
        n = _number(m.group("n"))
        if n is not None:
            out.append((">=" if m.group("ge") else "<=", n))
    return list(dict.fromkeys(out))


def _numbers(low: str) -> set[str]:
    out = {n for m in lx.BARE_NUMBER.finditer(low) if (n := normalize_number(m.group(0)))}
    out |= {str(lx.NUMBER_WORDS[w]) for w in _WORDS.findall(low) if w in lx.NUMBER_WORDS}
    return out


def _dates(low: str) -> tuple[set[int], set[str], set[str]]:
    """Years, year-months and full dates the text states."""
    years = {int(m.group(0)) for m in lx.YEAR_ALONE.finditer(low)}
    months: set[str] = set()
    dates: set[str] = set()
    for m in lx.DATE_RE.finditer(low):
        raw = m.group("d")
        try:
            when = date_parser.parse(raw, default=date_parser.parse("2000-01-01"))
        except (ValueError, OverflowError):
            continue
        years.add(when.year)
        months.add(f"{when.year:04d}-{when.month:02d}")
        if not _MONTH_FIRST.match(raw.strip()):
            dates.add(when.strftime("%Y-%m-%d"))
    return years, months, dates

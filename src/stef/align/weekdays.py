"""Days of the week asked for, against the day numbers a query keeps.

"Orders on weekends" answered by ``EXTRACT(DOW FROM created_at) IN (1, 2)`` keeps Monday and
Tuesday: PostgreSQL counts from Sunday = 0. Each dialect's numbering is
:mod:`stef.sql.weekdays`'s; a filter whose function or dialect has no known numbering, or
whose values are not numbers, says nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from stef.findings import FindingCollector
from stef.spec import Filter, Spec
from stef.sql.weekdays import DAY_NAMES, day_numbering, day_of


def _asked_days(words: Sequence[str]) -> set[int] | None:
    """The days (0 = Sunday) that weekday words ask for; None when one is no day.

    >>> sorted(_asked_days(["weekends", "mondays"])), _asked_days(["weekday", "week"])
    ([0, 1, 6], None)
    """
    days: set[int] = set()
    for w in words:
        w = w.removesuffix("s")
        if w == "weekend":
            days |= {0, 6}
        elif w == "weekday":
            days |= {1, 2, 3, 4, 5}
        elif w.capitalize() in DAY_NAMES:
            days.add(DAY_NAMES.index(w.capitalize()))
        else:
            return None
    return days


def _kept_days(f: Filter, numbering: tuple[int, int]) -> set[int] | None:
    """The days (0 = Sunday) a numeric filter on a day-of-week function keeps, else None."""
    try:
        numbers = [int(float(v)) for v in f.values]
    except ValueError:
        return None
    every = range(numbering[0], numbering[0] + 7)
    if f.op in ("in", "=") and numbers:
        kept = set(numbers)
    elif f.op in ("not in", "!=") and numbers:
        kept = set(every) - set(numbers)
    elif f.op == "between" and len(numbers) == 2:
        kept = set(range(numbers[0], numbers[1] + 1))
    elif f.op in (">", ">=", "<", "<=") and len(numbers) == 1:
        n, op = numbers[0], f.op
        kept = {d for d in every if (d > n if op == ">" else d >= n if op == ">=" else
                                     d < n if op == "<" else d <= n)}
    else:
        return None
    return {day_of(n, numbering) for n in kept if n in every}


def check_day_numbers(sql: Spec, out: FindingCollector, words: Sequence[str]) -> None:
    """The question asks for weekends (weekdays, Mondays) and the SQL keeps other days by a
    day-of-week number under its dialect's numbering (``EXTRACT(DOW …) IN (1, 2)`` is Monday
    and Tuesday in PostgreSQL): ``filter_wrong_value``.

    >>> out = FindingCollector()
    >>> dow = Filter("created_at", "in", ("1", "7"), "EXTRACT(DOW FROM created_at) IN (1, 7)",
    ...              func="dow")
    >>> check_day_numbers(Spec(filters=[dow], flags={"dialect": "postgres"}), out, ["weekends"])
    >>> print(out.findings[0].message)
    the question asks for weekends; counting from 0 = Sunday, the SQL keeps Monday
    """
    asked = _asked_days(words)
    if not asked:
        return
    for f in sql.filters:
        if f.clause not in ("where", "having", "qualify"):
            continue  # a CASE's condition labels rows, keeps none
        numbering = day_numbering(f.func, sql.flags.get("dialect"))
        kept = _kept_days(f, numbering) if numbering is not None else None
        if numbering is None or kept is None or kept == asked:
            continue
        first = f"{numbering[0]} = {DAY_NAMES[numbering[1]]}"
        shown = ", ".join(DAY_NAMES[d] for d in sorted(kept, key=lambda d: (d - 1) % 7))
        out.add(
            "filter_wrong_value",
            "error",
            f"the question asks for {', '.join(words)}; counting from {first}, the SQL keeps"
            f" {shown or 'no day'}",
            ", ".join(words),
            f.text or f"{f.column} {f.op} {', '.join(f.values)}",
            "filter_alignment",
        )
        return

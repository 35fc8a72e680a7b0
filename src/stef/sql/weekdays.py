"""How each dialect numbers the days of the week, for a filter on a day-of-week function.

``EXTRACT(DOW FROM d)`` counts from Sunday = 0 (PostgreSQL, DuckDB), MySQL's
``DAYOFWEEK(d)``, BigQuery's ``EXTRACT(DAYOFWEEK …)`` and T-SQL's ``DATEPART(weekday, d)``
(under the default ``DATEFIRST 7``) from Sunday = 1, MySQL's ``WEEKDAY(d)`` from Monday = 0,
``ISODOW`` and Snowflake's ``DAYOFWEEKISO`` from Monday = 1, SQLite's ``strftime('%w', d)``
and Snowflake's ``DAYOFWEEK`` (default ``WEEK_START``) from Sunday = 0. The function names
are those of the SQL spec's filters (``Filter.func``).

>>> weekend_numbers("dow", "postgres"), weekend_numbers("dayofweek", "tsql")
(frozenset({0, 6}), frozenset({1, 7}))
>>> weekend_numbers("dayofweek", "oracle") is None
True
"""

from __future__ import annotations

#: (first number, the day it stands for: 0 = Sunday, 1 = Monday) per function name.
_FIXED = {
    "dow": (0, 0),
    "isodow": (1, 1),
    "dayofweek_iso": (1, 1),
    "day_of_week": (1, 0),  # MySQL DAYOFWEEK
    "weekday": (0, 1),  # MySQL WEEKDAY
}
#: ``dayofweek`` depends on the dialect that wrote it.
_DAYOFWEEK = {
    "sqlite": (0, 0),
    "snowflake": (0, 0),
    "duckdb": (0, 0),
    "tsql": (1, 0),
    "bigquery": (1, 0),
    "mysql": (1, 0),
}
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def day_numbering(func: str | None, dialect: str | None) -> tuple[int, int] | None:
    """(the first number, the day it stands for, 0 = Sunday) of a day-of-week function in a
    dialect, else None.

    >>> day_numbering("weekday", "mysql"), day_numbering("dayofweek", "bigquery")
    ((0, 1), (1, 0))
    """
    if func in _FIXED:
        return _FIXED[func]
    if func == "dayofweek":
        return _DAYOFWEEK.get((dialect or "").casefold())
    return None


def day_of(number: int, numbering: tuple[int, int]) -> int:
    """The day (0 = Sunday) a number stands for.

    >>> DAY_NAMES[day_of(7, (1, 1))], DAY_NAMES[day_of(0, (0, 1))]
    ('Sunday', 'Monday')
    """
    first, day = numbering
    return (number - first + day) % 7


def weekend_numbers(func: str | None, dialect: str | None) -> frozenset[int] | None:
    """The numbers of Saturday and Sunday under a function's numbering, else None."""
    numbering = day_numbering(func, dialect)
    if numbering is None:
        return None
    first = numbering[0]
    return frozenset(n for n in range(first, first + 7) if day_of(n, numbering) in (0, 6))

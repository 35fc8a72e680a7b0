"""The percentiles a query computes, read from the sqlglot tree: ``PERCENTILE_CONT(0.95)
WITHIN GROUP (ORDER BY x)``, BigQuery's ``PERCENTILE_CONT(x, 0.95) OVER ()`` and
``APPROX_QUANTILES(x, 100)[OFFSET(95)]``, Snowflake's ``APPROX_PERCENTILE(x, 0.95)``,
ClickHouse's ``quantile(0.95)(x)`` and ``MEDIAN(x)``, each as a fraction.

>>> import sqlglot
>>> q = "SELECT PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY ms), MEDIAN(ms) FROM t"
>>> percentile_fractions(sqlglot.parse_one(q, read="snowflake"))
[0.5, 0.95]
"""

from __future__ import annotations

from sqlglot import exp

#: Function kinds of the walk (lower-case class names) that compute a percentile.
QUANTILE_FUNCTIONS = frozenset(
    {"percentilecont", "percentiledisc", "approxquantile", "quantile", "approxquantiles", "median"}
)
_TAKES_FRACTION = (exp.PercentileCont, exp.PercentileDisc)
_NAMES_QUANTILE = (exp.ApproxQuantile, exp.Quantile)


def _fraction(node: exp.Expr | None) -> float | None:
    """A literal fraction between 0 and 1, else None."""
    if not isinstance(node, exp.Literal) or node.is_string:
        return None
    try:
        value = float(node.this)
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None


def _offset(node: exp.ApproxQuantiles) -> float | None:
    """``APPROX_QUANTILES(x, 100)[OFFSET(95)]`` as 0.95, else None."""
    up = node.parent
    if not isinstance(up, exp.Bracket) or up.this is not node or len(up.expressions) != 1:
        return None
    parts, pick = node.expression, up.expressions[0]
    if not isinstance(parts, exp.Literal) or not isinstance(pick, exp.Literal):
        return None
    try:
        n, k = int(str(parts.this)), int(str(pick.this))
    except ValueError:
        return None
    return round(k / n, 6) if n > 0 and 0 <= k <= n else None


def percentile_fractions(tree: exp.Expr, functions: set[str] | None = None) -> list[float]:
    """The distinct fractions of the percentiles ``tree`` computes, ascending; a percentile
    whose fraction is not a literal is left out. ``functions``, the function kinds the
    walk found, says at once when there is none.

    >>> import sqlglot
    >>> q = "SELECT APPROX_QUANTILES(x, 100)[OFFSET(99)], PERCENTILE_CONT(x, 0.9) OVER () FROM t"
    >>> percentile_fractions(sqlglot.parse_one(q, read="bigquery"))
    [0.9, 0.99]
    """
    if functions is not None and not QUANTILE_FUNCTIONS & functions:
        return []
    found: set[float] = set()
    for node in tree.find_all(*_TAKES_FRACTION, *_NAMES_QUANTILE, exp.ApproxQuantiles, exp.Median):
        value: float | None
        if isinstance(node, exp.Median):
            value = 0.5
        elif isinstance(node, _TAKES_FRACTION):
            value = _fraction(node.expression) if node.expression is not None else None
            value = _fraction(node.this) if value is None else value
        elif isinstance(node, _NAMES_QUANTILE):
            value = _fraction(node.args.get("quantile"))
        elif isinstance(node, exp.ApproxQuantiles):
            value = _offset(node)
        else:
            value = None
        if value is not None:
            found.add(value)
    return sorted(found)

"""Alert rules over the stored evaluations, fired once per breach, with a recovery.

A rules file is JSON::

    {"window": "1h", "min_records": 20,
     "rules": [
       {"name": "mean low", "metric": "mean", "below": 70},
       {"name": "p90 low", "metric": "p90", "below": 50, "window": "6h"},
       {"name": "coverage", "metric": "coverage", "below": 0.95},
       {"name": "mean drop", "metric": "mean", "drop": 5, "baseline": "24h", "alpha": 0.05},
       {"name": "filters missing", "metric": "finding_share", "kind": "filter_missing",
        "above": 0.2, "where": {"agent": "sql-bot"}}]}

Each rule looks at the last ``window`` of record time, ending at the latest stored record
its ``where`` selects (so replayed logs behave like live ones). ``drop`` compares that
window's mean with the ``baseline`` window just before it and breaches only when the
drop exceeds the threshold *and* the bootstrap interval of the difference (at
``alpha``) lies below zero. A rule with fewer than ``min_records`` records in its window
keeps its previous state. States live in the store, so a restart does not re-alert.

>>> config = AlertConfig.model_validate({"rules": [{"name": "m", "metric": "mean", "below": 70}]})
>>> config.rules[0].window
'1h'
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stef.errors import StefError
from stef.monitor.compare import mean_difference
from stef.monitor.stats import Tally, figures, iso, parse_duration
from stef.monitor.store import Selection, Store

Metric = Literal["mean", "median", "p10", "p90", "coverage", "finding_share"]


class AlertConfigError(StefError):
    """The alert rules file is invalid."""

    status = "invalid_alerts"


def _duration(value: str) -> str:
    parse_duration(value)
    return value


class AlertRule(BaseModel):
    """One rule: a figure over a window, compared with a level or with the window before."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    metric: Metric
    below: float | None = None
    above: float | None = None
    drop: float | None = Field(default=None, gt=0)
    baseline: str = "24h"
    alpha: float = Field(default=0.05, gt=0, lt=1)
    kind: str | None = None
    window: str = "1h"
    min_records: int | None = Field(default=None, ge=1)
    where: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> AlertRule:
        levels = [k for k in ("below", "above", "drop") if getattr(self, k) is not None]
        if len(levels) != 1:
            raise ValueError("give exactly one of below, above, drop")
        if self.drop is not None and self.metric != "mean":
            raise ValueError("drop is only defined for metric mean")
        if (self.metric == "finding_share") != (self.kind is not None):
            raise ValueError("kind is required with metric finding_share, and only there")
        _duration(self.window)
        _duration(self.baseline)
        Selection.from_mapping(self.where)
        return self

    def describe(self) -> str:
        what = f"share of {self.kind}" if self.kind else self.metric
        if self.drop is not None:
            return f"{what} drops by more than {self.drop:g} vs the previous {self.baseline}"
        level = f"below {self.below:g}" if self.below is not None else f"above {self.above:g}"
        return f"{what} {level}"


class AlertConfig(BaseModel):
    """The rules file: defaults for ``window`` and ``min_records``, and the rules."""

    model_config = ConfigDict(extra="forbid")

    window: str | None = None
    min_records: int = Field(default=20, ge=1)
    rules: list[AlertRule]

    @model_validator(mode="after")
    def _defaults(self) -> AlertConfig:
        names = [r.name for r in self.rules]
        if len(set(names)) != len(names):
            raise ValueError("rule names must be unique")
        for rule in self.rules:
            if self.window and "window" not in rule.model_fields_set:
                rule.window = _duration(self.window)
        return self

    @classmethod
    def load(cls, path: str | Path) -> AlertConfig:
        """Read and validate a rules file; errors name the bad key."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise AlertConfigError(message=f"cannot read {path}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise AlertConfigError(message=f"{path} is not valid JSON: {exc}") from exc
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "\n".join(
                f"  {'.'.join(str(p) for p in e['loc']) or '$'}: {e['msg']}" for e in exc.errors()
            )
            raise AlertConfigError(message=f"{path} is invalid:\n{problems}") from None


def _value(rule: AlertRule, tally: Tally) -> float | None:
    f = figures(tally)
    if rule.metric == "finding_share":
        assert rule.kind is not None
        return round(tally.findings.get(rule.kind, 0) / tally.records, 4) if tally.records else None
    value: float | None = getattr(f, rule.metric)
    return value


def _tally(store: Store, sel: Selection) -> Tally:
    out = Tally()
    for t in store.tallies(sel).values():
        out.merge(t)
    return out


def evaluate_rule(store: Store, rule: AlertRule, min_records: int) -> dict[str, Any] | None:
    """The rule's figures now: ``breached`` (``None`` when there is too little data)."""
    where = Selection.from_mapping(rule.where, now=time.time())
    end = store.latest_time(where)
    if end is None:
        return None
    width = parse_duration(rule.window)
    start = end - width
    current = _tally(store, where.narrowed(since=start))
    needed = rule.min_records or min_records
    info: dict[str, Any] = {
        "rule": rule.name,
        "condition": rule.describe(),
        "metric": rule.metric,
        "window": rule.window,
        "window_start": iso(start),
        "window_end": iso(end),
        "records": current.records,
        "where": where.describe(),
        "value": _value(rule, current),
    }
    if rule.kind:
        info["kind"] = rule.kind
    if current.records < needed or info["value"] is None:
        info["breached"] = None
        return info
    if rule.drop is None:
        threshold = rule.below if rule.below is not None else rule.above
        info["threshold"] = threshold
        assert threshold is not None
        info["breached"] = (
            info["value"] < threshold if rule.below is not None else info["value"] > threshold
        )
        return info
    base_start = start - parse_duration(rule.baseline)
    baseline = _tally(store, where.narrowed(since=base_start, until=start))
    info["threshold"] = rule.drop
    info["baseline_records"] = baseline.records
    if baseline.evaluated < needed or current.evaluated == 0:
        info["breached"] = None
        return info
    est, _ = mean_difference(baseline, current, alpha=rule.alpha, n_boot=2000, seed=0)
    assert est.value is not None and est.high is not None and est.low is not None
    info["baseline_value"] = figures(baseline).mean
    info["diff"] = round(est.value, 2)
    info["ci"] = [round(est.low, 2), round(est.high, 2)]
    info["breached"] = -est.value > rule.drop and est.high < 0
    return info


def format_event(event: dict[str, Any]) -> str:
    """One line for the terminal.

    >>> format_event({"event": "alert", "rule": "m", "condition": "mean below 70",
    ...               "value": 41.2, "records": 50, "window": "1h", "where": "all"})
    'ALERT m: mean below 70 — mean is 41.2 over the last 1h (50 records, all)'
    """
    head = "ALERT" if event["event"] == "alert" else "RECOVERED"
    metric = f"share of {event['kind']}" if event.get("kind") else event.get("metric", "mean")
    value = f"{metric} is {event['value']}"
    if event.get("diff") is not None:
        value += f" ({event['diff']:+} vs {event.get('baseline_value')} before)"
    return (
        f"{head} {event['rule']}: {event['condition']} — {value} over the last "
        f"{event['window']} ({event['records']} records, {event['where']})"
    )


#: Payload shapes a webhook can receive: STEF's event JSON, Slack's and Microsoft Teams'
#: incoming-webhook formats.
WEBHOOK_FORMATS = ("json", "slack", "teams")


def webhook_payload(event: dict[str, Any], fmt: str = "json") -> dict[str, Any]:
    """The body POSTed for ``event`` in format ``fmt``.

    >>> e = {"event": "alert", "rule": "m", "condition": "mean below 70", "value": 41.2,
    ...      "records": 50, "window": "1h", "where": "all"}
    >>> webhook_payload(e, "slack")
    {'text': 'ALERT m: mean below 70 — mean is 41.2 over the last 1h (50 records, all)'}
    >>> webhook_payload(e, "teams")["@type"], webhook_payload(e, "teams")["themeColor"]
    ('MessageCard', 'D7263D')
    """
    if fmt == "slack":
        return {"text": format_event(event)}
    if fmt == "teams":
        return {
            "@type": "MessageCard",
            "@context": "https://schema.org/extensions",
            "summary": f"STEF {event['event']} {event['rule']}",
            "themeColor": "D7263D" if event["event"] == "alert" else "2EB67D",
            "title": f"STEF {event['event']}: {event['rule']}",
            "text": format_event(event),
        }
    return event


def check_webhook_url(url: str) -> str:
    """The URL if it can be POSTed to (http or https with a host); else ``ValueError``.

    >>> check_webhook_url("not a url")
    Traceback (most recent call last):
    ...
    ValueError: webhook URL 'not a url' is not an http(s) URL with a host
    """
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"webhook URL {url!r} is not an http(s) URL with a host")
    return url


class WebhookSink:
    """POSTs each event (in ``fmt``: json, slack or teams); a failing endpoint is reported,
    never fatal. Only a 2xx answer counts as delivered (a redirect is not followed: it is
    a failure), and an undelivered event makes :class:`AlertMonitor` send it again at the
    next check."""

    def __init__(
        self, url: str, timeout: float = 5.0, attempts: int = 3, fmt: str = "json"
    ) -> None:
        if fmt not in WEBHOOK_FORMATS:
            raise ValueError(f"webhook format {fmt!r}; use one of {', '.join(WEBHOOK_FORMATS)}")
        self.url, self.timeout, self.attempts = check_webhook_url(url), timeout, attempts
        self.fmt = fmt

    def __call__(self, event: dict[str, Any]) -> bool:
        import httpx

        from stef.llm.client import safe_url

        error = ""
        body = webhook_payload(event, self.fmt)
        for attempt in range(self.attempts):
            try:
                response = httpx.post(
                    self.url, json=body, timeout=self.timeout, follow_redirects=False
                )
                if response.is_success:
                    return True
                error = f"HTTP {response.status_code}"
                if response.is_redirect:
                    error += f" (a redirect to {safe_url(response.headers.get('location', ''))}"
                    error += "; give the final URL)"
            except httpx.HTTPError as exc:
                error = str(exc) or type(exc).__name__
            time.sleep(0.2 * (attempt + 1))
        print(
            f"warning: alert webhook {safe_url(self.url)} failed: {error}; "
            "the event is sent again at the next check",
            file=sys.stderr,
        )
        return False


class AlertMonitor:
    """Checks every rule against the store and emits alert/recovery events on changes."""

    def __init__(
        self,
        store: Store,
        config: AlertConfig,
        sinks: Sequence[Callable[[dict[str, Any]], None]] = (),
    ) -> None:
        self.store, self.config, self.sinks = store, config, list(sinks)

    def check(self) -> list[dict[str, Any]]:
        """Evaluate every rule; emit and return the events (breach starts and ends)."""
        states = self.store.alert_states()
        events: list[dict[str, Any]] = []
        for rule in self.config.rules:
            info = evaluate_rule(self.store, rule, self.config.min_records)
            if info is None or info["breached"] is None:
                continue
            was = bool(states.get(rule.name, {}).get("breached", False))
            now = bool(info["breached"])
            if now != was:
                event = {"event": "alert" if now else "recovery", **info, "at": iso(time.time())}
                events.append(event)
                delivered = [sink(event) for sink in self.sinks]
                if all(d is not False for d in delivered):  # else: again at the next check
                    state = {"breached": now, "value": info["value"]}
                    self.store.save_alert_state(rule.name, state)
        return events

"""Prometheus metrics of the service (prometheus-client), per app so that a token
limited to some apps scrapes only their series.

>>> m = Metrics()
>>> m.observe_evaluation({"status": "ok", "score": 80.0, "band": "good", "agent": "a",
...     "agent_version": "1", "app": "shop", "provenance": {"latency_ms": 2.0}})
>>> text = m.exposition(frozenset({"shop"})).decode()
>>> 'agent_version="1",app="shop",band="good",status="ok"} 1.0' in text
True
>>> 'app="shop"' in m.exposition(frozenset({"books"})).decode()
False
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

#: Content type of the Prometheus text format.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_MAX_LABEL = 100
_SCORE_BUCKETS = (10, 20, 30, 40, 50, 60, 70, 75, 80, 90, 100)
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


def _label(value: Any) -> str:
    return "" if value is None else str(value)[:_MAX_LABEL]


class Metrics:
    """The service's metrics in their own registry (one per app instance)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.evaluations = Counter(
            "stef_evaluations",
            "Evaluations made by the service, by agent, version, app, status and band.",
            ["agent", "agent_version", "app", "status", "band"],
            registry=r,
        )
        self.score = Histogram(
            "stef_score",
            "Scores of evaluated records.",
            ["agent", "agent_version", "app"],
            buckets=_SCORE_BUCKETS,
            registry=r,
        )
        self.latency = Histogram(
            "stef_evaluation_seconds",
            "Time to evaluate one record (the evaluator's own latency).",
            ["app"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.judge_tokens = Counter(
            "stef_judge_tokens",
            "Tokens spent by LLM judges and extractors, by kind (prompt, completion).",
            ["app", "kind"],
            registry=r,
        )
        self.judge_failures = Counter(
            "stef_judge_failures",
            "Records whose judge failed (status judge_failed or an LLM error).",
            ["app", "status"],
            registry=r,
        )
        self.store_write = Histogram(
            "stef_store_write_seconds",
            "Time of one store write (one request's evaluations).",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.http = Histogram(
            "stef_http_request_seconds",
            "Time the server spent on a request, by route template, method and status.",
            ["route", "method", "status"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.ingested = Counter(
            "stef_ingested_evaluations",
            "Evaluations received on /v1/ingest, by app.",
            ["app"],
            registry=r,
        )

    def observe_evaluation(self, ev: Mapping[str, Any]) -> None:
        """Count one evaluation the service made."""
        app = _label(ev.get("app"))
        status = _label(ev.get("status"))
        self.evaluations.labels(
            _label(ev.get("agent")),
            _label(ev.get("agent_version")),
            app,
            status,
            _label(ev.get("band")),
        ).inc()
        score = ev.get("score")
        if status == "ok" and isinstance(score, (int, float)):
            self.score.labels(
                _label(ev.get("agent")), _label(ev.get("agent_version")), app
            ).observe(float(score))
        prov = ev.get("provenance") or {}
        latency = prov.get("latency_ms")
        if isinstance(latency, (int, float)):
            self.latency.labels(app).observe(float(latency) / 1000)
        for usage in (prov.get("usage") or {}, prov.get("nl_extractor_usage") or {}):
            for kind in ("prompt_tokens", "completion_tokens"):
                n = usage.get(kind)
                if isinstance(n, (int, float)) and n > 0:
                    self.judge_tokens.labels(app, kind.removesuffix("_tokens")).inc(n)
        if status == "judge_failed" or status.startswith("llm_"):
            self.judge_failures.labels(app, status).inc()

    def exposition(self, apps: frozenset[str] | None = None) -> bytes:
        """The text format; with ``apps``, only series of those apps (and series that
        carry no app, such as the store's write latency)."""
        if apps is None:
            return generate_latest(self.registry)
        return generate_latest(_Scoped(self.registry, apps))


class InteropCollector:
    """``/v1/traces`` and ``--export`` counts, read from their owners at each scrape.

    ``receiver`` is a function returning :meth:`TracesReceiver.stats` (or ``None``);
    ``deliveries`` the service's :class:`~stef.interop.delivery.Delivery` objects. These
    series carry no app: a token limited to some apps sees the totals (counts, never a
    question or SQL).
    """

    def __init__(
        self, receiver: Callable[[], Mapping[str, Any]] | None, deliveries: Sequence[Any]
    ) -> None:
        self.receiver = receiver
        self.deliveries = deliveries

    def collect(self) -> Iterator[Metric]:
        if self.receiver is not None:
            st = self.receiver()
            yield CounterMetricFamily(
                "stef_traces_spans", "Spans received on /v1/traces.", st["spans"]
            )
            yield CounterMetricFamily(
                "stef_traces_records",
                "Text-to-SQL calls from /v1/traces handed to evaluation.",
                st["records"],
            )
            rejected = CounterMetricFamily(
                "stef_traces_rejected",
                "Text-to-SQL call spans refused on /v1/traces, by reason "
                "(app_forbidden, app_missing).",
                labels=["reason"],
            )
            reasons = {"app_forbidden": 0, "app_missing": 0, **st["rejected"]}
            for reason, n in sorted(reasons.items()):
                rejected.add_metric([reason], n)
            yield rejected
            yield CounterMetricFamily(
                "stef_traces_lost",
                "Calls of incomplete traces that could not be evaluated (a failed store).",
                st["lost"],
            )
            yield GaugeMetricFamily("stef_traces_held", "Traces held, waiting.", st["held"])
        if not self.deliveries:
            return
        out = CounterMetricFamily(
            "stef_export_evaluations",
            "Evaluations of --export, by target and outcome (sent, failed, dropped: queue "
            "full, skipped: no trace/span id).",
            labels=["target", "outcome"],
        )
        retries = CounterMetricFamily(
            "stef_export_retries", "Retried export requests.", labels=["target"]
        )
        pending = GaugeMetricFamily(
            "stef_export_pending", "Evaluations queued for export.", labels=["target"]
        )
        for d in self.deliveries:
            st, name = d.stats(), d.sink.name
            for outcome in ("sent", "failed", "dropped", "skipped"):
                out.add_metric([name, outcome], st[outcome])
            retries.add_metric([name], st["retries"])
            pending.add_metric([name], st["pending"])
        yield from (out, retries, pending)


class _Scoped:
    """A registry view that drops samples of apps outside ``apps``."""

    def __init__(self, registry: CollectorRegistry, apps: frozenset[str]) -> None:
        self.registry = registry
        self.apps = apps

    def collect(self) -> Iterator[Metric]:
        for metric in self.registry.collect():
            kept = [
                s for s in metric.samples if "app" not in s.labels or s.labels["app"] in self.apps
            ]
            out = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            out.samples = kept
            yield out

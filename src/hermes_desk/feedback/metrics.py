"""Prometheus counters for suggestions, on the registry the service exposes on ``/metrics``.

``hermes_suggestion_events_total{tenant,intent,kind}``: kinds ``shown``, ``inserted``,
``copied``, ``edited``, ``useful`` and ``not_useful`` (a rating). A counter moves the first time
a suggestion gets an event of its kind; a rating the agent changes afterwards shows in the API's
report (``GET /v1/metrics/suggestions``), which holds the current values, not here.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

__all__ = ["SuggestionMetrics"]


class SuggestionMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self._events = Counter(
            "hermes_suggestion_events",
            "Suggested replies shown, and what agents did with them (first time per suggestion).",
            ["tenant", "intent", "kind"],
            registry=self.registry,
        )

    def observe(self, tenant: str, intent: str, kind: str) -> None:
        self._events.labels(tenant, intent, kind).inc()

    def count(self, tenant: str, intent: str, kind: str) -> float:
        """The current value of one counter (for tests)."""
        value = self.registry.get_sample_value(
            "hermes_suggestion_events_total", {"tenant": tenant, "intent": intent, "kind": kind}
        )
        return float(value or 0.0)

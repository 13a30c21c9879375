"""Prometheus metrics for tool calls, on a registry owned by the instance (no global state).

``hermes_tool_calls_total{tool,status}``, ``hermes_tool_call_duration_seconds{tool}`` (a
histogram), ``hermes_tool_breaker_transitions_total{tool,state}`` and
``hermes_tool_breaker_state{tool}`` (0 closed, 1 open, 2 probing, as this worker last saw it).
The service exposes :attr:`ToolMetrics.registry` on ``/metrics``.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["BREAKER_STATE_VALUES", "ToolMetrics"]

BREAKER_STATE_VALUES = {"closed": 0.0, "open": 1.0, "probing": 2.0}

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 3, 5, 10)


class ToolMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self._calls = Counter(
            "hermes_tool_calls",
            "Tool calls by final status.",
            ["tool", "status"],
            registry=self.registry,
        )
        self._latency = Histogram(
            "hermes_tool_call_duration_seconds",
            "Tool call latency, executor included.",
            ["tool"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self._transitions = Counter(
            "hermes_tool_breaker_transitions",
            "Circuit breaker state changes seen by this worker.",
            ["tool", "state"],
            registry=self.registry,
        )
        self._state = Gauge(
            "hermes_tool_breaker_state",
            "Circuit breaker state (0 closed, 1 open, 2 probing).",
            ["tool"],
            registry=self.registry,
        )
        # Label lookups cost more than the increments; cache the children.
        self._children: dict[tuple[str, str], tuple[Any, Any]] = {}

    def observe(self, tool: str, status: str, latency_s: float) -> None:
        key = (tool, status)
        children = self._children.get(key)
        if children is None:
            children = (self._calls.labels(tool, status), self._latency.labels(tool))
            self._children[key] = children
        children[0].inc()
        children[1].observe(latency_s)

    def breaker_changed(self, tool: str, state: str) -> None:
        self._transitions.labels(tool, state).inc()
        self._state.labels(tool).set(BREAKER_STATE_VALUES.get(state, -1.0))

    def count(self, tool: str, status: str) -> float:
        """The current value of a call counter (for tests and the console)."""
        value = self.registry.get_sample_value(
            "hermes_tool_calls_total", {"tool": tool, "status": status}
        )
        return float(value or 0.0)

    def render(self) -> bytes:
        """The text exposition format."""
        return bytes(generate_latest(self.registry))

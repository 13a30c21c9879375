"""Benchmarks: one module per area, each a function that returns a dict of figures."""

__all__: list[str] = []

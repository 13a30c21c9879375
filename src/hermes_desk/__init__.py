"""Hermes Desk: an engineering-first agent runtime for customer service."""

__version__ = "0.1.0"

__all__ = ["__version__"]

"""Test doubles that ship with Hermes Desk: fake clock, scripted models, loopback servers.

Nothing under ``src/hermes_desk`` outside this package imports it.
"""

from hermes_desk.testing.clock import FakeClock

__all__ = ["FakeClock"]

"""Test doubles that ship with Hermes Desk: fake clock, scripted models, loopback servers.

Nothing under ``src/hermes_desk`` outside this package imports it.
"""

from hermes_desk.testing.chat_model import ScriptedChatModel
from hermes_desk.testing.clock import FakeClock
from hermes_desk.testing.openai_server import OpenAIServer
from hermes_desk.testing.servers import free_port, serve_in_thread

__all__ = ["FakeClock", "OpenAIServer", "ScriptedChatModel", "free_port", "serve_in_thread"]

"""One client for every model provider, a fallback chain, and an offline responder.

``litellm`` is imported only inside :mod:`hermes_desk.llm.litellm_model`, when a LiteLLM link
is first used.
"""

from hermes_desk.llm.messages import (
    LinkAttempt,
    Message,
    ModelResponse,
    ResponderInput,
    ToolCallRequest,
    Usage,
)
from hermes_desk.llm.model import ChatModel
from hermes_desk.llm.offline import OfflineResponder, situation_for

__all__ = [
    "ChatModel",
    "LinkAttempt",
    "Message",
    "ModelResponse",
    "OfflineResponder",
    "ResponderInput",
    "ToolCallRequest",
    "Usage",
    "situation_for",
]

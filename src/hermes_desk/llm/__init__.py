"""One client for every model provider, a fallback chain, and an offline responder.

``litellm`` is imported only inside :mod:`hermes_desk.llm.litellm_model`, when a LiteLLM link
is first used.
"""

from hermes_desk.llm.chain import ModelChain
from hermes_desk.llm.factory import build_chain
from hermes_desk.llm.litellm_model import LiteLLMModel
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
from hermes_desk.llm.prompt import Prompt, build_prompt
from hermes_desk.llm.responder import ModelResponder, ModelTurnResult
from hermes_desk.llm.slots import ModelSlotChannel, SlotExtraction, validate_slots
from hermes_desk.llm.usage import SessionUsage, UsageLedger

__all__ = [
    "ChatModel",
    "LinkAttempt",
    "LiteLLMModel",
    "Message",
    "ModelChain",
    "ModelResponder",
    "ModelResponse",
    "ModelSlotChannel",
    "ModelTurnResult",
    "OfflineResponder",
    "Prompt",
    "ResponderInput",
    "SessionUsage",
    "SlotExtraction",
    "ToolCallRequest",
    "Usage",
    "UsageLedger",
    "build_chain",
    "build_prompt",
    "situation_for",
    "validate_slots",
]

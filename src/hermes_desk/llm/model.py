"""The ``ChatModel`` boundary: anything that answers a list of messages.

Implementations: :class:`~hermes_desk.llm.litellm_model.LiteLLMModel` (every provider LiteLLM
speaks), :class:`~hermes_desk.llm.offline.OfflineResponder` (deterministic, no model at all),
:class:`~hermes_desk.llm.chain.ModelChain` (a fallback chain of the others, itself a ChatModel)
and ``hermes_desk.testing.ScriptedChatModel``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from hermes_desk.llm.messages import Message, ModelResponse, ResponderInput

__all__ = ["ChatModel"]


@runtime_checkable
class ChatModel(Protocol):
    """One model (or a chain of them) behind one call.

    Failures are raised as :mod:`hermes_desk.errors` ``FailureError`` subclasses whose
    ``retryable`` flag tells a chain whether trying again may help; ``details["reason"]`` is
    ``"rate_limited"`` for a 429.
    """

    @property
    def name(self) -> str:
        """The link name shown in turn responses (``openai/gpt-4o-mini``, ``offline``…)."""
        ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        context: ResponderInput | None = None,
    ) -> ModelResponse:
        """Answer ``messages``.

        Args:
            messages: the conversation, system prompt first.
            tools: OpenAI-style function tool schemas the model may call (already gated).
            response_format: e.g. ``{"type": "json_object"}`` for slot extraction.
            timeout_s: the per-call limit; ``None`` means the implementation's default.
            context: the structured facts the messages were built from; models ignore it, the
                offline responder answers from it.
        """
        ...

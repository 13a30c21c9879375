"""An in-process scripted :class:`~hermes_desk.llm.model.ChatModel` for tests and benchmarks."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from hermes_desk.llm.messages import (
    Message,
    ModelResponse,
    ResponderInput,
    ToolCallRequest,
    Usage,
)

__all__ = ["ModelCall", "ScriptedChatModel"]

Step = ModelResponse | BaseException | str


@dataclass(frozen=True, slots=True)
class ModelCall:
    """What the scripted model was asked."""

    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...]
    response_format: Mapping[str, Any] | None
    timeout_s: float | None
    context: ResponderInput | None


class ScriptedChatModel:
    """Answers from a script: a ``str`` (text reply), a :class:`ModelResponse`, or an exception
    to raise. When the script runs out it repeats ``default`` (or echoes the last user message).

    Args:
        script: the steps, in order.
        name: the link name.
        delay_s: wait before each answer (for timeout tests).
        default: the answer once the script is exhausted.
    """

    def __init__(
        self,
        script: Sequence[Step] = (),
        *,
        name: str = "scripted",
        delay_s: float = 0.0,
        default: Step | None = None,
    ) -> None:
        self._script: deque[Step] = deque(script)
        self._name = name
        self._delay_s = delay_s
        self._default = default
        self._lock = threading.Lock()
        self.calls: list[ModelCall] = []

    @property
    def name(self) -> str:
        return self._name

    def push(self, *steps: Step) -> None:
        with self._lock:
            self._script.extend(steps)

    @staticmethod
    def tool_call(name: str, arguments: str, call_id: str = "call_0") -> ModelResponse:
        """A response holding one native tool call with raw ``arguments`` text."""
        return ModelResponse(
            content=None,
            tool_calls=(ToolCallRequest(call_id, name, arguments),),
            finish_reason="tool_calls",
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        context: ResponderInput | None = None,
    ) -> ModelResponse:
        with self._lock:
            self.calls.append(
                ModelCall(tuple(messages), tuple(tools or ()), response_format, timeout_s, context)
            )
            step = self._script.popleft() if self._script else self._default
        if self._delay_s > 0:
            await anyio.sleep(self._delay_s)
        if step is None:
            last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
            step = last_user or ""
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str):
            words = len(step.split()) or 1
            return ModelResponse(
                content=step,
                model=self._name,
                link=self._name,
                usage=Usage(sum(len((m.content or "").split()) for m in messages), words),
                finish_reason="stop",
            )
        return step

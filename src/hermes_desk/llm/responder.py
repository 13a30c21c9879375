"""The model side of a turn: prompt → chain → (tool calls through the executor) → reply.

:class:`ModelResponder` is the turn pipeline's responder when a model chain is configured. It
builds the prompt from the turn's facts (notes, slots, tool results), the recent conversation
and only the tools the intent allows; asks the chain; and when the model calls tools, hands
each call, raw, to the :class:`~hermes_desk.tools.executor.ToolExecutor`, which parses it
strictly, gates it by intent and validates arguments and result. A call that fails in any way
ends the turn with that tool's fallback reply (a malformed call also emits
``tool_parse_error``); valid results go back to the model for the final wording, at most
``max_tool_rounds`` times. If the chain falls through to the offline link, the reply is the
deterministic one. The answering link is returned with the reply.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_desk.llm.chain import ModelChain
from hermes_desk.llm.messages import Message, ModelResponse, ResponderInput, ToolCallRequest
from hermes_desk.llm.offline import OfflineResponder
from hermes_desk.llm.prompt import Prompt, TurnLike, build_prompt
from hermes_desk.tools.executor import ToolExecutor, ToolResult

__all__ = ["ModelResponder", "ModelTurnResult"]


@dataclass(frozen=True, slots=True)
class ModelTurnResult:
    """What the model side of a turn came to.

    Attributes:
        reply: the suggestion text.
        link: who answered (a model name, or ``offline``).
        tool_results: every tool call the model made, in order, as the executor reported it.
        rounds: model ↔ tools round trips.
        response: the last model response.
    """

    reply: str
    link: str
    tool_results: tuple[ToolResult, ...]
    rounds: int
    response: ModelResponse


class ModelResponder:
    """Answers a turn with the model chain, tools going through the executor.

    Args:
        chain: the model chain (the offline responder last).
        offline: the same offline responder, for a reply when the model gives none.
        executor: runs the model's tool calls (``None``: the model gets no tools).
        allowed_tools: intent → the tools it may call (the intent gate).
        intent_descriptions: intent → description, for the prompt.
        history: session → the (trimmed) turns the prompt carries; default the last 8.
        max_tool_rounds: model ↔ tools round trips per turn.
        rules: system rules, one text or one per language (default per language).
    """

    def __init__(
        self,
        chain: ModelChain,
        offline: OfflineResponder,
        *,
        executor: ToolExecutor | None = None,
        allowed_tools: Callable[[str], Collection[str]] = lambda intent: (),
        intent_descriptions: Mapping[str, str] | None = None,
        history: Callable[[Any], Sequence[TurnLike]] | None = None,
        max_tool_rounds: int = 2,
        rules: str | Mapping[str, str] | None = None,
    ) -> None:
        self._chain = chain
        self._offline = offline
        self._executor = executor
        self._allowed = allowed_tools
        self._descriptions = dict(intent_descriptions or {})
        self._history = history or _last_turns
        self._max_rounds = max_tool_rounds
        self._rules = rules

    def prompt(self, facts: ResponderInput, session: Any) -> Prompt:
        allowed = self._allowed(facts.intent)
        schemas = self._executor.registry.model_schemas(allowed) if self._executor else []
        return build_prompt(
            facts,
            history=self._history(session),
            tools=schemas,
            allowed_tools=allowed,
            rules=self._rules,
            intent_description=self._descriptions.get(facts.intent),
        )

    async def suggest(self, facts: ResponderInput, session: Any) -> tuple[str, str]:
        """The turn pipeline's ``Responder``: ``(reply, link)``."""
        result = await self.run(self.prompt(facts, session), request_id=str(session.id))
        return result.reply, result.link

    async def run(self, prompt: Prompt, *, request_id: str) -> ModelTurnResult:
        facts = prompt.context or ResponderInput(intent="")
        allowed = self._allowed(facts.intent)
        messages = list(prompt.messages)
        tools = list(prompt.tools) or None
        results: list[ToolResult] = []
        response = await self._ask(messages, tools, facts, request_id)
        rounds = 0
        while True:
            calls = _calls_of(response)
            if not calls:
                break
            if self._executor is None or rounds >= self._max_rounds:
                # no tools to run (or too many rounds): the deterministic reply
                return self._done(self._offline.reply(facts), response, results, rounds)
            rounds += 1
            native = tuple(c for c in calls if c.id)
            if native:
                messages.append(Message.assistant(response.content, native))
            fresh: dict[str, Any] = {}
            for call in calls:
                outcome = await self._executor.execute(
                    call.to_openai() if call.id else call.arguments,
                    request_id=request_id,
                    allowed_tools=allowed,
                )
                results.append(outcome)
                if not outcome.ok:
                    return self._done(outcome.fallback or "", response, results, rounds)
                name = outcome.tool or call.name
                fresh[name] = outcome.result
                if call.id:
                    messages.append(Message.tool(call.id, name, outcome.result))
                else:  # a call written as text: its result goes back as context
                    messages.append(Message.assistant(call.arguments))
                    result_text = json.dumps(outcome.result, ensure_ascii=False, default=str)
                    messages.append(Message.user(f"[{name}] {result_text}"))
            facts = dataclasses.replace(facts, tool_results={**facts.tool_results, **fresh})
            response = await self._ask(messages, tools, facts, request_id)
        reply = (response.content or "").strip() or self._offline.reply(facts)
        return self._done(reply, response, results, rounds)

    async def _ask(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] | None,
        facts: ResponderInput,
        request_id: str,
    ) -> ModelResponse:
        return await self._chain.complete(
            messages, tools=tools, context=facts, request_id=request_id
        )

    @staticmethod
    def _done(
        reply: str, response: ModelResponse, results: list[ToolResult], rounds: int
    ) -> ModelTurnResult:
        return ModelTurnResult(reply, response.link, tuple(results), rounds, response)


def _calls_of(response: ModelResponse) -> list[ToolCallRequest]:
    """Native tool calls, or a text reply that is an attempt at one (strictly parsed later)."""
    if response.tool_calls:
        return list(response.tool_calls)
    text = (response.content or "").strip()
    if _looks_like_a_call(text):
        # no id: the raw text goes to the strict parser as is
        return [ToolCallRequest(id="", name="", arguments=text)]
    return []


def _looks_like_a_call(text: str) -> bool:
    if text.startswith("```"):
        return '"name"' in text
    if not text.startswith("{"):
        return False
    try:
        data = json.loads(text)
    except ValueError:
        return '"name"' in text or '"arguments"' in text
    return isinstance(data, dict) and ("name" in data or "function" in data or "arguments" in data)


def _last_turns(session: Any, limit: int = 8) -> Sequence[TurnLike]:
    turns = list(getattr(session, "turns", ()) or ())
    return turns[-limit:]

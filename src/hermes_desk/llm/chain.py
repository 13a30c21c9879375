"""A model fallback chain: try each link in order, end with the offline responder.

Per link: a per-call time limit and ``retries`` more tries for retryable failures (timeouts,
connection errors, 5xx) with exponential back-off. A rate limit (429) falls through to the next
link at once: hammering a rate-limited provider only makes it worse. A non-retryable failure
(bad key, bad request) is not retried but still falls through, so a chain that ends with the
offline responder always answers. Every try is recorded in ``ModelResponse.attempts`` and
emitted as an ``llm.call`` event; the answering link is ``ModelResponse.link``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.errors import BackendError, BackendTimeoutError, ConfigError, HermesError
from hermes_desk.events import Event, EventSink
from hermes_desk.llm.messages import LinkAttempt, Message, ModelResponse, ResponderInput
from hermes_desk.llm.model import ChatModel
from hermes_desk.llm.usage import UsageLedger

__all__ = ["ModelChain"]

_logger = logging.getLogger("hermes_desk.llm")


class ModelChain:
    """A :class:`ChatModel` made of other ChatModels, tried in order.

    Args:
        links: the models, the offline responder last.
        timeout_s: the per-call limit for each try (a caller's ``timeout_s`` overrides it).
        retries: extra tries of one link on a retryable failure (not on 429).
        retry_backoff_s: the first back-off; doubles on each retry.
        events: where ``llm.call`` events go.
        usage: the per-session token/cost ledger (keyed by ``request_id``).
        clock: for latencies and event times.
        sleep: the back-off sleeper (tests pass a no-op).
        link_timeouts: per-link limits by link name, overriding ``timeout_s``.
    """

    def __init__(
        self,
        links: Sequence[ChatModel],
        *,
        timeout_s: float = 10.0,
        retries: int = 1,
        retry_backoff_s: float = 0.2,
        events: EventSink | None = None,
        usage: UsageLedger | None = None,
        clock: Clock | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        link_timeouts: Mapping[str, float] | None = None,
    ) -> None:
        if not links:
            raise ConfigError("a model chain needs at least one link")
        self._links = tuple(links)
        self._timeout_s = timeout_s
        self._retries = retries
        self._backoff_s = retry_backoff_s
        self._events = events
        self._usage = usage
        self._clock = clock or SystemClock()
        self._sleep = sleep
        self._link_timeouts = dict(link_timeouts or {})

    @property
    def name(self) -> str:
        return " > ".join(link.name for link in self._links)

    @property
    def links(self) -> tuple[ChatModel, ...]:
        return self._links

    @property
    def usage(self) -> UsageLedger | None:
        return self._usage

    async def aclose(self) -> None:
        """Close every link that holds resources (LiteLLM's HTTP clients)."""
        for link in self._links:
            close = getattr(link, "aclose", None)
            if close is not None:
                await close()

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        context: ResponderInput | None = None,
        request_id: str = "",
    ) -> ModelResponse:
        """Answer from the first link that can; see the module docstring for the policy.

        Raises:
            FailureError: only when the last link fails too (never for the offline responder).
        """
        attempts: list[LinkAttempt] = []
        last_error: HermesError | None = None
        for index, link in enumerate(self._links):
            is_last = index == len(self._links) - 1
            tries = 1 if is_last else self._retries + 1
            limit = timeout_s if timeout_s is not None else self._timeout_s
            limit = self._link_timeouts.get(link.name, limit) if timeout_s is None else limit
            for attempt in range(tries):
                started = self._clock.monotonic()
                try:
                    with anyio.fail_after(limit):
                        response = await link.complete(
                            messages,
                            tools=tools,
                            response_format=response_format,
                            timeout_s=limit,
                            context=context,
                        )
                except Exception as exc:
                    error = _as_error(exc, link.name)
                    reason = str(error.details.get("reason", error.code))
                    retryable = bool(getattr(error, "retryable", False))
                    record = LinkAttempt(
                        link=link.name,
                        status=reason,
                        retryable=retryable,
                        latency_ms=self._elapsed_ms(started),
                        detail=error.message[:200],
                    )
                    attempts.append(record)
                    self._emit(request_id, record, attempt)
                    last_error = error
                    if not retryable or reason == "rate_limited":
                        break
                    if attempt + 1 < tries and self._backoff_s > 0:
                        await self._sleep(self._backoff_s * 2**attempt)
                    continue
                record = LinkAttempt(
                    link=link.name, status="ok", latency_ms=self._elapsed_ms(started)
                )
                attempts.append(record)
                self._emit(request_id, record, attempt, response)
                if self._usage is not None and request_id:
                    self._usage.record(request_id, link.name, response.usage)
                return dataclasses.replace(response, link=link.name, attempts=tuple(attempts))
        assert last_error is not None
        raise last_error

    def _elapsed_ms(self, started: float) -> float:
        return round((self._clock.monotonic() - started) * 1000, 3)

    def _emit(
        self,
        request_id: str,
        record: LinkAttempt,
        attempt: int,
        response: ModelResponse | None = None,
    ) -> None:
        if self._events is None:
            return
        data: dict[str, Any] = {
            "link": record.link,
            "status": record.status,
            "attempt": attempt + 1,
            "latency_ms": record.latency_ms,
        }
        if response is not None:
            data.update(
                prompt_tokens=response.usage.prompt_tokens,
                completion_tokens=response.usage.completion_tokens,
                cost_usd=response.usage.cost_usd,
                tool_calls=len(response.tool_calls),
            )
        else:
            data["retryable"] = record.retryable
        self._events.emit(Event("llm.call", request_id, self._clock.now(), data))


def _as_error(exc: Exception, link: str) -> HermesError:
    if isinstance(exc, HermesError):
        return exc
    if isinstance(exc, TimeoutError):
        return BackendTimeoutError(f"model {link} timed out", link=link, reason="timeout")
    # A link with a bug must not take the turn down: record it and fall through.
    _logger.warning("model link %s raised %s", link, type(exc).__name__, exc_info=exc)
    return BackendError(f"model {link} failed: {type(exc).__name__}", link=link, reason="error")

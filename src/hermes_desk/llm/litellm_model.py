"""The LiteLLM link: every provider LiteLLM speaks (OpenAI, Ollama, Azure, Anthropic…).

This is the only module that imports ``litellm``, and only when a call is first made. The cost
map is forced local before the import, so nothing is fetched from the network at import time.
LiteLLM's own retries are switched off: retries and fallbacks belong to the
:class:`~hermes_desk.llm.chain.ModelChain`, which needs to see every failure.

LiteLLM's exceptions are translated here into :mod:`hermes_desk.errors` (``raise … from exc``);
:data:`EXCEPTION_MAP` names every class of ``litellm.exceptions`` and a test keeps it complete.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from hermes_desk.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    FailureError,
    MissingExtraError,
)
from hermes_desk.llm.messages import (
    Message,
    ModelResponse,
    ResponderInput,
    ToolCallRequest,
    Usage,
)

__all__ = [
    "EXCEPTION_MAP",
    "LiteLLMModel",
    "aclose_litellm_clients",
    "import_litellm",
    "translate_exception",
]

_UNAVAILABLE = BackendUnavailableError
_TIMEOUT = BackendTimeoutError
_ERROR = BackendError

#: ``litellm.exceptions`` class name → (our error class, reason). Looked up along the raised
#: exception's MRO, so the most specific entry wins.
EXCEPTION_MAP: Mapping[str, tuple[type[FailureError], str]] = {
    # retryable: another try or another link may answer
    "RateLimitError": (_UNAVAILABLE, "rate_limited"),
    "CallerCredentialRateLimitError": (_UNAVAILABLE, "rate_limited"),
    "Timeout": (_TIMEOUT, "timeout"),
    "APIConnectionError": (_UNAVAILABLE, "connection"),
    "ServiceUnavailableError": (_UNAVAILABLE, "service_unavailable"),
    "MidStreamFallbackError": (_UNAVAILABLE, "service_unavailable"),
    "BadGatewayError": (_UNAVAILABLE, "server_error"),
    "InternalServerError": (_UNAVAILABLE, "server_error"),
    "APIError": (_UNAVAILABLE, "server_error"),
    "MockException": (_UNAVAILABLE, "server_error"),
    "OpenAIError": (_UNAVAILABLE, "server_error"),
    # not retryable on this link (the chain still falls back to the next one)
    "AuthenticationError": (_ERROR, "auth"),
    "CallerCredentialAuthenticationError": (_ERROR, "auth"),
    "PermissionDeniedError": (_ERROR, "auth"),
    "PaymentRequiredError": (_ERROR, "auth"),
    "BudgetExceededError": (_ERROR, "budget_exceeded"),
    "NotFoundError": (_ERROR, "not_found"),
    "ModelNotMappedError": (_ERROR, "not_found"),
    "LiteLLMUnknownProvider": (_ERROR, "not_found"),
    "BadRequestError": (_ERROR, "bad_request"),
    "InvalidRequestError": (_ERROR, "bad_request"),
    "UnprocessableEntityError": (_ERROR, "bad_request"),
    "UnsupportedParamsError": (_ERROR, "bad_request"),
    "MalformedRequestFieldError": (_ERROR, "bad_request"),
    "UnsupportedEndpointError": (_ERROR, "bad_request"),
    "EndpointNotSupportedByModelError": (_ERROR, "bad_request"),
    "ImageFetchError": (_ERROR, "bad_request"),
    "VectorStoreSearchError": (_ERROR, "bad_request"),
    "ContextWindowExceededError": (_ERROR, "context_window_exceeded"),
    "ContentPolicyViolationError": (_ERROR, "content_policy"),
    "RejectedRequestError": (_ERROR, "content_policy"),
    "GuardrailRaisedException": (_ERROR, "content_policy"),
    "BlockedPiiEntityError": (_ERROR, "content_policy"),
    "SensitiveDataRouteException": (_ERROR, "content_policy"),
    "ModifyResponseException": (_ERROR, "content_policy"),
    "APIResponseValidationError": (_ERROR, "invalid_response"),
    "JSONSchemaValidationError": (_ERROR, "invalid_response"),
}


_LAZY_MODULES = ("litellm.llms.github_copilot.per_user_auth",)


def import_litellm() -> ModuleType:
    """Import LiteLLM on first use, with its cost map forced local (no network at import)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    already = sys.modules.get("litellm")
    if already is not None:
        return already
    # LiteLLM's modules emit pydantic warnings about its own types when first imported; some
    # are imported on the first call. Import them all now, with those warnings silenced.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import litellm
        except ImportError as exc:
            raise MissingExtraError("model providers through LiteLLM", "llm") from exc
        for lazy in _LAZY_MODULES:
            with contextlib.suppress(ImportError):  # a LiteLLM release without it
                __import__(lazy)
    litellm.suppress_debug_info = True  # no "give feedback" banners on every error
    return litellm


async def aclose_litellm_clients() -> None:
    """Close the HTTP clients LiteLLM caches (call on shutdown, and at the end of a test)."""
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return
    from litellm.llms.custom_httpx.async_client_cleanup import close_litellm_async_clients

    await close_litellm_async_clients()  # type: ignore[no-untyped-call]
    litellm.in_memory_llm_clients_cache.flush_cache()


def translate_exception(exc: BaseException, link: str) -> FailureError:
    """Our error for a LiteLLM (or transport) exception raised by ``link``."""
    if isinstance(exc, FailureError):
        return exc
    for cls in type(exc).__mro__:
        if cls.__module__ == "litellm.exceptions" and cls.__name__ in EXCEPTION_MAP:
            error_cls, reason = EXCEPTION_MAP[cls.__name__]
            break
    else:
        if isinstance(exc, TimeoutError):
            error_cls, reason = _TIMEOUT, "timeout"
        elif isinstance(exc, (ConnectionError, OSError)):
            error_cls, reason = _UNAVAILABLE, "connection"
        else:
            error_cls, reason = _ERROR, "unexpected"
    if reason == "server_error" and _connection_failure(exc):
        # LiteLLM reports a refused connection as an InternalServerError; say what it was.
        error_cls, reason = _UNAVAILABLE, "connection"
    status = getattr(exc, "status_code", None)
    message = f"model {link} failed ({reason}): {_short(exc)}"
    details: dict[str, Any] = {"link": link, "reason": reason}
    if isinstance(status, int):
        details["status"] = status
    return error_cls(message, **details)


class LiteLLMModel:
    """One model through LiteLLM, e.g. ``openai/gpt-4o-mini`` or ``ollama/qwen2.5``.

    Args:
        model: the LiteLLM model string (provider prefix included).
        api_base: the endpoint (``http://127.0.0.1:11434`` for Ollama, a proxy, a test server).
        api_key: the key; ``None`` lets LiteLLM read the provider's usual environment variable.
        timeout_s: default per-call limit when the caller gives none.
        extra: more keyword arguments for ``litellm.acompletion`` (``temperature``…).
        track_cost: price calls from LiteLLM's local cost map.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        extra: Mapping[str, Any] | None = None,
        track_cost: bool = True,
    ) -> None:
        self._model = model
        self._api_base = api_base
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._extra = dict(extra or {})
        self._track_cost = track_cost

    @property
    def name(self) -> str:
        return self._model

    async def aclose(self) -> None:
        """Close LiteLLM's cached HTTP clients (they are shared by every LiteLLM link)."""
        await aclose_litellm_clients()

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        context: ResponderInput | None = None,
    ) -> ModelResponse:
        litellm = import_litellm()
        kwargs: dict[str, Any] = {
            **self._extra,
            "model": self._model,
            "messages": [m.to_openai() for m in messages],
            "timeout": timeout_s if timeout_s is not None else self._timeout_s,
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,  # e.g. response_format on a provider without JSON mode
        }
        if tools:
            kwargs["tools"] = [dict(t) for t in tools]
        if response_format is not None:
            kwargs["response_format"] = dict(response_format)
        if self._api_base:
            kwargs["api_base"] = self._api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        try:
            raw = await litellm.acompletion(**kwargs)
        except Exception as exc:
            raise translate_exception(exc, self._model) from exc
        return self._response(litellm, raw)

    def _response(self, litellm: ModuleType, raw: Any) -> ModelResponse:
        choices = getattr(raw, "choices", None) or []
        if not choices:
            raise BackendError(
                f"model {self._model} returned no choices", link=self._model, reason="empty"
            )
        choice = choices[0]
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        calls: list[ToolCallRequest] = []
        for index, call in enumerate(getattr(message, "tool_calls", None) or []):
            function = getattr(call, "function", None)
            name = getattr(function, "name", None)
            arguments = getattr(function, "arguments", None)
            if arguments is not None and not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            calls.append(
                ToolCallRequest(
                    id=str(getattr(call, "id", None) or f"call_{index}"),
                    name=name if isinstance(name, str) else "",
                    arguments=arguments if isinstance(arguments, str) else "",
                )
            )
        usage = getattr(raw, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        return ModelResponse(
            content=content if isinstance(content, str) else None,
            tool_calls=tuple(calls),
            model=str(getattr(raw, "model", None) or self._model),
            link=self._model,
            usage=Usage(prompt_tokens, completion_tokens, self._cost(litellm, raw)),
            finish_reason=getattr(choice, "finish_reason", None),
        )

    def _cost(self, litellm: ModuleType, raw: Any) -> float | None:
        if not self._track_cost:
            return None
        try:
            cost = litellm.completion_cost(completion_response=raw, model=self._model)
        except Exception:  # a model missing from the cost map is simply unpriced
            return None
        return float(cost) if cost is not None else None


def _connection_failure(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name = type(current).__name__
        if name in {"APIConnectionError", "ConnectError", "ConnectTimeout"} or isinstance(
            current, ConnectionError
        ):
            return True
        if "Connection error" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _short(exc: BaseException, limit: int = 300) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "…"

"""LiteLLM's exception tree is mapped completely, and litellm is imported only when used."""

from __future__ import annotations

import inspect
import subprocess
import sys

from hermes_desk.errors import BackendError, BackendTimeoutError, BackendUnavailableError
from hermes_desk.llm.litellm_model import EXCEPTION_MAP, import_litellm, translate_exception


def _litellm_exception_classes() -> list[type[BaseException]]:
    exceptions = import_litellm().exceptions
    return [
        cls
        for cls in vars(exceptions).values()
        if inspect.isclass(cls)
        and issubclass(cls, BaseException)
        and cls.__module__ == exceptions.__name__
    ]


def test_every_litellm_exception_has_an_explicit_mapping() -> None:
    classes = _litellm_exception_classes()
    assert len(classes) > 20
    missing = sorted(cls.__name__ for cls in classes if cls.__name__ not in EXCEPTION_MAP)
    assert missing == []
    stale = sorted(set(EXCEPTION_MAP) - {cls.__name__ for cls in classes})
    assert stale == []


def test_retryable_kinds() -> None:
    assert EXCEPTION_MAP["RateLimitError"] == (BackendUnavailableError, "rate_limited")
    assert EXCEPTION_MAP["Timeout"][0] is BackendTimeoutError
    assert EXCEPTION_MAP["APIConnectionError"][0] is BackendUnavailableError
    assert EXCEPTION_MAP["ServiceUnavailableError"][0] is BackendUnavailableError
    assert EXCEPTION_MAP["AuthenticationError"][0] is BackendError
    # subclasses of a retryable family keep their own, more specific entry
    assert EXCEPTION_MAP["ContextWindowExceededError"] == (BackendError, "context_window_exceeded")


def test_translation_walks_the_mro_and_keeps_the_link() -> None:
    litellm = import_litellm()
    exc = litellm.exceptions.ContextWindowExceededError(
        message="too long", model="gpt-4o-mini", llm_provider="openai"
    )
    err = translate_exception(exc, "openai/gpt-4o-mini")
    assert type(err) is BackendError
    assert err.details == {
        "link": "openai/gpt-4o-mini",
        "reason": "context_window_exceeded",
        "status": 400,
    }
    assert not err.retryable
    timeout = translate_exception(TimeoutError(), "x")
    assert isinstance(timeout, BackendTimeoutError) and timeout.retryable
    other = translate_exception(RuntimeError("boom"), "x")
    assert type(other) is BackendError and other.details["reason"] == "unexpected"


def test_import_hermes_desk_llm_does_not_import_litellm() -> None:
    code = (
        "import sys, hermes_desk, hermes_desk.llm, hermes_desk.llm.chain, "
        "hermes_desk.llm.litellm_model, hermes_desk.llm.prompt, hermes_desk.llm.slots;"
        "print('litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_lazy_import_forces_the_local_cost_map() -> None:
    code = (
        "import os; from hermes_desk.llm.litellm_model import import_litellm;"
        "os.environ.pop('LITELLM_LOCAL_MODEL_COST_MAP', None); import_litellm();"
        "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"

"""Build the model chain from settings: LiteLLM links in order, the offline responder last."""

from __future__ import annotations

import os
from collections.abc import Mapping

from hermes_desk.clock import Clock
from hermes_desk.config import LlmSettings
from hermes_desk.events import EventSink
from hermes_desk.llm.chain import ModelChain
from hermes_desk.llm.litellm_model import LiteLLMModel
from hermes_desk.llm.model import ChatModel
from hermes_desk.llm.offline import OFFLINE, OfflineResponder
from hermes_desk.llm.usage import UsageLedger

__all__ = ["build_chain"]


def build_chain(
    settings: LlmSettings,
    offline: OfflineResponder,
    *,
    events: EventSink | None = None,
    usage: UsageLedger | None = None,
    clock: Clock | None = None,
    environ: Mapping[str, str] | None = None,
) -> ModelChain:
    """The chain ``settings.chain`` names, e.g. ``["openai/gpt-4o-mini", "ollama/qwen2.5",
    "offline"]``. Nothing is imported or contacted until a LiteLLM link is first called.

    Args:
        settings: the ``llm`` section.
        offline: the offline responder built from the pack's replies.
        events: where ``llm.call`` events go.
        usage: the per-session ledger (a fresh one when ``None``).
        clock: for latencies and event times.
        environ: where ``api_key_env`` names are looked up (default ``os.environ``).
    """
    env = os.environ if environ is None else environ
    links: list[ChatModel] = []
    timeouts: dict[str, float] = {}
    for name in settings.chain:
        if name == OFFLINE:
            links.append(offline)
            continue
        options = settings.links.get(name)
        api_key = None
        if options is not None and options.api_key_env:
            api_key = env.get(options.api_key_env)
        if options is not None and options.timeout_s is not None:
            timeouts[name] = options.timeout_s
        links.append(
            LiteLLMModel(
                name,
                api_base=(options.api_base if options else None) or settings.api_base,
                api_key=api_key,
                timeout_s=timeouts.get(name, settings.timeout_s),
                extra=options.extra if options else None,
            )
        )
    if not links or links[-1] is not offline:
        links.append(offline)  # the settings validator already ensures this; belt and braces
    return ModelChain(
        links,
        timeout_s=settings.timeout_s,
        retries=settings.retries,
        retry_backoff_s=settings.retry_backoff_s,
        events=events,
        usage=usage if usage is not None else UsageLedger(),
        clock=clock,
        link_timeouts=timeouts,
    )

from __future__ import annotations

import hermes_desk.llm as llm


def test_public_api_is_pinned() -> None:
    assert sorted(llm.__all__) == sorted(
        [
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
    )
    for name in llm.__all__:
        assert getattr(llm, name) is not None

"""The public API of ``hermes_desk.sessions`` is pinned, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import hermes_desk.sessions as sessions


def test_exported_members() -> None:
    assert set(sessions.__all__) == {
        "ContextTrimmer",
        "DestroyHook",
        "DestroyReason",
        "EstimateCounter",
        "MemorySessionStore",
        "RedisSessionStore",
        "Role",
        "SaveResult",
        "Session",
        "SessionArchive",
        "SessionManager",
        "SessionStatus",
        "SessionStore",
        "SqliteSessionArchive",
        "SqliteSessionStore",
        "TiktokenCounter",
        "TokenCounter",
        "TrimResult",
        "TrimWeights",
        "Turn",
        "build_session_archive",
        "build_session_store",
        "build_token_counter",
        "build_trimmer",
        "summarize",
        "turn_key",
    }
    for name in sessions.__all__:
        assert getattr(sessions, name) is not None


def test_import_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, hermes_desk.sessions, hermes_desk.cli.context;"
        "print(sorted(m for m in ('redis', 'jieba', 'tiktoken', 'litellm') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

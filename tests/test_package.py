"""The package's public face: exports, lazy optional dependencies, layering."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import hermes_desk

SRC = Path(hermes_desk.__file__).resolve().parent
HEAVY = ("litellm", "redis", "psycopg", "mcp", "jieba", "rjieba", "sklearn", "sklearn_crfsuite")


def test_top_level_exports_are_pinned() -> None:
    assert hermes_desk.__all__ == ["HermesError", "Settings", "__version__"]


def test_importing_the_modules_loads_no_optional_dependency() -> None:
    code = (
        "import sys, hermes_desk, hermes_desk.sessions, hermes_desk.nlu, hermes_desk.tools, "
        "hermes_desk.workflows, hermes_desk.memory, hermes_desk.llm, hermes_desk.packs, "
        "hermes_desk.actions, hermes_desk.assist, hermes_desk.runtime, hermes_desk.api.app, "
        "hermes_desk.sentiment, hermes_desk.supervision\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_nothing_in_src_imports_the_testing_package() -> None:
    offenders = []
    for path in SRC.rglob("*.py"):
        if "testing" in path.relative_to(SRC).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            if any(n.startswith("hermes_desk.testing") for n in names):
                offenders.append(str(path.relative_to(SRC)))
    assert offenders == []


def test_workflows_never_import_llm() -> None:
    for path in (SRC / "workflows").rglob("*.py"):
        assert "hermes_desk.llm" not in path.read_text(encoding="utf-8"), path.name


def test_engine_modules_never_import_the_layers_above_them() -> None:
    """sessions, nlu, tools, workflows, memory and llm know nothing of proposals or turns."""
    for engine in ("sessions", "nlu", "tools", "workflows", "memory", "llm"):
        for path in (SRC / engine).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for above in ("hermes_desk.actions", "hermes_desk.assist", "hermes_desk.runtime"):
                assert above not in text, f"{engine}/{path.name} imports {above}"


def test_actions_and_assist_exports_are_pinned() -> None:
    import hermes_desk.actions
    import hermes_desk.assist

    assert hermes_desk.actions.__all__ == [
        "DECIDED", "ActionService", "MemoryProposalStore", "Proposal", "ProposalStatus",
        "ProposalStore", "build_proposal_store", "needs_approval", "require_approvals",
    ]  # fmt: skip
    assert "Assistant" in hermes_desk.assist.__all__ and "decide" in hermes_desk.assist.__all__

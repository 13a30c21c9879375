"""The modules of ``hermes_desk.nlu`` import one another one way: no cycle, counting imports
inside functions too; the classifier kinds are one table."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_desk.nlu
from hermes_desk.config import CLASSIFIER_KINDS as CONFIGURED_KINDS
from hermes_desk.nlu.intent import CLASSIFIER_KINDS, CLASSIFIERS, build_classifier

NLU = Path(hermes_desk.nlu.__file__).parent


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in NLU.glob("*.py"):
        if path.stem == "__init__":
            continue
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                name = node.module
                if name.startswith("hermes_desk.nlu."):
                    deps.add(name.split(".")[2])
        graph[path.stem] = deps
    return graph


def test_no_import_cycle_inside_nlu() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import cycle: {' -> '.join((*path, module))}"
        if module in done:
            return
        for dep in graph.get(module, ()):
            visit(dep, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_every_kind_is_in_the_table_and_the_settings() -> None:
    assert CLASSIFIER_KINDS == tuple(CLASSIFIERS) == CONFIGURED_KINDS
    for kind in CLASSIFIER_KINDS:
        assert build_classifier(kind).kind == kind

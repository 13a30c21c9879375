"""Turn specs into a live :class:`ToolRegistry`: pair each spec with its binding.

HTTP specs get an :class:`HttpBinding` on the shared client (a :class:`BackendHttp`, or an
``httpx.AsyncClient``), the built-in ``kb_search`` gets the
pack's :class:`KnowledgeBase`; ``python`` and ``mcp`` specs need their binding passed in
``bindings`` (``@tool`` objects carry theirs; MCP bindings come from the MCP client).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from hermes_desk.errors import PackError
from hermes_desk.tools.backend_http import BackendHttp
from hermes_desk.tools.binding import ToolBinding
from hermes_desk.tools.decorator import DecoratedTool
from hermes_desk.tools.http_binding import HttpBinding
from hermes_desk.tools.kb import KbSearchBinding, KnowledgeBase
from hermes_desk.tools.registry import ToolRegistry
from hermes_desk.tools.spec import BindingKind, ToolSpec
from hermes_desk.tools.yaml_loader import load_tool_specs

__all__ = ["BINDERS", "build_registry", "load_pack_tools"]


@dataclass(frozen=True)
class _Parts:
    """What the binders may use: the shared HTTP client and the pack's knowledge base."""

    client: BackendHttp | httpx.AsyncClient | None
    kb: KnowledgeBase | None


def _bind_http(spec: ToolSpec, parts: _Parts) -> ToolBinding:
    if parts.client is None or spec.binding.http is None:
        raise PackError(
            "an HTTP tool needs an HTTP client", file=spec.source, item=spec.name, field="http"
        )
    return HttpBinding(spec.binding.http, parts.client, health_url=spec.health.url)


def _bind_builtin(spec: ToolSpec, parts: _Parts) -> ToolBinding:
    if spec.binding.options.get("builtin") != "kb_search" or parts.kb is None:
        raise PackError(
            "the built-in kb_search needs the pack's knowledge base",
            file=spec.source,
            item=spec.name,
            field="builtin",
        )
    return KbSearchBinding(parts.kb)


#: how each binding kind is built when no binding is given; ``python`` (``@tool``) and ``mcp``
#: (the MCP client) tools always bring their own
BINDERS: dict[BindingKind, Callable[[ToolSpec, _Parts], ToolBinding]] = {
    "http": _bind_http,
    "builtin": _bind_builtin,
}


def build_registry(
    specs: Iterable[ToolSpec],
    *,
    client: BackendHttp | httpx.AsyncClient | None = None,
    kb: KnowledgeBase | None = None,
    bindings: Mapping[str, ToolBinding] | None = None,
    python_tools: Iterable[DecoratedTool] = (),
) -> ToolRegistry:
    """A registry of ``specs`` (plus ``python_tools``), each bound; PackError if one cannot be."""
    registry = ToolRegistry()
    given = dict(bindings or {})
    parts = _Parts(client, kb)
    for spec in specs:
        binding = given.get(spec.name)
        if binding is None:
            binder = BINDERS.get(spec.binding.kind)
            if binder is None:
                raise PackError(
                    f"no binding given for a {spec.binding.kind} tool",
                    file=spec.source,
                    item=spec.name,
                    field="binding",
                )
            binding = binder(spec, parts)
        registry.add(spec, binding)
    for decorated in python_tools:
        registry.add(decorated.spec, decorated.binding)
    return registry


def load_pack_tools(
    pack_dir: str | Path,
    *,
    variables: Mapping[str, str] | None = None,
    client: BackendHttp | httpx.AsyncClient | None = None,
    kb_db_path: str | Path = ":memory:",
    bindings: Mapping[str, ToolBinding] | None = None,
    kb_min_score: float = 0.0,
) -> tuple[ToolRegistry, KnowledgeBase]:
    """The registry of a pack's ``tools.yaml`` and the knowledge base of its ``kb/`` (hits below
    ``kb_min_score`` are not returned).

    The caller owns (and closes) the client and the knowledge base.
    """
    root = Path(pack_dir)
    specs = (
        load_tool_specs(root / "tools.yaml", variables) if (root / "tools.yaml").exists() else []
    )
    kb = KnowledgeBase.from_dir(root / "kb", db_path=kb_db_path, min_score=kb_min_score)
    try:
        return build_registry(specs, client=client, kb=kb, bindings=bindings), kb
    except BaseException:
        kb.close()
        raise

"""The bundled pack and its tools' specs, for the pure stages' tests."""

from __future__ import annotations

import pytest

from hermes_desk.packs import Pack, load_pack
from hermes_desk.tools import ToolSpec, load_tool_specs


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("ecommerce")


@pytest.fixture(scope="module")
def tools(pack: Pack) -> dict[str, ToolSpec]:
    specs = load_tool_specs(pack.root / "tools.yaml", {"backend_url": "http://127.0.0.1:1"})
    return {spec.name: spec for spec in specs}

"""The docs tell the truth about the code: every setting is documented, every command listed."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel
from typer.main import get_command

from hermes_desk.cli.main import app
from hermes_desk.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def _paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    out: list[str] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            out.extend(_paths(kind, path))
        else:
            out.append(path)
    return out


def test_every_setting_is_in_the_configuration_doc() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [p for p in _paths(Settings) if f"`{p}`" not in doc]
    assert missing == []


def test_every_command_group_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = get_command(app)
    for name in command.commands:  # type: ignore[attr-defined]
        if name == "version":
            continue
        assert f"hermes-desk {name}" in readme, name


def test_readme_shows_the_two_setup_commands_and_the_curl_example() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make serve" in readme and "make test" in readme
    assert "我的订单202405201234现在什么状态？" in readme

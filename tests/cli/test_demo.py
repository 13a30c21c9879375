"""``hermes-desk demo`` runs the scripted conversation end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from demo_backend import create_app as create_backend
from hermes_desk.cli.main import app
from hermes_desk.testing.servers import serve_in_thread


@pytest.fixture
def backend_url() -> Iterator[str]:
    with serve_in_thread(create_backend()) as url:
        yield url


def test_demo_remembers_the_delay_across_contacts(
    backend_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_SERVICE__BACKEND_URL", backend_url)
    result = CliRunner().invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    out = result.output
    first, second = out.split("=== contact 2")
    # "我的订单…到哪了" sits between the two shipment intents; both look the shipment up.
    assert "intent     logistics" in first or "intent     order_status" in first
    assert "slots      {'order_id': '202405201234'}" in first
    assert "tool       get_shipment → ok" in first
    assert "运输中" in first and "2024-05-30" in first
    assert "key fact   logistics_delay_days = 7" in first
    notes_before_speaking = second.split("customer>")[0]
    assert "物流已超过 7 天" in notes_before_speaking
    assert "intent     oos" in second and "no tool may run" in second


def test_bad_settings_stop_the_command_with_the_field_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HERMES_SESSIONS__IDLE_TTL_S", "-1")
    result = CliRunner().invoke(app, ["demo"])
    assert result.exit_code == 2
    assert "sessions.idle_ttl_s" in result.output

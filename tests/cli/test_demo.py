"""``hermes-desk demo`` runs the scripted conversation end to end."""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.cli.conversation import save_picture
from hermes_desk.cli.main import app
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.usefixtures("pack_model_dir")


@pytest.fixture
def backend_url() -> Iterator[str]:
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as url:
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
    due = (business_today() + dt.timedelta(days=2)).isoformat()  # the sample's eta, moved
    assert "运输中" in first and due in first
    assert "key fact   logistics_delay_days = 7" in first
    assert "language   zh" in first
    # the stated preference is noted with its channel, not ticketed
    assert "key fact   contact_preference_channel = sms" in first
    assert "已为您记下" in first and "工单" not in first
    notes_before_speaking = second.split("customer>")[0]
    assert "物流已超过 7 天" in notes_before_speaking
    assert "希望通过短信联系" in notes_before_speaking
    assert "intent     oos" in second and "no tool may run" in second


def test_bad_settings_stop_the_command_with_the_field_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HERMES_SESSIONS__IDLE_TTL_S", "-1")
    result = CliRunner().invoke(app, ["demo"])
    assert result.exit_code == 2
    assert "sessions.idle_ttl_s" in result.output


def test_a_picture_for_the_customer_is_saved_to_a_file(tmp_path: Path) -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><text>X7K2</text></svg>'
    url = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    saved = save_picture(url, "wf_a/b", tmp_path)
    assert saved == tmp_path / "hermes-desk-wf_a_b.svg"
    assert saved.read_bytes() == svg
    for bad in ("data:text/plain;base64,aGk=", "data:image/png,raw", "https://x/y.png"):
        with pytest.raises(ValueError):
            save_picture(bad, "x", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hermes-desk-wf_a_b.svg"]

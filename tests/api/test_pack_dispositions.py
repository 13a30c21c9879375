"""``GET /v1/pack/dispositions``: how a contact may end, with both names, for the close dialog."""

from __future__ import annotations

import httpx
from tests.api.conftest import Api

from hermes_desk.packs import load_dispositions


def test_the_packs_dispositions_in_order_with_both_names(api: Api) -> None:
    response = api.client.get("/v1/pack/dispositions")
    assert response.status_code == 200, response.text
    body = response.json()
    listed = load_dispositions("ecommerce")
    assert body["pack"] == "ecommerce" and body["default"] == listed.default == "resolved"
    assert [d["id"] for d in body["dispositions"]] == listed.ids
    named = {d["id"]: d["label"] for d in body["dispositions"]}
    assert named["callback_scheduled"] == {"zh": "已约回访", "en": "Callback scheduled"}
    assert all(set(label) == {"zh", "en"} for label in named.values())
    # What an agent may confirm (PUT …/summary) is exactly this list.
    schema = api.client.get("/openapi.json").json()["components"]["schemas"]
    assert schema["SummaryConfirm"]["properties"]["disposition"]["enum"] == listed.ids


def test_the_dispositions_need_a_key(api: Api) -> None:
    assert httpx.get(f"{api.url}/v1/pack/dispositions").status_code == 401

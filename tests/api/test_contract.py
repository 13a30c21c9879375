"""The OpenAPI document tells the truth: schemathesis sends generated requests (valid and
invalid) to the real service and checks every answer against the document — status codes,
content types, response bodies and headers, auth, no 5xx (``checks`` = all of them)."""

from __future__ import annotations

import re

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.generation.modes import GenerationMode
from tests.api.conftest import API_KEY, Api, contract_settings

from hermes_desk.api.app import create_app

# The example budget per operation: enough to reach every documented status and the
# generator's edge cases, small enough for the whole contract run to stay within minutes.
EXAMPLES = 100


# The document of a service built with the same settings as the one the tests start (one
# test per operation); the first test checks the served document is this one.
DOCUMENT = create_app(contract_settings()).openapi()
# The supervisor's event stream stays open by design (a generated request would wait for
# ever); its auth and first event are tested in tests/api/test_alerts.py.
schema = schemathesis.openapi.from_dict(DOCUMENT).exclude(path="/v1/supervisor/events")


def test_the_served_document_is_the_one_tested(api: Api) -> None:
    assert api.client.get("/openapi.json").json() == DOCUMENT


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_service_keeps_its_contract(case: schemathesis.Case, api: Api) -> None:
    _aim_at_a_live_session(case, api)
    case.call_and_validate(base_url=api.url, headers={"X-API-Key": API_KEY})


def _aim_at_a_live_session(case: schemathesis.Case, api: Api) -> None:
    """Valid requests on ``/v1/sessions/{session_id}…`` go to a session that exists (a fresh
    one per case), so whole turns run on generated text instead of stopping at 404."""
    if case.meta is None or case.meta.generation.mode is not GenerationMode.POSITIVE:
        return
    if "session_id" not in (case.path_parameters or {}):
        return
    user = "u1001"
    case.path_parameters["session_id"] = api.open_session(user)
    if case.query and "user_id" in case.query:
        case.query["user_id"] = user
    if isinstance(case.body, dict) and "user_id" in case.body:
        case.body["user_id"] = user


_RESOURCE_ID = re.compile(r"\{(session_id|proposal_id|workflow_id|fact_id|tag|name)\}")


def test_the_document_declares_security_errors_and_limits(api: Api) -> None:
    document = api.client.get("/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert schemes["ApiKey"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": schemes["ApiKey"]["description"],
    }
    assert schemes["Bearer"]["scheme"] == "bearer"
    assert "security" not in document["paths"]["/healthz"]["get"], "health checks need no key"
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas, "422 is the service's own error body"
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            for status, response in responses.items():
                if status.startswith(("4", "5")):
                    body = response["content"]["application/json"]["schema"]
                    assert body == error_ref, (method, path, status)
            assert {"413", "422", "500"} <= set(responses), (method, path)
            if path.startswith("/v1/"):
                assert "401" in responses, (method, path)
                assert operation["security"] == [{"ApiKey": []}, {"Bearer": []}]
            if _RESOURCE_ID.search(path):
                assert "404" in responses, (method, path)
    text = schemas["TurnCreate"]["properties"]["text"]
    assert text["minLength"] == 1
    assert text["maxLength"] == api.settings.service.max_text_chars
    assert "ErrorBody" in schemas and "problems" in schemas["ErrorDetail"]["properties"]
    turn = document["paths"]["/v1/sessions/{session_id}/turns"]["post"]
    assert set(turn["responses"]) >= {"200", "401", "404", "409", "422"}
    ok = turn["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/TurnOut"}
    metrics = document["paths"]["/metrics"]["get"]["responses"]["200"]["content"]
    assert list(metrics) == ["text/plain"]


def test_an_open_service_says_a_key_is_optional() -> None:
    from hermes_desk.config import Settings

    document = create_app(Settings()).openapi()
    tools = document["paths"]["/v1/tools"]["get"]
    assert tools["security"] == [{"ApiKey": []}, {"Bearer": []}, {}]

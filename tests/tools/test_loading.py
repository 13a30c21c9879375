"""Specs load from YAML, OpenAPI 3.0 and ``@tool``; bad specs are refused naming file/tool/field."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

import pytest
import yaml
from tests.tools.tools_helpers import PACK

from hermes_desk.errors import PackError
from hermes_desk.tools import (
    ToolExecutor,
    ToolRegistry,
    load_openapi,
    load_tool_specs,
    parse_tool_specs,
    to_json_schema,
    tool,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openapi"


def test_demo_pack_tools_load_with_the_fixed_names() -> None:
    specs = load_tool_specs(PACK / "tools.yaml", {"backend_url": "http://backend:9"})
    names = [s.name for s in specs]
    assert names == [
        "get_order", "get_shipment", "check_phone", "send_sms_code", "make_captcha",
        "verify_captcha", "verify_sms_code", "reset_password", "create_return", "issue_refund",
        "create_ticket", "add_ticket_note", "list_payment_methods", "kb_search",
    ]  # fmt: skip
    writes = {s.name for s in specs if s.effect == "write"}
    assert writes == {"send_sms_code", "reset_password", "create_return", "issue_refund",
                      "create_ticket", "add_ticket_note"}  # fmt: skip
    # The one write that runs without an agent: a code to the customer's own phone, with why.
    assert [s.name for s in specs if s.approval_exempt] == ["send_sms_code"]
    by_name = {s.name: s for s in specs}
    order = by_name["get_order"]
    assert order.binding.http is not None
    assert order.binding.http.url == "http://backend:9/orders/{order_id}"
    assert order.health.url == "http://backend:9/health"
    assert order.timeout_s == 3
    assert order.required == ("order_id",)
    assert all(s.fallback and not s.fallback.isascii() for s in specs)  # Chinese fallbacks
    # OpenAPI-style keywords are converted: nullable and boolean exclusiveMinimum.
    ticket = by_name["create_ticket"].parameters["properties"]["order_id"]
    assert ticket["type"] == ["string", "null"]
    amount = by_name["issue_refund"].parameters["properties"]["amount"]
    assert amount == {"type": "number", "exclusiveMinimum": 0}


def test_model_schemas_are_stable() -> None:
    specs = load_tool_specs(PACK / "tools.yaml", {"backend_url": "http://b"})
    schema = next(s for s in specs if s.name == "get_shipment").model_schema()
    assert schema == {
        "type": "function",
        "function": {
            "name": "get_shipment",
            "description": "查询订单的物流进度、承运商和预计送达日期 / shipping progress of an order",  # noqa: E501
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{12}$"}},
                "required": ["order_id"],
            },
        },
    }


def _one_tool(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "name": "get_thing",
        "description": "a thing",
        "parameters": {"thing_id": {"type": "string"}},
        "required": ["thing_id"],
        "http": {"method": "GET", "url": "{backend_url}/things/{thing_id}"},
    }
    base.update(fields)
    return {"variables": {"backend_url": "http://b"}, "tools": [base]}


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"timout_s": 3}, "timout_s", "Extra inputs"),
        ({"timeout_s": -1}, "timeout_s", "greater than 0"),
        ({"name": "bad name!"}, "name", "pattern"),
        ({"parameters": {"thing_id": {"type": "strin"}}}, "parameters", "strin"),
        ({"response_format": {"type": 7}}, "response_format", "type"),
        ({"required": ["thing_id", "other"]}, "required", "other"),
        ({"http": {"method": "GET", "url": "{nowhere}/x/{thing_id}"}}, "http.url", "nowhere"),
        ({"http": {"method": "GET", "url": "{backend_url}/x/{other}"}}, "http.url", "other"),
        ({"http": {"method": "FETCH", "url": "{backend_url}/x"}}, "http.method", "GET"),
        ({"builtin": "kb_search"}, None, "exactly one binding"),
        ({"http": {"method": "POST", "url": "{backend_url}/x"}}, "effect", "effect: write"),
        ({"http": {"method": "DELETE", "url": "{backend_url}/x"}}, "effect", "HTTP DELETE"),
        ({"effect": "read", "approval_exempt": "why"}, "approval_exempt", "only a write"),
        ({"effect": "write", "approval_exempt": "  "}, "approval_exempt", "reason"),
        ({"effect": "delete"}, "effect", "read"),
        ({"explain": {"zh": "查 {thing_id}"}}, "explain", "only a write"),
        ({"effect": "write", "explain": {"zh": "处理 {thing}"}}, "explain.zh", "{thing}"),
        ({"owner": "user_id"}, "owner", "response_format"),
        ({"not_found": [200]}, "not_found.0", "400"),
        ({"not_found": [404], "refusals": [404]}, "refusals", "both"),
        ({"due": {"date": "eta", "while": ["on_way"]}}, "due.date", "response_format"),
        ({"due": {"date": "eta"}}, "due.while", "Field required"),
        ({"due": {"date": "eta", "while": []}}, "due.while", "at least 1"),
        ({"due": {"date": "eta", "while": ["x"], "when": 1}}, "due.when", "Extra inputs"),
    ],
)
def test_a_bad_spec_is_refused_naming_file_tool_and_field(
    change: dict[str, object], field: str | None, words: str
) -> None:
    with pytest.raises(PackError) as caught:
        parse_tool_specs(_one_tool(**change), file="packs/x/tools.yaml")
    err = caught.value
    assert err.details["file"] == "packs/x/tools.yaml"
    assert err.details["item"] == (change.get("name") or "get_thing")
    if field is not None:
        assert err.details["field"] == field
    assert words in str(err)
    assert str(err).startswith("packs/x/tools.yaml [")


def test_a_duplicate_tool_and_broken_yaml_are_refused(tmp_path: Path) -> None:
    data = _one_tool()
    data["tools"] = [*data["tools"], *data["tools"]]  # type: ignore[misc]
    with pytest.raises(PackError, match=r"\[get_thing\] field 'name': defined twice"):
        parse_tool_specs(data, file="t.yaml")
    broken = tmp_path / "tools.yaml"
    broken.write_text("tools: [\n", encoding="utf-8")
    with pytest.raises(PackError, match="not valid YAML") as caught:
        load_tool_specs(broken)
    assert caught.value.details["file"] == str(broken)


def test_openapi_schema_objects_become_json_schema() -> None:
    converted = to_json_schema(
        {
            "type": "object",
            "x-internal": True,
            "properties": {
                "day": {"type": "string", "format": "date", "nullable": True, "example": "x"},
                "kind": {"type": "string", "enum": ["a", "b"], "nullable": True},
                "n": {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
                "m": {"type": "integer", "maximum": 9, "exclusiveMaximum": False},
                "any": {"nullable": True, "description": "d"},
            },
        }
    )
    props = converted["properties"]
    assert "x-internal" not in converted
    assert props["day"] == {"type": ["string", "null"], "format": "date", "examples": ["x"]}
    assert props["kind"]["enum"] == ["a", "b", None]
    assert props["n"] == {"type": "integer", "exclusiveMinimum": 1}
    assert props["m"] == {"type": "integer", "maximum": 9}
    assert props["any"] == {"anyOf": [{"description": "d"}, {"type": "null"}]}
    # A Draft 2020-12 schema passes through unchanged.
    plain = {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}
    assert to_json_schema(plain) == plain


def test_the_published_petstore_document_becomes_tools() -> None:
    loaded = load_openapi(FIXTURES / "petstore-expanded.yaml")
    by_name = {s.name: s for s in loaded.specs}
    assert sorted(by_name) == ["addPet", "deletePet", "findPets", "find_pet_by_id"]
    assert loaded.skipped == {}
    find = by_name["findPets"]
    assert find.binding.http is not None
    assert find.binding.http.url == "http://petstore.swagger.io/api/pets"
    assert find.binding.http.query == ("tags", "limit")
    assert find.parameters["properties"]["tags"] == {
        "type": "array", "items": {"type": "string"}, "description": "tags to filter by"
    }  # fmt: skip
    # $ref and allOf are inlined in the response schema.
    item = find.response_format["items"]  # type: ignore[index]
    assert item["allOf"][0]["required"] == ["name"]
    add = by_name["addPet"]
    assert add.parameters["required"] == ["name"]
    assert add.binding.http is not None and add.binding.http.body == ("name", "tag")
    by_id = by_name["find_pet_by_id"]
    assert by_id.binding.http is not None
    assert by_id.binding.http.url.endswith("/pets/{id}")
    assert by_id.parameters["required"] == ["id"]
    assert by_name["deletePet"].response_format is None
    # The specs register (schemas are valid Draft 2020-12).
    registry = ToolRegistry()
    for spec in loaded.specs:
        registry.add(spec, _NoBinding())
    assert len(registry) == 4


def test_openapi_refuses_a_swagger_2_document_and_names_the_file(tmp_path: Path) -> None:
    doc = tmp_path / "swagger.yaml"
    doc.write_text(yaml.safe_dump({"swagger": "2.0", "paths": {}}), encoding="utf-8")
    with pytest.raises(PackError, match=r"OpenAPI 3\.0") as caught:
        load_openapi(doc)
    assert caught.value.details["file"] == str(doc)
    assert caught.value.details["field"] == "openapi"


class _NoBinding:
    async def call(self, arguments: object, *, timeout_s: float, context: object) -> object:
        raise AssertionError("not called")

    async def health(self, *, timeout_s: float) -> bool:
        return True


@pytest.mark.anyio
async def test_the_tool_decorator_describes_and_runs_a_function() -> None:
    @tool(fallback="库存系统繁忙", timeout_s=1)
    async def check_stock(
        sku: str, day: dt.date, warehouse: Literal["bj", "sh"] = "bj", note: str | None = None
    ) -> dict[str, int]:
        """查询库存."""
        assert isinstance(day, dt.date)  # converted from the validated JSON string
        return {"sku_count": len(sku) + day.day}

    spec = check_stock.spec
    assert spec.name == "check_stock"
    assert spec.effect == "write"  # a tool that says nothing is taken to change something
    assert spec.description == "查询库存."
    assert spec.timeout_s == 1
    props = spec.parameters["properties"]
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["warehouse"]["enum"] == ["bj", "sh"]
    assert spec.parameters["required"] == ["sku", "day"]
    assert spec.response_format == {"type": "object", "additionalProperties": {"type": "integer"}}

    registry = ToolRegistry()
    registry.add(spec, check_stock.binding)
    executor = ToolExecutor(registry)
    ok = await executor.execute(
        {"name": "check_stock", "arguments": {"sku": "abc", "day": "2024-05-20"}},
        request_id="ses_1",
        allowed_tools=None,
    )
    assert ok.ok and ok.result == {"sku_count": 23}
    bad_date = await executor.execute(
        {"name": "check_stock", "arguments": {"sku": "abc", "day": "2024-02-30"}},
        request_id="ses_1",
        allowed_tools=None,
    )
    assert bad_date.status == "invalid_args" and bad_date.fallback == "库存系统繁忙"
    assert check_stock.fn is not None  # the function is still there to call directly

    @tool(effect="read", owner_field="user_id")
    def whose(order_id: str) -> dict[str, str]:
        """谁的订单."""
        return {"user_id": "u1"}

    assert whose.spec.effect == "read" and whose.spec.owner_field == "user_id"


def test_effects_default_from_the_method_and_explanations_fill_in() -> None:
    [get] = parse_tool_specs(_one_tool(), file="t.yaml")
    assert get.effect == "read" and get.to_dict()["effect"] == "read"
    post = {"http": {"method": "POST", "url": "{backend_url}/x"}, "effect": "write",
            "parameters": {"thing_id": {"type": "string"}, "phone": {"type": "string"}},
            "explain": {"zh": "处理 {thing_id}，通知尾号 {phone_tail}",
                        "en": "handle {thing_id}, tell {phone}"}}  # fmt: skip
    [write] = parse_tool_specs(_one_tool(**post), file="t.yaml")
    assert write.effect == "write" and write.to_dict()["effect"] == "write"
    args = {"thing_id": "T1", "phone": "13800138000"}
    assert write.explanation(args, "zh") == "处理 T1，通知尾号 8000"
    assert write.explanation(args, "en") == "handle T1, tell *********00"  # a phone is masked
    assert write.explanation(args, "fr") == "处理 T1，通知尾号 8000"  # another language
    assert write.explanation({}, "zh") == "处理 {thing_id}，通知尾号 {phone_tail}"  # no raise
    assert get.explanation(args, "zh") == "a thing"  # no explain: the description
    # A value written in both languages ("中文 / English", a workflow's default) reads in one;
    # a customer's own words with a slash are left as they are.
    both = {"thing_id": "客户申请退货 / customer requested a return", "phone": "13800138000"}
    assert write.explanation(both, "en").startswith("handle customer requested a return,")
    assert write.explanation(both, "zh").startswith("处理 客户申请退货，")
    theirs = {"thing_id": "尺码不对 / 颜色也不对"}
    assert write.explanation(theirs, "en").startswith("handle 尺码不对 / 颜色也不对,")
    # An amount reads as people write it: 429, 35.5 (not "429.0").
    assert write.explanation({"thing_id": 429.0}, "en").startswith("handle 429,")
    assert write.explanation({"thing_id": 35.5}, "en").startswith("handle 35.5,")
    # What it does, in every language, never what it was called with.
    assert write.explained_words() == "处理  ，通知尾号   / handle  , tell  "


def test_a_code_built_spec_keeps_the_same_rules() -> None:
    from hermes_desk.tools import BindingSpec, ToolSpec

    props = {"type": "object", "properties": {"x": {"type": "string"}}}
    base = {"name": "t", "description": "d", "parameters": props,
            "binding": BindingSpec(kind="python")}  # fmt: skip
    assert ToolSpec(**base).effect == "write"  # the safe side
    with pytest.raises(PackError, match="approval_exempt"):
        ToolSpec(**base, effect="read", approval_exempt="why")
    with pytest.raises(PackError, match=r"explain\.en"):
        ToolSpec(**base, explain={"en": "do {x} for {y}"})  # {y} is no parameter
    spec = ToolSpec(**base, explain={"en": "do {x}"}, sensitive=("x",))
    assert spec.explanation({"x": "secret"}, "en") == "do ****et"  # the tool calls x sensitive
    assert spec.to_dict()["explain"] == {"en": "do {x}"}


def test_openapi_operations_declare_their_effect() -> None:
    loaded = load_openapi(FIXTURES / "petstore-expanded.yaml")
    effects = {s.name: s.effect for s in loaded.specs}
    assert effects == {"findPets": "read", "addPet": "write", "find_pet_by_id": "read",
                       "deletePet": "write"}  # fmt: skip

    def doc(op: dict[str, object]) -> dict[str, object]:
        return {"openapi": "3.0.3", "servers": [{"url": "http://api"}],
                "paths": {"/pets/{id}/check": {"post": {"operationId": "checkPet", **op,
                          "parameters": [{"name": "id", "in": "path", "required": True,
                                          "schema": {"type": "string"}}],
                          "responses": {"200": {"description": "ok"}}}}}}  # fmt: skip

    [check] = load_openapi(doc({"x-effect": "read"})).specs
    assert check.effect == "read"  # a POST that changes nothing may say so
    with pytest.raises(PackError, match="x-effect") as caught:
        load_openapi(doc({}))
    assert caught.value.details["item"] == "checkPet"
    assert caught.value.details["file"] == "<openapi>"
    assert caught.value.details["field"] == "x-effect"
    with pytest.raises(PackError, match="'read' or 'write'"):
        load_openapi(doc({"x-effect": "maybe"}))


def test_a_promised_date_is_past_only_while_the_record_is_on_its_way() -> None:
    shipment = {
        "type": "object",
        "properties": {"eta": {"type": "string"}, "state": {"type": "string"}},
    }
    due = {"date": "eta", "status": "state", "while": ["in_transit"]}
    [spec] = parse_tool_specs(_one_tool(response_format=shipment, due=due), file="t.yaml")
    assert spec.due is not None and spec.due.statuses == ("in_transit",)
    # The listing (API, ``tools list --json``) says it as the pack wrote it.
    assert spec.to_dict()["due"] == due
    assert parse_tool_specs(_one_tool(), file="t.yaml")[0].to_dict()["due"] is None
    today = dt.date(2026, 12, 5)

    def late(**record: object) -> int | None:
        assert spec.due is not None
        return spec.due.days_overdue(record, today)

    assert late(state="in_transit", eta="2026-12-02") == 3
    assert late(state="in_transit", eta="2026-12-04T23:00:00+08:00") == 1, "a timestamp's day"
    assert late(state="in_transit", eta="2026-12-05") is None, "due today is not late"
    assert late(state="in_transit", eta="2026-12-09") is None
    assert late(state="delivered", eta="2026-12-02") is None, "arrived: no promise left"
    assert late(state="in_transit", eta="soon") is None and late(state="in_transit") is None
    assert spec.due.days_overdue(["not", "a", "record"], today) is None

    with pytest.raises(PackError, match="only a read tool") as caught:
        parse_tool_specs(
            _one_tool(
                response_format=shipment,
                due=due,
                effect="write",
                http={"method": "POST", "url": "{backend_url}/x"},
            ),
            file="t.yaml",
        )
    assert caught.value.details["field"] == "due"
    with pytest.raises(PackError, match="'status'") as caught:
        parse_tool_specs(
            _one_tool(response_format=shipment, due={"date": "eta", "while": ["x"]}),
            file="t.yaml",
        )
    assert caught.value.details["field"] == "due.status"

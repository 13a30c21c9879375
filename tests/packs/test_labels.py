"""A pack's labels: every id the console shows has a name in both languages, typos are refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from hermes_desk.errors import PackError
from hermes_desk.packs import bundled_pack_path, load_labels, load_pack


@pytest.fixture
def pack_copy(tmp_path: Path) -> Path:
    target = tmp_path / "pack"
    shutil.copytree(bundled_pack_path("ecommerce"), target)
    return target


def test_the_bundled_pack_names_every_intent_workflow_step_and_tool() -> None:
    pack = load_pack("ecommerce")
    labels = load_labels(pack)
    assert set(labels.sections["intents"]) == set(pack.intents)
    assert set(labels.sections["workflows"]) == set(pack.workflows)
    assert set(labels.sections["tools"]) == {spec.name for spec in pack.tool_specs}
    steps = {s.name for w in pack.workflows.values() for p in w.phases for s in p.steps}
    assert set(labels.sections["steps"]) == steps
    slots = {slot for spec in pack.intents.values() for slot in spec.slots}
    assert set(labels.sections["slots"]) == slots
    assert labels.label("intents", "kb_question") == "政策咨询"
    assert labels.label("intents", "kb_question", "en") == "Policy question"
    assert labels.label("intents", "not_an_intent") == "not_an_intent"


def _write(pack: Path, data: object) -> None:
    (pack / "labels.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"intents": {"order_stauts": {"zh": "订单", "en": "Order"}}}, "[order_stauts]"),
        ({"tools": {"get_orders": {"zh": "查询", "en": "Get"}}}, "field 'tools'"),
        ({"steps": {"nope": {"zh": "步骤", "en": "Step"}}}, "unknown step"),
        ({"intents": {"oos": {"zh": "超出范围"}}}, "intents.oos.en"),
        ({"statuses": {"running": {"zh": "", "en": "running"}}}, "statuses.running.zh"),
        ({"colours": {}}, "colours"),
        (["not", "a", "mapping"], "expected a mapping"),
    ],
)
def test_bad_labels_are_refused_naming_file_and_id(
    pack_copy: Path, data: object, named: str
) -> None:
    _write(pack_copy, data)
    with pytest.raises(PackError) as caught:
        load_labels(load_pack(pack_copy))
    assert "labels.yaml" in str(caught.value) and named in str(caught.value)


def test_free_sections_and_a_pack_without_labels(pack_copy: Path) -> None:
    _write(pack_copy, {"terms": {"anything_goes": {"zh": "随意", "en": "Anything"}}})
    labels = load_labels(load_pack(pack_copy))
    assert labels.to_dict()["labels"]["terms"] == {
        "anything_goes": {"zh": "随意", "en": "Anything"}
    }
    (pack_copy / "labels.yaml").unlink()
    bare = load_labels(load_pack(pack_copy))
    assert bare.to_dict()["labels"]["intents"] == {} and bare.label("intents", "oos") == "oos"

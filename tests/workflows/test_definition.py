from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_desk.errors import PackError
from hermes_desk.packs.loader import bundled_pack_path
from hermes_desk.workflows import WorkflowDefinition, load_workflow_dir, load_workflow_file

PACK_WORKFLOWS = bundled_pack_path("ecommerce") / "workflows"

BASE = """
name: demo
inputs: {phone: {required: true}}
phases:
  - name: pre_check
    steps:
      - name: check
        tool: check_phone
        arguments: {phone: $inputs.phone}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "wf.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_pack_workflows_load_with_their_phases_and_modes() -> None:
    workflows = load_workflow_dir(PACK_WORKFLOWS)
    reset = workflows["password_reset"]
    assert [(p.name, p.mode) for p in reset.phases] == [
        ("pre_check", "sequence"),
        ("challenge", "sequence"),
        ("action", "sequence"),
        ("post_update", "sequence"),
    ]
    # The code verified is the one the customer brings, not the one just sent.
    verify = reset.step("verify_code")
    assert verify.wait_for == "sms_code"
    assert verify.arguments["code"] == "$inputs.sms_code"
    # Only the SMS code proves the customer: no captcha, and no password chosen by anyone.
    assert reset.tools() == {"check_phone", "send_sms_code", "verify_sms_code", "reset_password"}
    refund = workflows["return_refund"]
    assert refund.tools() == {"get_order", "create_return", "issue_refund"}
    assert refund.step("create_return").arguments["user_id"] == "$workflow.user"


def test_a_valid_file_loads(tmp_path: Path) -> None:
    definition = load_workflow_file(write(tmp_path, BASE))
    assert definition.step("check").tool == "check_phone"


@pytest.mark.parametrize(
    ("change", "item", "field", "words"),
    [
        (("mode: sequence", "mode: sometimes"), "pre_check", "mode", "sequence"),
        (("$inputs.phone", "$inputs.mobile"), "check", None, "not a declared input"),
        (("$inputs.phone", "$steps.nope.output.x"), "check", None, "no earlier step"),
        (
            ("tool: check_phone", "tool: check_phone\n        timeout_s: -1"),
            "check",
            "timeout_s",
            "",
        ),
        (
            ("tool: check_phone", "tool: check_phone\n        on_failure: elsewhere"),
            "check",
            None,
            "branch",
        ),
    ],
)
def test_invalid_files_name_file_step_and_field(
    tmp_path: Path, change: tuple[str, str], item: str, field: str | None, words: str
) -> None:
    text = BASE.replace("    steps:", "    mode: sequence\n    steps:")
    path = write(tmp_path, text.replace(*change))
    with pytest.raises(PackError) as caught:
        load_workflow_file(path)
    err = caught.value
    assert err.details["file"] == str(path)
    assert err.details["item"] == item
    if field is not None:
        assert err.details["field"] == field
    assert words in err.message


def test_unknown_tool_is_refused_when_tools_are_known(tmp_path: Path) -> None:
    with pytest.raises(PackError) as caught:
        load_workflow_file(write(tmp_path, BASE), known_tools={"send_sms_code"})
    assert caught.value.details["item"] == "check"
    assert caught.value.details["field"] == "tool"


def test_waiting_is_only_allowed_in_a_sequence_phase() -> None:
    with pytest.raises(ValueError, match="only a 'sequence' phase"):
        WorkflowDefinition.model_validate(
            {
                "name": "x",
                "phases": [
                    {"name": "p", "mode": "all", "steps": [{"name": "w", "wait_for": "code"}]}
                ],
            }
        )


@pytest.mark.parametrize(
    ("phases", "words"),
    [
        (  # names a step that does not exist
            [{"name": "p", "steps": [{"name": "a", "tool": "t", "when": "ghost"}]}],
            "when 'ghost' names no earlier step",
        ),
        (  # names a later step
            [
                {"name": "p", "steps": [{"name": "a", "tool": "t", "when": "b"}]},
                {"name": "q", "steps": [{"name": "b", "tool": "t"}]},
            ],
            "when 'b' names no earlier step",
        ),
        (  # in a parallel phase
            [
                {"name": "p", "steps": [{"name": "a", "tool": "t"}]},
                {"name": "q", "mode": "all", "steps": [{"name": "b", "tool": "t", "when": "a"}]},
            ],
            "have 'when': only a 'sequence' phase",
        ),
        (  # a result of a later step
            [
                {
                    "name": "p",
                    "steps": [
                        {"name": "a", "tool": "t", "when": "$steps.b.output.ok"},
                        {"name": "b", "tool": "t"},
                    ],
                }
            ],
            r"when '\$steps.b.output.ok' names no earlier step",
        ),
        (  # neither a step nor a step's result
            [
                {
                    "name": "p",
                    "steps": [
                        {"name": "a", "tool": "t"},
                        {"name": "b", "tool": "t", "when": "$inputs.ok"},
                    ],
                }
            ],
            "String should match pattern",
        ),
    ],
)
def test_conditions_name_an_earlier_step_in_a_sequence(phases: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        WorkflowDefinition.model_validate({"name": "x", "phases": phases})


def test_steps_in_a_parallel_phase_cannot_use_each_other() -> None:
    with pytest.raises(ValueError, match="no earlier step"):
        WorkflowDefinition.model_validate(
            {
                "name": "x",
                "phases": [
                    {
                        "name": "p",
                        "mode": "all",
                        "steps": [
                            {"name": "a", "tool": "t"},
                            {"name": "b", "tool": "t", "arguments": {"v": "$steps.a.output.v"}},
                        ],
                    }
                ],
            }
        )


def test_definitions_can_be_written_in_python() -> None:
    definition = WorkflowDefinition(
        name="py",
        phases=({"name": "p", "steps": ({"name": "s", "tool": "t"},)},),  # type: ignore[arg-type]
    )
    assert definition.step("s").tool == "t"


def test_missing_file_is_a_pack_error(tmp_path: Path) -> None:
    with pytest.raises(PackError):
        load_workflow_file(tmp_path / "absent.yaml")


def test_the_benchmarks_serial_reset_follows_the_sms_only() -> None:
    from hermes_desk.bench.workflows import serial_variant

    serial = serial_variant(load_workflow_dir(PACK_WORKFLOWS)["password_reset"], "serial")
    assert {phase.mode for phase in serial.phases} == {"sequence"}
    names = [step.name for _, step in serial.all_steps()]
    assert "verify_code" in names and "verify_captcha" not in names

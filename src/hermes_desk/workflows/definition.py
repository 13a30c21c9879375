"""Workflow definitions are data: phases of steps, validated when loaded.

A workflow is a list of phases run in order, plus optional *branches* (phases reached only through
a step's ``on_failure``). Each phase runs its steps in one of three modes:

- ``sequence``: one after another;
- ``all``: all at once, the phase ends when every step has succeeded (join);
- ``first``: all at once, the first step to *succeed* wins and the others are cancelled.

A step names a tool and maps its arguments from references:

- ``$inputs.<name>``: a workflow input or a slot brought by the customer;
- ``$steps.<step>.output.<field>``: the output of an earlier step;
- ``$workflow.id`` / ``$workflow.session_id``;
- ``"$inputs.amount ?? $steps.get_order.output.amount"``: the first that has a value.

A step with ``wait_for: <slot>`` suspends the workflow until a turn brings that slot (it may have no
tool: then it only waits). A step with ``when: <earlier step>`` runs only if that step succeeded
and is *skipped* otherwise: after a ``first`` phase, the steps that follow up on the winner (the
SMS code when the SMS went out first, the captcha answer when the captcha did). ``expect`` checks
fields of the output (``{valid: true}``; a list: one of its values, ``{status: [paid, shipped]}``);
a mismatch is a *rejection*, never retried. A rejected
step that waits for a slot asks again up to ``input_attempts`` times. ``on_failure`` is ``fail``,
``escalate`` or the name of a branch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic import ValidationError as PydanticValidationError

from hermes_desk.errors import PackError

__all__ = [
    "ESCALATE",
    "FAIL",
    "InputSpec",
    "Phase",
    "PhaseMode",
    "RetryPolicy",
    "Step",
    "WorkflowDefinition",
    "iter_references",
    "load_workflow_dir",
    "load_workflow_file",
    "when_step",
]

FAIL = "fail"
ESCALATE = "escalate"
PhaseMode = Literal["sequence", "all", "first"]
_NAME = r"^[a-z][a-z0-9_]*$"
_REF = re.compile(r"^\$(inputs|steps|workflow)\.([A-Za-z0-9_.]+)$")
_WHEN = r"^([a-z][a-z0-9_]*|\$steps\.[a-z][a-z0-9_]*\.output\.[A-Za-z0-9_.]+)$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RetryPolicy(_Strict):
    """Retries after an error or a timeout (never after a rejection or a cancellation).

    ``None`` fields take the service settings (``WorkflowSettings.max_retries`` …).
    """

    max_retries: int | None = Field(None, ge=0, le=20)
    backoff_s: float | None = Field(None, ge=0)
    multiplier: float = Field(2.0, ge=1)
    max_backoff_s: float = Field(5.0, ge=0)

    def delay(self, attempt: int, default_backoff_s: float) -> float:
        """Delay before retry number ``attempt`` (1-based)."""
        base = default_backoff_s if self.backoff_s is None else self.backoff_s
        return float(min(base * self.multiplier ** (attempt - 1), self.max_backoff_s))


class Step(_Strict):
    name: str = Field(pattern=_NAME)
    tool: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    wait_for: str | None = Field(None, pattern=_NAME)
    input_attempts: int = Field(3, ge=1, le=10)
    expect: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float | None = Field(None, gt=0)
    retry: RetryPolicy = RetryPolicy()
    on_failure: str | None = None
    #: run only if that earlier step succeeded (a step name), or only if an earlier step's result
    #: says so (``$steps.<step>.output.<field>``, true); else the step is skipped
    when: str | None = Field(None, pattern=_WHEN)
    approval: bool = False
    description: str = ""

    @model_validator(mode="after")
    def _has_work(self) -> Step:
        if self.tool is None and self.wait_for is None:
            raise ValueError("a step needs a 'tool', a 'wait_for' slot, or both")
        if self.tool is None and (self.arguments or self.expect):
            raise ValueError("'arguments' and 'expect' need a 'tool'")
        if self.approval and self.tool is None:
            raise ValueError("'approval' needs a 'tool' to approve")
        return self


class Phase(_Strict):
    name: str = Field(pattern=_NAME)
    mode: PhaseMode = "sequence"
    steps: tuple[Step, ...] = Field(min_length=1)
    on_failure: str | None = None

    @model_validator(mode="after")
    def _waits_in_sequence(self) -> Phase:
        if self.mode != "sequence":
            waiting = [s.name for s in self.steps if s.wait_for]
            if waiting:
                raise ValueError(f"steps {waiting} wait for input: only a 'sequence' phase may")
            approved = [s.name for s in self.steps if s.approval]
            if approved:
                raise ValueError(f"steps {approved} wait for approval: only a 'sequence' phase may")
            conditional = [s.name for s in self.steps if s.when]
            if conditional:
                raise ValueError(f"steps {conditional} have 'when': only a 'sequence' phase may")
        return self


class InputSpec(_Strict):
    """A workflow input. ``generate: secret`` fills a missing value once, at start."""

    required: bool = True
    default: Any = None
    generate: Literal["secret"] | None = None
    description: str = ""

    @model_validator(mode="after")
    def _one_source(self) -> InputSpec:
        if self.default is not None and self.generate is not None:
            raise ValueError("an input takes a 'default' or a 'generate', not both")
        return self


class WorkflowDefinition(_Strict):
    """A validated workflow. Step names are unique across phases and branches."""

    name: str = Field(pattern=_NAME)
    version: int = Field(1, ge=1)
    description: str = ""
    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    deadline_s: float | None = Field(None, gt=0)
    on_deadline: Literal["fail", "escalate"] = "escalate"
    phases: tuple[Phase, ...] = Field(min_length=1)
    branches: dict[str, tuple[Phase, ...]] = Field(default_factory=dict)
    branch_outcome: dict[str, Literal["completed", "failed", "escalated"]] = Field(
        default_factory=dict,
        description="final status once a branch has run (default: escalated)",
    )

    _steps: dict[str, Step] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        self._steps = {step.name: step for _, step in self.all_steps()}

    @model_validator(mode="after")
    def _consistent(self) -> WorkflowDefinition:
        seen: set[str] = set()
        phase_names: set[str] = set()
        for route, phases in self.routes():
            known_before = set(seen) if route == "main" else self._main_steps()
            for phase in phases:
                if phase.name in phase_names:
                    raise ValueError(f"phase name '{phase.name}' is used twice")
                phase_names.add(phase.name)
                for step in phase.steps:
                    if step.name in seen:
                        raise ValueError(f"step name '{step.name}' is used twice")
                    self._check_step(phase, step, known_before)
                    seen.add(step.name)
                    if phase.mode == "sequence":
                        known_before.add(step.name)
                known_before.update(s.name for s in phase.steps)
        for name in self.branch_outcome:
            if name not in self.branches:
                raise ValueError(f"branch_outcome names an unknown branch '{name}'")
        return self

    def _main_steps(self) -> set[str]:
        return {s.name for p in self.phases for s in p.steps}

    def _slots(self) -> set[str]:
        return {s.wait_for for _, s in self.all_steps() if s.wait_for}

    def _check_step(self, phase: Phase, step: Step, known_before: set[str]) -> None:
        for target in (step.on_failure, phase.on_failure):
            if target not in (None, FAIL, ESCALATE) and target not in self.branches:
                raise ValueError(
                    f"step '{step.name}': on_failure '{target}' is not 'fail', 'escalate' or a "
                    f"branch ({sorted(self.branches)})"
                )
        if step.when is not None and when_step(step.when) not in known_before:
            raise ValueError(f"step '{step.name}': when '{step.when}' names no earlier step")
        inputs = set(self.inputs) | self._slots()
        refs = [part.strip() for r in iter_references(step.arguments) for part in r.split("??")]
        for ref in refs:
            match = _REF.match(ref)
            if match is None:
                raise ValueError(f"step '{step.name}': bad reference '{ref}'")
            kind, path = match.groups()
            head = path.split(".")[0]
            if kind == "inputs" and head not in inputs:
                raise ValueError(f"step '{step.name}': '{ref}' is not a declared input or slot")
            if kind == "steps":
                parts = path.split(".")
                if len(parts) < 2 or parts[1] != "output":
                    raise ValueError(f"step '{step.name}': write '$steps.<step>.output[.field]'")
                if head not in known_before:
                    raise ValueError(f"step '{step.name}': '{ref}' names no earlier step")
            if kind == "workflow" and path not in ("id", "session_id", "tenant", "user"):
                raise ValueError(f"step '{step.name}': unknown '{ref}'")

    def routes(self) -> Iterator[tuple[str, tuple[Phase, ...]]]:
        """The main route (``"main"``) then each branch, with its phases."""
        yield "main", self.phases
        yield from self.branches.items()

    def route(self, name: str) -> tuple[Phase, ...]:
        return self.phases if name == "main" else self.branches[name]

    def all_steps(self) -> Iterator[tuple[Phase, Step]]:
        for _, phases in self.routes():
            for phase in phases:
                for step in phase.steps:
                    yield phase, step

    def step(self, name: str) -> Step:
        return self._steps[name]

    def tools(self) -> set[str]:
        return {s.tool for _, s in self.all_steps() if s.tool}


def when_step(when: str) -> str:
    """The earlier step a ``when`` names: itself, or the step of a ``$steps.…`` reference."""
    return when.split(".")[1] if when.startswith("$") else when


def iter_references(value: Any) -> Iterator[str]:
    """Every ``$…`` reference inside an argument mapping, recursively."""
    if isinstance(value, str):
        if value.startswith("$"):
            yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from iter_references(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from iter_references(item)


def load_workflow_file(
    path: str | Path, *, known_tools: Iterable[str] | None = None
) -> WorkflowDefinition:
    """Load and validate one workflow YAML file.

    Raises:
        PackError: naming the file, the step (or phase) and the field at fault.
    """
    file = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise PackError("workflow file is missing", file=file) from exc
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise PackError(f"not valid YAML: {exc}", file=file) from exc
    if not isinstance(data, dict):
        raise PackError("expected a mapping", file=file)
    try:
        definition = WorkflowDefinition.model_validate(data)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        item, field = _locate(data, [str(p) for p in err["loc"]])
        message = str(err["msg"]).removeprefix("Value error, ")
        step_in_message = re.search(r"step '([a-z0-9_]+)'", message)
        if item is None and step_in_message:
            item = step_in_message.group(1)
        raise PackError(message, file=file, item=item or data.get("name"), field=field) from exc
    if known_tools is not None:
        known = set(known_tools)
        for _, step in definition.all_steps():
            if step.tool and step.tool not in known:
                raise PackError(
                    f"tool '{step.tool}' is not defined", file=file, item=step.name, field="tool"
                )
    return definition


def load_workflow_dir(
    folder: str | Path, *, known_tools: Iterable[str] | None = None
) -> dict[str, WorkflowDefinition]:
    """Every ``*.yaml`` workflow of a folder, by name."""
    out: dict[str, WorkflowDefinition] = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        definition = load_workflow_file(path, known_tools=known_tools)
        if definition.name in out:
            raise PackError(f"workflow '{definition.name}' is defined twice", file=str(path))
        out[definition.name] = definition
    return out


def _locate(data: Any, loc: list[str]) -> tuple[str | None, str | None]:
    """Turn a pydantic error location into (step or phase name, field path)."""
    item: str | None = None
    field_start = 0
    node: Any = data
    for index, part in enumerate(loc):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            if isinstance(node, dict) and isinstance(node.get("name"), str):
                item = node["name"]
                field_start = index + 1
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            break
    field = ".".join(loc[field_start:]) or None
    return item, field

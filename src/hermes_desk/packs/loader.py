"""Load a domain pack folder, refusing bad packs with the file and field named.

A pack folder holds ``pack.yaml``, ``intents.yaml``, ``nlu.jsonl``, ``dialogues*.jsonl``,
``tools.yaml``, ``workflows/*.yaml``, ``replies.yaml``, ``compliance.yaml``, ``keyfacts.yaml``,
``acts.yaml``, ``dispositions.yaml`` (optional) and ``kb/*.md``. Tool specs and workflow
definitions are parsed by their own modules' loaders (which name the tool or step at fault); this
module checks the pack holds together: every intent's tools and workflow exist, every example's
and dialogue turn's intent is declared, every reply belongs to an intent, every reply template
and note label speaks every language of the pack, every dialogue act has its reply, every
disposition has its labels.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from hermes_desk.errors import PackError
from hermes_desk.nlu.dialogue_acts import ActPhrases
from hermes_desk.nlu.examples import Conversation
from hermes_desk.nlu.examples import Example as NluExample
from hermes_desk.nlu.extractors import SlotRule, rule_for
from hermes_desk.packs.dispositions import (
    DEFAULT_DISPOSITIONS,
    DispositionList,
    dispositions_file,
)
from hermes_desk.packs.models import (
    ComplianceRules,
    Dialogue,
    Example,
    IntentSpec,
    PackManifest,
)

__all__ = ["Pack", "bundled_pack_path", "load_dispositions", "load_pack"]

M = TypeVar("M", bound=BaseModel)

OUT_OF_SCOPE = "oos"


@dataclass(frozen=True)
class Pack:
    """A loaded, validated domain pack."""

    manifest: PackManifest
    root: Path
    intents: dict[str, IntentSpec]
    examples: tuple[Example, ...]
    dialogues: tuple[Dialogue, ...]
    replies: dict[str, dict[str, str | dict[str, str]]]
    compliance: ComplianceRules
    fingerprint: str
    tool_specs: tuple[Any, ...] = ()
    workflows: dict[str, Any] = field(default_factory=dict)
    #: Dialogue-act phrases, negative-emotion words and apologies (``acts.yaml``).
    acts: ActPhrases = field(default_factory=lambda: ActPhrases(phrases=()))
    #: Replies of the conversation itself (``replies.yaml`` → ``conversation``): dialogue acts
    #: (``act_thanks``…), the acknowledgement of negative emotion, stated preferences.
    conversation: dict[str, str | dict[str, str]] = field(default_factory=dict)
    #: Back-office values per language (``replies.yaml`` → ``terms``), for ``{field!t}``.
    terms: dict[str, dict[str, str]] = field(default_factory=dict)
    dispositions: DispositionList = DEFAULT_DISPOSITIONS
    #: How each slot of the pack is extracted, chosen from its schema (``intents.yaml``).
    slot_rules: dict[str, SlotRule] = field(default_factory=dict)
    #: Tool arguments the turn fills rather than a slot (``intents.yaml`` → ``arguments``):
    #: argument name → ``customer`` (the session's user id) or ``text`` (the customer's words).
    arguments: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def kb_dir(self) -> Path:
        return self.root / "kb"

    @property
    def tools_file(self) -> Path:
        return self.root / "tools.yaml"

    @property
    def workflows_dir(self) -> Path:
        return self.root / "workflows"

    @property
    def keyfacts_file(self) -> Path:
        return self.root / "keyfacts.yaml"

    def training_data(self) -> tuple[list[NluExample], list[Conversation]]:
        """``nlu.jsonl`` and ``dialogues*.jsonl`` as the intent model trains on them."""
        examples = [NluExample(e.text, e.intent, dict(e.slots)) for e in self.examples]
        dialogues = [
            Conversation(d.id, tuple(NluExample(t.text, t.intent) for t in d.turns))
            for d in self.dialogues
        ]
        return examples, dialogues

    def turn_arguments(self, *, user: str, text: str, language: str) -> dict[str, str]:
        """The values of the pack's turn arguments for one customer turn."""
        sources = {"customer": user, "text": text, "language": language}
        return {name: sources[source] for name, source in self.arguments.items()}

    @functools.cached_property
    def topic_phrases(self) -> tuple[str, ...]:
        """Every intent's ``kb_topic`` words: what a turn names when it says what it is about."""
        return tuple(dict.fromkeys(p for spec in self.intents.values() for p in spec.topic_phrases))

    def intent(self, name: str) -> IntentSpec:
        return self.intents.get(name) or self.intents[OUT_OF_SCOPE]

    def starter(self, workflow: str) -> IntentSpec | None:
        """The first intent of the pack that starts ``workflow``, or None."""
        return next((spec for spec in self.intents.values() if spec.workflow == workflow), None)

    def optional_file(self, name: str) -> Path | None:
        path = self.root / name
        return path if path.exists() else None


def bundled_pack_path(name: str) -> Path:
    return Path(str(resources.files("hermes_desk.packs") / name))


def _pack_root(name_or_path: str | Path) -> Path:
    root = Path(name_or_path)
    if not root.is_dir():
        candidate = bundled_pack_path(str(name_or_path))
        if not candidate.is_dir():
            raise PackError("no such pack folder or bundled pack", file=str(name_or_path))
        root = candidate
    return root


def load_dispositions(name_or_path: str | Path) -> DispositionList:
    """Only the pack's dispositions (what the API document lists), validated as in a load."""
    root = _pack_root(name_or_path)
    manifest = _model(PackManifest, _yaml(root / "pack.yaml"), root / "pack.yaml")
    return _load_dispositions(root, tuple(manifest.languages))


def load_pack(name_or_path: str | Path, *, variables: dict[str, str] | None = None) -> Pack:
    """Load and validate a pack: a bundled name (``ecommerce``) or a folder path."""
    root = _pack_root(name_or_path)
    manifest = _model(PackManifest, _yaml(root / "pack.yaml"), root / "pack.yaml")
    missing = [lang for lang in manifest.languages if manifest.rules and lang not in manifest.rules]
    if missing:
        raise PackError(
            f"the model's rules lack the pack's languages {missing}",
            file=str(root / "pack.yaml"),
            field="rules",
        )
    intents = _load_intents(root / "intents.yaml")
    slot_rules = _slot_rules(root / "intents.yaml", intents)
    arguments = _load_arguments(root / "intents.yaml")
    examples = _load_examples(root / "nlu.jsonl", intents)
    dialogues = _load_dialogues(root, intents)
    languages = tuple(manifest.languages)
    replies, conversation, terms = _load_replies(root / "replies.yaml", intents, languages)
    acts = _load_acts(root / "acts.yaml", conversation, root / "replies.yaml")
    _check_labels(root / "keyfacts.yaml", languages)
    compliance = _model(ComplianceRules, _yaml(root / "compliance.yaml"), root / "compliance.yaml")
    tool_specs = _load_tools(root / "tools.yaml", variables or {})
    workflows = _load_workflows(root / "workflows")
    _check_references(root, intents, tool_specs, workflows, arguments)
    _check_withdrawals(root / "acts.yaml", acts, tool_specs, workflows)
    dispositions = _load_dispositions(root, tuple(manifest.languages))
    return Pack(
        manifest=manifest,
        root=root,
        intents=intents,
        examples=examples,
        dialogues=dialogues,
        replies=replies,
        compliance=compliance,
        fingerprint=_fingerprint(root),
        tool_specs=tuple(tool_specs),
        workflows=workflows,
        acts=acts,
        conversation=conversation,
        terms=terms,
        dispositions=dispositions,
        slot_rules=slot_rules,
        arguments=arguments,
    )


def _yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PackError("required file is missing", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise PackError("file is not UTF-8 text", file=str(path)) from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PackError(f"not valid YAML: {exc}", file=str(path)) from exc


def _model(model: type[M], data: Any, path: Path, item: str | None = None) -> M:
    if not isinstance(data, dict):
        raise PackError("expected a mapping", file=str(path), item=item)
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or None
        raise PackError(err["msg"], file=str(path), item=item, field=where) from exc


def _load_intents(path: Path) -> dict[str, IntentSpec]:
    data = _yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("intents"), dict):
        raise PackError("expected a mapping under 'intents'", file=str(path), field="intents")
    intents = {
        name: _model(IntentSpec, {"name": name, **(body or {})}, path, item=name)
        for name, body in data["intents"].items()
    }
    if OUT_OF_SCOPE not in intents or not intents[OUT_OF_SCOPE].out_of_scope:
        raise PackError(
            "a pack must declare the out-of-scope intent 'oos' with out_of_scope: true",
            file=str(path),
            item=OUT_OF_SCOPE,
        )
    return intents


ARGUMENT_SOURCES = ("customer", "text", "language")


def _load_arguments(path: Path) -> dict[str, str]:
    """``arguments`` of ``intents.yaml`` (optional): tool argument → where its value comes from."""
    data = _yaml(path).get("arguments") or {}
    if not isinstance(data, dict):
        raise PackError("expected argument: source", file=str(path), field="arguments")
    for name, source in data.items():
        if source not in ARGUMENT_SOURCES:
            raise PackError(
                f"unknown source {source!r}; expected one of {list(ARGUMENT_SOURCES)}",
                file=str(path),
                field=f"arguments.{name}",
            )
    return {str(name): str(source) for name, source in data.items()}


def _slot_rules(path: Path, intents: dict[str, IntentSpec]) -> dict[str, SlotRule]:
    """Each slot's extraction rule, from its schema (``extractor``, ``format``, ``pattern``,
    ``listed``, ``tail``). A slot declared by several intents is extracted one way: the
    intents must agree on those fields."""
    rules: dict[str, SlotRule] = {}
    first: dict[str, str] = {}
    for intent in intents.values():
        for slot, schema in intent.slots.items():
            if not isinstance(schema, dict):
                raise PackError(
                    "expected a JSON Schema mapping", file=str(path), item=intent.name,
                    field=f"slots.{slot}",
                )  # fmt: skip
            try:
                rule = rule_for(slot, schema)
            except ValueError as exc:
                where, _, message = str(exc).partition(": ")
                raise PackError(
                    message, file=str(path), item=intent.name, field=f"slots.{slot}.{where}"
                ) from exc
            known = rules.get(slot)
            if known is None:
                rules[slot], first[slot] = rule, intent.name
            elif _extraction(known) != _extraction(rule):
                raise PackError(
                    f"slot '{slot}' is extracted otherwise under intent '{first[slot]}': "
                    "give it the same pattern, format, extractor, listed and tail everywhere",
                    file=str(path),
                    item=intent.name,
                    field=f"slots.{slot}",
                )
    return rules


def _extraction(rule: SlotRule) -> tuple[Any, ...]:
    options = {k: v for k, v in rule.options.items() if not k.startswith("_")}
    pattern = rule.pattern.pattern if rule.pattern is not None else None
    return rule.extractor, sorted(options.items(), key=str), pattern, rule.listed, rule.tail


def _jsonl(path: Path, model: type[M]) -> list[tuple[str, M]]:
    """Each non-blank line of ``path`` parsed as ``model``, with its ``line N`` label."""
    out: list[tuple[str, M]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        item = f"line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PackError(f"not valid JSON: {exc.msg}", file=str(path), item=item) from exc
        out.append((item, _model(model, data, path, item=item)))
    return out


def _check_intent(example: Example, intents: dict[str, IntentSpec], path: Path, item: str) -> None:
    if example.intent not in intents:
        raise PackError(
            f"intent '{example.intent}' is not declared in intents.yaml",
            file=str(path),
            item=item,
            field="intent",
        )


def _load_examples(path: Path, intents: dict[str, IntentSpec]) -> tuple[Example, ...]:
    if not path.exists():
        return ()
    examples = _jsonl(path, Example)
    for item, example in examples:
        _check_intent(example, intents, path, item)
    return tuple(example for _, example in examples)


def _load_dialogues(root: Path, intents: dict[str, IntentSpec]) -> tuple[Dialogue, ...]:
    """Labelled training conversations for the context model, from ``dialogues*.jsonl``."""
    dialogues: list[Dialogue] = []
    for path in sorted(root.glob("dialogues*.jsonl")):
        for item, dialogue in _jsonl(path, Dialogue):
            for turn in dialogue.turns:
                _check_intent(turn, intents, path, f"{item} ({dialogue.id})")
            dialogues.append(dialogue)
    return tuple(dialogues)


Template = str | dict[str, str]


def _load_replies(
    path: Path, intents: dict[str, IntentSpec], languages: tuple[str, ...]
) -> tuple[dict[str, dict[str, Template]], dict[str, Template], dict[str, dict[str, str]]]:
    """Templates per intent and situation, the conversation's own (``conversation``), and the
    back-office terms per language (``terms``).

    A template is a mapping with one string for each of the pack's languages; a missing one
    fails the load, naming the file and the key. A bare string is a template only in a pack of
    one language."""
    data = _yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("replies"), dict):
        raise PackError("expected a mapping under 'replies'", file=str(path), field="replies")
    replies: dict[str, dict[str, Template]] = {}
    for intent, situations in data["replies"].items():
        if intent not in intents:
            raise PackError("reply for an undeclared intent", file=str(path), item=str(intent))
        if not isinstance(situations, dict):
            raise PackError("expected situation: template", file=str(path), item=str(intent))
        for situation, template in situations.items():
            _check_template(template, languages, path, f"{intent}.{situation}")
        replies[intent] = dict(situations)
    conversation = data.get("conversation") or {}
    if not isinstance(conversation, dict):
        raise PackError("expected situation: template", file=str(path), field="conversation")
    for situation, template in conversation.items():
        _check_template(template, languages, path, f"conversation.{situation}")
    terms = data.get("terms") or {}
    if not isinstance(terms, dict):
        raise PackError("expected value: {language: text}", file=str(path), field="terms")
    for value, shown in terms.items():
        if not isinstance(shown, dict):
            raise PackError("expected {language: text}", file=str(path), item=f"terms.{value}")
        _check_template(shown, languages, path, f"terms.{value}")
    return replies, dict(conversation), {str(k): dict(v) for k, v in terms.items()}


def _check_template(template: Any, languages: tuple[str, ...], path: Path, where: str) -> None:
    if isinstance(template, dict):
        missing = [lang for lang in languages if not isinstance(template.get(lang), str)]
        if missing:
            raise PackError(
                f"template lacks the pack's languages {missing}", file=str(path), item=where
            )
    elif isinstance(template, str):
        if len(languages) > 1:
            raise PackError(
                f"a bare string speaks one language: give one text per language {list(languages)}",
                file=str(path),
                item=where,
            )
    else:
        raise PackError(
            "expected a template string or {language: string}", file=str(path), item=where
        )


def _load_acts(path: Path, conversation: dict[str, Template], replies_file: Path) -> ActPhrases:
    """``acts.yaml`` (optional): every act it lists needs its reply ``conversation.act_<name>``,
    and negative-emotion words need ``conversation.acknowledge``."""
    if not path.exists():
        return ActPhrases(phrases=())
    acts = ActPhrases.from_dict(_yaml(path), file=str(path))
    needed = {f"act_{name}" for _phrase, name in acts.phrases if name is not None}
    if acts.negative:
        needed.add("acknowledge")
    for situation in sorted(needed - set(conversation)):
        raise PackError(
            "acts.yaml names it but no reply answers it",
            file=str(replies_file),
            item=f"conversation.{situation}",
        )
    return acts


def _check_labels(path: Path, languages: tuple[str, ...]) -> None:
    """Every note label of ``keyfacts.yaml`` (and every value's label) in every language."""
    if not path.exists():
        return
    data = _yaml(path)
    labels = data.get("labels") if isinstance(data, dict) else None
    for key, label in (labels or {}).items():
        if not isinstance(label, dict):
            raise PackError("expected {language: text}", file=str(path), item=f"labels.{key}")
        missing = [lang for lang in languages if not isinstance(label.get(lang), str)]
        if missing:
            raise PackError(
                f"note label lacks the pack's languages {missing}",
                file=str(path),
                item=f"labels.{key}",
            )
    note = data.get("open_contact_note") if isinstance(data, dict) else None
    if isinstance(note, dict) and any(not isinstance(note.get(lang), str) for lang in languages):
        raise PackError(
            f"open contact note needs one text per language {list(languages)}",
            file=str(path),
            item="open_contact_note",
        )
    values = data.get("values") if isinstance(data, dict) else None
    for key, by_value in (values or {}).items():
        for value, label in (by_value or {}).items():
            where = f"values.{key}.{value}"
            if not isinstance(label, dict) or any(
                not isinstance(label.get(lang), str) for lang in languages
            ):
                raise PackError(
                    f"value label needs one text per language {list(languages)}",
                    file=str(path),
                    item=where,
                )


def _load_tools(path: Path, variables: dict[str, str]) -> list[Any]:
    if not path.exists():
        return []
    from hermes_desk.tools import load_tool_specs

    return list(load_tool_specs(path, variables=variables))


def _load_workflows(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        return {}
    from hermes_desk.workflows import load_workflow_file

    workflows: dict[str, Any] = {}
    for path in sorted(folder.glob("*.yaml")):
        definition = load_workflow_file(path)
        workflows[definition.name] = definition
    return workflows


def _load_dispositions(root: Path, languages: tuple[str, ...]) -> DispositionList:
    """``dispositions.yaml`` (optional): every label in each of the pack's languages."""
    path = dispositions_file(root)
    if not path.exists():
        return DEFAULT_DISPOSITIONS
    found = _model(DispositionList, _yaml(path), path)
    for disposition_id, language in found.check_languages(languages):
        raise PackError(
            f"label lacks the pack's language {language!r}",
            file=str(path),
            item=disposition_id,
            field="label",
        )
    return found


def _check_references(
    root: Path,
    intents: dict[str, IntentSpec],
    tool_specs: list[Any],
    workflows: dict[str, Any],
    arguments: dict[str, str],
) -> None:
    intents_file = str(root / "intents.yaml")
    known_tools = {spec.name for spec in tool_specs} | {"kb_search"}
    effects = {spec.name: spec.effect for spec in tool_specs}
    texts = {name for name, source in arguments.items() if source == "text"}
    carry_text = {
        spec.name
        for spec in tool_specs
        if spec.effect == "write" and texts & set(spec.parameters.get("properties", {}))
    }
    for intent in intents.values():
        for tool_name in intent.tools:
            if tool_specs and tool_name not in known_tools:
                raise PackError(
                    f"tool '{tool_name}' is not defined in tools.yaml",
                    file=intents_file,
                    item=intent.name,
                    field="tools",
                )
        named = [("kb_record", intent.kb_record), ("record_check", intent.record_check)]
        named += [("kb_record_detail", tool) for tool in intent.kb_record_detail.values()]
        named += [("calls_detail", tool) for tool in intent.calls_detail.values()]
        for key, tool in named:
            # A write named here would be skipped silently: the record never looked up.
            if tool is not None and effects.get(tool, "read") != "read":
                raise PackError(
                    f"'{tool}' is not a read tool (effect {effects[tool]})",
                    file=intents_file,
                    item=intent.name,
                    field=key,
                )
        if intent.bare_requests and tool_specs and not carry_text & set(intent.calls):
            # Nothing to ask the customer for: the reply would have no question to put.
            raise PackError(
                "the intent calls no write with an argument from the turn's words (text)",
                file=intents_file,
                item=intent.name,
                field="bare_requests",
            )
        if intent.workflow and workflows and intent.workflow not in workflows:
            raise PackError(
                f"workflow '{intent.workflow}' is not defined under workflows/",
                file=intents_file,
                item=intent.name,
                field="workflow",
            )


def _check_withdrawals(
    path: Path, acts: ActPhrases, tool_specs: list[Any], workflows: dict[str, Any]
) -> None:
    """Every name a ``withdrawals_of`` group takes back is one of the pack's tools or
    workflows: a misspelt one would let its phrases take back nothing."""
    known = {spec.name for spec in tool_specs} | set(workflows)
    for i, (names, _phrases) in enumerate(acts.withdrawals_of):
        for name in sorted(names - known):
            raise PackError(
                f"'{name}' is neither a tool of tools.yaml nor a workflow under workflows/",
                file=str(path),
                item=f"withdrawals_of[{i}]",
                field="takes_back",
            )


def _fingerprint(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]

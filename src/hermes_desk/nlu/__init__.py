"""Intent and slot understanding (dual channel): a light classifier with calibrated confidence
and an out-of-scope threshold, deterministic slot extractors, a validated model slot channel
and dialogue state that carries intent and slots between turns.

Importing this package loads neither sklearn nor jieba; backends import them when used.
"""

from hermes_desk.nlu.acts import (
    DialogueAct,
    asks_for,
    asks_for_something,
    asks_if_allowed,
    asks_if_done,
    asks_when,
    asks_why,
    mentions,
    named,
    reports,
    request_act,
    tells_what_happened,
)
from hermes_desk.nlu.cache import load_or_train
from hermes_desk.nlu.context import ContextModel, TurnReader, train_turn_reader
from hermes_desk.nlu.dates import DateMention, find_dates
from hermes_desk.nlu.evaluate import (
    ConversationReport,
    EvaluationReport,
    evaluate,
    evaluate_conversation_modes,
    evaluate_conversations,
)
from hermes_desk.nlu.examples import Conversation, Example, load_conversations, load_examples
from hermes_desk.nlu.extractors import EXTRACTORS, SlotRule, rule_for
from hermes_desk.nlu.intent import (
    CLASSIFIER_KINDS,
    OOS,
    IntentClassifier,
    IntentPrediction,
    apply_threshold,
    build_classifier,
    load_classifier,
)
from hermes_desk.nlu.model_slots import RejectedSlot, merge_model_slots
from hermes_desk.nlu.references import Reference, find_reference, normalise_ids
from hermes_desk.nlu.slots import SlotExtractor, extract_durations, slot_rules
from hermes_desk.nlu.state import (
    DialogueState,
    ResolvedIntent,
    asks_the_same_of,
    is_acknowledgement,
    is_follow_up,
    is_short,
    is_slot_only,
    mention_key,
    only_changes_to,
)

__all__ = [
    "CLASSIFIER_KINDS",
    "EXTRACTORS",
    "OOS",
    "ContextModel",
    "Conversation",
    "ConversationReport",
    "DateMention",
    "DialogueAct",
    "DialogueState",
    "EvaluationReport",
    "Example",
    "IntentClassifier",
    "IntentPrediction",
    "Reference",
    "RejectedSlot",
    "ResolvedIntent",
    "SlotExtractor",
    "SlotRule",
    "TurnReader",
    "apply_threshold",
    "asks_for",
    "asks_for_something",
    "asks_if_allowed",
    "asks_if_done",
    "asks_the_same_of",
    "asks_when",
    "asks_why",
    "build_classifier",
    "evaluate",
    "evaluate_conversation_modes",
    "evaluate_conversations",
    "extract_durations",
    "find_dates",
    "find_reference",
    "is_acknowledgement",
    "is_follow_up",
    "is_short",
    "is_slot_only",
    "load_classifier",
    "load_conversations",
    "load_examples",
    "load_or_train",
    "mention_key",
    "mentions",
    "merge_model_slots",
    "named",
    "normalise_ids",
    "only_changes_to",
    "reports",
    "request_act",
    "rule_for",
    "slot_rules",
    "tells_what_happened",
    "train_turn_reader",
]

"""Personal numbers masked wherever a conversation is kept (spec D3).

Phones, ID-card numbers, bank-card numbers, e-mail addresses, one-time codes and passwords (said
after their name: "新密码设成abc12345") are found in free text by pattern and in structured data by
key name (``phone``, ``sms_code``, ``email``…), and replaced by a masked form that keeps the
shape and the last digits an agent reads back (``139****5678``, ``****************1234``,
``z***@example.com``). Masking is applied where something is *stored or shown* — the session
transcript and slots, the archive, short-term facts handed to memory, events, summaries, the
WebSocket echo — never to what a turn is working on: the turn reads the clear text, and a
running workflow keeps the clear values its steps need in its own state until it ends (then its
snapshot is masked too).

Each tenant may turn masking off or choose the kinds (``privacy`` settings). A masked value is
recognisable (:func:`is_masked`): it is no use as a slot value and is not carried to the next
turn as one.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from hermes_desk.config import MASK_KINDS, MaskKind, PrivacySettings
from hermes_desk.events import Event, EventSink

__all__ = ["MASK_KINDS", "Masker", "Masking", "MaskingSink", "is_masked"]

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*(@[A-Za-z0-9.-]+\.[A-Za-z]{2,})"
)
# Mainland resident ID: 6-digit area, birth date (18xx–20xx), 3-digit sequence, check character.
_ID_CARD = re.compile(
    r"(?<![0-9A-Za-z])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
    r"\d{3}[\dXx](?![0-9A-Za-z])"
)
# 16–19 digits, optionally grouped by spaces or dashes (card numbers read out in fours).
_BANK_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){15,18}(?![\d])")
# Mainland mobile (optional +86, 3-4-4 groups) and landline with an area code (010-12345678).
_PHONE = re.compile(
    r"(?<![\d+])(?:(?:\+|00)?86[\s-]?)?1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}(?!\d)"
    r"|(?<!\d)0\d{2,3}-\d{7,8}(?!\d)"
)
# A one-time code said next to its name: 验证码是 123456, "the code is 4821".
_CODE = re.compile(
    r"((?:验证码|校验码|动态码|短信码|动态密码|\b(?:sms\s+)?code|\botp|\bpasscode|\bpin)"
    r"[^\d\n]{0,12}?)(\d{4,8})(?!\d)",
    re.IGNORECASE,
)
# A password said after its name ("新密码我想设成abc12345", "my password is Hunter22!"): the run of
# printable ASCII after it. No tool takes a password from the chat (a reset texts a temporary
# one), so masking it everywhere costs nothing. After a word that may name something else
# ("password reset link", "password is wrong") only a value with a digit or a sign is one.
_PASSWORD = re.compile(
    r"((?:密码|口令|\bpass(?:word|wd)|\bpwd)[^\S\n]*"
    r"(?P<said>(?:[\u4e00-\u9fff]{0,4}?(?:是|为|设成|设为|设置成|改成|改为|换成)|[:：=])[^\S\n]*"
    r"|(?:is|was|to|as)[^\S\n]+)?)"
    r"([A-Za-z0-9][!-~]{3,63})(?![!-~])",
    re.IGNORECASE,
)
_DIGIT_OR_SIGN = re.compile(r"[^A-Za-z'-]")  # "isn't", "e-mail": words
_PASSWORD_SAID = re.compile(r"[^\sA-Za-z]")  # 是, 设成, ":" — not "is" / "to"
_ENDS = ".,;:!?)]}'\""
# Keys whose values are personal or secret whatever they look like, by word (``sms_code``,
# ``customer_phone``); ``*_tail`` keys hold the last digits on purpose.
_SENSITIVE_WORDS = frozenset(
    {"phone", "mobile", "tel", "password", "passwd", "pwd", "secret", "token", "otp", "captcha"}
    | {"passcode", "email", "mail", "idcard", "iban"}
)
_SENSITIVE_PAIRS = frozenset(
    {("sms", "code"), ("verify", "code"), ("verification", "code"), ("id", "card")}
    | {("bank", "card"), ("card", "no"), ("card", "number"), ("e", "mail")}
)
_MASKED = re.compile(r"\*{3,}")
# Full-width digits and signs (１３９…, ＠) read as their ASCII forms, one character for one.
_FULL_WIDTH = str.maketrans("０１２３４５６７８９＠．－＋", "0123456789@.-+")
_STAR: Final = "*"


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit() or ch in "Xx")


def _mask_phone(match: re.Match[str]) -> str:
    said = match.group(0)
    digits = _digits(said)
    if said.startswith("0") and not said.startswith("00"):  # a landline: area code kept
        area = said.split("-", 1)[0]
        return area + "-" + _STAR * (len(digits) - len(area) - 2) + digits[-2:]
    digits = digits[-11:]  # without the country code
    return digits[:3] + _STAR * 4 + digits[-4:]


def _mask_id_card(match: re.Match[str]) -> str:
    value = match.group(0)
    return _STAR * (len(value) - 4) + value[-4:]


def _mask_bank_card(match: re.Match[str]) -> str:
    digits = _digits(match.group(0))
    return _STAR * (len(digits) - 4) + digits[-4:]


def _mask_email(match: re.Match[str]) -> str:
    return f"{match.group(1)}***{match.group(2)}"


# "验证码已发送到尾号 8000 的手机": the digits after these words are a phone's last four, which
# the agent reads back — not the code.
_TAIL = re.compile(r"尾号|末四位|后四位|ending(?:\s+in|\s+with)?|ends\s+(?:in|with)", re.IGNORECASE)


def _mask_code(match: re.Match[str]) -> str:
    if _TAIL.search(match.group(1)):
        return match.group(0)
    return match.group(1) + _STAR * len(match.group(2))


def _mask_password(match: re.Match[str]) -> str:
    said, value = match.group("said") or "", match.group(3)
    # a sentence's own sign after a word is no password's ("Your password is reset;")
    if not _PASSWORD_SAID.search(said) and not _DIGIT_OR_SIGN.search(value.rstrip(_ENDS)):
        return match.group(0)  # "password reset", "password is wrong"
    return match.group(1) + _STAR * 6  # its length is no one's business either


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: MaskKind
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]
    # A part of every match that is quick to look for: where it is absent the pattern cannot
    # match, so the slow scan (lookbehinds at every position) is skipped.
    hint: re.Pattern[str]

    def apply(self, text: str) -> str:
        if self.hint.search(text) is None:
            return text
        return self.pattern.sub(self.replace, text)


# Order matters: an e-mail may hold digits, an ID card is 18 digits (a card-length run), and a
# card number may contain what looks like a phone.
_RULES: tuple[_Rule, ...] = (
    _Rule("email", _EMAIL, _mask_email, re.compile("@")),
    _Rule("id_card", _ID_CARD, _mask_id_card, re.compile(r"[1-9]\d{16}")),
    _Rule("bank_card", _BANK_CARD, _mask_bank_card, re.compile(r"\d[\d -]{15,}")),
    _Rule(
        "phone", _PHONE, _mask_phone, re.compile(r"1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}|0\d{2,3}-\d{7}")
    ),
    # The last three characters of a code's name, as IGNORECASE matches them (ASCII letters,
    # and the dotted and dotless i for an i); the class in front lets the scan skip the rest.
    _Rule(
        "code",
        _CODE,
        _mask_code,
        re.compile(
            r"[码eEpPnN](?<=验证码|校验码|动态码|短信码|态密码|[oO][dD][eE]|[oO][tT][pP]|[pP][iIİı][nN])"
        ),
    ),
    _Rule("password", _PASSWORD, _mask_password, re.compile(r"密码|口令|(?i:pass|pwd)")),
)
# Every pattern needs an '@' or four digits in a row (a card's may be spaced or dashed), in
# ASCII or full width, or a password's name: text without any is returned at once.
_MAYBE_PERSONAL = re.compile(r"[@＠]|\d(?:[ \-－]?\d){3}|密码|口令|(?i:pass|pwd)")
_FULL_WIDTH_CHAR = re.compile("[０-９＠．－＋]")
_SPLIT_KEY = re.compile(r"[_\-.\s]+")


@functools.lru_cache(maxsize=4096)
def _sensitive_key(key: str) -> bool:
    words = _SPLIT_KEY.split(key.lower())
    if not words or words[-1] == "tail":
        return False
    if any(word in _SENSITIVE_WORDS for word in words):
        return True
    return any(pair in _SENSITIVE_PAIRS for pair in itertools.pairwise(words))


def is_masked(value: Any) -> bool:
    """Whether ``value`` is (or holds) a masked personal number: no use as a slot value."""
    if isinstance(value, str):
        return bool(_MASKED.search(value))
    if isinstance(value, Mapping):
        return any(is_masked(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(is_masked(v) for v in value)
    return False


@functools.lru_cache(maxsize=64)
def _rules_for(kinds: frozenset[MaskKind]) -> tuple[_Rule, ...]:
    return tuple(r for r in _RULES if r.kind in kinds)


def _apply_rules(kinds: frozenset[MaskKind], text: str) -> str:
    for rule in _rules_for(kinds):
        text = rule.apply(text)
    return text


# A turn masks the same short texts over and over (its order number in the slots, the tool's
# arguments and answer, the events, the stored turn; dates): about five in six calls repeat a
# text masked before (measured over the turn-CPU bench). The answer depends on the kinds and the
# text only; short texts are kept (at most 8,192 of up to 256 characters).
_CACHED_CHARS = 256
_masked_short = functools.lru_cache(maxsize=8192)(_apply_rules)


@dataclass(frozen=True, slots=True)
class Masker:
    """Masks the chosen kinds; a masker with no kinds returns everything as it is."""

    kinds: frozenset[MaskKind] = frozenset(MASK_KINDS)

    @property
    def enabled(self) -> bool:
        return bool(self.kinds)

    def text(self, text: str) -> str:
        """``text`` with every personal number of the chosen kinds masked."""
        if not self.kinds or not text or _MAYBE_PERSONAL.search(text) is None:
            return text
        plain = text.translate(_FULL_WIDTH) if _FULL_WIDTH_CHAR.search(text) else text
        if plain != text:
            # A number typed in full-width digits is the same number: masked in ASCII digits.
            masked = self._masked(plain)
            if masked != plain:
                return masked
        return self._masked(text)

    def _masked(self, text: str) -> str:
        if len(text) > _CACHED_CHARS:
            return _apply_rules(self.kinds, text)
        return _masked_short(self.kinds, text)

    def data(self, value: Any, *, key: str | None = None) -> Any:
        """A copy of ``value`` (JSON-like) with strings masked; values under sensitive keys
        (``phone``, ``sms_code``, ``email``…) are masked whatever they look like."""
        if not self.kinds:
            return value
        return self._value(value, key)

    def _value(self, value: Any, key: str | None) -> Any:
        # The JSON types first, by exact type (an ABC check costs more than the masking of most
        # values); anything else takes the general path, which gives the same answers for them.
        kind = type(value)
        if kind is str:
            if key is not None and _sensitive_key(key):
                return self._secret(value)
            return self.text(value)
        if kind is dict:
            return {k: self._value(v, k if type(k) is str else str(k)) for k, v in value.items()}
        if kind is list or kind is tuple:
            return [self._value(v, key) for v in value]
        if value is None or kind is bool:
            return value
        if kind is int or kind is float:
            return self._secret(str(value)) if key is not None and _sensitive_key(key) else value
        return self._other(value, key)

    def _other(self, value: Any, key: str | None) -> Any:
        if isinstance(value, Mapping):
            return {k: self._value(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(v, key) for v in value]
        if key is not None and value is not None and _sensitive_key(key):
            if isinstance(value, bool):
                return value
            return self._secret(str(value))
        if isinstance(value, str):
            return self.text(value)
        return value

    def _secret(self, text: str) -> str:
        """A value under a sensitive key: masked by pattern, or else all but its end."""
        masked = self.text(text)
        if masked != text or is_masked(text):  # masked already: kept as it is
            return masked
        return _STAR * max(len(text) - 2, 3) + text[-2:] if len(text) > 2 else _STAR * 3

    def prose(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` with free text masked (a ticket's description quoting the customer)
        and the values under sensitive keys kept clear: a write waiting for its approval needs
        the phone it is for, not the phone someone said in passing."""
        return {k: v if _sensitive_key(str(k)) else self.data(v) for k, v in arguments.items()}

    def json(self, document: str) -> str:
        """A JSON document with every string in it masked (keys kept)."""
        if not self.kinds:
            return document
        return json.dumps(
            self.data(json.loads(document)), ensure_ascii=False, separators=(",", ":")
        )


class Masking:
    """The maskers of every tenant, from the ``privacy`` settings."""

    def __init__(self, settings: PrivacySettings | None = None) -> None:
        self.settings = settings or PrivacySettings()
        self._default = Masker(
            frozenset(self.settings.kinds) if self.settings.mask else frozenset()
        )
        self._tenants = {
            tenant: Masker(
                frozenset(override.kinds if override.kinds is not None else self.settings.kinds)
                if override.mask
                else frozenset()
            )
            for tenant, override in self.settings.tenants.items()
        }

    def for_tenant(self, tenant: str) -> Masker:
        """The tenant's masker (the default one unless the tenant has its own settings)."""
        return self._tenants.get(tenant, self._default)


class MaskingSink:
    """An :class:`~hermes_desk.events.EventSink` that masks every event's data before handing
    it on: a tool's free-text arguments (a knowledge-base query), an alert quoting the
    customer… whoever emits it, no sink behind this one sees a clear personal number. The
    event's ``tenant`` (when it names one) chooses the masker."""

    def __init__(self, inner: EventSink, masking: Masking) -> None:
        self._inner = inner
        self._masking = masking

    def emit(self, event: Event) -> None:
        tenant = event.data.get("tenant")
        mask = self._masking.for_tenant(tenant if isinstance(tenant, str) else "")
        if mask.enabled:
            event = Event(event.name, event.request_id, event.at, mask.data(event.data))
        self._inner.emit(event)

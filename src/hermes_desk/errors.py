"""The one exception tree of Hermes Desk.

::

    HermesError
    ├── MisuseError                 the caller or the configuration is wrong (never retried)
    │   ├── ConfigError             settings are invalid
    │   ├── PackError               a domain pack file is invalid (file, tool/item, field named)
    │   ├── ValidationError         input failed its schema (field named)
    │   ├── NotFoundError           unknown id, or an id that belongs to someone else
    │   ├── ConflictError           the request clashes with the current state (closed session)
    │   └── MissingExtraError       an optional dependency is not installed (names the extra)
    ├── FailureError                something outside failed; ``retryable``: may a retry help
    │   ├── BackendError            a business system, store or model answered badly
    │   ├── BackendTimeoutError     it did not answer in time
    │   └── BackendUnavailableError it cannot be reached (connection refused, breaker open)
    └── Signal                      not a failure: control flow a turn must honour
        ├── NeedsCustomerInput      wait for the customer to bring a slot
        └── EscalateToHuman         hand the conversation to a person

Third-party exceptions are translated into this tree where they are caught (``raise … from exc``).
The HTTP layer maps the tree to status codes in one place (``hermes_desk.api.errors``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BackendError",
    "BackendTimeoutError",
    "BackendUnavailableError",
    "ConfigError",
    "ConflictError",
    "EscalateToHuman",
    "FailureError",
    "HermesError",
    "MissingExtraError",
    "MisuseError",
    "NeedsCustomerInput",
    "NotFoundError",
    "PackError",
    "Signal",
    "ValidationError",
]


class HermesError(Exception):
    """Root of every error Hermes Desk raises on purpose."""

    code = "hermes_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class MisuseError(HermesError):
    code = "misuse"


class ConfigError(MisuseError):
    code = "config_error"


class PackError(MisuseError):
    """A domain pack is invalid. Always names the file, and the item and field when known."""

    code = "pack_error"

    def __init__(
        self, message: str, *, file: str, item: str | None = None, field: str | None = None
    ) -> None:
        where = file + (f" [{item}]" if item else "") + (f" field '{field}'" if field else "")
        super().__init__(f"{where}: {message}", file=file, item=item, field=field)


class ValidationError(MisuseError):
    code = "validation_error"


class NotFoundError(MisuseError):
    code = "not_found"


class ConflictError(MisuseError):
    code = "conflict"


class MissingExtraError(MisuseError):
    code = "missing_extra"

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(
            f"{feature} needs the optional dependencies: pip install 'hermes-desk[{extra}]'",
            extra=extra,
        )


class FailureError(HermesError):
    code = "failure"
    retryable = False


class BackendError(FailureError):
    code = "backend_error"


class BackendTimeoutError(FailureError):
    code = "backend_timeout"
    retryable = True


class BackendUnavailableError(FailureError):
    code = "backend_unavailable"
    retryable = True


class Signal(HermesError):
    code = "signal"


class NeedsCustomerInput(Signal):
    code = "needs_customer_input"

    def __init__(self, slot: str, prompt: str | None = None) -> None:
        super().__init__(f"waiting for the customer to provide '{slot}'", slot=slot)
        self.slot = slot
        self.prompt = prompt


class EscalateToHuman(Signal):
    code = "escalate_to_human"

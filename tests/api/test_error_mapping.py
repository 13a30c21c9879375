"""Every error of the tree maps to a deliberate HTTP status (no accidental 500s)."""

from __future__ import annotations

import inspect

import hermes_desk.errors as errors
from hermes_desk.api.errors import Unauthorized, status_for

EXPECTED = {
    "NotFoundError": 404,
    "ConflictError": 409,
    "ValidationError": 422,
    "MisuseError": 400,
    "MissingExtraError": 400,
    "PackError": 500,
    "ConfigError": 500,
    "BackendTimeoutError": 504,
    "BackendUnavailableError": 503,
    "BackendError": 502,
    "FailureError": 502,
}


def _instance(kind: type[errors.HermesError]) -> errors.HermesError:
    if kind is errors.PackError:
        return errors.PackError("bad", file="f.yaml")
    if kind is errors.MissingExtraError:
        return errors.MissingExtraError("x", "llm")
    if kind is errors.NeedsCustomerInput:
        return errors.NeedsCustomerInput("sms_code")
    return kind("message")


def test_every_error_class_has_an_intended_status() -> None:
    classes = {
        name: cls
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.HermesError) and name in errors.__all__
    }
    signals = {"Signal", "NeedsCustomerInput", "EscalateToHuman", "HermesError"}
    assert set(classes) == set(EXPECTED) | signals, "a new error needs a status here"
    for name, status in EXPECTED.items():
        assert status_for(_instance(classes[name])) == status, name
    assert status_for(Unauthorized("no key")) == 401


def test_error_bodies_name_the_problem() -> None:
    exc = errors.PackError("not valid YAML", file="intents.yaml", item="oos", field="tools")
    assert str(exc) == "intents.yaml [oos] field 'tools': not valid YAML"
    assert exc.to_dict()["file"] == "intents.yaml"
    assert errors.MissingExtraError("LiteLLM models", "llm").message.endswith(
        "pip install 'hermes-desk[llm]'"
    )

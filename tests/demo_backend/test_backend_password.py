"""A password reset proves the customer by SMS code only, and the secret goes only to the phone."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from demo_backend import BackendState, create_app
from hermes_desk.testing.servers import serve_in_thread

PHONE = "13800138000"


def _send_code(client: httpx.Client, key: str, phone: str = PHONE) -> str:
    client.post("/sms/send", json={"phone": phone, "idempotency_key": key})
    return str(client.get(f"/sms/outbox/{phone}").json()["code"])


def _verify(client: httpx.Client, code: str, phone: str = PHONE) -> bool:
    return bool(client.post("/sms/verify", json={"phone": phone, "code": code}).json()["valid"])


def _reset(client: httpx.Client, key: str, phone: str = PHONE) -> httpx.Response:
    return client.post("/password/reset", json={"phone": phone, "idempotency_key": key})


def _messages(client: httpx.Client, phone: str = PHONE) -> list[str]:
    outbox = client.get(f"/sms/outbox/{phone}")
    return list(outbox.json()["messages"]) if outbox.status_code == 200 else []


def test_a_reset_without_sms_verification_is_refused(
    client: httpx.Client, state: BackendState
) -> None:
    refused = _reset(client, "r1")
    assert refused.status_code == 409
    assert refused.json()["code"] == "not_verified"
    # A code sent but never read back proves nothing either, nor does a wrong one.
    code = _send_code(client, "s1")
    assert _reset(client, "r2").status_code == 409
    assert not _verify(client, "000000" if code != "000000" else "111111")
    assert _reset(client, "r3").status_code == 409
    assert _messages(client) == [] and state.password_digests == {}


def test_a_solved_captcha_never_authorises_a_reset(
    client: httpx.Client, state: BackendState
) -> None:
    captcha = client.post("/captcha", json={"phone": PHONE, "idempotency_key": "c1"}).json()
    answer = state.captchas[captcha["captcha_id"]]["answer"]
    check = {"captcha_id": captcha["captcha_id"], "answer": answer}
    assert client.post("/captcha/verify", json=check).json() == {"valid": True}
    refused = _reset(client, "r1")
    assert refused.status_code == 409 and refused.json()["code"] == "not_verified"
    password = {"phone": PHONE, "new_password": "chosen-by-caller", "idempotency_key": "p1"}
    old_route = client.post("/password", json=password)
    assert old_route.status_code == 409 and old_route.json()["code"] == "not_verified"
    assert state.password_digests == {}


def test_the_right_code_sends_a_temporary_password_to_the_phone_only(
    client: httpx.Client, state: BackendState
) -> None:
    assert _verify(client, _send_code(client, "s1"))
    answer = _reset(client, "r1")
    assert answer.status_code == 200
    assert answer.json() == {
        "sent": True,
        "channel": "sms",
        "phone_tail": "8000",
        "user_id": "u1001",
    }
    (message,) = _messages(client)
    temporary = message.rsplit(" ", 1)[-1]
    assert len(temporary) >= 8
    assert temporary not in answer.text, "the secret is only in the SMS"
    assert "u1001" in state.password_digests
    assert temporary not in str(state.password_digests), "only a digest is kept"
    log = [e for e in client.get("/_log").json()["entries"] if e["endpoint"] == "reset_password"]
    assert [(e["outcome"], e["status"]) for e in log] == [("executed", 200)]


def test_a_replay_sends_nothing_new(client: httpx.Client, state: BackendState) -> None:
    assert _verify(client, _send_code(client, "s1"))
    first = _reset(client, "r1")
    digest = state.password_digests["u1001"]
    replays = [_reset(client, "r1") for _ in range(2)]
    assert all(r.json() == first.json() for r in replays)
    assert replays[0].headers["Idempotent-Replayed"] == "true"
    assert len(_messages(client)) == 1
    assert state.password_digests["u1001"] == digest
    header_key = client.post(
        "/password/reset", json={"phone": PHONE}, headers={"Idempotency-Key": "r1"}
    )
    assert header_key.json() == first.json() and len(_messages(client)) == 1


def test_a_second_reset_needs_a_new_code(client: httpx.Client) -> None:
    code = _send_code(client, "s1")
    assert _verify(client, code)
    assert _reset(client, "r1").status_code == 200
    assert _reset(client, "r2").json()["code"] == "not_verified"
    assert not _verify(client, code), "a code that reset the password is used up"
    assert _reset(client, "r3").status_code == 409
    assert _verify(client, _send_code(client, "s2"))
    assert _reset(client, "r4").status_code == 200
    assert len(_messages(client)) == 2


def test_an_unregistered_phone_is_not_found(client: httpx.Client) -> None:
    unregistered = "13700000000"
    assert _verify(client, _send_code(client, "s1", unregistered), unregistered)
    refused = _reset(client, "r1", unregistered)
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"
    assert _messages(client, unregistered) == []


def test_the_old_password_route_also_needs_the_sms_code(
    client: httpx.Client, state: BackendState
) -> None:
    body = {"phone": PHONE, "new_password": "n3w-Secret!", "idempotency_key": "p1"}
    assert client.post("/password", json=body).json()["code"] == "not_verified"
    assert _verify(client, _send_code(client, "s1"))
    changed = client.post("/password", json={**body, "idempotency_key": "p2"})
    assert changed.json() == {"updated": True, "user_id": "u1001"}
    assert "n3w-Secret!" not in changed.text + str(state.password_digests)
    # That used the proof: a reset now needs another code.
    assert _reset(client, "r1").status_code == 409


def test_resets_can_be_faulted_and_run_nothing(client: httpx.Client, state: BackendState) -> None:
    assert _verify(client, _send_code(client, "s1"))
    client.put("/_faults/reset_password", json={"error_rate": 1.0})
    faulted = _reset(client, "r1")
    assert faulted.status_code == 503
    assert faulted.json() == {"error": "injected fault", "endpoint": "reset_password"}
    assert _messages(client) == [] and state.password_digests == {}
    client.delete("/_faults/reset_password")
    # The fault ran nothing, so the verification is still there for the retry.
    assert _reset(client, "r1").status_code == 200


class _Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def timed(clock: _Clock) -> Iterator[httpx.Client]:
    state = BackendState(seed=11, now=clock, sms_code_ttl_s=300, verified_for_s=600)
    with serve_in_thread(create_app(state)) as url, httpx.Client(base_url=url) as http:
        yield http


def test_the_verification_lasts_ten_minutes(timed: httpx.Client, clock: _Clock) -> None:
    assert _verify(timed, _send_code(timed, "s1"))
    clock.t += 600
    assert _reset(timed, "r1").status_code == 200, "still within the window"

    code = _send_code(timed, "s2")
    clock.t += 200
    assert _verify(timed, code)
    clock.t += 601
    expired = _reset(timed, "r2")
    assert expired.status_code == 409 and expired.json()["code"] == "not_verified"
    password = {"phone": PHONE, "new_password": "abcdef12", "idempotency_key": "p1"}
    assert timed.post("/password", json=password).status_code == 409
    assert not _verify(timed, code), "the code itself has expired too"
    assert len(_messages(timed)) == 1

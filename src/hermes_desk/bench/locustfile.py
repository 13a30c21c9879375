"""The contact center's agents, for Locust: ``locust -f src/hermes_desk/bench/locustfile.py``.

Run by ``hermes-desk bench load`` (which starts the demo backend, the workers and the load
balancer and sets the variables below); it can also be pointed at a running service by hand.

Each simulated agent holds whole conversations, one after the other, with the article's mix:
60 % order look-ups, 20 % password resets, 15 % logistics, 5 % complaints; 3–6 customer turns
each, a think time drawn from N(mean, sd) before every turn. A conversation runs over HTTP
(``POST …/turns``) or over the session WebSocket (partial segments, then the final one). Every
write the service proposes is approved by the agent after a think time of their own (over the
socket on a WebSocket conversation); a password reset's SMS code is read from the demo
backend's outbox, as the customer reads it off their phone. The transcript is checked before
each close, and every answered turn is written to a ledger that the run checks again at the end.

Variables (all optional except the customers file when run by hand):

``HERMES_LOAD_CUSTOMERS``   JSON file: ``[{"user", "phone", "orders": [...]}, ...]``
``HERMES_LOAD_BACKEND``     the demo backend's URL (outbox), default ``http://127.0.0.1:8100``
``HERMES_LOAD_LEDGER``      JSONL file for answered turns, failures and conversations
``HERMES_LOAD_THINK``       ``mean,sd`` of the customer's think time in seconds (``3,1``)
``HERMES_LOAD_APPROVE``     ``mean,sd`` of the agent's think time before an approval (``2,0.5``)
``HERMES_LOAD_WS_SHARE``    share of conversations over the WebSocket (``0.5``)
``HERMES_LOAD_CONVERSATIONS``  stop after this many conversations have started (0: no limit)
``HERMES_LOAD_SEED``        random seed
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gevent
import gevent.lock
import gevent.queue
from locust import FastHttpUser, between, events, task
from locust.env import Environment
from locust.exception import StopUser
from websocket import WebSocket, WebSocketException, create_connection

from hermes_desk.bench.conversations import CODE, pick_kind, script
from hermes_desk.masking import Masker

#: the transcript keeps what the customer said with personal numbers masked (the service's
#: default): turns are compared as stored
as_stored = Masker().text

__all__ = ["Agent", "BrowserSocket", "Conversation", "Ledger"]

#: a turn that fails (5xx, connection refused) is retried this often before it counts as lost
RETRIES = 30
RETRY_PAUSE_S = 1.0
TERMINAL = {"completed", "failed", "escalated"}


def _pair(name: str, default: tuple[float, float]) -> tuple[float, float]:
    raw = os.environ.get(name)
    if not raw:
        return default
    mean, _, sd = raw.partition(",")
    return float(mean), float(sd or 0)


class Ledger:
    """Append-only JSONL of what the agents saw; one writer (gevent runs one thread)."""

    def __init__(self, path: str | None) -> None:
        self._file = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115

    def write(self, kind: str, **data: Any) -> None:
        if self._file is not None:
            record = {"kind": kind, "at": time.time(), **data}
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._file.flush()


class _Shared:
    """What all agents of this Locust process share."""

    def __init__(self) -> None:
        path = os.environ.get("HERMES_LOAD_CUSTOMERS")
        self.customers: list[dict[str, Any]] = (
            json.loads(Path(path).read_text(encoding="utf-8")) if path else []
        )
        self.backend = os.environ.get("HERMES_LOAD_BACKEND", "http://127.0.0.1:8100").rstrip("/")
        self.ledger = Ledger(os.environ.get("HERMES_LOAD_LEDGER"))
        self.think = _pair("HERMES_LOAD_THINK", (3.0, 1.0))
        self.approve_think = _pair("HERMES_LOAD_APPROVE", (2.0, 0.5))
        self.ws_share = float(os.environ.get("HERMES_LOAD_WS_SHARE", "0.5"))
        self.limit = int(os.environ.get("HERMES_LOAD_CONVERSATIONS", "0"))
        self.rng = random.Random(int(os.environ.get("HERMES_LOAD_SEED", "1")))
        self.started = 0
        #: the outbox keeps a phone's latest code only: one reset per phone at a time
        self.phone_locks: dict[str, gevent.lock.Semaphore] = {}

    def lock(self, phone: str) -> gevent.lock.Semaphore:
        return self.phone_locks.setdefault(phone, gevent.lock.Semaphore())


_shared: _Shared | None = None


def shared() -> _Shared:
    global _shared
    if _shared is None:
        _shared = _Shared()
    return _shared


def _draw(rng: random.Random, mean_sd: tuple[float, float]) -> float:
    return max(0.05, rng.gauss(*mean_sd))


class TurnFailed(Exception):
    """A turn the service did not store, after every retry."""


class BrowserSocket:
    """A session WebSocket read as the console's browser reads one: a greenlet takes every
    frame as it arrives, so the server's pings are answered at once even while the agent waits
    (for a lock on the customer's phone, an SMS code, a think time) — websocket-client answers
    a ping only inside ``recv``, and uvicorn closes a socket whose pong is 20 s late."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.frames: gevent.queue.Queue[dict[str, Any] | Exception] = gevent.queue.Queue()
        self.reader = gevent.spawn(self._read)

    def _read(self) -> None:
        try:
            while True:
                self.frames.put(json.loads(self.ws.recv()))
        except (OSError, ValueError, WebSocketException) as exc:  # closed, or not a frame
            self.frames.put(exc)

    def send(self, message: dict[str, Any]) -> None:
        self.ws.send(json.dumps(message, ensure_ascii=False))

    def recv(self, timeout_s: float = 60.0) -> dict[str, Any]:
        """The next frame; what ended the socket is raised (again, for every later call)."""
        try:
            frame: dict[str, Any] | Exception = self.frames.get(timeout=timeout_s)
        except gevent.queue.Empty:
            raise TimeoutError(f"no frame within {timeout_s} s") from None
        if isinstance(frame, Exception):
            self.frames.put(frame)
            raise frame
        return frame

    def close(self) -> None:
        self.reader.kill()  # waits for it: two greenlets may not read one socket
        with contextlib.suppress(OSError, WebSocketException):  # broken: no goodbye to say
            self.ws.close(timeout=1)


class Conversation:
    """One customer's conversation as an agent handles it."""

    def __init__(self, agent: Agent, kind: str, customer: dict[str, Any], rng: random.Random):
        self.agent = agent
        self.kind = kind
        self.customer = customer
        self.rng = rng
        self.user = str(customer["user"])
        self.order = rng.choice(customer["orders"])
        self.transport = "ws" if rng.random() < shared().ws_share else "http"
        self.session_id = ""
        self.sent: list[str] = []
        self.acked: list[tuple[int, str]] = []
        self.upstreams: set[str] = set()
        self.ws: BrowserSocket | None = None
        self.seq = 0
        self.final_ms = 0.0
        self.opened_at = 0.0
        self.workflow: dict[str, Any] = {}

    # -- the customer's side -------------------------------------------------------------

    def script(self) -> list[str]:
        return script(self.kind, self.customer, self.order, self.rng)

    def run(self) -> None:
        ledger = shared().ledger
        opened = self.agent.call(
            "POST", "/v1/sessions", "open", json={"user_id": self.user, "resume": False}
        )
        self.session_id = opened["session_id"]
        self.opened_at = time.time()
        ledger.write("open", session=self.session_id, user=self.user, conv=self.kind)
        try:
            if self.transport == "ws":
                self._connect()
            if self.kind == "password_reset":
                with shared().lock(self.customer["phone"]):
                    self._talk()
            else:
                self._talk()
            if self.kind == "password_reset":
                self._finish_reset()
            self._check_transcript()
        finally:
            if self.ws is not None:
                self.ws.close()
        # A 404 here is a close whose answer was lost (a worker died after closing) retried.
        self.agent.call(
            "DELETE", f"/v1/sessions/{self.session_id}", "close",
            params={"user_id": self.user}, allow={404},
        )  # fmt: skip
        ledger.write(
            "closed",
            session=self.session_id,
            user=self.user,
            conv=self.kind,
            transport=self.transport,
            turns=len(self.acked),
            upstreams=sorted(self.upstreams),
            reset=self.workflow.get("status") if self.kind == "password_reset" else None,
            waiting_for=self.workflow.get("waiting_for"),
        )

    def _talk(self) -> None:
        for text in self.script():
            gevent_sleep(_draw(self.rng, shared().think))
            if text == CODE:
                text = f"验证码是{self._sms_code()}"
            answer = self._turn(text)
            if answer is not None:
                self._after(answer)

    def _sms_code(self) -> str:
        """The code on the customer's phone: the latest text sent after the reset began (the
        SMS may land after the turn's answer; an older text is a previous reset's)."""
        deadline = time.monotonic() + 15
        code = ""
        while time.monotonic() < deadline:
            with self.agent.client.get(
                f"{shared().backend}/sms/outbox/{self.customer['phone']}", name="outbox",
                catch_response=True,
            ) as response:  # fmt: skip
                if response.status_code == 200:
                    response.success()
                    outbox = response.json()
                    code = str(outbox["code"])
                    if outbox["sent_at"] >= self.opened_at:
                        return code
                else:
                    response.success()  # nothing sent yet is not a failure of the service
            gevent_sleep(0.2)
        return code

    def _after(self, answer: dict[str, Any]) -> None:
        """The agent approves what the turn proposed, after reading it."""
        workflow = answer.get("workflow") or {}
        # The reset this conversation began is the one followed (a later turn read as another
        # reset starts a workflow of its own).
        if workflow.get("name") == "password_reset" and not self.workflow.get("id"):
            self.workflow = workflow
        for proposal in answer.get("proposals") or []:
            if proposal.get("status") == "proposed":
                gevent_sleep(_draw(self.rng, shared().approve_think))
                self._approve(proposal["id"])

    def _finish_reset(self) -> None:
        """Where the password reset ended: the workflow once it is no longer running nor
        waiting for an approval (or after ten seconds)."""
        if not self.workflow.get("id"):
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            view = self.agent.call(
                "GET", f"/v1/workflows/{self.workflow['id']}", "workflow",
                params={"user_id": self.user},
            )  # fmt: skip
            self.workflow = view
            waiting = view.get("waiting_for") or ""
            if view["status"] in TERMINAL or (
                view["status"] == "waiting_input" and not waiting.startswith("approval:")
            ):
                return
            gevent_sleep(0.2)

    # -- HTTP ------------------------------------------------------------------------------

    def _turn(self, text: str) -> dict[str, Any] | None:
        """Send the turn until it is stored: its answer, or None when the answer was lost (the
        transcript shows the turn). Raises TurnFailed after every retry."""
        for _ in range(RETRIES):
            started = time.perf_counter()
            answer = self._ws_turn(text) if self.transport == "ws" else self._http_turn(text)
            ms = self.final_ms if self.transport == "ws" else (time.perf_counter() - started) * 1e3
            if answer is not None:
                self.sent.append(as_stored(text))
                self.acked.append((answer["turn_index"], as_stored(text)))
                shared().ledger.write(
                    "turn",
                    session=self.session_id,
                    user=self.user,
                    index=answer["turn_index"],
                    text=as_stored(text),
                    transport=self.transport,
                    conv=self.kind,
                    ms=round(ms, 2),
                )
                return answer
            if self._stored(text):  # stored, the answer lost: do not say it twice
                self.sent.append(as_stored(text))
                shared().ledger.write("unacked", session=self.session_id, text=text)
                return None
            gevent_sleep(RETRY_PAUSE_S)
        raise TurnFailed(f"turn not stored after {RETRIES} tries: {text}")

    def _http_turn(self, text: str) -> dict[str, Any] | None:
        path = f"/v1/sessions/{self.session_id}/turns"
        body = {"user_id": self.user, "text": text}
        with self.agent.client.post(
            path, json=body, name=f"turn {self.kind}", catch_response=True
        ) as response:
            self._upstream(response.headers)
            if response.status_code == 200:
                answer: dict[str, Any] = response.json()
                return answer
            self._failed(f"turn {self.kind}", response.status_code, response.text)
            response.failure(f"{response.status_code}: {(response.text or '')[:200]}")
            return None

    def _stored(self, text: str) -> bool:
        try:
            view = self.agent.call(
                "GET", f"/v1/sessions/{self.session_id}", "transcript",
                params={"user_id": self.user},
            )  # fmt: skip
        except CallFailed:
            return False
        said = [t["text"] for t in view["turns"] if t["role"] == "user"]
        return len(said) > len(self.sent) and said[len(self.sent)] == as_stored(text)

    def _approve(self, proposal_id: str) -> dict[str, Any]:
        if self.ws is not None:
            try:
                return self._ws_approve(proposal_id)
            except (OSError, ValueError, WebSocketException):
                self._connect()
        try:
            return self.agent.call(
                "POST", f"/v1/proposals/{proposal_id}/approve", "approve",
                json={"user_id": self.user, "agent_id": "load-agent"}, allow={409},
            )  # fmt: skip
        except CallFailed:
            return {}

    def _check_transcript(self) -> None:
        view = self.agent.call(
            "GET", f"/v1/sessions/{self.session_id}", "transcript", params={"user_id": self.user}
        )
        turns = view["turns"]
        said = [t["text"] for t in turns if t["role"] == "user"]
        problems = []
        if said != self.sent:
            problems.append(f"customer turns {said} != sent {self.sent}")
        for index, text in self.acked:
            at = turns[index] if index < len(turns) else None
            if at is None or at["role"] != "user" or at["text"] != text:
                problems.append(f"answered turn {index} ({text!r}) not at its index")
        if problems:
            shared().ledger.write("lost", session=self.session_id, problems=problems)
            events.request.fire(  # type: ignore[no-untyped-call]
                request_type="CHECK", name="transcript intact", response_time=0,
                response_length=0, exception=AssertionError("; ".join(problems)), context={},
            )  # fmt: skip

    def _upstream(self, headers: Any) -> None:
        upstream = headers.get("x-upstream") if headers is not None else None
        if upstream:
            self.upstreams.add(str(upstream))

    def _failed(self, name: str, status: int, text: str | None) -> None:
        shared().ledger.write(
            "fail", session=self.session_id, name=name, status=status, error=(text or "")[:200]
        )

    # -- WebSocket -------------------------------------------------------------------------

    def _connect(self) -> None:
        if self.ws is not None:
            self.ws.close()
            self.ws = None
        host = (self.agent.host or "").replace("http://", "ws://").replace("https://", "wss://")
        url = f"{host}/v1/sessions/{self.session_id}/ws?user_id={self.user}"
        started = time.perf_counter()
        try:
            ws = create_connection(url, timeout=60)
            ready = json.loads(ws.recv())
            if ready.get("type") != "ready":
                raise ValueError(f"not ready: {ready}")
        except (OSError, ValueError, WebSocketException) as exc:
            self._fire("WS", "connect", started, exc)
            self.ws = None
            return
        self._upstream(dict(ws.getheaders() or {}))
        self._fire("WS", "connect", started, None)
        self.ws = BrowserSocket(ws)
        self.seq = 0

    def _send(self, message: dict[str, Any]) -> int:
        assert self.ws is not None
        self.ws.send(message)
        self.seq += 1
        return self.seq

    def _ws_turn(self, text: str) -> dict[str, Any] | None:
        name = f"ws turn {self.kind}"
        if self.ws is None:
            self._connect()
            if self.ws is None:
                self._failed(name, 0, "no socket")
                return None
        try:
            cut = max(1, len(text) // 2)
            for partial in (text[:cut], text[: cut + (len(text) - cut) // 2]):
                self._send({"type": "segment", "text": partial, "final": False})
                gevent_sleep(0.05)  # speech recognition is still listening
            started = time.perf_counter()
            seq = self._send({"type": "segment", "text": text, "final": True})
            while True:
                frame = self.ws.recv()
                if frame.get("seq") != seq:
                    continue
                if frame["type"] == "assist":
                    self.final_ms = (time.perf_counter() - started) * 1000  # the final's answer
                    self._fire("WS", name, started, None)
                    answer: dict[str, Any] = frame
                    return answer
                if frame["type"] == "error":
                    raise ValueError(f"error frame: {frame['error']}")
        except (OSError, ValueError, WebSocketException) as exc:
            self._fire("WS", name, time.perf_counter(), exc)
            self._failed(name, 0, repr(exc))
            self.ws.close()
            self.ws = None
            return None

    def _ws_approve(self, proposal_id: str) -> dict[str, Any]:
        assert self.ws is not None
        started = time.perf_counter()
        seq = self._send({"type": "approve", "proposal_id": proposal_id, "agent_id": "load-agent"})
        while True:
            frame = self.ws.recv()
            if frame.get("seq") != seq:
                continue
            if frame["type"] == "proposal":
                self._fire("WS", "ws approve", started, None)
                decided: dict[str, Any] = frame["proposal"]
                return decided
            if frame["type"] == "error":
                self._fire("WS", "ws approve", started, ValueError(str(frame["error"])))
                return {}

    def _fire(self, kind: str, name: str, started: float, exc: BaseException | None) -> None:
        events.request.fire(  # type: ignore[no-untyped-call]
            request_type=kind, name=name, response_time=(time.perf_counter() - started) * 1000,
            response_length=0, exception=exc, context={},
        )  # fmt: skip


class CallFailed(Exception):
    """A request other than a turn that kept failing."""


def gevent_sleep(seconds: float) -> None:
    gevent.sleep(seconds)


class Agent(FastHttpUser):
    """One simulated agent: conversations one after the other, no pause in between."""

    wait_time: Callable[..., float] = between(0, 0)
    network_timeout = 60.0
    connection_timeout = 10.0

    def on_start(self) -> None:
        self.rng = random.Random(shared().rng.random())

    @task
    def conversation(self) -> None:
        state = shared()
        if state.limit and state.started >= state.limit:
            raise StopUser()
        state.started += 1
        kind = pick_kind(self.rng)
        customer = self.rng.choice(state.customers)
        conversation = Conversation(self, kind, customer, self.rng)
        try:
            conversation.run()
        except (TurnFailed, CallFailed) as exc:
            state.ledger.write("abandoned", session=conversation.session_id, error=str(exc))
        except Exception as exc:  # the harness's own slip: a failure in the figures, not a log
            state.ledger.write("abandoned", session=conversation.session_id, error=repr(exc))
            events.request.fire(  # type: ignore[no-untyped-call]
                request_type="CONVERSATION", name=kind, response_time=0, response_length=0,
                exception=exc, context={},
            )  # fmt: skip

    def call(
        self, method: str, path: str, name: str, *, allow: set[int] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """A request other than a turn, retried across faults like a client would."""
        for _ in range(RETRIES):
            with self.client.request(method, path, name=name, catch_response=True, **kw) as resp:
                if resp.status_code < 400 or (allow and resp.status_code in allow):
                    resp.success()
                    body: dict[str, Any] = resp.json() if resp.text else {}
                    return body
                resp.failure(f"{resp.status_code}: {(resp.text or '')[:200]}")
                if resp.status_code < 500 and resp.status_code != 0:
                    raise CallFailed(f"{name} answered {resp.status_code}: {resp.text[:200]}")
            gevent_sleep(RETRY_PAUSE_S)
        raise CallFailed(f"{name} kept failing")


@events.init.add_listener  # type: ignore[untyped-decorator]
def _on_init(environment: Environment, **_: Any) -> None:
    shared()  # read the variables before the first agent starts

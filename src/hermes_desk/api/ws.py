"""Real time: one WebSocket per session, transcript segments in, assist updates out (A2).

``GET /v1/sessions/{session_id}/ws?user_id=...``. When keys are configured the socket needs the
key in a header (``X-API-Key`` / ``Authorization: Bearer``) or, from a browser (which cannot set
headers on a WebSocket), ``ticket=...`` from ``POST /v1/sessions/{session_id}/ws-ticket``: an API
key is never accepted in the URL, where logs and proxies would keep it.

Client → server, one JSON object per text message::

    {"type": "segment", "speaker": "customer" | "agent", "text": "...", "final": true | false}
    {"type": "approve", "proposal_id", "agent_id", "arguments"?, "revision"?} run a proposed write
    {"type": "reject", "proposal_id", "agent_id", "reason"}                 refuse it
    {"type": "ping"}

Server → client::

    {"type": "ready", "session_id", "user_id", "max_message_bytes"}       once, on connect
    {"type": "segment", "seq", "speaker", "text", "final"}                 every accepted segment
    {"type": "assist", "seq", ...TurnOutcome.to_dict()}                    a final customer segment
    {"type": "alert", "seq", "session_id", "kind", "severity", "message", "speaker",
     "turn_index", "rule"}                                 each alert of a final segment (either)
    {"type": "proposal", "seq", "proposal": {...}}                         a decision's outcome
    {"type": "proposals", "proposals": [...]}                              then the session's all
    {"type": "error", "error": {"code", "message", "problems"?}, "seq"?}   a refused message
    {"type": "pong"}
    {"type": "session_closed", "session_id", "reason"}                     then close code 4404

Partial segments (speech recognition still listening) are echoed for the live transcript and run
nothing. Final segments are recorded in order: a customer's runs the turn pipeline exactly as
``POST /v1/sessions/{id}/turns`` does, an agent's is appended to the transcript and checked for
compliance slips. Alerts of either (also in the assist frame's ``alerts``) follow as ``alert``
frames. A bad message
gets an error and changes nothing; the socket stays open. Frames are parsed by the same checker
as REST bodies (:mod:`hermes_desk.api.payload`): malformed JSON, lone surrogates and nesting
deeper than :data:`~hermes_desk.api.payload.MAX_DEPTH` are refused before anything runs. Every
socket on the same session sees the others' segments and assists (the call platform streams,
the agent console watches) — within this process.

Segments are echoed with personal numbers masked (the tenant's privacy settings).

Close codes: 4401 no valid API key or ticket (or a key in the URL), 4400 bad ``user_id``, 4404
unknown, foreign, expired or closed session, 1011 the store of used tickets did not answer (try
again). Closing or expiring a session (``DELETE``, the idle
sweep, a lazy expiry) closes every socket on it at once — a ``session_closed`` message, then
4404 — through a destroy hook the hub registers on the session manager.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from fastapi import APIRouter, WebSocket
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError
from starlette.websockets import WebSocketDisconnect

from hermes_desk.api.payload import PayloadError, parse_json
from hermes_desk.api.schemas import USER_ID_PATTERN, JsonCount
from hermes_desk.api.security import resolve_tenant
from hermes_desk.api.tickets import TicketBook
from hermes_desk.assist import check_text
from hermes_desk.errors import ConflictError, HermesError, NotFoundError
from hermes_desk.runtime import Runtime
from hermes_desk.sessions import DestroyReason, Session

__all__ = [
    "CLOSE_BAD_REQUEST",
    "CLOSE_NO_SESSION",
    "CLOSE_UNAUTHORIZED",
    "CLOSE_UNAVAILABLE",
    "MAX_PENDING_SEGMENTS",
    "SessionHub",
    "router",
]

CLOSE_UNAUTHORIZED = 4401
CLOSE_BAD_REQUEST = 4400
CLOSE_NO_SESSION = 4404
CLOSE_UNAVAILABLE = 1011  # the server could not check the ticket (its shared store is down)
# Final segments waiting behind a running turn; more than this and the sender is told to slow down.
MAX_PENDING_SEGMENTS = 16
# How long a socket may take to take its last message and close frame when its session ends.
_CLOSE_GRACE_S = 2.0

router = APIRouter(tags=["realtime"])
_logger = logging.getLogger(__name__)
_USER_ID = re.compile(USER_ID_PATTERN)


class _Segment(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["segment"]
    speaker: Literal["customer", "agent"] = "customer"
    text: str
    final: bool = Field(True, description="false: speech recognition is still listening")


class _Ping(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["ping"]


class _Approve(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["approve"]
    proposal_id: str = Field(min_length=1, max_length=200)
    agent_id: str = Field(pattern=USER_ID_PATTERN)
    arguments: dict[str, Any] | None = None
    revision: JsonCount | None = None


class _Reject(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["reject"]
    proposal_id: str = Field(min_length=1, max_length=200)
    agent_id: str = Field(pattern=USER_ID_PATTERN)
    reason: str = Field(min_length=1, max_length=500)


_Message = _Segment | _Ping | _Approve | _Reject
_MODELS: dict[str, type[_Segment] | type[_Ping] | type[_Approve] | type[_Reject]] = {
    "segment": _Segment,
    "ping": _Ping,
    "approve": _Approve,
    "reject": _Reject,
}


class _Refused(Exception):
    """A client message that gets an error reply; the socket stays open."""

    def __init__(
        self, code: str, message: str, problems: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.problems = problems

    def frame(self, seq: int) -> dict[str, Any]:
        reply = _error(self.code, self.message, seq=seq)
        if self.problems:
            reply["error"]["problems"] = self.problems
        return reply


# One encoder for every frame: ``json.dumps`` with options builds a new one per call.
_FRAME = json.JSONEncoder(ensure_ascii=False, default=str)


def _frame(payload: Mapping[str, Any]) -> str:
    return _FRAME.encode(payload)


@dataclass(eq=False)
class _Peer:
    """One connected socket; sends are serialised (reader and turn worker both send)."""

    socket: WebSocket
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    gone: bool = False

    async def send(self, payload: Mapping[str, Any]) -> None:
        if not self.gone:
            await self.send_text(_frame(payload))

    async def send_text(self, text: str) -> None:
        """Send a frame already serialised (one text for every watcher of a session)."""
        if self.gone:
            return
        async with self.lock:
            try:
                await self.socket.send_text(text)
            except (WebSocketDisconnect, RuntimeError, OSError):
                self.gone = True  # the client left; what it missed is in the session

    async def close(self, code: int) -> None:
        async with self.lock:
            if not self.gone:
                self.gone = True
                with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
                    await self.socket.close(code)

    async def end(self, code: int, payload: Mapping[str, Any]) -> None:
        """Say ``payload`` and close with ``code``; a client too slow to take them is dropped."""
        with anyio.move_on_after(_CLOSE_GRACE_S):
            await self.send(payload)
            await self.close(code)
        self.gone = True


class SessionHub:
    """Which sockets watch which session, in this process, so updates reach all of them.

    :meth:`session_ended` is a session-manager destroy hook: registered with
    ``manager.on_destroy(hub.session_ended)``, it closes a session's sockets the moment the
    session is closed or expires.
    """

    def __init__(self) -> None:
        self._peers: dict[str, set[_Peer]] = {}

    def join(self, session_id: str, peer: _Peer) -> None:
        self._peers.setdefault(session_id, set()).add(peer)

    def leave(self, session_id: str, peer: _Peer) -> None:
        peers = self._peers.get(session_id)
        if peers is not None:
            peers.discard(peer)
            if not peers:
                del self._peers[session_id]

    def watchers(self, session_id: str) -> int:
        return len(self._peers.get(session_id, ()))

    async def publish(self, session_id: str, payload: Mapping[str, Any]) -> None:
        peers = self._peers.get(session_id)
        if not peers:
            return
        text = _frame(payload)  # serialised once, however many watch
        for peer in list(peers):
            await peer.send_text(text)

    async def publish_alerts(
        self, session_id: str, alerts: list[dict[str, Any]], *, seq: int | None = None
    ) -> None:
        """One ``alert`` frame per alert of a turn (customer or agent line)."""
        for alert in alerts:
            frame: dict[str, Any] = {"type": "alert", "session_id": session_id, **alert}
            if seq is not None:
                frame["seq"] = seq
            await self.publish(session_id, frame)

    async def close_all(self, session_id: str, code: int, payload: Mapping[str, Any]) -> None:
        """Send ``payload`` to every socket on the session and close them with ``code``, all at
        once (a slow client does not hold up the others); they stop receiving anything."""
        peers = self._peers.pop(session_id, set())
        async with anyio.create_task_group() as tasks:
            for peer in peers:
                tasks.start_soon(peer.end, code, payload)

    async def session_ended(self, session: Session, reason: DestroyReason) -> None:
        """Destroy hook: the session was closed or expired; its sockets end with 4404."""
        message = {"type": "session_closed", "session_id": session.id, "reason": reason}
        await self.close_all(session.id, CLOSE_NO_SESSION, message)


def _hub(socket: WebSocket, runtime: Runtime) -> SessionHub:
    """The app's hub, made on first use (no import-time state) and hooked to the runtime's
    session manager, so closing or expiring a session closes its sockets."""
    state = socket.app.state
    hub = getattr(state, "ws_hub", None)
    if hub is None or getattr(state, "ws_hub_runtime", None) is not runtime:
        hub = SessionHub()
        runtime.sessions.on_destroy(hub.session_ended)
        state.ws_hub = hub
        state.ws_hub_runtime = runtime
    return cast(SessionHub, hub)


def _error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "error": {"code": code, "message": message}, **extra}


def _parse(raw: Mapping[str, Any], max_bytes: int, max_chars: int) -> _Message:
    """One received ASGI message as a segment or a ping, or :class:`_Refused` naming why."""
    text = raw.get("text")
    if text is None:
        raise _Refused("unsupported_data", "binary messages are not accepted; send JSON text")
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise _Refused("payload_too_large", f"message over {max_bytes} bytes")
    try:
        data = parse_json(text)
    except PayloadError as exc:
        # The shared checker speaks of a request "body"; here it is the message.
        problems = [{**p, "loc": ["message", *p["loc"][1:]]} for p in exc.problems]
        message = exc.message.replace("the body", "the message", 1)
        raise _Refused(exc.code, message, problems) from None
    if not isinstance(data, dict):
        raise _Refused("validation_error", "message must be a JSON object with a 'type'")
    kind = data.get("type")
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise _Refused(
            "unknown_type", f"unknown message type {kind!r}; expected one of {sorted(_MODELS)}"
        )
    try:
        parsed: _Message = model.model_validate(data)
    except PydanticValidationError as exc:
        problems = [{"loc": ["message", *err["loc"]], "msg": err["msg"]} for err in exc.errors()]
        said = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or 'message'}: {err['msg']}"
            for err in problems
        )
        raise _Refused("validation_error", f"invalid {kind}: {said}", problems) from None
    if isinstance(parsed, _Segment):
        try:
            parsed.text = check_text(parsed.text, max_chars)
        except HermesError as exc:
            raise _Refused(exc.code, exc.message) from None
    return parsed


@router.websocket("/v1/sessions/{session_id}/ws")
async def session_socket(socket: WebSocket, session_id: str) -> None:
    """Stream a session's transcript in and its assist out (see the module docstring)."""
    runtime = cast(Runtime, socket.app.state.runtime)
    service = runtime.settings.service
    await socket.accept()
    peer = _Peer(socket)
    # Refusals are said in a message first: browsers do not expose a close reason reliably.
    if "api_key" in socket.query_params:
        await peer.send(
            _error(
                "unauthorized",
                "an API key is not accepted in the URL; send it as X-API-Key or open the socket "
                "with a ticket from POST /v1/sessions/{session_id}/ws-ticket",
            )
        )
        await peer.close(CLOSE_UNAUTHORIZED)
        return
    tenant = resolve_tenant(service.api_keys, socket.headers)
    user = socket.query_params.get("user_id", "")
    ticket = socket.query_params.get("ticket")
    if tenant is None and ticket:
        book = cast(TicketBook, socket.app.state.tickets)
        try:
            grant = await book.redeem(
                ticket, session_id=session_id, user=user, now=runtime.clock.now()
            )
        except HermesError as exc:  # the shared store of used tickets did not answer
            await peer.send(_error(exc.code, exc.message))
            await peer.close(CLOSE_UNAVAILABLE)
            return
        if grant is not None:
            tenant, user = grant.tenant, grant.user
    if tenant is None:
        await peer.send(
            _error(
                "unauthorized",
                "a valid API key (X-API-Key header) or ticket "
                "(POST /v1/sessions/{session_id}/ws-ticket) is required",
            )
        )
        await peer.close(CLOSE_UNAUTHORIZED)
        return
    if not _USER_ID.fullmatch(user):
        await peer.send(_error("validation_error", "user_id: a customer id is required"))
        await peer.close(CLOSE_BAD_REQUEST)
        return
    try:
        session = await runtime.sessions.get(tenant, user, session_id)
        if not session.is_open:
            raise ConflictError("the session is closed", session_id=session_id)
    except (NotFoundError, ConflictError) as exc:
        await peer.send(_error(exc.code, exc.message))
        await peer.close(CLOSE_NO_SESSION)
        return

    hub = _hub(socket, runtime)
    hub.join(session_id, peer)
    # Closed between the check and the join? Its hook ran without this socket: look again.
    current = await runtime.sessions.store.load(session_id)
    if current is None or not current.is_open:
        hub.leave(session_id, peer)
        await peer.end(CLOSE_NO_SESSION, _error("not_found", "session not found"))
        return
    await peer.send(
        {
            "type": "ready",
            "session_id": session_id,
            "user_id": user,
            "max_message_bytes": service.max_body_bytes,
        }
    )
    sender, receiver = anyio.create_memory_object_stream[tuple[int, _Segment]](MAX_PENDING_SEGMENTS)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_run_turns, runtime, hub, peer, tenant, user, session_id, receiver)

            def decide(message: _Approve | _Reject, seq: int) -> None:
                tasks.start_soon(
                    _decide, runtime, hub, peer, tenant, user, session_id, message, seq
                )

            await _read(
                socket,
                peer,
                hub,
                session_id,
                sender,
                service.max_body_bytes,
                service.max_text_chars,
                decide,
                runtime.masking.for_tenant(tenant).text,
            )
    finally:
        hub.leave(session_id, peer)


async def _read(
    socket: WebSocket,
    peer: _Peer,
    hub: SessionHub,
    session_id: str,
    pending: MemoryObjectSendStream[tuple[int, _Segment]],
    max_bytes: int,
    max_chars: int,
    decide: Callable[[_Approve | _Reject, int], None],
    mask: Callable[[str], str],
) -> None:
    """Validate and echo every message (``mask``-ed: what watchers see is what is stored);
    hand final segments to the turn worker, in order, and the agent's decisions on proposals
    to their own tasks."""
    seq = 0
    async with pending:
        while not peer.gone:
            raw = await socket.receive()
            if raw["type"] == "websocket.disconnect" or peer.gone:
                peer.gone = True
                return  # the client left, or the session ended while this message came in
            seq += 1
            try:
                message = _parse(raw, max_bytes, max_chars)
            except _Refused as refused:
                await peer.send(refused.frame(seq))
                continue
            if isinstance(message, _Ping):
                await peer.send({"type": "pong", "seq": seq})
                continue
            if isinstance(message, _Approve | _Reject):
                decide(message, seq)
                continue
            if message.final and pending.statistics().current_buffer_used >= MAX_PENDING_SEGMENTS:
                await peer.send(
                    _error("busy", "too many final segments waiting; resend later", seq=seq)
                )
                continue
            # Echo first, so every watcher sees the segment before the assist it leads to.
            await hub.publish(
                session_id,
                {
                    "type": "segment",
                    "seq": seq,
                    "speaker": message.speaker,
                    "text": mask(message.text),
                    "final": message.final,
                },
            )
            if message.final:
                try:
                    pending.send_nowait((seq, message))
                except (anyio.WouldBlock, anyio.BrokenResourceError):
                    return  # the worker stopped: the session is gone and the socket closed


async def _run_turns(
    runtime: Runtime,
    hub: SessionHub,
    peer: _Peer,
    tenant: str,
    user: str,
    session_id: str,
    pending: MemoryObjectReceiveStream[tuple[int, _Segment]],
) -> None:
    """Run final segments one at a time (a turn reads the previous one's state)."""
    assistant = runtime.assistant
    async with pending:
        async for seq, segment in pending:
            try:
                outcome = await assistant.turn(
                    tenant, user, session_id, segment.text, speaker=segment.speaker
                )
            except (NotFoundError, ConflictError) as exc:
                # Closed or expired under us: every watcher learns it and is let go.
                await hub.close_all(session_id, CLOSE_NO_SESSION, _error(exc.code, exc.message))
                return
            except HermesError as exc:
                await peer.send(_error(exc.code, exc.message, seq=seq))
                continue
            except Exception:
                # One broken turn must not end a call's socket: report it, keep listening.
                _logger.exception("turn failed on session socket %s", session_id)
                await peer.send(_error("internal_error", "the turn failed", seq=seq))
                continue
            if segment.speaker == "customer":
                view = outcome.to_dict()
                await runtime.feedback.shown(tenant, view)
                await hub.publish(session_id, {"type": "assist", "seq": seq, **view})
            await hub.publish_alerts(session_id, outcome.alerts, seq=seq)


async def _decide(
    runtime: Runtime,
    hub: SessionHub,
    peer: _Peer,
    tenant: str,
    user: str,
    session_id: str,
    message: _Approve | _Reject,
    seq: int,
) -> None:
    """Carry out an agent's decision sent on the socket; every watcher sees the outcome."""
    try:
        current = await runtime.actions.get(message.proposal_id, tenant=tenant, user=user)
        if current.session_id != session_id:
            raise NotFoundError(f"no proposal {message.proposal_id}")
        if isinstance(message, _Approve):
            proposal = await runtime.actions.approve(
                message.proposal_id,
                tenant=tenant,
                user=user,
                agent_id=message.agent_id,
                arguments=message.arguments,
                revision=message.revision,
            )
        else:
            proposal = await runtime.actions.reject(
                message.proposal_id,
                tenant=tenant,
                user=user,
                agent_id=message.agent_id,
                reason=message.reason,
            )
    except HermesError as exc:
        await peer.send(_error(exc.code, exc.message, seq=seq, proposal_id=message.proposal_id))
        return
    except Exception:
        _logger.exception("decision failed on session socket %s", session_id)
        await peer.send(_error("internal_error", "the decision failed", seq=seq))
        return
    await hub.publish(session_id, {"type": "proposal", "seq": seq, "proposal": proposal.view()})
    # A decision can lead to the next proposal (a workflow's next write): all of them, current.
    listed = await runtime.actions.for_session(session_id, tenant=tenant, user=user)
    await hub.publish(session_id, {"type": "proposals", "proposals": [p.view() for p in listed]})

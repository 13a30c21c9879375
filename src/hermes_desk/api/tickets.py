"""Short-lived WebSocket tickets, so that no API key ever travels in a URL (spec D3).

A browser cannot set headers on a WebSocket, and a key in the query string ends up in access
logs, proxies and browser history. Instead the console asks ``POST /v1/sessions/{id}/ws-ticket``
(with its key in a header) for a ticket bound to the tenant, the session and the customer, good
for :data:`TICKET_TTL_S` seconds and for one connection, and opens the socket with
``?ticket=…``. A ticket is signed (HMAC-SHA256) with a key derived from the tenant's API key, so
every worker configured with the same keys can check it; it holds no secret itself.

A ticket's single use holds across workers: its id is recorded, on first use, in a
:class:`~hermes_desk.api.ticket_store.TicketUseStore` the workers share (the session store's
backend: SQLite on one host, Redis across hosts) until the ticket expires, and a worker that
finds it there refuses it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass

from hermes_desk.api.ticket_store import MemoryTicketUseStore, TicketUseStore
from hermes_desk.ids import new_id

__all__ = ["TICKET_TTL_S", "Ticket", "TicketBook"]

TICKET_TTL_S = 60.0


@dataclass(frozen=True, slots=True)
class Ticket:
    """What a valid ticket grants: one socket on ``session_id`` for ``user`` of ``tenant``."""

    tenant: str
    session_id: str
    user: str
    expires_at: float
    nonce: str


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signing_key(api_key: str) -> bytes:
    return hashlib.sha256(b"hermes-ws-ticket\0" + api_key.encode()).digest()


class TicketBook:
    """Issues and checks tickets against the service's API keys (key → tenant).

    Tickets used once are remembered in ``uses`` until they expire, so a ticket copied from a
    log cannot open a second socket on any worker sharing that store (the default, in-process
    store, covers this process only).
    """

    def __init__(
        self,
        api_keys: Mapping[str, str],
        *,
        ttl_s: float = TICKET_TTL_S,
        uses: TicketUseStore | None = None,
    ) -> None:
        self._keys = dict(api_keys)
        self._ttl_s = ttl_s
        self.uses: TicketUseStore = uses if uses is not None else MemoryTicketUseStore()

    def issue(self, tenant: str, session_id: str, user: str, *, now: float) -> tuple[str, float]:
        """A ticket for the tenant's session and customer, and when it expires."""
        key = next((k for k, t in self._keys.items() if t == tenant), None)
        if key is None:
            raise ValueError(f"tenant {tenant!r} has no API key to sign tickets with")
        expires_at = now + self._ttl_s
        claims = {"t": tenant, "s": session_id, "u": user, "e": expires_at, "n": new_id("tk")}
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signature = hmac.new(_signing_key(key), payload.encode(), hashlib.sha256).digest()
        return f"{payload}.{_b64(signature)}", expires_at

    async def redeem(self, ticket: str, *, session_id: str, user: str, now: float) -> Ticket | None:
        """The ticket's grant if it is genuine, unexpired, for ``session_id`` and ``user`` (any
        customer when ``user`` is empty) and not used before on any worker sharing the store;
        else ``None``. Only a ticket that opens the socket is used up.

        Raises:
            BackendError: the shared store did not answer (the socket is not opened).
        """
        payload, _, signature = ticket.partition(".")
        try:
            claims = json.loads(_unb64(payload))
            given = _unb64(signature)
            found = Ticket(
                tenant=str(claims["t"]),
                session_id=str(claims["s"]),
                user=str(claims["u"]),
                expires_at=float(claims["e"]),
                nonce=str(claims["n"]),
            )
        except (ValueError, KeyError, TypeError):
            return None
        genuine = any(
            hmac.compare_digest(
                hmac.new(_signing_key(key), payload.encode(), hashlib.sha256).digest(), given
            )
            for key, tenant in self._keys.items()
            if tenant == found.tenant
        )
        if not genuine or found.expires_at <= now:
            return None
        if found.session_id != session_id or user not in ("", found.user):
            return None
        if not await self.uses.use(found.nonce, expires_at=found.expires_at, now=now):
            return None
        return found

    async def aclose(self) -> None:
        """Release the store of used tickets. Idempotent."""
        await self.uses.aclose()

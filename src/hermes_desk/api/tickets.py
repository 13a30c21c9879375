"""Short-lived WebSocket tickets, so that no API key ever travels in a URL (spec D3).

A browser cannot set headers on a WebSocket, and a key in the query string ends up in access
logs, proxies and browser history. Instead the console asks ``POST /v1/sessions/{id}/ws-ticket``
(with its key in a header) for a ticket bound to the tenant, the session and the customer, good
for :data:`TICKET_TTL_S` seconds and for one connection, and opens the socket with
``?ticket=…``. A ticket is signed (HMAC-SHA256) with a key derived from the tenant's API key, so
every worker configured with the same keys can check it; it holds no secret itself.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass

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

    Tickets used once are remembered until they expire (in this process), so a ticket copied
    from a log cannot open a second socket here.
    """

    def __init__(self, api_keys: Mapping[str, str], *, ttl_s: float = TICKET_TTL_S) -> None:
        self._keys = dict(api_keys)
        self._ttl_s = ttl_s
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()

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

    def redeem(self, ticket: str, *, session_id: str, user: str, now: float) -> Ticket | None:
        """The ticket's grant if it is genuine, unexpired, for ``session_id`` and ``user`` (any
        customer when ``user`` is empty) and not used before; else ``None``. Only a ticket
        that opens the socket is used up."""
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
        with self._lock:
            for nonce in [n for n, until in self._used.items() if until <= now]:
                del self._used[nonce]
            if found.nonce in self._used:
                return None
            self._used[found.nonce] = found.expires_at
        return found

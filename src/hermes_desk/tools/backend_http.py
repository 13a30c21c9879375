"""How an HTTP tool's request reaches the business system: one ``send`` that returns the status
and the whole body, or raises :class:`~hermes_desk.errors.BackendTimeoutError` /
:class:`~hermes_desk.errors.BackendUnavailableError`.

:class:`BackendHttp` is the service's client (aiohttp). Measured against the demo backend on
loopback, a ``GET`` through HttpBinding costs the caller about 170 µs of CPU one at a time and
125 µs with 8 at once, against 670–740 µs and 930–1,030 µs on ``httpx.AsyncClient`` (its
auth, redirect, cookie and anyio layers, the pure-Python h11 parser; aiohttp parses in C).
:class:`HttpxSender` keeps a given ``httpx.AsyncClient`` usable, for callers that own one.

Both send the same bytes: the caller encodes the URL (query included) and the body, so nothing
depends on either library's encoders. Neither follows redirects: a 3xx is the answer.
"""

from __future__ import annotations

import functools
import os
import ssl
import urllib.request
from collections.abc import Mapping
from typing import Protocol

import aiohttp
import httpx
import yarl

from hermes_desk.errors import BackendTimeoutError, BackendUnavailableError

__all__ = ["BackendHttp", "HttpSender", "HttpxSender"]

#: aiohttp's errors by the httpx name the same failure had, so tool events and error texts read
#: as before the switch ("GET …/orders/{order_id}: ConnectError")
_HTTPX_NAMES: tuple[tuple[type[BaseException], str], ...] = (
    (aiohttp.ClientConnectorError, "ConnectError"),
    (aiohttp.ServerDisconnectedError, "RemoteProtocolError"),
    (aiohttp.ClientPayloadError, "RemoteProtocolError"),
    (aiohttp.ClientResponseError, "RemoteProtocolError"),  # a malformed status line or header
    (aiohttp.InvalidURL, "UnsupportedProtocol"),
    (aiohttp.ClientOSError, "ReadError"),
)


class HttpSender(Protocol):
    """Sends one request; the body of any status comes back whole."""

    async def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout_s: float,
        where: str,
    ) -> tuple[int, bytes]:
        """``url`` is fully encoded; ``where`` names the call in error messages."""
        ...


class BackendHttp:
    """The HTTP tools' client: one keep-alive pool, opened on first use, closed by ``aclose``.

    Settings follow ``httpx.AsyncClient()``'s defaults, which the tools ran on before: at most
    100 connections, idle ones dropped after 5 s (a backend's server keeps them about as long),
    the proxy and CA variables of the environment (read when the pool opens), certifi's CAs
    otherwise. Cookies are not
    kept: a backend's cookie must not ride along on another customer's call.
    """

    def __init__(self, *, max_connections: int = 100, keepalive_s: float = 5.0) -> None:
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        self._session: aiohttp.ClientSession | None = None
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}

    def _open(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=self._max_connections,
            keepalive_timeout=self._keepalive_s,
            ssl=_ssl_context(),
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("Content-Type",),  # the binding types its bodies itself
            # aiohttp looks the proxy variables up in a thread on every request when asked to:
            # ask only when one is set (a proxy is then honoured, as httpx did)
            trust_env=bool(urllib.request.getproxies()),
            # h11 (httpx) took header blocks up to 16 KiB; aiohttp's default is 8 KiB a line
            max_line_size=16_384,
            max_field_size=16_384,
        )
        # aiohttp sends a PUT or DELETE again when a kept-alive connection drops before the
        # answer, though the backend may have acted on it: a write would run twice. One attempt
        # here, as with httpx; the executor decides what is retried. (No public switch.)
        self._session._retry_connection = False
        return self._session

    def _timeout(self, timeout_s: float) -> aiohttp.ClientTimeout:
        timeout = self._timeouts.get(timeout_s)
        if timeout is None:  # a handful of distinct limits per pack: build each once
            timeout = self._timeouts[timeout_s] = aiohttp.ClientTimeout(total=timeout_s)
        return timeout

    async def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout_s: float,
        where: str,
    ) -> tuple[int, bytes]:
        session = self._session or self._open()
        try:
            async with session.request(
                method,
                _encoded_url(url),
                headers=headers,
                data=body,
                timeout=self._timeout(timeout_s),
                allow_redirects=False,
            ) as response:
                return response.status, await response.read()
        except TimeoutError as exc:  # aiohttp's timeouts (some also ClientErrors) land here
            raise BackendTimeoutError(f"{where}: no answer within {timeout_s}s") from exc
        except aiohttp.ClientError as exc:
            raise BackendUnavailableError(f"{where}: {_httpx_name(exc)}") from exc

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


class HttpxSender:
    """Sends through a caller's ``httpx.AsyncClient`` (which the caller closes)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout_s: float,
        where: str,
    ) -> tuple[int, bytes]:
        try:
            response = await self.client.request(
                method, url, headers=headers, content=body, timeout=timeout_s
            )
        except httpx.TimeoutException as exc:
            raise BackendTimeoutError(f"{where}: no answer within {timeout_s}s") from exc
        except httpx.TransportError as exc:
            raise BackendUnavailableError(f"{where}: {type(exc).__name__}") from exc
        return response.status_code, response.content


def _httpx_name(exc: aiohttp.ClientError) -> str:
    for kind, name in _HTTPX_NAMES:
        if isinstance(exc, kind):
            return name
    return type(exc).__name__


def _encoded_url(url: str) -> yarl.URL:
    """``url`` taken as already encoded: HttpBinding encodes every part itself, so aiohttp's
    parsing and re-quoting of a ``str`` would only cost time (and could change the bytes)."""
    return yarl.URL(url, encoded=True)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The CAs httpx used: ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set, else certifi's."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())

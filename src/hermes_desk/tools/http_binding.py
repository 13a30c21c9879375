"""The HTTP binding: a tool is one request to a business system (``httpx.AsyncClient``).

Arguments fill the URL template's ``{placeholders}`` (URL-quoted), then the query string or the
body as the :class:`~hermes_desk.tools.spec.HttpTarget` says. Writes carry the call's
idempotency key (body field and ``Idempotency-Key`` header) so a retried ``POST`` cannot act
twice. httpx errors are translated at this boundary; messages name the method and the URL
*template*, never the filled URL, which may hold a phone number. An answer of 400 or more
raises :class:`~hermes_desk.errors.BackendError` with its ``status_code`` and the body the
business system sent (``answer``), so the executor can tell a declared business answer (404
"no such order", 409 "already has a return") from a fault.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from hermes_desk.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    ValidationError,
)
from hermes_desk.ids import new_id
from hermes_desk.tools.binding import CallContext
from hermes_desk.tools.spec import HttpTarget

__all__ = ["HttpBinding"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_READS = frozenset({"GET", "DELETE", "HEAD"})


class HttpBinding:
    """Calls one HTTP endpoint. The client is shared and owned by the caller (who closes it)."""

    def __init__(
        self, target: HttpTarget, client: httpx.AsyncClient, *, health_url: str | None = None
    ) -> None:
        self._target = target
        self._client = client
        self._health_url = health_url
        self._method = target.method.upper()
        self._path_params = frozenset(target.path_params)

    @property
    def target(self) -> HttpTarget:
        return self._target

    def _split(self, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        rest = {k: v for k, v in arguments.items() if k not in self._path_params and v is not None}
        t = self._target
        if t.query is not None:
            query = {k: rest[k] for k in t.query if k in rest}
        elif self._method in _READS:
            query = dict(rest)
        else:
            query = {}
        if t.body is not None:
            body = {k: rest[k] for k in t.body if k in rest}
        elif self._method not in _READS:
            body = {k: v for k, v in rest.items() if k not in query}
        else:
            body = {}
        return query, body

    def _url(self, arguments: Mapping[str, Any]) -> str:
        def fill(match: re.Match[str]) -> str:
            value = arguments.get(match.group(1))
            if value is None:  # the caller's mistake: nothing is sent, no breaker moves
                raise ValidationError(
                    f"{self._method} {self._target.url}: path parameter {match.group(1)} missing"
                )
            return quote(str(value), safe="")

        return _PLACEHOLDER.sub(fill, self._target.url)

    async def call(
        self, arguments: Mapping[str, Any], *, timeout_s: float, context: CallContext
    ) -> Any:
        t = self._target
        where = f"{self._method} {t.url}"
        url = self._url(arguments)
        query, body = self._split(arguments)
        headers = {"X-Request-Id": context.request_id, **t.headers}
        if self._method not in _READS and t.idempotency_field:
            key = context.idempotency_key or new_id("idem")
            body.setdefault(t.idempotency_field, key)
            headers["Idempotency-Key"] = key
        send: dict[str, Any] = {}
        if self._method not in _READS:
            send = {"data": body} if t.body_encoding == "form" else {"json": body}
        try:
            response = await self._client.request(
                self._method,
                url,
                params=_query_params(query),
                headers=headers,
                timeout=timeout_s,
                **send,
            )
        except httpx.TimeoutException as exc:
            raise BackendTimeoutError(f"{where}: no answer within {timeout_s}s") from exc
        except httpx.TransportError as exc:
            raise BackendUnavailableError(f"{where}: {type(exc).__name__}") from exc
        if response.status_code >= 400:
            try:  # the business system's own words (a refusal says why)
                answer: Any = response.json()
            except ValueError:
                answer = None
            raise BackendError(
                f"{where}: HTTP {response.status_code}",
                status_code=response.status_code,
                answer=answer,
            )
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise BackendError(f"{where}: the answer is not JSON") from exc

    async def health(self, *, timeout_s: float) -> bool:
        if self._health_url is None:
            return True
        try:
            response = await self._client.get(self._health_url, timeout=timeout_s)
        except httpx.HTTPError:
            return False
        return response.is_success


def _query_params(query: Mapping[str, Any]) -> list[tuple[str, str | int | float | bool | None]]:
    out: list[tuple[str, str | int | float | bool | None]] = []
    for key, value in query.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            out.append((key, _scalar(item)))
    return out


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

"""The HTTP binding: a tool is one request to a business system.

Arguments fill the URL template's ``{placeholders}`` (URL-quoted), then the query string or the
body as the :class:`~hermes_desk.tools.spec.HttpTarget` says. Writes carry the call's
idempotency key (body field and ``Idempotency-Key`` header) so a retried ``POST`` cannot act
twice. Transport errors are translated at this boundary (see :mod:`.backend_http`); messages
name the method and the URL *template*, never the filled URL, which may hold a phone number. An
answer of 400 or more raises :class:`~hermes_desk.errors.BackendError` with its ``status_code``
and the body the business system sent (``answer``), so the executor can tell a declared business
answer (404 "no such order", 409 "already has a return") from a fault.

The request is encoded here, byte for byte as ``httpx`` encoded it before (compact UTF-8 JSON,
``true``/``false`` in forms and queries, ``+`` for spaces in a query), whichever client sends it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from hermes_desk.errors import BackendError, HermesError, ValidationError
from hermes_desk.ids import new_id
from hermes_desk.tools.backend_http import BackendHttp, HttpSender, HttpxSender
from hermes_desk.tools.binding import CallContext
from hermes_desk.tools.spec import HttpTarget

__all__ = ["HttpBinding"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_READS = frozenset({"GET", "DELETE", "HEAD"})
#: what may stay as it is in a pack's URL template (RFC 3986 reserved characters, ``%xx``
#: escapes, and the template's braces); anything else (a space, non-ASCII) is percent-encoded
_URL_SAFE = ":/?#[]@!$&'()*+,;=%{}~"
_JSON = {"Content-Type": "application/json"}
_FORM = {"Content-Type": "application/x-www-form-urlencoded"}


class HttpBinding:
    """Calls one HTTP endpoint. The client is shared and owned by the caller (who closes it):
    a :class:`~hermes_desk.tools.backend_http.BackendHttp`, or an ``httpx.AsyncClient``."""

    def __init__(
        self,
        target: HttpTarget,
        client: BackendHttp | httpx.AsyncClient,
        *,
        health_url: str | None = None,
    ) -> None:
        self._target = target
        self._sender: HttpSender = (
            HttpxSender(client) if isinstance(client, httpx.AsyncClient) else client
        )
        self._health_url = None if health_url is None else quote(health_url, safe=_URL_SAFE)
        self._method = target.method.upper()
        self._path_params = frozenset(target.path_params)
        self._template = quote(target.url, safe=_URL_SAFE)
        self._where = f"{self._method} {target.url}"
        self._writes = self._method not in _READS
        self._headers = dict(target.headers)
        # the body's type, unless the pack names one
        self._typed = self._writes and not any(k.lower() == "content-type" for k in self._headers)
        if self._typed:
            self._headers.update(_FORM if target.body_encoding == "form" else _JSON)

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

    def _url(self, arguments: Mapping[str, Any], query: Mapping[str, Any]) -> str:
        def fill(match: re.Match[str]) -> str:
            value = arguments.get(match.group(1))
            if value is None:  # the caller's mistake: nothing is sent, no breaker moves
                raise ValidationError(
                    f"{self._method} {self._target.url}: path parameter {match.group(1)} missing"
                )
            text = str(value)
            # "." and ".." would be read as path steps (and cleaned away): keep them one segment
            return _DOTS.get(text) or quote(text, safe="")

        url = _PLACEHOLDER.sub(fill, self._template) if self._path_params else self._template
        if query:
            url += ("&" if "?" in url else "?") + urlencode(_query_params(query))
        return url

    async def call(
        self, arguments: Mapping[str, Any], *, timeout_s: float, context: CallContext
    ) -> Any:
        t = self._target
        where = self._where
        query, body = self._split(arguments)
        url = self._url(arguments, query)
        headers = {"X-Request-Id": context.request_id, **self._headers}
        content = None
        if self._writes:
            if t.idempotency_field:
                key = context.idempotency_key or new_id("idem")
                body.setdefault(t.idempotency_field, key)
                headers["Idempotency-Key"] = key
            if t.body_encoding == "json":
                content = _json(body)
            elif body:
                content = _form(body)
            elif self._typed:  # an empty form is no body at all, as httpx sent it
                del headers["Content-Type"]
        status, answer_bytes = await self._sender.send(
            self._method, url, headers=headers, body=content, timeout_s=timeout_s, where=where
        )
        if status >= 400:
            try:  # the business system's own words (a refusal says why)
                answer: Any = json.loads(answer_bytes)
            except ValueError:
                answer = None
            raise BackendError(f"{where}: HTTP {status}", status_code=status, answer=answer)
        if status == 204 or not answer_bytes:
            return None
        try:
            return json.loads(answer_bytes)
        except ValueError as exc:
            raise BackendError(f"{where}: the answer is not JSON") from exc

    async def health(self, *, timeout_s: float) -> bool:
        if self._health_url is None:
            return True
        try:
            status, _ = await self._sender.send(
                "GET",
                self._health_url,
                headers={},
                body=None,
                timeout_s=timeout_s,
                where=f"GET {self._health_url}",
            )
        except HermesError:
            return False
        return 200 <= status < 300


_DOTS = {".": "%2E", "..": "%2E%2E"}


def _json(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _form(body: Mapping[str, Any]) -> bytes:
    return urlencode(_query_params(body)).encode()


def _query_params(query: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for key, value in query.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            out.append((key, _scalar(item)))
    return out


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

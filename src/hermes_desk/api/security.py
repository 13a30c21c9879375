"""Tenants from API keys. With no keys configured the service runs open as tenant ``default``."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from fastapi import Request

from hermes_desk.api.errors import Unauthorized

__all__ = ["DEFAULT_TENANT", "resolve_tenant", "tenant_for"]

DEFAULT_TENANT = "default"


def resolve_tenant(api_keys: Mapping[str, str], headers: Mapping[str, str]) -> str | None:
    """The tenant of the key in ``X-API-Key`` or ``Authorization: Bearer``; None without a
    valid key. Keys are only read from headers: a key in a URL would reach access logs
    (browsers open WebSockets with a ticket instead, :mod:`hermes_desk.api.tickets`)."""
    if not api_keys:
        return DEFAULT_TENANT
    supplied = headers.get("x-api-key") or _bearer(headers.get("authorization"))
    if supplied:
        for key, tenant in api_keys.items():
            if hmac.compare_digest(key.encode(), supplied.encode()):
                return tenant
    return None


def tenant_for(request: Request, api_keys: Mapping[str, str]) -> str:
    tenant = resolve_tenant(api_keys, request.headers)
    if tenant is None:
        raise Unauthorized("a valid API key is required (X-API-Key header)")
    return tenant


def _bearer(header: str | None) -> str | None:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return None

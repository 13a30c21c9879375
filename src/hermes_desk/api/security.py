"""Tenants from API keys. With no keys configured the service runs open as tenant ``default``."""

from __future__ import annotations

import hmac

from fastapi import Request

from hermes_desk.api.errors import Unauthorized

__all__ = ["DEFAULT_TENANT", "tenant_for"]

DEFAULT_TENANT = "default"


def tenant_for(request: Request, api_keys: dict[str, str]) -> str:
    if not api_keys:
        return DEFAULT_TENANT
    supplied = request.headers.get("x-api-key") or _bearer(request.headers.get("authorization"))
    if supplied:
        for key, tenant in api_keys.items():
            if hmac.compare_digest(key.encode(), supplied.encode()):
                return tenant
    raise Unauthorized("a valid API key is required (X-API-Key header)")


def _bearer(header: str | None) -> str | None:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip()
    return None

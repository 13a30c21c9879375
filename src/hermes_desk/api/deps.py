"""Typed dependencies: the runtime, the tenant of the caller (with its OpenAPI security)."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Path, Query, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from hermes_desk.api.schemas import USER_ID_PATTERN
from hermes_desk.api.security import tenant_for
from hermes_desk.errors import NotFoundError
from hermes_desk.runtime import Runtime

__all__ = [
    "RuntimeDep",
    "SessionUserDep",
    "TenantDep",
    "UserPath",
    "UserQuery",
    "get_runtime",
    "get_tenant",
    "session_user",
]

# How the service reads a key (``security.resolve_tenant``): either header will do. Declared
# here so that /openapi.json names both schemes; checking stays in ``tenant_for``.
_API_KEY = APIKeyHeader(
    name="X-API-Key",
    scheme_name="ApiKey",
    description="a key of service.api_keys (required when keys are configured)",
    auto_error=False,
)
_BEARER = HTTPBearer(
    scheme_name="Bearer",
    description="the same key as `Authorization: Bearer <key>`",
    auto_error=False,
)


# Dependencies are ``async def``: FastAPI runs a plain ``def`` dependency in the worker-thread
# pool, a thread hand-off per dependency per request for a dictionary look-up.
async def get_runtime(request: Request) -> Runtime:
    return cast(Runtime, request.app.state.runtime)


async def get_tenant(
    request: Request,
    _key: Annotated[str | None, Security(_API_KEY)] = None,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_BEARER)] = None,
) -> str:
    runtime = cast(Runtime, request.app.state.runtime)
    tenant = tenant_for(request, runtime.settings.service.api_keys)
    request.state.tenant = tenant
    return tenant


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
TenantDep = Annotated[str, Depends(get_tenant)]


async def session_user(
    session_id: str,
    runtime: RuntimeDep,
    tenant: TenantDep,
    user_id: Annotated[
        str | None,
        Query(
            pattern=USER_ID_PATTERN,
            description="the session's customer; optional: without it the session is found by "
            "its id among the caller's tenant's sessions, with it the two must match (404)",
        ),
    ] = None,
) -> str:
    """The customer of ``/v1/sessions/{session_id}…``: ``?user_id=`` when given, else the
    session's own (another tenant's session is "not found", like an unknown one)."""
    if user_id is not None:
        return user_id
    session = await runtime.sessions.store.load(session_id)
    if session is None or session.tenant != tenant:
        raise NotFoundError("session not found", session_id=session_id)
    return session.user


SessionUserDep = Annotated[str, Depends(session_user)]

# Every route names a customer the same way, in the query or in the path.
UserQuery = Annotated[str, Query(pattern=USER_ID_PATTERN, description="the customer")]
UserPath = Annotated[str, Path(pattern=USER_ID_PATTERN, description="the customer")]

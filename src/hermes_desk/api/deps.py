"""Typed dependencies: the runtime, the tenant of the caller (with its OpenAPI security)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any, cast

from fastapi import Depends, Path, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.security import APIKeyHeader, HTTPBearer
from starlette.routing import BaseRoute

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
    "key_security",
    "session_user",
]

# How the service reads a key (``security.resolve_tenant``): either header will do. Stated in
# /openapi.json for every route that depends on :func:`get_tenant` (:func:`key_security`);
# checking stays in ``tenant_for``.
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


async def get_tenant(request: Request) -> str:
    # One dependency, not one per scheme: FastAPI solves each sub-dependency on every request
    # (measured: CPU per turn, docs/benchmarks.md "Load"); the schemes are documented below.
    runtime = cast(Runtime, request.app.state.runtime)
    tenant = tenant_for(request, runtime.settings.service.api_keys)
    request.state.tenant = tenant
    return tenant


def key_security(
    routes: Iterable[BaseRoute],
) -> tuple[dict[str, Any], dict[str, list[dict[str, list[str]]]]]:
    """What /openapi.json says about keys: the schemes, and each route (``"METHOD path"``) that
    needs a key — those depending on :func:`get_tenant` — with the schemes it accepts."""
    schemes = {
        scheme.scheme_name: scheme.model.model_dump(mode="json", by_alias=True, exclude_none=True)
        for scheme in (_API_KEY, _BEARER)
    }
    accepted: list[dict[str, list[str]]] = [{name: []} for name in schemes]
    needs = {
        f"{method.lower()} {route.path_format}": list(accepted)
        for route in iter_route_contexts(list(routes))  # through included routers
        if isinstance(route.original_route, APIRoute) and _depends_on(route.dependant, get_tenant)
        for method in route.methods or ()
    }
    return schemes, needs


def _depends_on(dependant: Dependant, call: Callable[..., Any]) -> bool:
    return any(d.call is call or _depends_on(d, call) for d in dependant.dependencies)


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

"""Typed dependencies: the runtime, the tenant of the caller."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Request

from hermes_desk.api.security import tenant_for
from hermes_desk.runtime import Runtime

__all__ = ["RuntimeDep", "TenantDep", "get_runtime", "get_tenant"]


def get_runtime(request: Request) -> Runtime:
    return cast(Runtime, request.app.state.runtime)


def get_tenant(request: Request) -> str:
    runtime = get_runtime(request)
    tenant = tenant_for(request, runtime.settings.service.api_keys)
    request.state.tenant = tenant
    return tenant


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
TenantDep = Annotated[str, Depends(get_tenant)]

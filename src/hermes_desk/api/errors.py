"""The one place that maps the error tree to HTTP: every error is a JSON body naming the problem."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route

from hermes_desk.api.schemas import ErrorBody
from hermes_desk.errors import (
    BackendTimeoutError,
    BackendUnavailableError,
    ConfigError,
    ConflictError,
    FailureError,
    HermesError,
    MisuseError,
    NotFoundError,
    PackError,
    ValidationError,
)

__all__ = [
    "Unauthorized",
    "error_body",
    "error_responses",
    "install_error_handlers",
    "problem",
    "status_for",
    "validation_body",
]


class Unauthorized(HermesError):
    """No valid API key: the one error that only exists at the HTTP edge."""

    code = "unauthorized"


_STATUS: tuple[tuple[type[HermesError], int], ...] = (
    (Unauthorized, 401),
    (NotFoundError, 404),
    (ConflictError, 409),
    (ValidationError, 422),
    (PackError, 500),
    (ConfigError, 500),
    (MisuseError, 400),
    (BackendTimeoutError, 504),
    (BackendUnavailableError, 503),
    (FailureError, 502),
)


def status_for(exc: HermesError) -> int:
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return status
    return 500


def error_body(code: str, message: str, **details: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **details}}


def problem(loc: Sequence[object], message: str) -> dict[str, str]:
    """One refused field: ``loc`` as pydantic gives it (``("body", "inputs", 0)``), dotted."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    field = ".".join(str(p) for p in parts)
    return {"field": _storable(field) or "body", "message": _storable(message)}


def _storable(text: str) -> str:
    """``text`` with any lone surrogate replaced, so the error body itself can be encoded."""
    return text.encode("utf-8", errors="replace").decode("utf-8")


def validation_body(
    problems: Iterable[dict[str, str]], *, code: str = "validation_error", message: str = ""
) -> dict[str, Any]:
    """The 422 body: a summary naming every problem, and the problems."""
    found = list(problems)
    summary = "; ".join(f"{p['field']}: {p['message']}" for p in found)
    text = f"{message}: {summary}" if message else f"invalid request: {summary}"
    return error_body(code, text, problems=found)


_DESCRIPTIONS = {
    400: "the request misuses the service (names what)",
    401: "no valid API key (X-API-Key or Authorization: Bearer) while keys are configured",
    404: "unknown id, or one of another customer or tenant (the two look the same)",
    405: "the path does not take this method",
    409: "the request clashes with the current state (closed session, decided proposal)",
    413: "the body is over service.max_body_bytes",
    422: "malformed JSON, nesting too deep, text that cannot be stored, missing or wrong fields",
    500: "the service failed (the body names the error)",
    502: "a backend answered with an error",
    503: "a backend or store is unavailable",
    504: "the request (or a backend) did not finish in time",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries: each status with the error body and when it happens."""
    return {s: {"model": ErrorBody, "description": _DESCRIPTIONS[s]} for s in statuses}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HermesError)
    async def _hermes(request: Request, exc: HermesError) -> JSONResponse:
        return JSONResponse(
            error_body(exc.code, exc.message, **_jsonable(exc.details)), status_code=status_for(exc)
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = (problem(e.get("loc", ()), e.get("msg", "invalid")) for e in exc.errors())
        return JSONResponse(validation_body(problems), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(_allowed_methods(request))
        return JSONResponse(
            error_body("http_error", str(exc.detail)), status_code=exc.status_code, headers=headers
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Starlette's last resort answers text/plain; this one keeps the contract. Starlette
        # raises the exception again after the answer, so the server still logs it.
        return JSONResponse(
            error_body("internal_error", f"the service failed: {type(exc).__name__}"),
            status_code=500,
        )


def _allowed_methods(request: Request) -> list[str]:
    """Every method the path takes, across all routes on it (Starlette's 405 names only the
    first route's)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        if isinstance(route, Route) and route.matches(request.scope)[0] is not Match.NONE:
            methods |= route.methods or set()
    return sorted(methods)


def _jsonable(details: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in details.items() if isinstance(v, str | int | float | bool | None)}

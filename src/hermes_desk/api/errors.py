"""The one place that maps the error tree to HTTP: every error is a JSON body naming the problem."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

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

__all__ = ["Unauthorized", "error_body", "install_error_handlers", "status_for"]


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


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HermesError)
    async def _hermes(request: Request, exc: HermesError) -> JSONResponse:
        return JSONResponse(
            error_body(exc.code, exc.message, **_jsonable(exc.details)), status_code=status_for(exc)
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {
                "field": ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body",
                "message": err.get("msg", "invalid"),
            }
            for err in exc.errors()
        ]
        summary = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        return JSONResponse(
            error_body("validation_error", f"invalid request: {summary}", problems=problems),
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            error_body("http_error", str(exc.detail)),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )


def _jsonable(details: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in details.items() if isinstance(v, str | int | float | bool | None)}

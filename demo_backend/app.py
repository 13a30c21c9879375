"""The demo business backend as a FastAPI app: ``create_app(state)``.

Every business route has a name (``get_order``, ``send_sms``…). The name is what fault injection
(``PUT /_faults/{name}``) and the request log (``GET /_log``) refer to. Routes are thin: they run
through :class:`_Runner`, which applies faults, idempotency and logging around the state's
business method.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, Header, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from demo_backend.faults import ENDPOINTS, WILDCARD, FaultConfig
from demo_backend.state import BackendState, Refused, StoredResult

__all__ = ["create_app"]

PHONE_PATTERN = r"^1[3-9][0-9]{9}$"
_HANG_POLL_S = 0.05

Phone = Annotated[str, Field(pattern=PHONE_PATTERN)]
IdempotencyKey = Annotated[str | None, Field(default=None, min_length=1, max_length=200)]
IdempotencyHeader = Annotated[str | None, Header(alias="Idempotency-Key")]


class PhoneRequest(BaseModel):
    phone: Phone
    idempotency_key: IdempotencyKey = None


class VerifyRequest(BaseModel):
    phone: Phone
    code: str = Field(min_length=1, max_length=16)


class CaptchaAnswer(BaseModel):
    captcha_id: str = Field(min_length=1, max_length=64)
    answer: str = Field(min_length=1, max_length=16)


class PasswordRequest(BaseModel):
    phone: Phone
    new_password: str = Field(min_length=6, max_length=128)
    idempotency_key: IdempotencyKey = None


class ReturnRequest(BaseModel):
    order_id: str = Field(min_length=1, max_length=64)
    reason: str = Field(min_length=1, max_length=200)
    user_id: str = Field(min_length=1, max_length=64)
    idempotency_key: IdempotencyKey = None


class RefundRequest(BaseModel):
    order_id: str = Field(min_length=1, max_length=64)
    amount: float = Field(gt=0)
    user_id: str = Field(min_length=1, max_length=64)
    idempotency_key: IdempotencyKey = None


class ResetRequest(BaseModel):
    phone: Phone
    idempotency_key: IdempotencyKey = None


class NoteRequest(BaseModel):
    user_id: str = Field(min_length=1, max_length=64)
    note: str = Field(min_length=1, max_length=2000)
    idempotency_key: IdempotencyKey = None


class TicketRequest(BaseModel):
    user_id: str = Field(min_length=1, max_length=64)
    order_id: str | None = Field(default=None, max_length=64)
    summary: str = Field(min_length=1, max_length=2000)
    idempotency_key: IdempotencyKey = None


def _fingerprint(body: BaseModel | None, path_params: dict[str, Any]) -> str:
    """What a repeated key must match: the path's ids and the body (a digest of them, so that
    no password stays in memory)."""
    request = {
        "path": path_params,
        "body": body.model_dump(exclude={"idempotency_key"}) if body is not None else None,
    }
    text = json.dumps(request, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Runner:
    """Faults → idempotency → business method → log, for one request (admin routes that are
    logged skip the faults)."""

    def __init__(self, state: BackendState) -> None:
        self.state = state

    async def __call__(
        self,
        request: Request,
        name: str,
        work: Callable[[], dict[str, Any]],
        *,
        body: BaseModel | None = None,
        header_key: str | None = None,
        faults: bool = True,
    ) -> JSONResponse:
        state = self.state
        method = request.method
        key = getattr(body, "idempotency_key", None) or header_key
        faulted = await self._faults(request, name, key) if faults else None
        if faulted is not None:
            return faulted
        # No await from here on: the check, the work and the store happen as one step.
        if key is not None:
            fingerprint = _fingerprint(body, dict(request.path_params))
            stored = state.stored(name, key)
            if stored is not None:
                if stored.fingerprint != fingerprint:
                    state.log.record(name, method, "error", 409, key)
                    return JSONResponse(
                        {"error": "idempotency key was used with a different request"}, 409
                    )
                state.log.record(name, method, "replayed", stored.status, key)
                return JSONResponse(
                    stored.body, stored.status, headers={"Idempotent-Replayed": "true"}
                )
        try:
            result = work()
        except Refused as refusal:
            state.log.record(name, method, "error", refusal.status, key)
            return JSONResponse(refusal.body(), refusal.status)
        if key is not None:
            state.store(name, key, StoredResult(fingerprint, 200, result))
        state.log.record(name, method, "executed", 200, key)
        return JSONResponse(result)

    async def _faults(self, request: Request, name: str, key: str | None) -> JSONResponse | None:
        state = self.state
        config = state.faults.for_endpoint(name)
        if config is None:
            return None
        if config.latency_ms > 0:
            await state.sleep(config.latency_ms / 1000)
        if config.timeout and not await self._hang(request, name, config.hang_s):
            # The client gave up: nothing runs, like a server that never got to it.
            state.log.record(name, request.method, "fault", 504, key)
            return JSONResponse({"error": "timed out (injected fault)", "endpoint": name}, 504)
        if config.timeout:
            # The hang may have ended because the fault was cleared or changed.
            current = state.faults.for_endpoint(name)
            if current is None:
                return None
            config = current
        if state.faults.roll_error(config):
            state.log.record(name, request.method, "fault", config.status_code, key)
            return JSONResponse({"error": "injected fault", "endpoint": name}, config.status_code)
        return None

    async def _hang(self, request: Request, name: str, hang_s: float) -> bool:
        """Hang up to ``hang_s``; False if the client went away, True when released or done."""
        waited = 0.0
        while waited < hang_s:
            current = self.state.faults.for_endpoint(name)
            if current is None or not current.timeout:
                return True  # the fault was cleared: answer now
            if await request.is_disconnected():
                return False
            step = min(_HANG_POLL_S, hang_s - waited)
            await self.state.sleep(step)
            waited += step
        return True


def _route_name(request: Request) -> str | None:
    route = request.scope.get("route")
    name = getattr(route, "name", None)
    return name if isinstance(name, str) and name in ENDPOINTS else None


def _install_error_handlers(app: FastAPI, state: BackendState) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        name = _route_name(request)
        if name is not None:
            state.log.record(name, request.method, "error", 422)
        # Never echo the input back: it may hold a password.
        detail = [
            {k: v for k, v in err.items() if k not in {"input", "url", "ctx"}}
            for err in exc.errors()
        ]
        return JSONResponse(
            {"error": "invalid request", "detail": jsonable_encoder(detail)}, status_code=422
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, exc.status_code, headers=exc.headers)


def _add_business_routes(app: FastAPI, state: BackendState) -> None:
    run = _Runner(state)

    @app.get("/health", name="health")
    async def health(request: Request) -> JSONResponse:
        return await run(request, "health", lambda: {"status": "ok"})

    @app.get("/users/{user_id}", name="get_user")
    async def get_user(request: Request, user_id: str) -> JSONResponse:
        return await run(request, "get_user", lambda: state.user(user_id))

    @app.get("/users/{user_id}/orders", name="list_orders")
    async def list_orders(request: Request, user_id: str) -> JSONResponse:
        return await run(request, "list_orders", lambda: state.orders_of(user_id))

    @app.get("/users/{user_id}/payment-methods", name="list_payment_methods")
    async def list_payment_methods(request: Request, user_id: str) -> JSONResponse:
        return await run(
            request, "list_payment_methods", lambda: state.list_payment_methods(user_id)
        )

    @app.get("/users/{user_id}/supports/{feature}", name="get_support")
    async def get_support(request: Request, user_id: str, feature: str) -> JSONResponse:
        return await run(request, "get_support", lambda: state.support(user_id, feature))

    @app.get("/phones/{phone}", name="check_phone")
    async def check_phone(
        request: Request, phone: Annotated[str, Path(pattern=PHONE_PATTERN)]
    ) -> JSONResponse:
        return await run(request, "check_phone", lambda: state.phone(phone))

    @app.get("/orders/{order_id}", name="get_order")
    async def get_order(request: Request, order_id: str) -> JSONResponse:
        return await run(request, "get_order", lambda: state.order(order_id))

    @app.get("/shipments/{order_id}", name="get_shipment")
    async def get_shipment(request: Request, order_id: str) -> JSONResponse:
        return await run(request, "get_shipment", lambda: state.shipment(order_id))

    @app.post("/sms/send", name="send_sms")
    async def send_sms(
        request: Request, body: PhoneRequest, idem: IdempotencyHeader = None
    ) -> JSONResponse:
        return await run(
            request, "send_sms", lambda: state.send_sms(body.phone), body=body, header_key=idem
        )

    @app.get("/sms/outbox/{phone}", name="sms_outbox")
    async def sms_outbox(request: Request, phone: str) -> JSONResponse:
        return await run(request, "sms_outbox", lambda: state.outbox(phone))

    @app.post("/captcha", name="make_captcha")
    async def make_captcha(
        request: Request, body: PhoneRequest, idem: IdempotencyHeader = None
    ) -> JSONResponse:
        return await run(
            request,
            "make_captcha",
            lambda: state.make_captcha(body.phone),
            body=body,
            header_key=idem,
        )

    @app.post("/captcha/verify", name="verify_captcha")
    async def verify_captcha(request: Request, body: CaptchaAnswer) -> JSONResponse:
        return await run(
            request,
            "verify_captcha",
            lambda: state.verify_captcha(body.captcha_id, body.answer),
        )

    @app.post("/sms/verify", name="verify_sms")
    async def verify_sms(request: Request, body: VerifyRequest) -> JSONResponse:
        return await run(request, "verify_sms", lambda: state.verify_sms(body.phone, body.code))

    @app.post("/password", name="update_password")
    async def update_password(
        request: Request, body: PasswordRequest, idem: IdempotencyHeader = None
    ) -> JSONResponse:
        return await run(
            request,
            "update_password",
            lambda: state.update_password(body.phone, body.new_password),
            body=body,
            header_key=idem,
        )

    @app.post("/password/reset", name="reset_password")
    async def reset_password(
        request: Request, body: ResetRequest, idem: IdempotencyHeader = None
    ) -> JSONResponse:
        return await run(
            request,
            "reset_password",
            lambda: state.reset_password(body.phone),
            body=body,
            header_key=idem,
        )

    @app.post("/tickets/{ticket_id}/notes", name="add_ticket_note")
    async def add_ticket_note(
        request: Request, ticket_id: str, body: NoteRequest, idem: IdempotencyHeader = None
    ) -> JSONResponse:
        return await run(
            request,
            "add_ticket_note",
            lambda: state.add_ticket_note(ticket_id, body.user_id, body.note),
            body=body,
            header_key=idem,
        )

    @app.post("/returns", name="create_return")
    async def create_return(
        request: Request, body: ReturnRequest, idem: IdempotencyHeader = None
    ) -> JSONResponse:
        return await run(
            request,
            "create_return",
            lambda: state.create_return(body.order_id, body.reason, body.user_id),
            body=body,
            header_key=idem,
        )

    @app.post("/refunds", name="issue_refund")
    async def issue_refund(
        request: Request, body: RefundRequest, idem: IdempotencyHeader = None
    ) -> JSONResponse:
        return await run(
            request,
            "issue_refund",
            lambda: state.issue_refund(body.order_id, body.amount, body.user_id),
            body=body,
            header_key=idem,
        )

    @app.post("/tickets", name="create_ticket")
    async def create_ticket(
        request: Request, body: TicketRequest, idem: IdempotencyHeader = None
    ) -> JSONResponse:
        return await run(
            request,
            "create_ticket",
            lambda: state.create_ticket(body.user_id, body.order_id, body.summary),
            body=body,
            header_key=idem,
        )


def _add_admin_routes(app: FastAPI, state: BackendState) -> None:
    """Run-time control for tests and demos; these routes are never faulted. Only
    ``receive_return``, which moves the business along, is logged (the fault and log controls
    are not)."""
    run = _Runner(state)

    def unknown(name: str) -> JSONResponse:
        return JSONResponse(
            {"error": f"unknown endpoint {name}", "endpoints": [WILDCARD, *ENDPOINTS]}, 404
        )

    @app.post("/_returns/{return_id}/receive", name="receive_return")
    async def receive_return(request: Request, return_id: str) -> JSONResponse:
        return await run(
            request, "receive_return", lambda: state.receive_return(return_id), faults=False
        )

    @app.get("/_faults")
    async def list_faults() -> dict[str, Any]:
        faults = {name: cfg.model_dump() for name, cfg in state.faults.all().items()}
        return {"faults": faults, "endpoints": list(ENDPOINTS)}

    @app.put("/_faults/{name}")
    async def set_fault(name: str, config: FaultConfig) -> JSONResponse:
        if not state.faults.known(name):
            return unknown(name)
        state.faults.set(name, config)
        return JSONResponse({"name": name, "fault": config.model_dump()})

    @app.delete("/_faults")
    async def clear_faults() -> dict[str, Any]:
        return {"cleared": state.faults.clear()}

    @app.delete("/_faults/{name}")
    async def clear_fault(name: str) -> JSONResponse:
        if not state.faults.known(name):
            return unknown(name)
        return JSONResponse({"cleared": state.faults.clear(name)})

    @app.get("/_log")
    async def read_log(since: Annotated[int, Query(ge=0)] = 0) -> dict[str, Any]:
        return {"entries": state.log.since(since), "last_seq": state.log.last_seq}

    @app.delete("/_log")
    async def clear_log() -> dict[str, Any]:
        state.log.clear()
        return {"cleared": True, "last_seq": state.log.last_seq}


def create_app(state: BackendState | None = None) -> FastAPI:
    """Build the demo backend app over ``state`` (a fresh one with the sample data if None)."""
    backend = state if state is not None else BackendState()
    app = FastAPI(
        title="Hermes Desk demo backend",
        version="1",
        description="Sample e-commerce business systems with fault injection.",
    )
    app.state.backend = backend
    _install_error_handlers(app, backend)
    _add_business_routes(app, backend)
    _add_admin_routes(app, backend)
    return app

"""Access logs that carry no secrets and no customer ids (spec D3).

uvicorn's access log prints the request line with its query string (``?user_id=u1001`` and, from
an old client, ``api_key=…``). The service turns it off (``serve``) and logs one line per request
itself, on the ``hermes_desk.access`` logger: method, the route's *template* (``/v1/sessions/
{session_id}/turns``: no ids), status and duration — never the query string, headers or body.

:class:`RedactingFilter` is the belt to those braces: installed on the log handlers by ``serve``,
it masks personal numbers and anything shaped like an API key parameter in every record.
"""

from __future__ import annotations

import logging
import re
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_desk.masking import Masker

__all__ = ["AccessLog", "RedactingFilter", "route_template"]

_logger = logging.getLogger("hermes_desk.access")
_KEY_PARAM = re.compile(
    r"((?:api[_-]?key|x-api-key|authorization|ticket|token)[\"']?\s*[=:]\s*[\"']?)"
    r"(?:bearer\s+)?[^\s&\"',;]+",
    re.IGNORECASE,
)
# The end of a key parameter's name and what follows it, as IGNORECASE matches them (ASCII
# letters, and the Kelvin sign for a k, the dotted and dotless i for an i): where it is absent
# the pattern cannot match; the class in front lets the scan skip the rest.
_KEY_PARAM_HINT = re.compile(
    r"[yYnNtT](?<=[kK\u212a][eE][yY]|[iIİı][oO][nN]|[kK\u212a][eE][tT]|[kK\u212a][eE][nN])[\"']?\s*[=:]"
)


def _redact_keys(message: str) -> str:
    """``message`` with the value of every API key, token or ticket parameter replaced."""
    if _KEY_PARAM_HINT.search(message) is None:
        return message
    return _KEY_PARAM.sub(r"\1***", message)


_FIXED_PATHS = frozenset({"/", "/healthz", "/readyz", "/metrics", "/console", "/openapi.json"})


def route_template(scope: Scope) -> str:
    """The path with every path parameter replaced by its name (``/v1/sessions/{session_id}``)."""
    path = str(scope.get("path", ""))
    route = scope.get("route")
    template = getattr(route, "path", None)
    if isinstance(template, str):
        return template
    params = scope.get("path_params")
    if not params:
        # No route matched: the path is whatever the client sent (ids included); not logged.
        return path if path in _FIXED_PATHS else "(no route)"
    for name, value in sorted(params.items(), key=lambda kv: -len(str(kv[1]))):
        if value:
            path = path.replace(str(value), "{" + str(name) + "}")
    return path


class AccessLog:
    """One INFO line per HTTP request and WebSocket: method, route template, status, ms."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def tracking_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "websocket.accept":
                status = 101
            elif message["type"] == "websocket.close" and not status:
                status = int(message.get("code", 1000))
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        finally:
            if _logger.isEnabledFor(logging.INFO):
                method = scope.get("method", "WS") if scope["type"] == "http" else "WS"
                elapsed = (time.perf_counter() - started) * 1000
                _logger.info("%s %s %s %.1fms", method, route_template(scope), status, elapsed)


class RedactingFilter(logging.Filter):
    """Masks personal numbers and key-shaped parameters in every record it sees."""

    def __init__(self, masker: Masker | None = None) -> None:
        super().__init__()
        self._masker = masker or Masker()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        cleaned = self._masker.text(_redact_keys(message))
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def log_config(level: str = "INFO") -> dict[str, object]:
    """The ``logging.config.dictConfig`` of ``serve``: uvicorn's own access log off (it prints
    query strings), the service's loggers on stderr, every handler redacting."""
    handler = {
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
        "formatter": "plain",
        "filters": ["redact"],
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"redact": {"()": RedactingFilter}},
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
        "handlers": {"stderr": handler},
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
            "hermes_desk": {"handlers": ["stderr"], "level": level, "propagate": False},
            "hermes_desk.access": {"level": level, "propagate": True},
            # The business calls' URLs hold ids and numbers (/phones/{phone}): warnings only.
            "httpx": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
            "httpcore": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        },
    }

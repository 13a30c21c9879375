"""``/console``: the agent console, one static page (HTML + vanilla JS + CSS, no build step).

Everything it shows comes from the public API: ``POST /v1/sessions``, the session WebSocket and
``GET /v1/tools``. The files live in ``hermes_desk/api/console/``; nothing is fetched from
elsewhere.
"""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import HTMLResponse, Response

from hermes_desk.errors import NotFoundError

__all__ = ["router"]

router = APIRouter(tags=["console"], include_in_schema=False)

_ASSETS = {"console.js": "text/javascript", "console.css": "text/css"}
# The page loads only its own files; it talks only to this service.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {"Content-Security-Policy": _CSP, "Cache-Control": "no-cache"}


_FOLDER = FilePath(__file__).resolve().parent.parent / "console"


def _read(name: str) -> str:
    return (_FOLDER / name).read_text("utf-8")


@router.get("/console", response_class=HTMLResponse)
async def console_page() -> HTMLResponse:
    """The agent console."""
    return HTMLResponse(_read("index.html"), headers=_HEADERS)


@router.get("/console/{name}")
async def console_asset(name: Annotated[str, Path(max_length=32)]) -> Response:
    """The console's script and stylesheet."""
    media_type = _ASSETS.get(name)
    if media_type is None:
        raise NotFoundError(f"no console file named {name}", file=name)
    return Response(_read(name), media_type=f"{media_type}; charset=utf-8", headers=_HEADERS)

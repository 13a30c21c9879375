"""Identifiers: unguessable, unique under any concurrency, optionally traceable to a user.

The article's sketch derived ids from ``time.time()`` (collides under load) or from user + time +
query (guessable). Here every id carries 128 bits from the OS CSPRNG.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["digest", "new_id", "session_id", "user_tag"]

_RANDOM_BYTES = 16  # 128 bits, above the 96 the spec requires


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(_RANDOM_BYTES)}"


def user_tag(user_id: str, key: bytes) -> str:
    """A short keyed hash of a user: traceable by whoever holds the key, opaque to others."""
    return hmac.new(key, user_id.encode(), hashlib.sha256).hexdigest()[:8]


def session_id(user_id: str | None = None, key: bytes | None = None) -> str:
    """``ses_<128 random bits>``, or ``ses_<user tag>_<random>`` when a key is configured."""
    random_part = secrets.token_urlsafe(_RANDOM_BYTES)
    if user_id is not None and key:
        return f"ses_{user_tag(user_id, key)}_{random_part}"
    return f"ses_{random_part}"


def digest(value: object) -> str:
    """A stable short digest of any JSON-like value, for logs that must not carry raw data."""
    import json

    raw = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]

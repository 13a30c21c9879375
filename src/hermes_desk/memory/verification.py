"""The second signature (M5): verifiers check model-proposed facts against business systems.

Verifiers are registered per key pattern (``supports_*`` → ask the backend whether the feature
is supported). A scheduler runs them over the pending facts every ``verify_interval_s`` (5 min):
a verifier's ``True`` activates the fact, ``False`` rejects it, ``None`` (cannot tell now) leaves
it pending for the next run or for a person.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import quote

import anyio
import httpx

from hermes_desk.clock import Clock
from hermes_desk.events import Event
from hermes_desk.memory.fact import Fact
from hermes_desk.memory.service import MemoryService

__all__ = ["HttpSupportsVerifier", "VerificationScheduler", "Verifier", "VerifierRegistry"]

_logger = logging.getLogger("hermes_desk.memory")


class Verifier(Protocol):
    async def verify(self, fact: Fact) -> bool | None:
        """True: the fact holds; False: it does not; None: cannot tell now."""
        ...


class VerifierRegistry:
    """Verifiers by key glob; the first registered pattern that matches wins."""

    def __init__(self) -> None:
        self._entries: list[tuple[str, Verifier]] = []

    def register(self, pattern: str, verifier: Verifier) -> None:
        self._entries.append((pattern, verifier))

    def for_key(self, key: str) -> Verifier | None:
        return next((v for p, v in self._entries if fnmatch.fnmatchcase(key, p)), None)

    def patterns(self) -> list[str]:
        return [p for p, _ in self._entries]


class HttpSupportsVerifier:
    """``<prefix><feature>`` facts, checked with ``GET {base}{path}``; the path (a pack's
    ``verifiers`` entry; by default ``/users/{user}/supports/{feature}``) names the customer
    and the feature.

    The backend answers ``{"feature": ..., "supported": bool}``; the fact holds when its value
    (truthy or not) agrees. A 404 means the feature is unknown: not supported.
    """

    def __init__(
        self,
        base_url: str,
        *,
        prefix: str = "supports_",
        path: str = "/users/{user}/supports/{feature}",
        timeout_s: float = 3.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._prefix = prefix
        self._path = path
        self._client = client or httpx.AsyncClient(timeout=timeout_s)
        self._owns_client = client is None

    async def verify(self, fact: Fact) -> bool | None:
        if not fact.key.startswith(self._prefix):
            return None
        feature = fact.key[len(self._prefix) :]
        path = self._path.format(user=quote(fact.user_id, safe=""), feature=quote(feature, safe=""))
        url = f"{self._base}{path}"
        try:
            response = await self._client.get(url)
        except httpx.HTTPError as exc:
            _logger.warning("verifier could not reach %s: %s", self._base, type(exc).__name__)
            return None
        if response.status_code == 404:
            supported = False
        elif response.status_code == 200:
            try:
                body: Any = response.json()
                supported = bool(body["supported"])
            except (ValueError, KeyError, TypeError):
                return None
        else:
            return None
        return supported == bool(fact.value)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


class VerificationScheduler:
    """Runs the verifiers over pending facts, once (:meth:`run_once`) or forever."""

    def __init__(
        self,
        service: MemoryService,
        registry: VerifierRegistry,
        *,
        clock: Clock,
        interval_s: float | None = None,
        sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
        batch: int = 500,
    ) -> None:
        self.service = service
        self.registry = registry
        self.clock = clock
        self.interval_s = interval_s or service.settings.verify_interval_s
        self._sleep = sleep
        self._batch = batch
        self.runs = 0

    async def run_once(self) -> dict[str, int]:
        """Verify every pending fact that has a verifier. Returns counts per result."""
        counts = {"verified": 0, "rejected": 0, "undecided": 0, "no_verifier": 0}
        for fact in await self.service.pending(limit=self._batch):
            verifier = self.registry.for_key(fact.key)
            if verifier is None:
                counts["no_verifier"] += 1
                continue
            try:
                verdict = await verifier.verify(fact)
            except Exception:  # a broken verifier must not stop the others
                _logger.exception("verifier for %s failed", fact.key)
                verdict = None
            if verdict is None:
                counts["undecided"] += 1
                continue
            await self.service.verify(fact, verdict, reason="verifier")
            if verdict:
                counts["verified"] += 1
            else:
                counts["rejected"] += 1
                _logger.warning("memory fact %s (%s) rejected by its verifier", fact.id, fact.key)
        self.runs += 1
        self.service.events.emit(
            Event("memory.verification.run", f"verify-{self.runs}", self.clock.now(), dict(counts))
        )
        return counts

    async def run_forever(self) -> None:
        """Run, sleep ``interval_s``, repeat; cancel the task to stop."""
        while True:
            try:
                await self.run_once()
            except Exception:  # a store hiccup must not end the schedule
                _logger.exception("memory verification run failed")
            await self._sleep(self.interval_s)

"""Every utterance and conversation the pack ships, through the whole turn pipeline against the
demo backend: no write executes without an agent's approval, and no customer's turn shows
another customer's order.

Customers take turns (u1001…u1012), so orders named in the data often belong to someone else.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from itertools import cycle
from pathlib import Path
from typing import Any

import httpx
import pytest

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.config import Settings
from hermes_desk.packs import bundled_pack_path
from hermes_desk.runtime import Runtime, build_runtime
from hermes_desk.testing.servers import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PACK = bundled_pack_path("ecommerce")
WRITES = {"create_return", "issue_refund", "create_ticket", "add_ticket_note",
          "reset_password", "update_password"}  # fmt: skip
USERS = [f"u10{n:02d}" for n in range(1, 13)]


def _conversations() -> list[list[str]]:
    """Every utterance: single ones from the labelled sets, whole dialogues from the others."""
    out: list[list[str]] = []
    for name in sorted(p.name for p in PACK.glob("*.jsonl")):
        for line in (PACK / name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if "turns" in row:
                out.append([str(t["text"]) for t in row["turns"]])
            elif "text" in row:
                out.append([str(row["text"])])
    return out


@pytest.fixture(scope="module")
def backend() -> Iterator[str]:
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as url:
        yield url


@pytest.fixture
async def runtime(tmp_path: Path, backend: str, pack_model_dir: Path) -> AsyncIterator[Runtime]:
    settings = Settings(
        service={"data_dir": tmp_path, "backend_url": backend},
        nlu={"model_dir": pack_model_dir},
        workflows={"watchdog_interval_s": 3600},
    )
    built = build_runtime(settings)
    await built.start()
    yield built
    await built.stop()


def _orders(backend: str) -> dict[str, str]:
    data = json.loads((Path(__file__).parents[2] / "demo_backend" / "data.json").read_text())
    return {o["order_id"]: o["user_id"] for o in data["orders"]}


def _leaks(outcome: dict[str, Any], user: str, owners: dict[str, str]) -> list[str]:
    """Order data of another customer anywhere in what the turn answered."""
    found: list[str] = []
    for call in outcome["tool_calls"]:
        result = call.get("result")
        if not isinstance(result, dict):
            continue
        owner = result.get("user_id") or owners.get(str(result.get("order_id")))
        if owner is not None and owner != user:
            found.append(f"{call['tool']} answered {result.get('order_id')} of {owner}")
    return found


async def test_no_write_runs_and_no_record_leaks_across_the_packs_data(
    runtime: Runtime, backend: str
) -> None:
    owners = _orders(backend)
    async with httpx.AsyncClient() as client:
        start = (await client.get(f"{backend}/_log")).json()["last_seq"]
    users = cycle(USERS)
    leaks: list[str] = []
    turns = proposals = 0
    for conversation in _conversations():
        user = next(users)
        session = await runtime.sessions.create("default", user)
        for text in conversation:
            try:
                outcome = (
                    await runtime.assistant.turn("default", user, session.id, text)
                ).to_dict()
            except Exception as exc:  # a refused text (too long…) is fine; it changed nothing
                assert type(exc).__name__ == "ValidationError", (text, exc)
                continue
            turns += 1
            proposals += len(outcome["proposals"])
            leaks += _leaks(outcome, user, owners)
        await runtime.sessions.close("default", user, session.id)
    async with httpx.AsyncClient() as client:
        log = await client.get(f"{backend}/_log", params={"since": start})
    entries = log.json()["entries"]
    written = [e for e in entries if e["endpoint"] in WRITES and e["outcome"] == "executed"]
    assert turns > 3000, "the pack's data went through"
    assert proposals > 0, "requests were proposed"
    assert written == [], f"{len(written)} writes ran without an approval: {written[:3]}"
    assert leaks == [], leaks[:5]

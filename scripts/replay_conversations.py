"""Run every labelled conversation of the bundled pack through the service, as demo customers,
and count what the suggestions say: ``python scripts/replay_conversations.py OUT.json``
(``--compare BEFORE.json`` prints the turns whose proposals, workflow or reply changed).

The demo backend and Hermes Desk are served on loopback ports in this process, on a fresh data
folder; the conversations of ``dialogues_*.jsonl`` and ``conversations*.jsonl`` are spread over
three demo customers (one lane each, so no two of a customer's sessions run at once). Set
``HERMES_NLU__MODEL_DIR`` to a trained model folder to skip training.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread

PACK = Path(__file__).resolve().parents[1] / "src/hermes_desk/packs/ecommerce"
CUSTOMERS = ("u1001", "u1003", "u1006")
CANNOT_HELP = re.compile(r"cannot help with that one|暂时无法帮您处理")

Row = list[Any]  # [text, proposed tools, workflow name, reply]


def conversations() -> list[tuple[str, list[str]]]:
    files = sorted(PACK.glob("dialogues_*.jsonl")) + sorted(PACK.glob("conversations*.jsonl"))
    found = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found.append((row["id"], [turn["text"] for turn in row["turns"]]))
    return found


def replay(url: str, lane: int, todo: list[tuple[str, list[str]]]) -> dict[str, list[Row]]:
    user = CUSTOMERS[lane]
    out: dict[str, list[Row]] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        for index, (cid, turns) in enumerate(todo):
            if index % len(CUSTOMERS) != lane:
                continue
            sid = client.post("/v1/sessions", json={"user_id": user}).json()["session_id"]
            rows: list[Row] = []
            for text in turns:
                answer = client.post(
                    f"/v1/sessions/{sid}/turns", json={"user_id": user, "text": text}
                )
                answer.raise_for_status()
                view = answer.json()
                rows.append([
                    text,
                    [p["tool"] for p in view.get("proposals") or []],
                    (view.get("workflow") or {}).get("name"),
                    (view.get("suggestion") or {}).get("text"),
                ])  # fmt: skip
            client.delete(f"/v1/sessions/{sid}", params={"user_id": user})
            out[cid] = rows
    return out


def summary(result: dict[str, list[Row]]) -> dict[str, int]:
    rows = [row for turns in result.values() for row in turns]
    return {
        "conversations": len(result),
        "turns": len(rows),
        "turns_with_proposals": sum(bool(row[1]) for row in rows),
        "turns_with_a_workflow": sum(bool(row[2]) for row in rows),
        "cannot_help_replies": sum(bool(row[3] and CANNOT_HELP.search(row[3])) for row in rows),
    }


def compare(before: dict[str, list[Row]], after: dict[str, list[Row]]) -> None:
    for cid, turns in before.items():
        for old, new in zip(turns, after.get(cid, []), strict=False):
            if old[1:] != new[1:]:
                print(f"{cid} | {old[0]} | {old[1:3]} {old[3]!r} -> {new[1:3]} {new[3]!r}")


@contextmanager
def served() -> Iterator[str]:
    """The demo backend and Hermes Desk on loopback ports, on a fresh data folder: the URL."""
    data = Path(tempfile.mkdtemp(prefix="hermes-replay-"))
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as backend:
        settings = Settings(
            service={"data_dir": data, "backend_url": backend},
            workflows={"watchdog_interval_s": 3600},
        )
        with serve_in_thread(create_app(settings)) as url:
            yield url


def main(argv: list[str]) -> None:
    todo = conversations()
    with served() as url, ThreadPoolExecutor(3) as pool:
        parts = list(pool.map(lambda lane: replay(url, lane, todo), range(len(CUSTOMERS))))
    result = {cid: part[cid] for cid, _ in todo for part in parts if cid in part}
    Path(argv[0]).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    print(json.dumps(summary(result)))
    if "--compare" in argv:
        compare(json.loads(Path(argv[argv.index("--compare") + 1]).read_text("utf-8")), result)


if __name__ == "__main__":
    main(sys.argv[1:])

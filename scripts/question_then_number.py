"""Asking is not requesting (SPEC X4): every question of the bundled pack's knowledge-base eval
sets, each followed in a conversation of its own by the order's number alone, three ways per
language; counts the conversations that put a write forward and prints them:
``python scripts/question_then_number.py``.

u1001 against the demo backend (its delivered order 202405181001), served on loopback ports in
this process (see ``replay_conversations.py``). Set ``HERMES_NLU__MODEL_DIR`` to a trained
model folder to skip training.
"""

from __future__ import annotations

import json
import re
import sys

import httpx
from replay_conversations import PACK, served

USER, ORDER = "u1001", "202405181001"
NUMBER_ALONE = {
    "zh": (f"订单{ORDER}的", ORDER, f"订单号{ORDER}"),
    "en": (f"order {ORDER}", f"it's {ORDER}", f"for order {ORDER}"),
}


def questions() -> list[str]:
    texts = [
        json.loads(line)["text"]
        for path in sorted(PACK.glob("kb_eval*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    return list(dict.fromkeys(texts))


def main() -> None:
    put_forward: list[dict[str, object]] = []
    asked = 0
    with served() as url, httpx.Client(base_url=url, timeout=60) as client:
        for question in questions():
            language = "zh" if re.search(r"[\u4e00-\u9fff]", question) else "en"
            for number in NUMBER_ALONE[language]:
                session = client.post("/v1/sessions", json={"user_id": USER, "resume": False})
                sid = session.json()["session_id"]
                for text in (question, number):
                    answer = client.post(
                        f"/v1/sessions/{sid}/turns", json={"user_id": USER, "text": text}
                    )
                    answer.raise_for_status()
                asked += 1
                tools = [p["tool"] for p in answer.json().get("proposals") or []]
                if tools:
                    put_forward.append({"question": question, "number": number, "tools": tools})
                client.delete(f"/v1/sessions/{sid}", params={"user_id": USER})
    print(json.dumps({"conversations": asked, "put_a_write_forward": len(put_forward)}))
    for row in put_forward:
        print(json.dumps(row, ensure_ascii=False), file=sys.stderr)


if __name__ == "__main__":
    main()

"""The share of a pack's held-out policy questions (``kb_question``) and small talk (``oos``) in
``nlu_heldout.jsonl`` whose best knowledge-base hit reaches each ``knowledge.min_score``:
``python scripts/kb_threshold.py PACK_DIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hermes_desk.tools.kb import KnowledgeBase


def main(pack: Path) -> None:
    kb = KnowledgeBase.from_dir(pack / "kb")
    best: dict[str, list[float | None]] = {"kb_question": [], "oos": []}
    for line in (pack / "nlu_heldout.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["intent"] in best:
            hits = kb.search(row["text"], 1)
            best[row["intent"]].append(hits[0].score if hits else None)
    kb.close()
    for threshold in (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0):
        shown = {
            intent: sum(1 for s in scores if s is not None and s >= threshold) / len(scores)
            for intent, scores in best.items()
        }
        print(
            f"min_score {threshold:<4}  policy questions with a card {shown['kb_question']:.0%}"
            f"  small talk with a card {shown['oos']:.0%}"
        )
    print({intent: len(scores) for intent, scores in best.items()})


if __name__ == "__main__":
    main(Path(sys.argv[1]))

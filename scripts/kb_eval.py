"""Top-1 / top-3 article accuracy of a pack's knowledge base on ``{text, article}`` questions,
per language: ``python scripts/kb_eval.py PACK_DIR QUESTIONS.jsonl [-v]`` (``-v``: the misses).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from hermes_desk.tools.kb import KnowledgeBase


def main(pack: Path, questions: Path, verbose: bool) -> dict[str, dict[str, float]]:
    kb = KnowledgeBase.from_dir(pack / "kb")
    counts: dict[str, list[int]] = {}
    for line in questions.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        language = "zh" if re.search(r"[\u4e00-\u9fff]", row["text"]) else "en"
        hits = [hit.id for hit in kb.search(row["text"], 3)]
        top1, top3, n = counts.setdefault(language, [0, 0, 0])
        counts[language] = [
            top1 + (hits[:1] == [row["article"]]),
            top3 + (row["article"] in hits),
            n + 1,
        ]
        if verbose and hits[:1] != [row["article"]]:
            print(f"  miss {row['text']} -> {hits}, want {row['article']}", file=sys.stderr)
    kb.close()
    return {
        language: {"top1": round(a / n, 3), "top3": round(b / n, 3), "n": n}
        for language, (a, b, n) in sorted(counts.items())
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2]), "-v" in sys.argv)))

"""Distil the public ``sentiment_zh`` reviews into a small Chinese polarity table for a pack.

Trains a binary logistic regression on character 1–3-grams of ``train.jsonl`` (nothing else:
no pack data, no test split) and keeps the ``--keep`` n-grams with the largest weights, seen in
at least ``--min-count`` reviews. The table (``ngram<TAB>weight``) is committed with the pack
(``sentiment_polarity_zh.tsv``), so an installation reads polarity without the corpus::

    .venv/bin/python scripts/distill_review_polarity.py ../shared/data/sentiment_zh \\
        src/hermes_desk/packs/ecommerce/sentiment_polarity_zh.tsv
"""

from __future__ import annotations

import argparse
import json
import re
import unicodedata
from pathlib import Path


def _grams(text: str) -> set[str]:
    t = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).lower()).strip()[:1000]
    return {t[i : i + n] for n in (1, 2, 3) for i in range(len(t) - n + 1) if t[i : i + n] != " "}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="folder with train.jsonl")
    parser.add_argument("out", type=Path, help="the TSV to write")
    parser.add_argument("--keep", type=int, default=4000)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--c", type=float, default=1.0)
    args = parser.parse_args()

    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    rows, labels = [], []
    for line in (args.corpus / "train.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        rows.append(_grams(item["text"]))
        labels.append(1 if item["label"] == "positive" else 0)
    counts: dict[str, int] = {}
    for row in rows:
        for gram in row:
            counts[gram] = counts.get(gram, 0) + 1
    keep = {g for g, n in counts.items() if n >= args.min_count}
    vectorizer = DictVectorizer()
    x = vectorizer.fit_transform([{g: 1.0 for g in row if g in keep} for row in rows])
    model = LogisticRegression(C=args.c, max_iter=2000).fit(x, labels)
    weights = sorted(
        zip(vectorizer.get_feature_names_out(), model.coef_[0].tolist(), strict=True),
        key=lambda item: -abs(item[1]),
    )[: args.keep]
    header = (
        "# Chinese review polarity: character n-gram<TAB>weight (> 0 positive), distilled from\n"
        "# the public sentiment_zh reviews (train split only) by\n"
        f"# scripts/distill_review_polarity.py --keep {args.keep} --min-count {args.min_count}"
        f" --c {args.c}\n"
    )
    body = "".join(f"{g}\t{w:.4f}\n" for g, w in sorted(weights))
    args.out.write_text(header + body, encoding="utf-8")
    print(f"wrote {len(weights)} n-grams to {args.out}")


if __name__ == "__main__":
    main()

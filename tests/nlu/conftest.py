from __future__ import annotations

from pathlib import Path

import pytest

from hermes_desk.nlu import Example, load_examples

PACK = Path(__file__).resolve().parents[2] / "src" / "hermes_desk" / "packs" / "ecommerce"


@pytest.fixture(scope="session")
def pack_examples() -> list[Example]:
    return load_examples(PACK / "nlu.jsonl")

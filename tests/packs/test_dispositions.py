"""A pack's dispositions: loaded from dispositions.yaml, refused with file and field named."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hermes_desk.errors import PackError
from hermes_desk.packs import bundled_pack_path, load_pack
from hermes_desk.packs.dispositions import DEFAULT_DISPOSITIONS


@pytest.fixture
def pack_copy(tmp_path: Path) -> Path:
    root = tmp_path / "pack"
    shutil.copytree(bundled_pack_path("ecommerce"), root)
    return root


def test_the_bundled_pack_lists_its_dispositions_with_both_languages() -> None:
    dispositions = load_pack("ecommerce").dispositions
    assert dispositions.default == "resolved"
    assert {"resolved", "escalated", "pending_customer", "transferred"} <= set(dispositions.ids)
    callback = dispositions.get("callback_scheduled")
    assert callback is not None and callback.when is None, "chosen by agents, never proposed"
    assert callback.label_in("en") == "Callback scheduled"


def test_a_pack_without_the_file_gets_the_default_list(pack_copy: Path) -> None:
    (pack_copy / "dispositions.yaml").unlink()
    assert load_pack(pack_copy).dispositions == DEFAULT_DISPOSITIONS


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ("default: gone\ndispositions:\n  - {id: resolved, label: {zh: 好, en: ok}}\n", None,
         "default 'gone'"),
        ("default: resolved\ndispositions:\n  - {id: resolved, label: {zh: 好, en: ok},"
         " when: happy}\n", "dispositions.0.when", "Input should be"),
        ("default: resolved\ndispositions:\n  - {id: resolved, label: {zh: 好}}\n", "label",
         "language 'en'"),
        ("default: Resolved\ndispositions:\n  - {id: Resolved, label: {zh: 好, en: ok}}\n",
         "dispositions.0.id", "pattern"),
        ("default: a\ndispositions:\n  - {id: a, label: {zh: 好, en: ok}, when: resolved}\n"
         "  - {id: b, label: {zh: 好, en: ok}, when: resolved}\n", None, "more than one"),
    ],
)  # fmt: skip
def test_a_bad_dispositions_file_is_refused_naming_file_and_field(
    pack_copy: Path, body: str, field: str | None, says: str
) -> None:
    (pack_copy / "dispositions.yaml").write_text(body, encoding="utf-8")
    with pytest.raises(PackError) as caught:
        load_pack(pack_copy)
    assert caught.value.details["file"].endswith("dispositions.yaml")
    if field is not None:
        assert caught.value.details["field"] == field
    assert says in caught.value.message

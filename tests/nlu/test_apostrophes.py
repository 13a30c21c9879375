"""Contractions as customers type them read as the pack's phrases spell them."""

from __future__ import annotations

import pytest

from hermes_desk.nlu.apostrophes import as_written


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("I’ll keep it", "I'll keep it"),
        ("I don‘t want it", "I don't want it"),
        ("I dont want to return it", "I don't want to return it"),
        ("cant log in, it wont send, didnt get it", "can't log in, it won't send, didn't get it"),
        ("Isnt it shipped", "Isn't it shipped"),
        # words that end in "nt" are left alone; Chinese is left alone
        ("I want the account I meant", "I want the account I meant"),
        ("我不要退货，只要退款", "我不要退货，只要退款"),
    ],
)
def test_contractions_are_read_as_written(typed: str, read: str) -> None:
    assert as_written(typed) == read

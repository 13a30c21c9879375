"""English contractions as phones and hurried chats type them ("I’ll keep it", "I dont want to
return it"), read as the pack's phrases and the turn's patterns spell them ("I'll", "don't").

A phone keyboard's curly apostrophe made "I’ll keep it" no withdrawal and "I don’t remember my
order number" no request the knowledge base answers; "dont" did the same. Only the reading
changes: the transcript keeps what was typed.
"""

from __future__ import annotations

import re

__all__ = ["as_written"]

# Curly, modifier-letter and full-width apostrophes.
_APOSTROPHES = str.maketrans(dict.fromkeys("’‘ʼ＇", "'"))
# A negation typed without its apostrophe ("dont", "cant", "wont", "isnt"). "cant" and "wont"
# are words too, too rare in a customer's turn to read otherwise.
_BARE_NOT = re.compile(
    r"\b(do|does|did|is|are|was|were|has|have|had|ca|could|would|should|wo|must|need)nt\b",
    re.IGNORECASE,
)


def as_written(text: str) -> str:
    """``text`` with its apostrophes straight and its bare negations given theirs.

    >>> as_written("I’ll keep it"), as_written("Dont return it, I cant wait")
    ("I'll keep it", "Don't return it, I can't wait")
    """
    if not text.isascii():
        text = text.translate(_APOSTROPHES)
    if "nt" not in text and "NT" not in text:
        return text
    return _BARE_NOT.sub(r"\1n't", text)

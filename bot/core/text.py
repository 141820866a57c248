"""Cleaning what people type before anything stores or prompts with it."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from bot.core.errors import InvalidInput

# C0/C1 controls and DEL, but not tab and newline: people paste code and lists.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TERMS = 32
# What is embedded of a longer text: MiniLM reads 256 word pieces, so more only costs time.
EMBED_CHARS = 2000

# "lately" and "recently" say when, not what, and the stemmer reads "lately" as "late".
_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves i'm im ive dont please tell remember
    know think like get got really also don didn doesn isn wasn aren weren won wouldn couldn
    shouldn haven hasn hadn ll ve re lately recently""".split()
)


def clean_message(text: str, max_chars: int) -> str:
    """The message as it will be stored: valid UTF-8, no control characters, trimmed.

    Raises InvalidInput when nothing readable is left or the message is longer than `max_chars`.
    """
    # Lone surrogates (from broken clients or invalid UTF-8 decoded with surrogateescape)
    # cannot be stored by either database.
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text).strip()
    # Zero-width spaces and joiners alone (format characters, Cf) are no text either.
    if not any(not char.isspace() and unicodedata.category(char) != "Cf" for char in text):
        raise InvalidInput("I didn't get any text there. Send me a few words and I'll answer.")
    if len(text) > max_chars:
        raise InvalidInput(
            f"That message is {len(text):,} characters long; I can take up to {max_chars:,}. "
            "Could you send it in parts?"
        )
    return unicodedata.normalize("NFC", text)


def storable(text: str) -> str:
    """`text` as both databases can store it: no NUL (PostgreSQL's text and JSONB refuse it) and
    no lone surrogate (neither is UTF-8; a JSON import can spell one as an escape)."""
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def storable_json(value: Any) -> Any:
    """A JSON value with every string in it, keys too, made `storable`, so that both stores keep
    the same meta whatever an import or a platform put in it."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable(str(key)): storable_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(item) for item in value]
    return value


def query_terms(text: str) -> list[str]:
    """Distinct lowercase content words of `text`, for lexical search. Never syntax, only words."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text.lower()):
        word = match.group(0).strip("_")
        if len(word) < 2 or word in _STOPWORDS:
            continue
        seen.setdefault(word, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)

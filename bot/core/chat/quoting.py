"""What people wrote, put into a model's prompt as data: it may spell a chat template's control
tokens (`<|im_start|>system`), a memory block's delimiters or a fake "system:" line, and it must
open no role, close no block and give no instruction the prompt does not mark as quoted.

Two layers. The prompt quotes memories (`quote`: one JSON string a memory, on its own line, so a
newline or a quote mark inside cannot start a line or end the quote). And every message's text,
whatever its role, has its markers broken (`break_markers`) before the chat template renders it:
a template renders text and tokenizes the result, so a marker spelled inside a message would
otherwise become the real special token. The local engine and the trainer pass the tokenizer's
own added tokens (`markers_of`); a remote server's tokens are unknown, so `CHAT_MARKERS` names
the shapes templates give theirs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from bot.core.models import ChatMessage
from bot.core.text import storable

# Invisible, never a token boundary a template writes, and no normalizer removes it (NFC, NFKC).
WORD_JOINER = "\u2060"
# Line breaks that JSON leaves unescaped but str.splitlines (and a reader) would break a line at.
_LINE_BREAKS = {ord(char): f"\\u{ord(char):04x}" for char in "\x85\u2028\u2029"}
# ChatML and Llama 3 (`<|im_start|>`, `<|eot_id|>`), Llama 2 (`[INST]`, `<<SYS>>`, `<s>`),
# Gemma (`<start_of_turn>`), Mistral's `[SYSTEM_PROMPT]`: the shapes of templates' own markers.
CHAT_MARKERS = re.compile(
    r"<\|[^<>|\n]{0,40}\|>|</?s>|\[/?INST\]|\[/?SYSTEM_PROMPT\]|<</?SYS>>|<(?:start|end)_of_turn>",
    re.IGNORECASE,
)


def break_markers(text: str, markers: re.Pattern[str] = CHAT_MARKERS) -> str:
    """`text` with a word joiner after the first character of every marker in it: it reads the
    same, and no tokenizer matches it as the marker any more."""
    return markers.sub(lambda found: found[0][0] + WORD_JOINER + found[0][1:], text)


@lru_cache(maxsize=8)
def _pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    # Longest first, so that a token that contains another is broken as itself.
    named = "|".join(re.escape(token) for token in sorted(tokens, key=len, reverse=True))
    return re.compile(f"{named}|{CHAT_MARKERS.pattern}" if named else CHAT_MARKERS.pattern, re.IGNORECASE)


def markers_of(added_tokens: Iterable[str]) -> re.Pattern[str]:
    """The pattern for a tokenizer's added tokens (one character long cannot be broken: none is a
    marker) together with `CHAT_MARKERS`."""
    return _pattern(tuple(sorted({token for token in added_tokens if len(token) > 1})))


def template_messages(
    messages: Sequence[ChatMessage], markers: re.Pattern[str] = CHAT_MARKERS
) -> list[dict[str, str]]:
    """The messages as a chat template takes them, every text with its markers broken (and valid
    UTF-8: a tokenizer refuses a lone surrogate, which no cleaned text holds, but a caller might)."""
    return [{"role": m.role, "content": break_markers(storable(m.content), markers)} for m in messages]


def quote(text: str, delimiters: Sequence[str] = ()) -> str:
    """`text` as one quoted JSON string on one line, with markers and `delimiters` broken."""
    # ensure_ascii=False: the model reads the person's own letters, not \u escapes; the line
    # breaks JSON leaves as they are are escaped too: one memory, one line.
    quoted = json.dumps(break_markers(text, _pattern(tuple(delimiters))), ensure_ascii=False)
    return quoted.translate(_LINE_BREAKS)

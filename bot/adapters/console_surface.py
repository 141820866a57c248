"""A reply in a terminal or a pipe: one growing block of text that cannot be taken back; and, for
a person who turned spoken replies on, its voice note written to a file (a terminal cannot play
one), said on stderr so that a pipe reads only the reply."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from bot.adapters.delivery import Layout, NotShown
from bot.core.media.models import Speech

# A terminal has no message size and no edit rate: every chunk shows as it comes, as written, up to
# the last whole sentence; the words after it wait for the end, which drops them if the budget cut
# the reply (a terminal cannot take back what it printed).
TERMINAL = Layout(limit=sys.maxsize, interval_s=0.0, verbatim=True, hold_tail=True)


class ConsoleSurface:
    """A reply as one growing block of text. What is printed cannot be taken back, so an edit
    prints only what the new text adds; the finished reply ends the line."""

    def __init__(self, out: TextIO, prefix: str) -> None:
        self.out = out
        self.prefix = prefix
        self._printed: list[str] = []

    async def send(self, text: str) -> str:
        self._write(("\n" if self._printed else self.prefix) + text)
        self._printed.append(text)
        return str(len(self._printed))

    async def edit(self, message_id: str, text: str) -> None:
        index = int(message_id) - 1
        self._write(_added(self._printed[index], text))
        self._printed[index] = text

    async def delete(self, message_id: str) -> None:
        # Never asked: a terminal's reply is one block that holds back its tail (TERMINAL).
        raise NotShown("a terminal cannot take back what it printed")

    async def finish(self, message_ids: Sequence[str], stored: bool) -> None:
        self._write("\n")

    def _write(self, text: str) -> None:
        try:
            self.out.write(text)
            self.out.flush()
        except OSError as exc:  # a closed pipe: the reply is still stored
            raise NotShown(f"cannot write to the terminal: {exc}") from None


class ConsoleSpeaker:
    """Writes each spoken reply over the last one, in `path` (an OGG/Opus file any player plays)."""

    def __init__(self, path: Path, err: TextIO) -> None:
        self.path = path
        self.err = err

    async def send_voice(self, speech: Speech) -> str:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(speech.data)
        except OSError as exc:
            raise NotShown(f"cannot write the spoken reply: {exc}") from None
        await self.say(f"(said aloud: {speech.duration_s:.1f} s in {self.path})")
        return self.path.name

    async def say(self, text: str) -> None:
        try:
            self.err.write(text + "\n")
            self.err.flush()
        except OSError as exc:
            raise NotShown(f"cannot write to the terminal: {exc}") from None


def _added(printed: str, text: str) -> str:
    """What `text` adds to `printed`. The finished reply comes trimmed of the outer whitespace that
    the stream printed as written, so that whitespace adds nothing and takes nothing away."""
    if text.startswith(printed):
        return text[len(printed) :]
    kept = printed.strip()
    if text.startswith(kept):
        return text[len(kept) :]
    return "\n" + text  # not a continuation (never, from the delivery): print it whole

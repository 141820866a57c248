"""Show a reply while the model writes it, within a platform's message size and edit-rate limits.

Platforms differ only in their surface: how to send, edit, or draft a message. The pacing and the
splitting are the same everywhere, so they live here once.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.core.chat.sentences import sentence_end

# Platforms throttle edits per chat; about one a second stays well inside Telegram's and Discord's.
EDIT_INTERVAL_S = 1.0


class Surface(Protocol):
    async def send(self, text: str) -> str:
        """Post a new message; returns its platform id."""
        ...

    async def edit(self, message_id: str, text: str) -> None:
        """Replace a posted message's text. Unchanged text is not an error."""
        ...

    async def delete(self, message_id: str) -> None:
        """Take a posted message away: it showed only the tail of a reply that the budget cut
        and that now ends sooner. A surface that cannot (a terminal) never posts such a message."""
        ...


def split_text(text: str, limit: int, measure: Callable[[str], int] = len) -> list[str]:
    """Pieces of at most `limit` (as `measure` counts: Telegram counts UTF-16 units), cut at a
    paragraph, line or word break when there is one. Only whitespace at the cuts is dropped."""
    if limit < 1:
        raise ValueError("limit must be positive")
    pieces: list[str] = []
    rest = text
    while measure(rest) > limit:
        fits = _longest_prefix(rest, limit, measure)
        cut = fits if rest[fits : fits + 1].isspace() else _break_before(rest, fits)
        pieces.append(rest[:cut].rstrip() or rest[:cut])
        rest = rest[cut:].lstrip(" \n")
    if rest or not pieces:
        pieces.append(rest)
    return pieces


def _break_before(text: str, end: int) -> int:
    """Where to cut before `end`: a paragraph break in the second half, else a line break there,
    else the last space; a word is cut only when no break lies past the first quarter."""
    for separator in ("\n\n", "\n", " "):
        position = text.rfind(separator, 0, end)
        if position > end // 2:
            return position
    position = max(text.rfind("\n", 0, end), text.rfind(" ", 0, end))
    return position if position > end // 4 else end


def _longest_prefix(text: str, limit: int, measure: Callable[[str], int]) -> int:
    """The most characters of `text` whose measure is within `limit` (at least one)."""
    low, high = 1, min(len(text), limit)
    if measure is len:
        return high
    while low < high:
        middle = (low + high + 1) // 2
        if measure(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    return low


class StreamedReply:
    """One reply in flight. `add` shows growing text at most once per interval; `finish` posts the
    exact final text and returns the ids of every message that shows it, in order.

    A reply that the token budget cuts ends at its last whole sentence (`ReplyDone.text`), so what
    streams after that sentence may be taken back. Where messages are edited, the tail streams in
    the message being written, but never starts a message of its own (a message that would show
    nothing but the tail waits for a sentence to end in it); `finish` edits it away and deletes any
    message the final text no longer needs. Where nothing can be taken back (`hold_tail`: a
    terminal), only whole sentences are shown until `finish`.
    """

    def __init__(
        self,
        surface: Surface,
        *,
        limit: int,
        measure: Callable[[str], int] = len,
        interval_s: float = EDIT_INTERVAL_S,
        first_delay_s: float = 0.0,
        draft: Callable[[str], Awaitable[None]] | None = None,
        verbatim: bool = False,
        hold_tail: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.surface = surface
        self.limit = limit
        self.measure = measure
        self.interval_s = interval_s
        # A reply finished within this long is shown once, whole: no preview, no edit.
        self.first_delay_s = first_delay_s
        # A live preview that is not yet a message (Telegram's sendMessageDraft), where there is one.
        self.draft = draft
        # Show the text exactly as written (a terminal), not trimmed as chat platforms trim it.
        self.verbatim = verbatim
        # Show only whole sentences while streaming: what is shown cannot be taken back.
        self.hold_tail = hold_tail
        self._clock = clock
        self._text = ""
        self._shown: list[tuple[str, str]] = []  # (message id, text it shows)
        self._drafted = ""
        self._last_update: float | None = None
        self._started = clock()

    @property
    def message_ids(self) -> list[str]:
        return [message_id for message_id, _ in self._shown]

    @property
    def text_so_far(self) -> str:
        return self._text.strip()

    async def add(self, chunk: str) -> None:
        self._text += chunk
        if not self._text.strip():
            return
        now = self._clock()
        if self._last_update is None and now - self._started < self.first_delay_s:
            return
        if self._last_update is not None and now - self._last_update < self.interval_s:
            return
        self._last_update = now
        text = self._text if self.verbatim else self._text.strip()
        if self.hold_tail:
            text = text[: sentence_end(text, growing=True)]
            if not text.strip():
                return
        pieces = self._growing_pieces(text)
        if self.draft is not None:
            await self._draft(self.draft, pieces[-1])
        else:
            await self._show(pieces)

    async def withdraw(self) -> None:
        """Take back everything shown: the reply is not to be shown after all."""
        while self._shown:
            message_id, _ = self._shown.pop()
            await self.surface.delete(message_id)

    async def finish(self, text: str) -> list[str]:
        pieces = split_text((text if self.verbatim else text.strip()) or "…", self.limit, self.measure)
        await self._show(pieces)
        while len(self._shown) > len(pieces):
            message_id, _ = self._shown.pop()
            await self.surface.delete(message_id)
        return self.message_ids

    def _growing_pieces(self, text: str) -> list[str]:
        """The pieces of growing `text` to show now: a piece past those already shown appears only
        once a whole sentence reaches into it, so that a tail the final text drops is never
        posted (or drafted) as a message of its own."""
        pieces = split_text(text, self.limit, self.measure)
        shown = max(len(self._shown), 1)
        if len(pieces) <= shown:
            return pieces
        whole = split_text(text[: sentence_end(text, growing=True)], self.limit, self.measure)
        return pieces[: max(shown, len(whole))]

    async def _draft(self, draft: Callable[[str], Awaitable[None]], current: str) -> None:
        # A draft previews the piece being written; finished pieces wait for `finish`.
        if current != self._drafted:
            await draft(current)
            self._drafted = current

    async def _show(self, pieces: list[str]) -> None:
        for index, piece in enumerate(pieces):
            if index < len(self._shown):
                message_id, shown = self._shown[index]
                if shown != piece:
                    await self.surface.edit(message_id, piece)
                    self._shown[index] = (message_id, piece)
            else:
                self._shown.append((await self.surface.send(piece), piece))

"""A document sent in a chat, kept as the person's document memories, then one short answer that
says what was kept; its caption, if any, is then answered as the person's message.

The same path as `kindred memory add-file` (core/media/documents.py, through a `DocumentKeeper`:
a small file in this process, a long one by a job whose steps the chat shows). Nothing is stored
of a file that is refused, and the chat goes on. The original bytes are kept only for a person
who asked (/privacy files keep), under their own folder until they /forget it; otherwise nothing
of them remains once the file is read.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator

from bot.core.chat.conversation import Conversation
from bot.core.chat.ports import TurnLog
from bot.core.errors import JobError, JobTimeout, MediaError, QueueUnavailable, StoreUnavailable
from bot.core.events import DocumentNote, Refusal, ReplyChunk, ReplyDone, ReplyEvent, UserMessage
from bot.core.media.models import KeptDocument
from bot.core.media.ports import DocumentKeeper, FileShelf, Show

log = logging.getLogger(__name__)

NOTHING_KEPT = "Nothing was kept; you can send it again."
FAILED = "Something went wrong on my side while reading that file. Nothing was kept; please send it again."
BUSY = "I can't read long files right now. Nothing was kept; please send it again in a few minutes."
NOT_SHELVED = "(I couldn't keep the file itself just now; what I read from it is kept.)"


class ChatDocuments:
    """Keeps documents sent in chats through `keeper`, and answers their captions through
    `conversation`. `shelf` keeps the originals of people who asked (None: nobody's are kept)."""

    def __init__(
        self,
        conversation: Conversation,
        keeper: DocumentKeeper,
        people: TurnLog,
        *,
        max_bytes: int,
        shelf: FileShelf | None = None,
    ) -> None:
        self.conversation = conversation
        self.keeper = keeper
        self.people = people
        self.max_bytes = max_bytes
        self.shelf = shelf

    def refusal(self, size: int | None, name: str = "") -> Refusal | None:
        """Why a file is not read, from the size the platform gives before it is downloaded
        (None: unknown, checked on the bytes); None: fetch it."""
        if size is not None and size > self.max_bytes:
            return Refusal(
                f"{name or 'That file'} is too large for me ({_megabytes(size)}; I read files of up to "
                f"{_megabytes(self.max_bytes)}). {NOTHING_KEPT}"
            )
        if size == 0:
            return Refusal(f"{name or 'That file'} is empty, so there was nothing to read. {NOTHING_KEPT}")
        return None

    async def handle(self, note: DocumentNote, show: Show) -> AsyncIterator[ReplyEvent]:
        """Keep the document, say what was kept, then answer its caption; one Refusal, and
        nothing stored, when it cannot be kept. `show` shows a long file's steps."""
        document = note.document
        refused = self.refusal(document.size, document.name)
        if refused is not None:
            yield refused
            return
        chat_id = None if note.private else note.chat_id  # a group recalls only what was shared there
        try:
            kept = await self.keeper.keep(note.user_id, document, chat_id=chat_id, show=show)
        except MediaError as exc:
            log.info("a document from %s was not kept: %s", note.user_id, exc)
            yield Refusal(f"{exc} {NOTHING_KEPT}")
            return
        except QueueUnavailable:
            yield Refusal(BUSY)
            return
        except (JobError, JobTimeout, StoreUnavailable) as exc:
            log.warning("a document from %s was not kept: %s", note.user_id, exc)
            yield Refusal(FAILED)
            return
        summary = await self._shelved(note, kept)
        caption = note.caption.strip()
        if not caption:
            yield ReplyDone(summary, None, (), voice=await self.conversation.voice_of(note.chat_id))
            return
        async for event in self._answered(note, caption, summary):
            yield event

    async def _shelved(self, note: DocumentNote, kept: KeptDocument) -> str:
        """The summary, once the original is kept for a person who asked (else it is dropped
        with this call: nothing of it was written)."""
        summary = kept.summary()
        if self.shelf is None:
            return summary
        try:
            if not await self.people.keeps_files(note.user_id):
                return summary
            await self.shelf.put(note.user_id, kept, note.document.data)
        except (StoreUnavailable, OSError) as exc:
            log.warning("the file of %s was not kept: %s", note.user_id, exc)
            return f"{summary} {NOT_SHELVED}"
        return f"{summary} I keep the file itself too (/privacy files delete stops that)."

    async def _answered(self, note: DocumentNote, caption: str, summary: str) -> AsyncIterator[ReplyEvent]:
        # The caption is the person's own words, asked once the file is kept: recall finds its
        # passages like any memory, so "what does it say about the budget?" is answered from them.
        message = UserMessage(
            note.user_id,
            note.chat_id,
            caption,
            note.sent_at,
            note.idempotency_key,
            note.private,
            places=note.places,
        )
        lead = f"{summary}\n\n"
        yield ReplyChunk(lead)
        async for event in self.conversation.handle_message(message):
            if isinstance(event, ReplyDone):
                # The summary shows above the reply; the stored reply is the model's words alone.
                event = dataclasses.replace(event, text=lead + event.text)
            yield event


def _megabytes(size: int) -> str:
    return f"{size / 2**20:,.1f} MB" if size >= 2**20 else f"{size / 2**10:,.0f} KB"

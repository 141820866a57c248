"""A photo in, a reply out: seen by the vision model, then answered through the conversation with
the person's caption as their own words and what the model saw beside it.

The description is the model's words, never the person's: it goes into the prompt quoted (as a
file's passage does, in their turn), and is kept as a memory of kind `image` spoken by the
assistant, so it ranks below everything the person said (core/memory/scoring.py). The caption is
stored as the person's turn, like typed text. The image itself is never stored.

Nothing is stored until the image was seen whole. Without a vision backend, over a limit, a file
that is not an image, or a model that failed or cannot see, the person gets one plain line;
a caption is then still answered as text, after that line, and nothing of the image is kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import AsyncIterator, Mapping

from bot.core.chat.conversation import Conversation
from bot.core.errors import MediaError, StoreUnavailable
from bot.core.events import ImageNote, Refusal, ReplyChunk, ReplyDone, ReplyEvent, UserMessage
from bot.core.media.models import SeeingPolicy, Seen
from bot.core.media.ports import ImageDescriber
from bot.core.memory.ports import Embedder, MemoryIndex
from bot.core.models import IMAGE, NewMemory
from bot.core.text import EMBED_CHARS

log = logging.getLogger(__name__)

NO_BACKEND = (
    "I can't see images yet; an admin can turn that on with KINDRED_VISION_BACKEND=openai "
    "(a vision-capable model on an OpenAI-compatible server)."
)
NOTHING_KEPT = "Nothing of the image was kept."
# The person's turn for a photo sent without a caption: history shows that one came.
NO_CAPTION = "(a photo)"
# How much of a description is kept: a memory line, not an essay.
DESCRIPTION_CHARS = 400
# How many nearest memories are looked at for the same image kept before (a redelivered update).
COPY_PROBE = 10


class Images:
    """Answers photos through `conversation`. `vision` None: no backend is configured."""

    def __init__(
        self, conversation: Conversation, vision: ImageDescriber | None, policy: SeeingPolicy | None = None
    ) -> None:
        self.conversation = conversation
        self.vision = vision
        self.policy = policy or SeeingPolicy()

    def refusal(self, size: int | None) -> str | None:
        """Why an image is not looked at, from its size as the platform reports it before the
        download (None: unknown); None: fetch it."""
        if self.vision is None:
            return NO_BACKEND
        if size is not None and size > self.policy.max_bytes:
            return (
                f"That image is too large for me ({_megabytes(size)}; I take up to "
                f"{_megabytes(self.policy.max_bytes)}). {NOTHING_KEPT}"
            )
        return None

    async def refused(self, note: ImageNote, why: str) -> AsyncIterator[ReplyEvent]:
        """`why` the image was not seen; the caption, if any, is still answered as text after it."""
        if not note.caption.strip():
            yield Refusal(why)
            return
        async for event in self._answered(note, None, f"({why})\n\n"):
            yield event

    async def handle(self, note: ImageNote) -> AsyncIterator[ReplyEvent]:
        """See the image, then answer the caption with what was seen; nothing of the image is
        stored when it cannot be seen."""
        why = self.refusal(note.image.size)
        if why is not None or self.vision is None:
            async for event in self.refused(note, why or NO_BACKEND):
                yield event
            return
        try:
            seen = await self.vision.describe(note.image, note.caption.strip())
        except MediaError as exc:
            log.info("an image from %s was not seen: %s", note.user_id, exc)
            async for event in self.refused(note, f"{exc} {NOTHING_KEPT}"):
                yield event
            return
        seen = dataclasses.replace(seen, description=clipped(seen.description))
        group = None if note.private else note.chat_id
        await self.conversation.usage.count(note.user_id, "image", group_id=group)
        async for event in self._answered(note, seen, None):
            yield event
        if seen.description:
            await self._keep(note, seen)

    async def _answered(
        self, note: ImageNote, seen: Seen | None, notice: str | None
    ) -> AsyncIterator[ReplyEvent]:
        message = UserMessage(
            note.user_id, note.chat_id, note.caption.strip() or NO_CAPTION, note.sent_at,
            note.idempotency_key, note.private, seen=seen, places=note.places,
        )  # fmt: skip
        if notice is not None:
            yield ReplyChunk(notice)
        async for event in self.conversation.handle_message(message):
            if notice is not None and isinstance(event, ReplyDone):
                # The notice shows above the reply; the stored reply is the model's words alone.
                event = dataclasses.replace(event, text=notice + event.text)
            yield event

    async def _keep(self, note: ImageNote, seen: Seen) -> None:
        """The description as the model's memory of the image, once per image and chat."""
        try:
            await keep_description(
                self.conversation.store.memories, self.conversation.embedder, note, seen, self.vision_model
            )
        except StoreUnavailable as exc:
            # The reply and the caption are kept (the conversation's outbox); the description is
            # the model's, and is not worth holding the person's words back for.
            log.warning("the description of an image from %s was not kept: %s", note.user_id, exc)

    @property
    def vision_model(self) -> str:
        return self.vision.model_name if self.vision is not None else ""


async def keep_description(
    index: MemoryIndex, embedder: Embedder, note: ImageNote, seen: Seen, vision_model: str
) -> int:
    """`seen`'s description as the model's memory of `note`'s image (kind `image`, spoken by the
    assistant), once per image and chat: a second time (a redelivered update) stores nothing and
    returns the id kept the first time. Searchable when this returns."""
    digest = hashlib.sha256(note.image.data).hexdigest()[:32]
    vector = (await embedder.embed([seen.description[:EMBED_CHARS]]))[0]
    hits = await index.dense_search(note.user_id, vector, COPY_PROBE)
    kept = next(
        (h.memory.id for h in hits if _same_image(h.memory.kind, h.memory.meta, digest, note.chat_id)), None
    )
    if kept is not None:
        return kept
    meta = {"source": IMAGE, "image": digest, "chat_id": note.chat_id,
            "image_size": [seen.width, seen.height], "model": vision_model}  # fmt: skip
    [memory_id] = await index.add_memories([
        NewMemory(
            user_id=note.user_id, text=seen.description, speaker="assistant",
            created_at=note.sent_at, embedding=vector, embedding_model=embedder.model_name,
            kind=IMAGE, meta=meta, context=note.caption.strip(),
        )
    ])  # fmt: skip
    return memory_id


def _same_image(kind: str, meta: Mapping[str, object], digest: str, chat_id: str) -> bool:
    return kind == IMAGE and meta.get("image") == digest and meta.get("chat_id") == chat_id


def clipped(description: str) -> str:
    """A description as it is kept and shown: one line, at most DESCRIPTION_CHARS."""
    shown = " ".join(description.split())
    if len(shown) > DESCRIPTION_CHARS:
        shown = shown[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return shown


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"

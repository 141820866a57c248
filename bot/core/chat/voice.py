"""A voice note in, a reply out: heard by the speech backend, then answered as the person's own
words through the conversation, like typed text.

Nothing is stored until the note has been heard whole: without a speech backend, over a limit,
a file that cannot be heard, a backend that failed or silence each get one short answer, and the
conversation never sees the note. What was heard is stored as the person's turn with its source
(voice), duration, language and confidence (`Transcript.meta`), so it is recalled, reacted to,
exported and forgotten like any other turn.

A recording longer than the chat waits for (`LongNotes.is_long`) is heard by a job instead, which
stores what was heard itself, while the chat shows its steps; the reply then comes as for any
note. A second delivery of the same note stores nothing more (the turn's idempotency key).
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import AsyncIterator

from bot.core.chat.conversation import Conversation
from bot.core.errors import JobError, JobTimeout, MediaError, QueueUnavailable, StoreUnavailable
from bot.core.events import Refusal, ReplyChunk, ReplyDone, ReplyEvent, UserMessage, VoiceNote
from bot.core.media.models import ListeningPolicy, Transcript
from bot.core.media.ports import LongNotes, Show, SpeechToText

log = logging.getLogger(__name__)

NO_BACKEND = (
    "I can't listen to voice notes yet; an admin can turn that on with KINDRED_SPEECH_BACKEND=openai "
    "(an OpenAI-compatible speech server). You can type your message instead."
)
SILENCE = "I couldn't hear any words in that, so I haven't kept anything. Could you say it again, or type it?"
NOTHING_KEPT = "Nothing was kept; you can send it again or type it."
BUSY = f"I can't listen to long recordings right now. {NOTHING_KEPT}"
FAILED = f"Something went wrong on my side while listening to that. {NOTHING_KEPT}"
# How much of a long transcript the echo shows.
ECHO_CHARS = 300


class VoiceNotes:
    """Answers voice notes through `conversation`. `speech` None: no backend is configured.
    `long_notes` hears long recordings by a job (None: every note is heard here)."""

    def __init__(
        self,
        conversation: Conversation,
        speech: SpeechToText | None,
        policy: ListeningPolicy | None = None,
        *,
        long_notes: LongNotes | None = None,
    ) -> None:
        self.conversation = conversation
        self.speech = speech
        self.policy = policy or ListeningPolicy()
        self.long_notes = long_notes

    def refusal(self, size: int | None, duration_s: float | None) -> Refusal | None:
        """Why a note is not listened to, from what the platform says of it before it is
        downloaded (size in bytes, duration in seconds, either unknown); None: fetch it."""
        if self.speech is None:
            return Refusal(NO_BACKEND)
        limits = self.policy
        if size is not None and size > limits.max_bytes:
            return Refusal(
                f"That recording is too large for me ({_megabytes(size)}; I take up to "
                f"{_megabytes(limits.max_bytes)}). {NOTHING_KEPT}"
            )
        if duration_s is not None and duration_s > limits.max_duration_s:
            return Refusal(
                f"That recording is too long for me ({_minutes(duration_s)}; I take up to "
                f"{_minutes(limits.max_duration_s)}). {NOTHING_KEPT}"
            )
        return None

    async def handle(self, note: VoiceNote, show: Show | None = None) -> AsyncIterator[ReplyEvent]:
        """Hear the note, then answer it as the person's message; one Refusal, and nothing
        stored, when it cannot be heard. `show` shows a long recording's steps."""
        refused = self.refusal(note.audio.size, note.audio.duration_s)
        if refused is not None or self.speech is None:
            yield refused or Refusal(NO_BACKEND)
            return
        if self.long_notes is not None and self.long_notes.is_long(note.audio):
            async for event in self._by_job(note, self.long_notes, show or _unshown):
                yield event
            return
        try:
            heard = await self.speech.transcribe(note.audio)
        except MediaError as exc:
            log.info("a voice note from %s was not heard: %s", note.user_id, exc)
            yield Refusal(f"{exc} {NOTHING_KEPT}")
            return
        if not heard.text.strip():
            yield Refusal(SILENCE)
            return
        message = UserMessage(
            note.user_id, note.chat_id, spoken(note.caption, heard.text), note.sent_at,
            note.idempotency_key, note.private, heard=heard, places=note.places,
        )  # fmt: skip
        async for event in self._answered(message, heard):
            yield event

    async def _by_job(self, note: VoiceNote, long_notes: LongNotes, show: Show) -> AsyncIterator[ReplyEvent]:
        # The key is fixed before the job runs: the job stores the turn under it, and the
        # conversation then finds that turn rather than storing the words twice.
        key = note.idempotency_key or f"{note.chat_id}:{uuid.uuid4()}"
        try:
            message = await long_notes.keep(note, key, show)
        except MediaError as exc:
            log.info("a long note from %s was not heard: %s", note.user_id, exc)
            yield Refusal(f"{exc} {NOTHING_KEPT}")
            return
        except QueueUnavailable:
            yield Refusal(BUSY)
            return
        except (JobError, JobTimeout, StoreUnavailable) as exc:
            log.warning("a long note from %s was not heard: %s", note.user_id, exc)
            yield Refusal(FAILED)
            return
        if message is None or message.heard is None:
            yield Refusal(SILENCE)
            return
        async for event in self._answered(message, message.heard):
            yield event

    async def _answered(self, message: UserMessage, heard: Transcript) -> AsyncIterator[ReplyEvent]:
        group = None if message.private else message.chat_id
        await self.conversation.usage.count(message.user_id, "voice_seconds", group_id=group,
                                            amount=heard.duration_s)  # fmt: skip
        echo = _echo(heard.text) if self.policy.echo else None
        if echo is not None:
            yield ReplyChunk(echo)
        async for event in self.conversation.handle_message(message):
            if echo is not None and isinstance(event, ReplyDone):
                # The echo shows above the reply; the stored reply is the model's words alone.
                event = dataclasses.replace(event, text=echo + event.text)
            yield event


def spoken(caption: str, heard: str) -> str:
    """The person's words for a note: its caption, if any, then what was heard."""
    return "\n\n".join(part for part in (caption.strip(), heard.strip()) if part)


async def _unshown(step: str) -> None:
    """Where a long note's steps go when nobody shows them."""


def _echo(text: str) -> str:
    shown = " ".join(text.split())
    if len(shown) > ECHO_CHARS:
        shown = shown[: ECHO_CHARS - 1].rstrip() + "…"
    return f"(I heard: “{shown}”)\n\n"


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"


def _minutes(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes:.0f} min" if minutes >= 1 else f"{seconds:.0f} s"

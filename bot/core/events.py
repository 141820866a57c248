"""What adapters hand the core, and what the core hands back. No platform types past here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.core.media.models import MediaFile, Seen, Transcript


@dataclass(frozen=True, slots=True)
class UserMessage:
    user_id: str
    chat_id: str
    text: str
    sent_at: datetime
    # Platform message id or delivery id: a redelivered update stores nothing twice.
    idempotency_key: str | None = None
    # False in a group or server channel: others read the reply, so only memories from this
    # same chat may be recalled into it.
    private: bool = True
    # A voice note's transcript: `text` is what was heard (the person's own words), and this is
    # kept with the turn (source, duration, language, confidence).
    heard: Transcript | None = None
    # A photo's description, as the vision model saw it: `text` is the caption (the person's own
    # words); this goes into the prompt beside it as the model's words, never stored as theirs.
    seen: Seen | None = None
    # The allowlist entries the message's place matches (its chat, its server): whether the
    # person is a guest, for their budget.
    places: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class VoiceNote:
    """A voice note, an audio file or a video note, before it is heard. Answered like a
    `UserMessage` whose text is its transcript (with the caption, if any, before it)."""

    user_id: str
    chat_id: str
    audio: MediaFile
    sent_at: datetime
    idempotency_key: str | None = None
    private: bool = True
    caption: str = ""
    places: tuple[str, ...] = ()  # as UserMessage's


@dataclass(frozen=True, slots=True)
class ImageNote:
    """A photo or an image file, before it is seen. Answered like a `UserMessage` whose text is
    its caption, with what the vision model saw beside it."""

    user_id: str
    chat_id: str
    image: MediaFile
    sent_at: datetime
    idempotency_key: str | None = None
    private: bool = True
    caption: str = ""
    places: tuple[str, ...] = ()  # as UserMessage's


@dataclass(frozen=True, slots=True)
class DocumentNote:
    """A document a person sent in a chat (PDF, .docx, text, Markdown), before it is read. Kept as
    their document memories; the caption, if any, is then answered as their message."""

    user_id: str
    chat_id: str
    document: MediaFile
    sent_at: datetime
    idempotency_key: str | None = None
    private: bool = True
    caption: str = ""
    places: tuple[str, ...] = ()  # as UserMessage's


@dataclass(frozen=True, slots=True)
class Reaction:
    user_id: str
    turn_id: int
    emoji: str
    sent_at: datetime
    source: str = "reaction"
    removed: bool = False


@dataclass(frozen=True, slots=True)
class MessageReaction:
    """A reaction on a platform message, before the core knows which stored reply it shows."""

    platform: str
    chat_id: str
    message_id: str
    user_id: str
    # None: the person took their reaction away. A changed reaction is simply the new emoji.
    emoji: str | None
    sent_at: datetime
    source: str = "reaction"
    # Telegram sends a person's whole new set of reactions (the event replaces); Discord adds and
    # removes one emoji at a time (`additive`), naming the one removed in `removed_emoji`.
    additive: bool = False
    removed_emoji: str | None = None


@dataclass(frozen=True, slots=True)
class ReactionResult:
    """What became of a reaction: `unknown` (not a reply Kindred linked), `ignored` (an emoji with
    no meaning), `recorded` or `removed`."""

    status: Literal["unknown", "ignored", "recorded", "removed"]
    value: float = 0.0


@dataclass(frozen=True, slots=True)
class ReplyChunk:
    text: str


@dataclass(frozen=True, slots=True)
class ReplyDone:
    """The end of a reply. `turn_id` is None when the reply could not be stored (yet). `text` is
    the reply as shown and stored: when the token budget `cut` it, up to its last whole sentence
    (core/chat/sentences.py), so a platform's final edit drops the tail it may have streamed."""

    text: str
    turn_id: int | None
    memory_ids: tuple[int, ...]
    notice: str | None = None
    cut: bool = False
    # The reply's idempotency key: a reply still waiting to be stored is linked by it.
    turn_key: str | None = None
    # The voice of the persona that wrote it, for its spoken reply; None: the configured voice.
    voice: str | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """The message was not used, and why, in words for the person."""

    text: str


@dataclass(frozen=True, slots=True)
class AnsweredBefore:
    """The message was answered already: the platform delivered it again (its webhook post timed
    out) after the intake had lost its memory of it (Redis back empty, or never told it was done).
    Nothing is shown again; a reply whose delivery is unknown is the doubts' business."""

    turn_key: str


ReplyEvent = ReplyChunk | ReplyDone | Refusal | AnsweredBefore

"""What every chat-platform adapter is given and what it promises. No platform types here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.core.chat.access import Access
from bot.core.chat.conversation import Conversation
from bot.core.chat.documents import ChatDocuments
from bot.core.chat.images import Images
from bot.core.chat.ports import Intake
from bot.core.chat.ratelimit import RateLimiter
from bot.core.chat.spoken import SpokenReplies
from bot.core.chat.voice import VoiceNotes
from bot.core.chat_models import ModelPicker
from bot.core.learning.commands import TrainingCommands
from bot.core.memory.controls import Controls
from bot.core.miniapps.commands import AppCommands
from bot.core.personas import PersonaPicker
from bot.core.proactive.commands import ProactiveCommands


@dataclass(frozen=True)
class Services:
    """The core parts an adapter translates to and from. Built once by `bot/wiring/kindred.py: services`."""

    conversation: Conversation
    controls: Controls
    # Per person; its buckets are also the flood control's (in this process, or shared in Redis).
    limiter: RateLimiter
    access: Access
    # Webhook updates: handled once and in order per chat, by this process or by every replica.
    intake: Intake
    # The admins' /train_now, /rollback and /canary; None where learning is not wired (a test, a tool).
    training: TrainingCommands | None = None
    # /app and /apps; None where mini-apps are not wired.
    apps: AppCommands | None = None
    # /proactive and /reminders; None where check-ins are not wired.
    proactive: ProactiveCommands | None = None
    # Voice notes and audio files; None where they are not wired (a voice note is then ignored).
    voice: VoiceNotes | None = None
    # Photos and images; None where they are not wired (a photo is then ignored).
    images: Images | None = None
    # Documents (PDF, .docx, text, Markdown) kept as memories; None where not wired (then ignored).
    documents: ChatDocuments | None = None
    # /voice, and replies said aloud to those who turned it on; None where not wired (text only).
    spoken: SpokenReplies | None = None
    # /persona's picker; None: the admin's one persona, shown as before.
    personas: PersonaPicker | None = None
    # /model's picker; None: the configured model, shown as the only one.
    models: ModelPicker | None = None


class PlatformAdapter(Protocol):
    name: str

    async def start(self) -> None:
        """Connect and begin serving; returns once serving has started."""
        ...

    async def stop(self) -> None:
        """Stop taking new updates, finish or hand back what is in flight, disconnect."""
        ...

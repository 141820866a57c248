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
from bot.core.settings import SettingParts, SettingsLinks, SettingsScreen, standard_rows


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
    # /settings web's signed links to the settings page; None: no page is served (no key, no server).
    settings_links: SettingsLinks | None = None

    def settings(self) -> SettingsScreen:
        """/settings: a row for each wired part that keeps a person's choice."""
        parts = setting_parts(self.conversation, self.controls, self.spoken, self.proactive, self.personas)
        return SettingsScreen(standard_rows(parts), self.settings_links)


def setting_parts(
    conversation: Conversation,
    controls: Controls | None,
    spoken: SpokenReplies | None,
    proactive: ProactiveCommands | None,
    personas: PersonaPicker | None,
) -> SettingParts:
    """The commands /settings changes each setting through, as each surface has them wired."""
    return SettingParts(
        conversation.store,
        personas=personas,
        models=conversation.models,
        voice=spoken.command if spoken is not None else None,
        voice_available=spoken is not None and spoken.voice is not None,
        proactive=proactive.proactive if proactive is not None else None,
        privacy=controls.privacy if controls is not None else None,
        default_training=controls.default_training_consent if controls is not None else True,
        usage=conversation.usage_report,
    )


class PlatformAdapter(Protocol):
    name: str

    async def start(self) -> None:
        """Connect and begin serving; returns once serving has started."""
        ...

    async def stop(self) -> None:
        """Stop taking new updates, finish or hand back what is in flight, disconnect."""
        ...

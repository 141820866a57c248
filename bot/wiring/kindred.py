"""A running companion: settings in, the core wired to the chosen implementations out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from bot.adapters.base import Services
from bot.adapters.telegram.secret import derived_webhook_secret
from bot.core.chat.access import Access
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.documents import ChatDocuments
from bot.core.chat.images import Images
from bot.core.chat.ports import Inference
from bot.core.chat.ratelimit import RateLimiter
from bot.core.chat.voice import VoiceNotes
from bot.core.chat_models import ModelPicker, ModelSource
from bot.core.jobs import Jobs
from bot.core.learning.commands import TrainingCommands
from bot.core.loading import LoadOnce
from bot.core.media.ports import ImageDescriber, SpeechSynthesis, SpeechToText
from bot.core.memory.controls import Controls
from bot.core.memory.ports import Embedder
from bot.core.memory.scoring import TURN_HALF_LIFE_DAYS, Scoring
from bot.core.miniapps.commands import AppCommands, DeliveryLog
from bot.core.personas import PersonaPicker, PersonaSource
from bot.core.proactive.commands import ProactiveCommands
from bot.core.proactive.outcomes import ProactiveReplies
from bot.core.settings import SettingsLinks, derived_key
from bot.core.store import Store
from bot.core.usage import Allowance, UsageReport, store_meter
from bot.media.shelf import FolderShelf
from bot.shared_state.local_holds import LocalHolds
from bot.wiring.backends import check_embedder, load_embedder, load_inference, open_store
from bot.wiring.budgets import BudgetFile, ModelPrices, budgets_path
from bot.wiring.jobs import extraction_submitter, job_registry, load_jobs
from bot.wiring.media.backends import listening, load_speech, load_vision, seeing
from bot.wiring.media.documents import ChatKeeper
from bot.wiring.media.spoken import load_voice, spoken_replies
from bot.wiring.media.voice_jobs import JobHearing
from bot.wiring.memory_jobs import Models, reward_weights
from bot.wiring.models import ListedModels, ModelFile, is_configured, load_model_file
from bot.wiring.personas import PersonaFile, personas_path
from bot.wiring.proactive_jobs import reachable
from bot.wiring.settings import Settings, id_set
from bot.wiring.shared_state import SharedState, open_shared_state

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Kindred:
    """A running companion: its parts, so that whoever opened it can close it."""

    settings: Settings
    store: Store
    embedder: Embedder
    conversation: Conversation
    jobs: Jobs
    # What replicas share (Redis), or this process's own.
    shared: SharedState = field(default_factory=SharedState.local)
    # Who hears voice notes; None: nobody (the bot says so).
    speech: SpeechToText | None = None
    # Who sees photos; None: nobody (the bot says so).
    vision: ImageDescriber | None = None
    # Who says replies aloud to those who ask (/voice on); None: nobody (the bot says so).
    voice: SpeechSynthesis | None = None
    # The admin's personas, as the file says now ([personal] 2).
    personas: PersonaSource | None = None
    # The admin's models, as the file says now ([personal] 3).
    models: ModelSource | None = None

    async def close(self) -> list[Path]:
        """Write what waits, finish the jobs, close every part. Returns the files holding the words
        that could not be stored (the store was down), to be imported later; usually none.

        The words are written out first: jobs get up to 30 s to finish, and a supervisor that stops
        the process sooner must not take unsaved words with it."""
        await self.conversation.flush()
        spilled: list[Path] = []
        if len(self.conversation.outbox):
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
            spilled = self.conversation.outbox.spill(self.settings.data_dir / "unsaved", stamp)
        try:
            await self.jobs.close()
        finally:
            listed = self.conversation.models.backends if self.conversation.models else None
            await close_models(
                self.embedder, self.conversation.inference, listed, self.speech, self.vision, self.voice
            )
            await self.store.close()
            await self.shared.close()
        return spilled


async def close_models(*parts: object) -> None:
    """Close the models that hold something: the embedder's batching thread, the local model's
    generation thread, a remote model's HTTP client. A part with no `close` holds nothing."""
    for part in parts:
        close = getattr(part, "close", None)
        if close is not None:
            await close()


ModelLoader = Callable[[Settings, float], Coroutine[Any, Any, tuple[Embedder, Inference]]]


async def build(
    settings: Settings, *, load_models: ModelLoader | None = None, personas: PersonaFile | None = None
) -> Kindred:
    """Open the store on the event loop while the models load on a thread: the model, then the
    embedder. The model (mostly its libraries' imports) sets the time; each part's is logged at
    INFO. If any part fails, those that came up are closed again before the error goes on.

    One thread, not one per model: loading them at once saved nothing measurable (the imports
    hold the GIL), and two threads importing at once can deadlock on the import locks (seen:
    `bot.inference`'s `__init__` imports the modules the other loader was importing).

    `load_models`: what loads the embedder and the model instead (a benchmark's load fixtures).
    `personas`: the personas file, when the caller read it already (load_personas)."""
    started = time.monotonic()
    # First, as every setting: a broken personas, models or budgets file stops the start, naming its line.
    personas = personas or load_personas(settings)
    models_file = load_model_file(settings)
    prices = model_prices(settings, models_file)
    budgets = load_budgets(settings, prices)
    # Then: a speech backend whose extra is missing stops the start before anything opens.
    speech = load_speech(settings.speech, device=settings.inference.device)
    try:
        vision = load_vision(settings.vision, settings.inference, models_file.book())
    except BaseException:
        await close_models(speech)
        raise
    try:
        voice = load_voice(settings.tts)
    except BaseException:
        await close_models(speech, vision)
        raise
    models_load = asyncio.create_task((load_models or _load_models)(settings, started))
    store: Store | None = None
    try:
        store = await open_store(settings)
        log.info("store open at %.2f s", time.monotonic() - started)
        # Shielded: a cancelled build still sees its models loaded, and closes them.
        embedder, inference = await asyncio.shield(models_load)
        await check_embedder(store, embedder)
    except BaseException:
        await _close_loaded(store, models_load)
        await close_models(speech, vision, voice)
        raise
    # In-process jobs share this process's models; Celery workers load their own.
    in_process = not settings.workers.redis_url
    models = Models(LoadOnce(lambda: embedder), LoadOnce(lambda: inference)) if in_process else None
    jobs = load_jobs(settings, job_registry(settings, models))
    shared = open_shared_state(settings)
    meter = store_meter(store, prices)
    persona_picker = PersonaPicker(personas, store.personas)
    admins = id_set(settings.chat.admin_ids) or frozenset()
    conversation = Conversation(
        store,
        embedder,
        inference,
        policy(settings),
        after_turn=extraction_submitter(jobs),
        proactive=ProactiveReplies(store, reachable=reachable(settings)),
        personas=persona_picker,
        models=ModelPicker(
            models_file, store.models, ListedModels(settings, inference), admins.__contains__, persona_picker
        ),
        meter=meter,
        allowance=Allowance(store.usage, shared.holds, budgets, meter),
        access=access(settings),
    )
    return Kindred(
        settings, store, embedder, conversation, jobs, shared, speech, vision, voice, personas, models_file
    )


def load_budgets(settings: Settings, prices: ModelPrices) -> BudgetFile:
    """The budgets file, or none. Raises ConfigError."""
    path = budgets_path(settings.data_dir, settings.chat.budgets_file)
    return BudgetFile(path, prices, prices.served())


def usage_report(settings: Settings) -> Callable[[Store], UsageReport]:
    """`kindred usage`'s report over a store, the budgets and prices read now. Reading only: no
    reply is held here, so the holds need not be the replicas'."""
    prices = model_prices(settings, load_model_file(settings))
    budgets = load_budgets(settings, prices)

    def over(store: Store) -> UsageReport:
        meter = store_meter(store, prices)
        allowance = Allowance(store.usage, LocalHolds(), budgets, meter)
        return UsageReport(store.usage, allowance=allowance, meter=meter, tier=access(settings).tier)

    return over


def model_prices(settings: Settings, models: ModelFile) -> ModelPrices:
    """The price of each model, as the models list gives them (none without a list)."""
    return ModelPrices(models.current, settings.inference.model, lambda entry: is_configured(settings, entry))


def access(settings: Settings) -> Access:
    chat = settings.chat
    return Access(id_set(chat.allowed_ids), id_set(chat.admin_ids) or frozenset(), chat.guests)


def load_personas(settings: Settings) -> PersonaFile:
    """The personas file, or `KINDRED_PERSONA` alone without one. Raises ConfigError."""
    return PersonaFile(personas_path(settings.data_dir, settings.chat.personas_file), settings.chat.persona)


async def _load_models(settings: Settings, started: float) -> tuple[Embedder, Inference]:
    inference = await _timed(started, "model", load_inference, settings)
    try:
        embedder = await _timed(started, "embedder", load_embedder, settings)
    except BaseException:
        await close_models(inference)
        raise
    return embedder, inference


async def _timed(started: float, what: str, load: Callable[[Settings], T], settings: Settings) -> T:
    loaded = await asyncio.to_thread(load, settings)
    log.info("%s loaded at %.2f s", what, time.monotonic() - started)
    return loaded


async def _close_loaded(store: Store | None, models_load: asyncio.Task[tuple[Embedder, Inference]]) -> None:
    """After a failed build: wait for the models still loading (a thread cannot be stopped) and
    close whatever came up, so that no worker thread keeps the process from exiting."""
    with contextlib.suppress(Exception):  # a failed load closed its own half already
        await close_models(*await models_load)
    if store is not None:
        with contextlib.suppress(Exception):
            await store.close()


def policy(settings: Settings) -> ConversationPolicy:
    chat, memory = settings.chat, settings.memory
    half_lives = dict(memory.half_life_days)
    return ConversationPolicy(
        persona=chat.persona,
        max_new_tokens=chat.max_new_tokens,
        recent_turns=chat.recent_turns,
        memory_top_k=memory.top_k,
        memory_token_budget=memory.token_budget,
        max_message_chars=chat.max_message_chars,
        reactions=chat.reactions,
        scoring=Scoring(
            half_life_days=half_lives,
            default_half_life_days=half_lives.get("turn", TURN_HALF_LIFE_DAYS),
            assistant_weight=memory.assistant_weight,
            document_weight=memory.document_weight,
            mix=memory.weight_mix,
            favoured_reward=memory.favoured_reward,
        ),
        reward=reward_weights(memory),
        base_model=settings.inference.model,
        best_of=settings.training.best_of,
    )


def services(kindred: Kindred) -> Services:
    """What the chat-platform adapters are handed."""
    chat, training = kindred.settings.chat, kindred.settings.training
    shelf = FolderShelf(kindred.settings.data_dir)
    return Services(
        conversation=kindred.conversation,
        controls=Controls(
            kindred.store,
            chat.persona,
            embedder=kindred.embedder,
            default_training_consent=training.default_consent,
            session_gap=timedelta(minutes=kindred.settings.memory.session_gap_minutes),
            shelf=shelf,
        ),
        limiter=RateLimiter(
            chat.user_messages_per_minute, chat.user_message_burst, buckets=kindred.shared.buckets
        ),
        access=kindred.conversation.room.access,
        training=TrainingCommands(
            kindred.store, kindred.jobs.submit, stale_after=timedelta(minutes=training.stale_minutes)
        ),
        apps=AppCommands(
            kindred.store.miniapps,
            kindred.jobs,
            app_link(kindred.settings),
            deliveries=DeliveryLog(kindred.store.turns, kindred.embedder),
            usage=kindred.conversation.usage,
        ),
        proactive=ProactiveCommands(kindred.store.proactive, reachable=reachable(kindred.settings)),
        intake=kindred.shared.intake,
        voice=voice_notes(kindred),
        images=images(kindred),
        documents=chat_documents(kindred, shelf),
        spoken=spoken_replies(kindred.store.turns, kindred.voice, kindred.settings.tts),
        personas=kindred.conversation.personas,
        settings_links=settings_links(kindred.settings),
        models=kindred.conversation.models,
    )


def voice_notes(kindred: Kindred) -> VoiceNotes:
    """Voice notes, heard by the configured backend (or answered that none is); a long one by
    the job, its steps shown."""
    settings = kindred.settings
    long_notes = JobHearing(kindred.store.curation, kindred.jobs, settings.speech, settings.data_dir)
    return VoiceNotes(kindred.conversation, kindred.speech, listening(settings.speech), long_notes=long_notes)


def images(kindred: Kindred) -> Images:
    """Photos and images, seen by the configured vision model (or answered that none is)."""
    return Images(kindred.conversation, kindred.vision, seeing(kindred.settings.vision))


def chat_documents(kindred: Kindred, shelf: FolderShelf) -> ChatDocuments:
    """Documents sent in chats, kept like `kindred memory add-file` keeps them (a long one by the
    job), their originals on `shelf` for people who asked."""
    settings = kindred.settings
    keeper = ChatKeeper(
        kindred.store.memories, kindred.embedder, settings.documents, kindred.jobs, settings.data_dir
    )
    return ChatDocuments(
        kindred.conversation,
        keeper,
        kindred.store.turns,
        max_bytes=settings.documents.max_bytes,
        shelf=shelf,
    )


def app_link(settings: Settings) -> Callable[[str], str]:
    """An app's link from its token: on the apps origin when one is set, else this web server."""
    base = web_base(settings)
    return lambda token: f"{base}/a/{token}"


def web_base(settings: Settings) -> str:
    """Where links to this web server point: the apps origin when one is set, else its address."""
    web = settings.web
    return (web.apps_url or f"http://{web.host}:{web.port}").rstrip("/")


def settings_links(settings: Settings) -> SettingsLinks | None:
    """/settings web's links, on the same origin as the apps' links, signed with a key derived
    from the web secret every replica already shares: Telegram's webhook secret (as set, or as
    derived from the bot token), else Discord's bot token. None without either (a terminal alone:
    no platform to give a link in)."""
    telegram, discord = settings.telegram, settings.discord
    if telegram.webhook_secret is not None:
        secret = telegram.webhook_secret.get_secret_value()
    elif telegram.bot_token is not None:
        secret = derived_webhook_secret(telegram.bot_token.get_secret_value())
    elif discord.bot_token is not None:
        secret = discord.bot_token.get_secret_value()
    else:
        return None
    return SettingsLinks(derived_key(secret), web_base(settings))

"""A voice note through the core (bot/core/chat/voice.py) on a real SQLite store, with the real
OpenAI-compatible speech backend over HTTP to a loopback server that hears a note by its pitch:
the transcript is the person's own turn (source voice, duration, language, confidence), recalled,
reacted to, exported and forgotten like typed text; everything that cannot be heard gets one
short answer and stores nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.voice import NO_BACKEND, NOTHING_KEPT, SILENCE, VoiceNotes
from bot.core.events import Reaction, Refusal, ReplyChunk, ReplyDone, ReplyEvent, UserMessage, VoiceNote
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.media.models import ListeningPolicy, MediaFile
from bot.core.memory.controls import Controls
from bot.media.speech.openai import OpenAISpeech
from bot.store.sqlite.store import SqliteStore
from tests.media import sounds
from tests.media.speech_server import FakeSpeech
from tests.support.fakes import HashEmbedder, ScriptedInference

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
CAT = "I adopted a cat called Miso today"
BOOK = "I am reading a novel about whales"


@pytest.fixture
async def server() -> AsyncIterator[FakeSpeech]:
    fake = await FakeSpeech(model="whisper-1", phrases={440: CAT, 330: BOOK}, language="en").start()
    yield fake
    await fake.close()


@pytest.fixture
async def speech(server: FakeSpeech) -> AsyncIterator[OpenAISpeech]:
    backend = OpenAISpeech(server.base_url, model="whisper-1", timeout_s=2.0)
    yield backend
    await backend.close()


def conversation(
    store: SqliteStore, model: ScriptedInference | None = None, **policy: object
) -> Conversation:
    return Conversation(
        store,
        HashEmbedder(),
        model or ScriptedInference("What a lovely thing to hear."),
        ConversationPolicy(persona="You are a test companion.", reactions=DEFAULT_REACTIONS, **policy),  # type: ignore[arg-type]
    )


def note(
    data: bytes, key: str | None = "telegram:1:7", caption: str = "", duration_s: float | None = None
) -> VoiceNote:
    audio = MediaFile("voice", data, "voice.ogg", "audio/ogg", duration_s)
    return VoiceNote("ann", "c1", audio, T0, key, caption=caption)


async def heard(voice: VoiceNotes, sent: VoiceNote) -> list[ReplyEvent]:
    return [event async for event in voice.handle(sent)]


async def test_the_transcript_is_the_persons_own_turn(store: SqliteStore, speech: OpenAISpeech) -> None:
    model = ScriptedInference("A cat! Tell me about Miso.")
    voice = VoiceNotes(conversation(store, model), speech)
    events = await heard(voice, note(sounds.sound(sounds.OGG_OPUS, 2.0)))
    done = events[-1]
    assert (
        isinstance(done, ReplyDone) and done.turn_id is not None and done.text == "A cat! Tell me about Miso."
    )
    assert model.prompts[-1][-1].content == CAT  # the model reads what was said, as typed text
    user, reply = await store.turns.recent_turns("ann", "c1", 10)
    assert (user.role, user.text, reply.reply_to) == ("user", CAT, user.id)
    [memory] = await store.curation.get_memories("ann", [user.memory_id])
    assert memory.speaker == "user" and memory.recallable
    assert memory.meta == {
        "chat_id": "c1",
        "source": "voice",
        "duration_s": 2.0,
        "language": "en",
        "confidence": 0.819,
    }


async def test_it_is_recalled_reacted_to_exported_and_forgotten_like_any_turn(
    store: SqliteStore, speech: OpenAISpeech
) -> None:
    model = ScriptedInference("Noted.")
    conv = conversation(store, model, recent_turns=0)
    events = await heard(VoiceNotes(conv, speech), note(sounds.sound(sounds.OGG_OPUS, 2.0)))
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.turn_id is not None
    # Recalled: a later typed question finds the spoken words among the person's memories.
    async for _ in conv.handle_message(UserMessage("ann", "c1", "what is my cat called?", T0)):
        pass
    assert CAT in model.prompts[-1][0].content
    # Reacted to: the reply to a voice note is rated like any reply.
    assert await conv.handle_reaction(Reaction("ann", done.turn_id, "👍", T0)) == 1.0
    controls = Controls(store, "You are a test companion.")
    exported = [json.loads(line) for line in (await controls.export_jsonl("ann")).splitlines()]
    spoken = [record for record in exported if record.get("text") == CAT]
    assert spoken and spoken[0]["meta"]["source"] == "voice" and spoken[0]["speaker"] == "user"
    await controls.forget_all("ann")
    assert await store.turns.recent_turns("ann", "c1", 10) == []
    assert await controls.export_jsonl("ann") == b""


async def test_the_caption_comes_before_what_was_heard(store: SqliteStore, speech: OpenAISpeech) -> None:
    model = ScriptedInference()
    await heard(
        VoiceNotes(conversation(store, model), speech), note(sounds.sound(sounds.WAV, 1.0), caption="for you")
    )
    assert model.prompts[-1][-1].content == f"for you\n\n{CAT}"


async def test_a_note_delivered_twice_is_stored_once(store: SqliteStore, speech: OpenAISpeech) -> None:
    voice = VoiceNotes(conversation(store), speech)
    for _ in range(2):
        await heard(voice, note(sounds.sound(sounds.OGG_OPUS, 1.0), key="telegram:1:8"))
    assert [turn.text for turn in await store.turns.recent_turns("ann", "c1", 10) if turn.role == "user"] == [
        CAT
    ]


async def test_with_the_echo_on_the_reply_says_what_was_heard(
    store: SqliteStore, speech: OpenAISpeech
) -> None:
    voice = VoiceNotes(
        conversation(store, ScriptedInference("How lovely.")), speech, ListeningPolicy(echo=True)
    )
    events = await heard(voice, note(sounds.sound(sounds.OGG_OPUS, 1.0, freq=330.0)))
    chunks = "".join(event.text for event in events if isinstance(event, ReplyChunk))
    done = events[-1]
    assert isinstance(done, ReplyDone)
    assert chunks == done.text == f"(I heard: “{BOOK}”)\n\nHow lovely."
    _, reply = await store.turns.recent_turns("ann", "c1", 10)
    assert reply.text == "How lovely."  # the stored reply is the model's words alone


async def nothing_stored(store: SqliteStore) -> bool:
    return (
        await store.turns.recent_turns("ann", "c1", 10) == []
        and await store.memories.memory_count("ann") == 0
    )


async def test_silence_gets_a_short_answer_and_stores_nothing(
    store: SqliteStore, speech: OpenAISpeech, server: FakeSpeech
) -> None:
    model = ScriptedInference()
    events = await heard(
        VoiceNotes(conversation(store, model), speech), note(sounds.sound(sounds.OGG_OPUS, 2.0, freq=None))
    )
    assert events == [Refusal(SILENCE)]
    # Music the server hears as no speech is silence too: its invented words are not kept.
    events = await heard(
        VoiceNotes(conversation(store, model), speech), note(sounds.sound(sounds.OGG_OPUS, 2.0, freq=1000.0))
    )
    assert events == [Refusal(SILENCE)] and len(server.received) == 1
    assert model.prompts == [] and await nothing_stored(store)


async def test_without_a_backend_the_answer_says_how_to_turn_it_on(
    store: SqliteStore, server: FakeSpeech
) -> None:
    events = await heard(VoiceNotes(conversation(store), None), note(sounds.sound(sounds.OGG_OPUS, 1.0)))
    assert events == [Refusal(NO_BACKEND)] and "KINDRED_SPEECH_BACKEND=" in NO_BACKEND
    assert server.received == [] and await nothing_stored(store)


async def test_over_a_limit_the_platforms_word_is_enough(
    store: SqliteStore, speech: OpenAISpeech, server: FakeSpeech
) -> None:
    """What the platform says of a note (size, duration) refuses it before it is downloaded."""
    voice = VoiceNotes(conversation(store), speech, ListeningPolicy(max_bytes=1024 * 1024, max_duration_s=60))
    too_big = voice.refusal(25 * 1024 * 1024, 10.0)
    too_long = voice.refusal(1000, 3 * 3600.0)
    assert too_big is not None and too_big.text.startswith(
        "That recording is too large for me (25 MB; I take up to 1 MB)."
    )
    assert too_long is not None and too_long.text.startswith(
        "That recording is too long for me (180 min; I take up to 1 min)."
    )
    assert voice.refusal(1000, 10.0) is None
    events = await heard(voice, note(sounds.sound(sounds.OGG_OPUS, 1.0), duration_s=3 * 3600.0))
    assert events == [too_long] and server.received == [] and await nothing_stored(store)


async def test_the_content_is_checked_again_whatever_the_platform_said(
    store: SqliteStore, speech: OpenAISpeech
) -> None:
    voice = VoiceNotes(conversation(store), speech, ListeningPolicy(max_duration_s=600))
    events = await heard(voice, note(sounds.hours_of_quiet(3.0), duration_s=5.0))
    assert events == [Refusal(f"That recording is 3 h 0 min long; I take up to 10 min. {NOTHING_KEPT}")]
    assert await nothing_stored(store)


@pytest.mark.parametrize("failure", ["500", "garbage", "stall"])
async def test_a_failing_speech_server_gets_a_clear_answer_and_stores_nothing(
    store: SqliteStore, server: FakeSpeech, failure: str
) -> None:
    backend = OpenAISpeech(server.base_url, model="whisper-1", timeout_s=0.5)
    server.fail_next(failure)  # type: ignore[arg-type]
    try:
        events = await heard(
            VoiceNotes(conversation(store), backend), note(sounds.sound(sounds.OGG_OPUS, 1.0))
        )
    finally:
        await backend.close()
    [refusal] = events
    assert isinstance(refusal, Refusal) and refusal.text.startswith("The speech service")
    assert refusal.text.endswith(NOTHING_KEPT) and await nothing_stored(store)

"""`kindred memory add-file` for audio and images: kept as the chat keeps a voice note or a photo
that person sent, with no reply. Audio is heard through the configured speech backend (a long
recording by the job, waited for) and stored as the person's turn (source voice); an image is
seen through the configured vision model and stored as the caption-less photo's turn and the
model's `image` description. Both return once what was stored is searchable.

The turn's idempotency key is the file's digest: the same file added again for the same person
stores nothing more."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.core.chat.images import NO_CAPTION, clipped, keep_description
from bot.core.chat.person_turn import keep_words
from bot.core.chat.voice import spoken
from bot.core.errors import ConfigError, InvalidInput
from bot.core.events import ImageNote, UserMessage, VoiceNote
from bot.core.media.models import MediaFile
from bot.core.media.ports import SpeechToText
from bot.core.models import Memory
from bot.wiring.settings import Settings

NO_SPEECH = (
    "audio files are heard through a speech backend, and none is configured: set "
    "KINDRED_SPEECH_BACKEND=openai (with KINDRED_SPEECH_URL and KINDRED_SPEECH_MODEL) or local "
    "(docs/media.md)"
)
NO_VISION = (
    "images are seen through a vision model, and none is configured: set KINDRED_VISION_BACKEND=openai "
    "(docs/media.md)"
)
# A stored memory's text in the plain listing; --json prints it whole.
SHOWN_CHARS = 100


async def add_audio(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.kindred import close_models
    from bot.wiring.media.backends import load_speech

    section = settings.speech
    speech = load_speech(section, device=settings.inference.device)
    if speech is None:
        raise ConfigError(NO_SPEECH)
    path: Path = args.file
    try:
        data = read_file(path, section.audio_max_bytes, "KINDRED_AUDIO_MAX_MB")
        note = VoiceNote(args.user, args.user, MediaFile("audio", data, path.name), datetime.now(UTC))
        message = await _heard(settings, speech, note, _key(args.user, data))
    finally:
        await close_models(speech)
    if message is None:
        raise InvalidInput(f"no words were heard in {path.name} (silence or music); nothing was stored")
    return await _stored(settings, args, message)


async def _heard(settings: Settings, speech: SpeechToText, note: VoiceNote, key: str) -> UserMessage | None:
    """What was heard, as the person's message; None for silence. A long recording by the job
    (a Celery worker with REDIS_URL, threads here otherwise), which stores it itself."""
    from bot.wiring.backends import open_store
    from bot.wiring.jobs import load_jobs
    from bot.wiring.media.voice_jobs import hear_wait_s, heard_message, is_long, submit_hearing

    if not is_long(settings.speech, note.audio):
        heard = await speech.transcribe(note.audio)
        if not heard.text.strip():
            return None
        return UserMessage(note.user_id, note.chat_id, spoken("", heard.text), note.sent_at, key, heard=heard)
    print(f"kindred: {note.audio.name} is long: a job hears it; waiting for it", file=sys.stderr)
    jobs = load_jobs(settings)
    try:
        job_id = submit_hearing(jobs, settings.data_dir, note, key)
        result = await jobs.result(job_id, hear_wait_s(settings.speech))
    finally:
        await jobs.close()
    store = await open_store(settings)
    try:
        return await heard_message(store.curation, note, key, result)
    finally:
        await store.close()


async def add_image(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import load_embedder, open_store
    from bot.wiring.kindred import close_models
    from bot.wiring.media.backends import load_vision

    vision = load_vision(settings.vision, settings.inference)
    if vision is None:
        raise ConfigError(NO_VISION)
    path: Path = args.file
    try:
        data = read_file(path, settings.vision.image_max_bytes, "KINDRED_IMAGE_MAX_MB")
        image = MediaFile("image", data, path.name)
        seen = await vision.describe(image, "")
    finally:
        await close_models(vision)
    seen = dataclasses.replace(seen, description=clipped(seen.description))
    if not seen.description:
        raise InvalidInput(f"the vision model said nothing of {path.name}; nothing was stored")
    key = _key(args.user, data)
    note = ImageNote(args.user, args.user, image, datetime.now(UTC), key)
    message = UserMessage(args.user, args.user, NO_CAPTION, note.sent_at, key, seen=seen)
    store = await open_store(settings)
    try:
        embedder = load_embedder(settings)
        # The person's turn first, as the chat keeps it: a description is never kept without it.
        turn = await keep_words(store.turns, embedder, message, max_chars=settings.chat.max_message_chars)
        described = await keep_description(store.memories, embedder, note, seen, vision.model_name)
        stored = await store.curation.get_memories(args.user, [turn.memory_id, described])
    finally:
        await store.close()
    return _printed(args, "image", stored)


async def _stored(settings: Settings, args: argparse.Namespace, message: UserMessage) -> int:
    """Store `message` as the person's turn (found when a job stored it already), then print
    what the store now holds of it."""
    from bot.wiring.backends import load_embedder, open_store

    store = await open_store(settings)
    try:
        embedder = load_embedder(settings)
        turn = await keep_words(store.turns, embedder, message, max_chars=settings.chat.max_message_chars)
        stored = await store.curation.get_memories(args.user, [turn.memory_id])
    finally:
        await store.close()
    return _printed(args, "audio", stored)


def _printed(args: argparse.Namespace, kind: str, stored: list[Memory]) -> int:
    name = args.file.name
    if args.json:
        record = {
            "user": args.user,
            "file": name,
            "kind": kind,
            "memories": [memory_record(m) for m in stored],
        }
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        return 0
    what = "what was heard" if kind == "audio" else "the photo and what it shows"
    print(f"stored {name} for {args.user}: {what}")
    for memory in stored:
        text = memory.text if len(memory.text) <= SHOWN_CHARS else memory.text[: SHOWN_CHARS - 1] + "…"
        print(f"  #{memory.id} ({memory.kind}, {memory.speaker}): {text}")
    return 0


def read_file(path: Path, max_bytes: int, setting: str) -> bytes:
    """The file's bytes, refused before it is read when it is over the limit (a 4 GB file is not
    loaded to be refused)."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InvalidInput(
                f"{path.name} is {size / 2**20:,.1f} MB; I read files of up to {max_bytes / 2**20:,.0f} MB "
                f"({setting})."
            )
        with path.open("rb") as handle:
            return bytes(handle.read(max_bytes + 1))
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None


def memory_record(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "kind": memory.kind,
        "speaker": memory.speaker,
        "text": memory.text,
        "timestamp": memory.created_at.isoformat(),
        "meta": dict(memory.meta),
    }


def _key(user_id: str, data: bytes) -> str:
    return f"add-file:{user_id}:{hashlib.sha256(data).hexdigest()[:32]}"

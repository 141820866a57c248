"""`kindred.media.hear_voice` (the default queue): a long recording heard by a job, and what was
heard kept as the person's turn, rather than while the chat waits on a handler.

Payload: {user_id, chat_id, spooled, name, kind, mime, duration_s, caption, sent_at, key}, ids
and text only. The recording waits in the spool as a long document does (document_jobs.py:
written whole before the job is queued, a name of its own each time). The job hears it, stores
the caption and what was heard as the person's turn under the note's idempotency key `key`
(core/chat/person_turn.py: the very turn the conversation would store, so a second delivery of
the note, or of the job, stores nothing more), and deletes the file, heard or refused; only a
failure a retry can fix leaves it for the retry. Its result holds ids and the transcript's
numbers, never the words (Celery keeps a result in Redis for a day): whoever waits reads them
back from the store. A recording the backend refuses, and silence, are results
({"ok": false, "reason", "message"}), not errors: a retry would hear them the same way.

Who waits: chats (`JobHearing`, the core's `LongNotes`, which shows the job's steps) and
`kindred memory add-file`. A recording is long over KINDRED_AUDIO_INLINE_SECONDS, as the platform
reports its length or, when it does not, as the file's header says; one whose length is unknown
is heard inline (and checked against the limits there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.core.chat.person_turn import keep_words
from bot.core.chat.voice import spoken
from bot.core.errors import InvalidInput, JobError, MediaError
from bot.core.events import UserMessage, VoiceNote
from bot.core.jobs import JobId, JobPayload, JobRegistry, Jobs, report_progress
from bot.core.loading import LoadOnce
from bot.core.media.models import MediaFile, MediaKind, Transcript
from bot.core.media.ports import Show, SpeechToText
from bot.core.memory.ports import Embedder, MemoryCuration
from bot.media.audio import claimed_duration_s
from bot.wiring.job_store import StoreAccess
from bot.wiring.media.document_jobs import SPOOL, from_spool, is_spool_name, spool, unspool
from bot.wiring.media.job_progress import PROGRESS_POLL_S, followed
from bot.wiring.settings import SpeechSettings

HEAR_JOB = "kindred.media.hear_voice"
# Beyond one request's timeout and the recording's own length (a local Whisper on a CPU hears
# at about real time): decoding, storing, and a busy worker.
HEAR_EXTRA_S = 300.0
GONE = "That recording is no longer waiting to be heard."
_KINDS: tuple[MediaKind, ...] = ("voice", "audio")


def hear_limit_s(section: SpeechSettings) -> float:
    """The job's soft time limit."""
    return section.speech_timeout_s + section.audio_max_seconds + HEAR_EXTRA_S


def add_voice_jobs(
    registry: JobRegistry,
    stores: StoreAccess,
    embedder: LoadOnce[Embedder],
    speech: Callable[[], SpeechToText | None],
    data_dir: Path,
    *,
    section: SpeechSettings,
    max_message_chars: int,
) -> None:
    soft_s = hear_limit_s(section)

    @registry.job(HEAR_JOB, soft_s=soft_s, hard_s=soft_s + 60, retries=2, retry_delay_s=5)
    async def hear(payload: JobPayload) -> JobPayload:
        note = _Note.of(payload)
        path = data_dir / SPOOL / note.spooled
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            # Heard and deleted by an earlier delivery of this job, or never spooled here.
            return {"ok": False, "reason": "gone", "message": GONE}
        # A backend of the attempt's own: an HTTP client belongs to one event loop, and the
        # in-process runner gives each attempt a loop of its own.
        backend = speech()
        if backend is None:
            path.unlink(missing_ok=True)
            raise JobError(f"{HEAR_JOB}: KINDRED_SPEECH_BACKEND is none where this job runs")
        report_progress({"step": "hearing"})

        async def kept_now() -> JobPayload:
            heard = await _heard(backend, note.audio(data))
            if not heard.text.strip():
                return {"ok": False, "reason": "silence", "message": ""}
            report_progress({"step": "keeping"})
            async with stores() as store:
                turn = await keep_words(
                    store.turns, embedder.get(), note.message(heard), max_chars=max_message_chars
                )
            return {"ok": True, "turn_id": turn.id, "memory_id": turn.memory_id, **heard.meta()}

        return await from_spool(path, kept_now, refused=(MediaError, InvalidInput))


async def _heard(backend: SpeechToText, audio: MediaFile) -> Transcript:
    try:
        return await backend.transcribe(audio)
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            await close()


@dataclass(frozen=True, slots=True)
class _Note:
    """The note a payload describes, checked."""

    user_id: str
    chat_id: str
    key: str
    spooled: str
    kind: MediaKind
    name: str
    mime: str
    duration_s: float | None
    caption: str
    sent_at: datetime

    @classmethod
    def of(cls, payload: JobPayload) -> _Note:
        """JobError for a payload that no delivery could run."""
        fields = ("user_id", "chat_id", "key", "spooled", "name", "mime", "caption", "sent_at")
        text = {key: payload.get(key) for key in fields}
        kind, duration = payload.get("kind"), payload.get("duration_s")
        if not all(isinstance(value, str) for value in text.values()) or kind not in _KINDS:
            raise JobError(f"{HEAR_JOB} needs {', '.join(fields)} (text) and kind (voice or audio)")
        if not is_spool_name(str(text["spooled"])) or not (
            duration is None or isinstance(duration, int | float)
        ):
            raise JobError(
                f"{HEAR_JOB}: spooled must be a spool name (32 hex digits), duration_s a number or null"
            )
        try:
            sent_at = datetime.fromisoformat(str(text.pop("sent_at")))
        except ValueError:
            raise JobError(f"{HEAR_JOB}: sent_at must be an ISO 8601 time") from None
        seconds = float(duration) if duration is not None else None
        return cls(**{k: str(v) for k, v in text.items()}, kind=kind, duration_s=seconds, sent_at=sent_at)

    def audio(self, data: bytes) -> MediaFile:
        return MediaFile(self.kind, data, self.name, self.mime, self.duration_s)

    def message(self, heard: Transcript) -> UserMessage:
        words = spoken(self.caption, heard.text)
        return UserMessage(self.user_id, self.chat_id, words, self.sent_at, self.key, heard=heard)


# Beyond the job's own hard limit: the time it may wait in the queue behind others.
QUEUE_WAIT_S = 600.0


def is_long(section: SpeechSettings, audio: MediaFile) -> bool:
    seconds = audio.duration_s if audio.duration_s is not None else claimed_duration_s(audio.data)
    return seconds is not None and seconds > section.audio_inline_seconds


def hear_wait_s(section: SpeechSettings) -> float:
    return hear_limit_s(section) + 60 + QUEUE_WAIT_S


def submit_hearing(jobs: Jobs, data_dir: Path, note: VoiceNote, key: str) -> JobId:
    """The recording spooled and its job queued; nothing left in the spool when it could not be."""
    audio = note.audio
    spooled = spool(data_dir, audio)
    payload = {
        "user_id": note.user_id, "chat_id": note.chat_id, "key": key, "spooled": spooled,
        "kind": audio.kind, "name": audio.name, "mime": audio.mime, "duration_s": audio.duration_s,
        "caption": note.caption.strip(), "sent_at": note.sent_at.isoformat(),
    }  # fmt: skip
    try:
        return jobs.submit(HEAR_JOB, payload)
    except Exception:
        unspool(data_dir, spooled)  # nothing was queued: no job will delete it
        raise


async def heard_message(
    memories: MemoryCuration, note: VoiceNote, key: str, result: JobPayload
) -> UserMessage | None:
    """The person's message as the job stored it, read back from the store; None for silence.
    MediaError with the job's words for a recording it refused."""
    if not result.get("ok"):
        if result.get("reason") == "silence":
            return None
        raise MediaError(str(result.get("message") or "That recording could not be heard."))
    memory_id = result.get("memory_id")
    found = await memories.get_memories(note.user_id, [memory_id]) if isinstance(memory_id, int) else []
    if not found:
        # Stored by the job, gone by now (forgotten in between) or not readable: nothing to answer.
        raise JobError(f"{HEAR_JOB}: the words it kept (memory {memory_id}) could not be read back")
    words = found[0].text
    caption = note.caption.strip()
    said = words[len(caption) :].lstrip() if caption and words.startswith(caption) else words
    heard = Transcript(
        said,
        float(result.get("duration_s") or 0.0),
        language=_text_or_none(result.get("language")),
        confidence=_number_or_none(result.get("confidence")),
    )
    return UserMessage(note.user_id, note.chat_id, words, note.sent_at, key, note.private, heard=heard)


class JobHearing:
    """The `LongNotes` of chats: a long recording heard by the job on `jobs`, its steps shown as
    they pass (as documents and mini-app builds show theirs)."""

    def __init__(
        self,
        memories: MemoryCuration,
        jobs: Jobs,
        section: SpeechSettings,
        data_dir: Path,
        *,
        poll_s: float = PROGRESS_POLL_S,
    ) -> None:
        self.memories = memories
        self.jobs = jobs
        self.section = section
        self.data_dir = data_dir
        self.poll_s = poll_s

    def is_long(self, audio: MediaFile) -> bool:
        return is_long(self.section, audio)

    async def keep(self, note: VoiceNote, key: str, show: Show) -> UserMessage | None:
        job_id = submit_hearing(self.jobs, self.data_dir, note, key)
        await show("That's a long recording, so I'm listening to it in the background…")
        result = await followed(self.jobs, job_id, hear_wait_s(self.section), show, _step, poll_s=self.poll_s)
        return await heard_message(self.memories, note, key, result)


def _step(progress: JobPayload | None) -> str | None:
    """The job's progress (voice_jobs.py reports it) in words for the person."""
    step = progress.get("step") if progress is not None else None
    if step == "hearing":
        return "Listening to your recording…"
    if step == "keeping":
        return "Listening to your recording: heard it, keeping what you said…"
    return None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _number_or_none(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

"""The SpeechToText port over a speech model in this process (`SpeechModel`: Whisper, built in
bot/inference/whisper.py and handed in by the composition root).

The recording is read as for a server (bot/media/audio.py): checked whole and within the limits,
silence never reaches the model. The model hears the 16 kHz mono samples on a thread, so that
other chats go on meanwhile; one failing is a MediaError whose line a person may read.
"""

from __future__ import annotations

import asyncio
import logging

from bot.core.errors import InferenceError, MediaError
from bot.core.media.models import MediaFile, Transcript
from bot.core.media.ports import SpeechModel
from bot.media.audio import AudioLimits, prepare

log = logging.getLogger(__name__)

MODEL_FAILED = "My speech model failed on that recording, so I couldn't listen to it."


class LocalSpeech:
    def __init__(self, model: SpeechModel, limits: AudioLimits | None = None) -> None:
        self.model = model
        self.model_name = model.model_name
        self.limits = limits or AudioLimits()

    async def transcribe(self, audio: MediaFile) -> Transcript:
        """What was said; an empty text for silence (the model never heard it)."""
        prepared = await asyncio.to_thread(prepare, audio.data, self.limits)
        if prepared.silent:
            return Transcript("", prepared.duration_s)
        try:
            heard = await asyncio.to_thread(self.model.recognize, prepared.samples())
        except InferenceError as exc:
            log.warning("speech: the local model failed: %s", exc)
            raise MediaError(MODEL_FAILED) from None
        return Transcript(heard.text.strip(), prepared.duration_s, heard.language, heard.confidence)

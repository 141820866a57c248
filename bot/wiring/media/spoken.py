"""Which voice says replies aloud (the tts section), and the /voice service built on it.

The backend is imported inside the function, so that a companion without one loads nothing of it.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil

from bot.core.chat.ports import TurnLog
from bot.core.chat.spoken import SpokenReplies
from bot.core.errors import ConfigError
from bot.core.media.ports import SpeechSynthesis
from bot.wiring.settings import TtsSettings

log = logging.getLogger(__name__)


def load_voice(tts: TtsSettings) -> SpeechSynthesis | None:
    """The configured voice; None for `none` (/voice on then says how an admin turns it on)."""
    if tts.tts_backend == "none":
        return None
    if importlib.util.find_spec("av") is None:
        # Not fatal: each spoken reply is answered with the same advice (bot/media/tts/opus.py).
        log.warning("spoken replies: the [media] extra is missing; pip install 'kindred[media]' to speak")
    if tts.tts_backend == "espeak":
        from bot.media.tts.espeak import PROGRAM, EspeakVoice

        if shutil.which(PROGRAM) is None:
            raise ConfigError(
                "KINDRED_TTS_BACKEND=espeak runs espeak-ng on this machine, which is not installed "
                "(apt-get install espeak-ng); or use an OpenAI-compatible speech server: "
                "KINDRED_TTS_BACKEND=openai (docs/media.md)"
            )
        return EspeakVoice(voice=tts.tts_voice or "en", timeout_s=tts.tts_timeout_s)
    from bot.media.tts.openai import OpenAIVoice

    assert tts.tts_url is not None and tts.tts_model is not None  # the settings checked
    key = tts.tts_api_key.get_secret_value() if tts.tts_api_key else None
    return OpenAIVoice(
        tts.tts_url,
        model=tts.tts_model,
        voice=tts.tts_voice or "alloy",
        api_key=key,
        response_format=tts.tts_format,
        timeout_s=tts.tts_timeout_s,
    )


def spoken_replies(turns: TurnLog, voice: SpeechSynthesis | None, tts: TtsSettings) -> SpokenReplies:
    return SpokenReplies(turns, voice, max_chars=tts.tts_max_chars)

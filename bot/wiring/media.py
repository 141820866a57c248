"""Which speech backend hears voice notes, and what the chat listens to: from the media section.

The backend is imported inside the function, so that a companion without one loads nothing of it.
"""

from __future__ import annotations

import importlib.util
import logging

from bot.core.errors import ConfigError
from bot.core.media.models import ListeningPolicy
from bot.core.media.ports import SpeechToText
from bot.wiring.settings import MediaSettings

log = logging.getLogger(__name__)


def load_speech(media: MediaSettings) -> SpeechToText | None:
    """The configured speech-to-text backend; None for `none` (voice notes get a plain answer)."""
    if media.speech_backend == "none":
        return None
    if media.speech_backend == "local":
        raise ConfigError(
            "KINDRED_SPEECH_BACKEND=local is not available in this release; use an OpenAI-compatible "
            "speech server (KINDRED_SPEECH_BACKEND=openai, docs/media.md) or none"
        )
    if importlib.util.find_spec("av") is None:
        # Not fatal: each voice note is answered with the same advice (bot/media/audio.py).
        log.warning("voice notes: the [media] extra is missing; pip install 'kindred[media]' to hear them")
    from bot.media.audio import AudioLimits
    from bot.media.speech.openai import OpenAISpeech

    assert media.speech_url is not None and media.speech_model is not None  # the settings checked
    key = media.speech_api_key.get_secret_value() if media.speech_api_key else None
    return OpenAISpeech(
        media.speech_url,
        model=media.speech_model,
        api_key=key,
        limits=AudioLimits(media.audio_max_bytes, media.audio_max_seconds),
        timeout_s=media.speech_timeout_s,
        response_format=media.speech_format,
    )


def listening(media: MediaSettings) -> ListeningPolicy:
    return ListeningPolicy(media.audio_max_bytes, media.audio_max_seconds, echo=media.speech_echo)

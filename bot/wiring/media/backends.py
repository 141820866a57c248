"""Which speech backend hears voice notes and which vision model sees photos, and what the chat
listens to and looks at: from the speech and vision sections.

The backend is imported inside the function, so that a companion without one loads nothing of it.
"""

from __future__ import annotations

import importlib.util
import logging
from typing import TYPE_CHECKING

from bot.core.chat_models import EVERYONE, ChatModel, ModelBook
from bot.core.errors import ConfigError, InferenceError
from bot.core.media.models import ListeningPolicy, SeeingPolicy
from bot.core.media.ports import ImageDescriber, SpeechToText
from bot.wiring.settings import InferenceSettings, SpeechSettings, VisionSettings

if TYPE_CHECKING:
    from bot.media.audio import AudioLimits

log = logging.getLogger(__name__)


def load_speech(media: SpeechSettings, *, device: str = "auto") -> SpeechToText | None:
    """The configured speech-to-text backend; None for `none` (voice notes get a plain answer).
    `device` is where a local model runs (KINDRED_DEVICE)."""
    if media.speech_backend == "none":
        return None
    if importlib.util.find_spec("av") is None:
        # Not fatal: each voice note is answered with the same advice (bot/media/audio.py).
        log.warning("voice notes: the [media] extra is missing; pip install 'kindred[media]' to hear them")
    from bot.media.audio import AudioLimits

    limits = AudioLimits(media.audio_max_bytes, media.audio_max_seconds)
    assert media.speech_model is not None  # the settings checked
    if media.speech_backend == "local":
        return _local_speech(media.speech_model, limits, device)
    from bot.media.speech.openai import OpenAISpeech

    assert media.speech_url is not None  # the settings checked
    key = media.speech_api_key.get_secret_value() if media.speech_api_key else None
    return OpenAISpeech(
        media.speech_url,
        model=media.speech_model,
        api_key=key,
        limits=limits,
        timeout_s=media.speech_timeout_s,
        response_format=media.speech_format,
    )


def _local_speech(model: str, limits: AudioLimits, device: str) -> SpeechToText:
    """Whisper in this process; loaded by the first voice note, not at start."""
    if not all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers")):
        raise ConfigError(
            "KINDRED_SPEECH_BACKEND=local runs Whisper in this process, which needs the [local] extra "
            "(pip install 'kindred[local]'); or use an OpenAI-compatible speech server: "
            "KINDRED_SPEECH_BACKEND=openai (docs/media.md)"
        )
    from bot.inference.whisper import WhisperModel
    from bot.media.speech.local import LocalSpeech

    return LocalSpeech(WhisperModel(model, device=device), limits)


def listening(media: SpeechSettings) -> ListeningPolicy:
    return ListeningPolicy(media.audio_max_bytes, media.audio_max_seconds, echo=media.speech_echo)


def load_vision(
    vision: VisionSettings, inference: InferenceSettings, listed: ModelBook | None = None
) -> ImageDescriber | None:
    """The configured vision model; None for `none` (a photo gets a plain answer). URL, model and
    key left unset are the chat backend's own, when it is an OpenAI-compatible server.

    `listed`: the models list ([personal] 3). With KINDRED_VISION_BACKEND unset (`none`), its first
    server model with `vision = true` that everyone may use sees the photos; KINDRED_VISION_* stays
    the shorthand for one vision model, and wins when set."""
    seer = _listed_seer(listed) if listed is not None and vision.vision_backend == "none" else None
    if seer is not None:
        assert seer.url is not None
        return _openai_vision(vision, seer.url, seer.model, _listed_key(seer))
    if vision.vision_backend == "none":
        return None
    url = vision.vision_url or inference.openai_base_url
    model = vision.vision_model or inference.openai_model
    if url is None or model is None:
        raise ConfigError(
            "KINDRED_VISION_BACKEND=openai needs KINDRED_VISION_URL (the base, ending in /v1) and "
            "KINDRED_VISION_MODEL, unless the chat itself runs on an OpenAI-compatible server "
            "(KINDRED_OPENAI_BASE_URL, KINDRED_OPENAI_MODEL) whose model sees images (docs/media.md)"
        )
    secret = vision.vision_api_key or (inference.openai_api_key if vision.vision_url is None else None)
    return _openai_vision(vision, url, model, secret.get_secret_value() if secret else None)


def _openai_vision(vision: VisionSettings, url: str, model: str, key: str | None) -> ImageDescriber:
    if importlib.util.find_spec("PIL") is None:
        # Not fatal: each photo is answered with the same advice (bot/media/images.py).
        log.warning("photos: the [media] extra is missing; pip install 'kindred[media]' to see them")
    from bot.media.images import ImageLimits
    from bot.media.vision.openai import OpenAIVision

    limits = ImageLimits(
        vision.image_max_bytes, int(vision.image_max_megapixels * 1e6), vision.image_max_side
    )
    return OpenAIVision(url, model=model, api_key=key, limits=limits, timeout_s=vision.vision_timeout_s)


def _listed_seer(listed: ModelBook) -> ChatModel | None:
    """The listed model that sees photos: one that everyone may use, since everyone sends them."""
    return next((m for m in listed.models if m.vision and m.backend == "openai" and m.who == EVERYONE), None)


def _listed_key(model: ChatModel) -> str | None:
    from bot.wiring.models import api_key

    try:
        return api_key(model)
    except InferenceError as exc:
        raise ConfigError(f"models.toml's vision model: {exc}") from None


def seeing(vision: VisionSettings) -> SeeingPolicy:
    return SeeingPolicy(vision.image_max_bytes)

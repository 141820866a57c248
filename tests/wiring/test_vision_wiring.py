"""Photos through the composition root: the settings pick the vision model (or none); URL, model
and key left unset are the chat backend's, and a key is never sent to a server it was not given
for; the secret is among those the log redacts."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from bot.core.chat_models import parse_models
from bot.core.errors import ConfigError
from bot.media.vision.openai import OpenAIVision
from bot.wiring.media.backends import load_vision, seeing
from bot.wiring.settings import InferenceSettings, Settings, VisionSettings, secret_values

CHAT_KEY = "sk-chat-vision-wiring-17"
VISION_KEY = "sk-vision-wiring-23"
CHAT = InferenceSettings(
    backend="openai", openai_base_url="http://127.0.0.1:11434/v1", openai_model="llava:7b",
    openai_api_key=SecretStr(CHAT_KEY),
)  # fmt: skip


def test_no_backend_is_the_default() -> None:
    assert load_vision(VisionSettings(), CHAT) is None


async def test_unset_url_model_and_key_are_the_chats() -> None:
    vision = load_vision(
        VisionSettings(vision_backend="openai", image_max_megapixels=12, image_max_side=800), CHAT
    )
    assert isinstance(vision, OpenAIVision)
    try:
        assert (vision.base_url, vision.model_name, vision._key) == (
            "http://127.0.0.1:11434/v1",
            "llava:7b",
            CHAT_KEY,
        )
        assert (vision.limits.max_pixels, vision.limits.max_side) == (12_000_000, 800)
    finally:
        await vision.close()


async def test_a_server_of_its_own_never_gets_the_chats_key() -> None:
    own = VisionSettings(vision_backend="openai", vision_url="http://127.0.0.1:9/v1", vision_model="qwen2-vl")
    vision = load_vision(own, CHAT)
    assert isinstance(vision, OpenAIVision)
    try:
        assert (vision.base_url, vision.model_name, vision._key) == (
            "http://127.0.0.1:9/v1",
            "qwen2-vl",
            None,
        )
    finally:
        await vision.close()


def test_without_a_server_to_use_the_start_says_what_to_set() -> None:
    with pytest.raises(ConfigError, match=r"KINDRED_VISION_URL .* and KINDRED_VISION_MODEL"):
        load_vision(VisionSettings(vision_backend="openai"), InferenceSettings(backend="local"))


def test_the_limits_and_the_secret() -> None:
    vision = VisionSettings(image_max_mb=3, vision_api_key=SecretStr(VISION_KEY))
    assert seeing(vision).max_bytes == 3 * 1024 * 1024
    assert VISION_KEY in secret_values(Settings(vision=vision))


LISTED_KEY = "sk-listed-vision-wiring-29"
LISTED = """
[[model]]
name = "small"
backend = "local"
model = "bundled"

[[model]]
name = "admins-eyes"
backend = "openai"
url = "http://127.0.0.1:7/v1"
model = "gpt-4o"
vision = true
who = "admins"

[[model]]
name = "eyes"
backend = "openai"
url = "http://127.0.0.1:8/v1"
model = "llava:13b"
api_key_env = "KINDRED_TEST_LISTED_VISION_KEY"
vision = true
"""


async def test_the_models_lists_seeing_model_for_everyone_sees_photos(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without KINDRED_VISION_BACKEND, the first listed model that sees and that everyone may use
    (not the admins' one: everyone sends photos) describes them, with its variable's key."""
    monkeypatch.setenv("KINDRED_TEST_LISTED_VISION_KEY", LISTED_KEY)
    vision = load_vision(VisionSettings(), CHAT, parse_models(LISTED))
    assert isinstance(vision, OpenAIVision)
    try:
        assert (vision.base_url, vision.model_name, vision._key) == (
            "http://127.0.0.1:8/v1",
            "llava:13b",
            LISTED_KEY,
        )
    finally:
        await vision.close()


async def test_kindred_vision_model_stays_the_shorthand_and_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    own = VisionSettings(vision_backend="openai", vision_url="http://127.0.0.1:9/v1", vision_model="qwen2-vl")
    vision = load_vision(own, CHAT, parse_models(LISTED))
    assert isinstance(vision, OpenAIVision)
    try:
        assert (vision.base_url, vision.model_name) == ("http://127.0.0.1:9/v1", "qwen2-vl")
    finally:
        await vision.close()
    assert (
        load_vision(VisionSettings(), CHAT, parse_models(LISTED.split('[[model]]\nname = "eyes"')[0])) is None
    )


def test_a_listed_seeing_model_without_its_key_stops_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KINDRED_TEST_LISTED_VISION_KEY", raising=False)
    with pytest.raises(ConfigError, match="KINDRED_TEST_LISTED_VISION_KEY, which is not set"):
        load_vision(VisionSettings(), CHAT, parse_models(LISTED))

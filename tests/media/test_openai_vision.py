"""The OpenAI-compatible vision backend against a loopback server that checks what it receives:
one image part with a decodable data: URL, the model's name, the caption beside it, and not a
byte of the photo's metadata. Every failure of the server is one clear line, the key never in it."""

from __future__ import annotations

import logging
import re

import pytest

from bot.core.errors import MediaError
from bot.core.media.models import MediaFile
from bot.media.images import NOT_IMAGE, ImageLimits
from bot.media.vision.openai import (
    BUSY,
    CANNOT_SEE,
    GARBLED,
    NO_CAPTION,
    REFUSED_KEY,
    SAID_NOTHING,
    TOO_SLOW,
    UNREACHABLE,
    OpenAIVision,
)
from tests.media import pictures
from tests.media.vision_server import FakeVision, seeing

KEY = "sk-vision-secret-0123456789"


async def test_the_model_sees_the_image_with_the_caption_and_describes_it() -> None:
    async with seeing("llava:13b") as (server, backend):
        seen = await backend.describe(MediaFile("image", pictures.photo("red")), "my new bike")
    [got] = server.received
    assert got.model == "llava:13b" and got.caption == "my new bike"
    assert (got.mime, got.format, got.width, got.height) == ("image/jpeg", "JPEG", 640, 480)
    assert seen.description == "A mostly red picture, 640 by 480 pixels." and (seen.width, seen.height) == (
        640,
        480,
    )


async def test_no_exif_gps_or_comment_leaves_the_machine() -> None:
    async with seeing() as (server, backend):
        await backend.describe(MediaFile("image", pictures.photo("green")), "")
    [got] = server.received
    assert got.exif == {} and pictures.GPS_IFD not in got.exif
    assert not {"exif", "comment", "icc_profile"} & set(got.info_keys)
    assert b"Phonemaker" not in got.raw and b"taken at home" not in got.raw
    assert got.caption == NO_CAPTION


async def test_a_large_photo_is_sent_scaled_down() -> None:
    async with seeing(limits=ImageLimits(max_side=512)) as (server, backend):
        seen = await backend.describe(MediaFile("image", pictures.photo("blue", (3000, 2000))), "")
    assert (server.received[0].width, server.received[0].height) == (512, 341) == (seen.width, seen.height)


async def test_a_file_that_is_not_an_image_never_reaches_the_server() -> None:
    async with seeing() as (server, backend):
        with pytest.raises(MediaError, match=re.escape(NOT_IMAGE)):
            await backend.describe(MediaFile("image", pictures.PDF, "holiday.jpg", "image/jpeg"), "")
    assert server.received == [] and server.refused == []


async def test_a_text_only_model_is_said_so() -> None:
    async with seeing(text_only=True) as (_, backend):
        with pytest.raises(MediaError) as raised:
            await backend.describe(MediaFile("image", pictures.png()), "")
    assert str(raised.value) == CANNOT_SEE


@pytest.mark.parametrize(
    ("failure", "line"),
    [
        ("500", "The vision service failed (HTTP 500), so I couldn't look at that image."),
        ("401", REFUSED_KEY),
        ("429", BUSY),
        ("garbage", GARBLED),
        ("no_choices", GARBLED),
        ("empty", SAID_NOTHING),
        ("stall", TOO_SLOW),
    ],
)
async def test_every_server_failure_is_one_clear_line(failure: str, line: str) -> None:
    async with seeing(timeout_s=0.5) as (server, backend):
        server.fail_next(failure)  # type: ignore[arg-type]
        with pytest.raises(MediaError) as raised:
            await backend.describe(MediaFile("image", pictures.png()), "")
    assert str(raised.value) == line


async def test_a_server_that_is_gone() -> None:
    server = await FakeVision().start()
    backend = OpenAIVision(server.base_url, model=server.model, timeout_s=2)
    await server.close()
    try:
        with pytest.raises(MediaError) as raised:
            await backend.describe(MediaFile("image", pictures.png()), "")
    finally:
        await backend.close()
    assert str(raised.value) == UNREACHABLE


async def test_the_key_is_sent_as_a_bearer_token_and_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    server = await FakeVision(api_key=KEY).start()
    good = OpenAIVision(server.base_url, model=server.model, api_key=KEY)
    wrong = OpenAIVision(server.base_url, model=server.model, api_key=KEY[::-1])
    try:
        await good.describe(MediaFile("image", pictures.png()), "")
        with caplog.at_level(logging.WARNING), pytest.raises(MediaError) as raised:
            await wrong.describe(MediaFile("image", pictures.png()), "")
    finally:
        await good.close()
        await wrong.close()
        await server.close()
    assert server.received[0].headers["Authorization"] == f"Bearer {KEY}"
    assert str(raised.value) == REFUSED_KEY
    assert "HTTP 401" in caplog.text and KEY[::-1] not in caplog.text and KEY[::-1] not in str(raised.value)

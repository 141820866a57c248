"""Images read by their content with Pillow (bot/media/images.py): made small, turned upright,
written anew with no metadata; every bad file one clear line, and a bomb refused before decoding."""

from __future__ import annotations

import io
import time

import pytest
from PIL import Image

from bot.core.errors import MediaError
from bot.media.images import DAMAGED, EMPTY, NOT_IMAGE, ImageLimits, prepare
from tests.media import pictures


def test_a_phone_photo_is_sent_as_a_jpeg_with_no_metadata_at_all() -> None:
    original = pictures.photo("red", (640, 480))
    with Image.open(io.BytesIO(original)) as before:
        assert pictures.GPS_IFD in before.getexif() and "comment" in before.info  # what it carried
    prepared = prepare(original, ImageLimits())
    assert prepared.mime == "image/jpeg" and (prepared.width, prepared.height) == (640, 480)
    with Image.open(io.BytesIO(prepared.data)) as after:
        assert dict(after.getexif()) == {}
        assert not {"exif", "comment", "icc_profile", "xmp"} & set(after.info)
    assert b"Exif" not in prepared.data and b"Phonemaker" not in prepared.data
    assert b"taken at home" not in prepared.data


def test_a_large_image_is_scaled_down_keeping_its_shape() -> None:
    prepared = prepare(pictures.photo("blue", (4000, 3000)), ImageLimits(max_side=1000))
    assert (prepared.width, prepared.height) == (1000, 750)


def test_the_exif_orientation_is_applied_before_it_is_dropped() -> None:
    image = Image.new("RGB", (400, 100), (200, 10, 10))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to show
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif.tobytes())
    prepared = prepare(out.getvalue(), ImageLimits())
    assert (prepared.width, prepared.height) == (100, 400)


def test_transparency_survives_as_a_png() -> None:
    prepared = prepare(pictures.png(alpha=True), ImageLimits())
    assert prepared.mime == "image/png"
    with Image.open(io.BytesIO(prepared.data)) as after:
        assert after.mode == "RGBA" and "exif" not in after.info


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"", EMPTY),
        (pictures.PDF, NOT_IMAGE),  # a PDF named holiday.jpg: the name is never read
        (b"GIF89a" + b"\x00" * 3, NOT_IMAGE),
        (b"\x89PNG\r\n\x1a\n" + b"\xff" * 40, NOT_IMAGE),
        (pictures.truncated(), DAMAGED),
        (b"%!PS-Adobe-3.0 EPSF-3.0\n", NOT_IMAGE),  # never handed to Ghostscript
    ],
    ids=["empty", "pdf", "gif-header-only", "png-garbage", "truncated-jpeg", "eps"],
)
def test_every_bad_file_is_one_clear_line(data: bytes, line: str) -> None:
    with pytest.raises(MediaError) as raised:
        prepare(data, ImageLimits())
    assert str(raised.value) == line


def test_a_decompression_bomb_is_refused_from_its_header_in_no_time() -> None:
    data = pictures.bomb()
    assert len(data) < 10_000
    started = time.perf_counter()
    # Past twice Pillow's own limit it refuses on opening; the line is ours either way.
    with pytest.raises(MediaError, match="far too large to open safely; I take up to 50 megapixels"):
        prepare(data, ImageLimits())
    assert time.perf_counter() - started < 0.5


def test_a_bomb_under_pillows_own_limit_is_refused_by_ours_naming_its_size() -> None:
    with pytest.raises(
        MediaError, match=r"10,000 × 10,000 pixels \(100 megapixels\); I take up to 50 megapixels"
    ):
        prepare(pictures.bomb(10_000), ImageLimits())


def test_a_file_over_the_byte_limit_is_refused_before_it_is_opened() -> None:
    with pytest.raises(MediaError, match="I take files up to 1 KB"):
        prepare(pictures.photo(), ImageLimits(max_bytes=1024))

"""Images as their content says they are, never as their name or type claims: read with Pillow,
checked, made small, and written anew so that nothing but the pixels leaves the machine.

`prepare` takes a file a person sent and returns what a vision model gets: a JPEG (a PNG where the
image has transparency) at most `max_side` pixels on its longest side, turned upright by its EXIF
orientation, and carrying no metadata at all (no EXIF, so no GPS position, camera or time; no
XMP, comments or ICC profile). The pixel count is read from the header and checked before any pixel
is decoded, so a decompression bomb (a small file that decodes to gigapixels) costs nothing.
Every way a file can be wrong is a MediaError whose one line a person may read.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.core.errors import MediaError, MediaUnsupported

if TYPE_CHECKING:
    from PIL.Image import Image

MEDIA_EXTRA = "an admin can install it with: pip install 'kindred[media]'"
NO_PILLOW = f"I can't see images here: the media extra is missing; {MEDIA_EXTRA}."
# What Pillow is allowed to open: the formats phones, browsers and chat apps send. Everything else
# (EPS, which would start Ghostscript; PSD; ICO; …) is refused unopened.
FORMATS = ("JPEG", "PNG", "GIF", "WEBP", "BMP", "TIFF")
JPEG_QUALITY = 85

EMPTY = "That file is empty, so there was nothing to see."
NOT_IMAGE = "That file isn't an image I can read (JPEG, PNG, GIF, WebP, BMP or TIFF)."
DAMAGED = "That image is damaged or cut short, so I couldn't see it."


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """The largest file (bytes) and image (pixels, from its header) looked at, and the longest
    side an image is sent at (larger ones are scaled down, keeping their shape)."""

    max_bytes: int = 20 * 1024 * 1024
    # A 48-megapixel phone photo fits; a 20,000 × 20,000 bomb does not.
    max_pixels: int = 50_000_000
    max_side: int = 1536


@dataclass(frozen=True, slots=True)
class PreparedImage:
    """One image, checked and written anew, ready for a vision model."""

    data: bytes
    mime: str
    width: int
    height: int

    @property
    def data_url(self) -> str:
        import base64

        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def prepare(data: bytes, limits: ImageLimits) -> PreparedImage:
    """Read `data` as an image and write it anew within the limits; raises MediaError with a line
    for the person (MediaUnsupported without Pillow)."""
    if not data:
        raise MediaError(EMPTY)
    if len(data) > limits.max_bytes:
        most = _megabytes(limits.max_bytes)
        raise MediaError(f"That image is {_megabytes(len(data))}; I take files up to {most}.")
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise MediaUnsupported(NO_PILLOW) from None
    with warnings.catch_warnings():
        # Pillow warns, then refuses, past its own pixel limit: ours is checked first, and lower.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data), formats=FORMATS)
        except Image.DecompressionBombError:
            raise MediaError(_too_many_pixels(None, limits)) from None
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError):
            raise MediaError(NOT_IMAGE) from None
        with image:
            width, height = image.size
            if width * height > limits.max_pixels:
                raise MediaError(_too_many_pixels((width, height), limits))
            if width < 1 or height < 1:
                raise MediaError(NOT_IMAGE)
            try:
                upright = _decoded(image, limits.max_side)
            except Image.DecompressionBombError:
                raise MediaError(_too_many_pixels(None, limits)) from None
            except (OSError, ValueError, SyntaxError, EOFError, IndexError):
                raise MediaError(DAMAGED) from None
    return _written(upright)


def _decoded(image: Image, max_side: int) -> Image:
    """The first frame, decoded whole (a truncated file fails here), upright and within `max_side`."""
    if image.format == "JPEG":
        # Decodes at 1/2, 1/4 or 1/8 scale where that still covers max_side: less memory and time.
        image.draft("RGB", (max_side, max_side))
    from PIL import ImageOps

    image.seek(0)
    image.load()
    upright = ImageOps.exif_transpose(image) or image
    upright = upright.copy() if upright is image else upright
    upright.thumbnail((max_side, max_side))
    return upright


def _written(image: Image) -> PreparedImage:
    """The pixels alone, as JPEG, or PNG where transparency must survive."""
    transparent = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    clean = image.convert("RGBA" if transparent else "RGB")
    # Nothing of the original file rides along: Pillow writes what `info` holds (ICC, comments).
    clean.info = {}
    out = io.BytesIO()
    if transparent:
        clean.save(out, format="PNG", optimize=True)
        mime = "image/png"
    else:
        clean.save(out, format="JPEG", quality=JPEG_QUALITY)
        mime = "image/jpeg"
    return PreparedImage(out.getvalue(), mime, clean.width, clean.height)


def _too_many_pixels(size: tuple[int, int] | None, limits: ImageLimits) -> str:
    most = f"I take up to {limits.max_pixels / 1e6:.0f} megapixels"
    if size is None:
        return f"That image is far too large to open safely; {most}. Nothing of it was read."
    width, height = size
    return f"That image is {width:,} × {height:,} pixels ({width * height / 1e6:,.0f} megapixels); {most}."


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"

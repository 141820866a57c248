"""Images made in the test, as people's phones and hostile senders make them: a JPEG carrying
EXIF with a GPS position and a camera, a PNG with transparency, a decompression bomb (a small file
whose header promises gigapixels), a truncated JPEG, and a PDF named like a photo."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image

from tests.media.vision_server import COLOURS

# EXIF tags: Make, Model, DateTimeOriginal (in the Exif IFD), the GPS IFD pointer.
MAKE, MODEL, GPS_IFD = 0x010F, 0x0110, 0x8825
# Where "home" is, in the GPS IFD (latitude 51° 30' 26", longitude 0° 7' 39").
GPS = {1: "N", 2: (51.0, 30.0, 26.0), 3: "W", 4: (0.0, 7.0, 39.0)}
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def photo(colour: str = "red", size: tuple[int, int] = (640, 480), *, gps: bool = True) -> bytes:
    """A JPEG as a phone writes one: EXIF with the camera, and a GPS position unless `gps` False;
    a comment, too."""
    image = Image.new("RGB", size, COLOURS[colour])
    exif = Image.Exif()
    exif[MAKE], exif[MODEL] = "Phonemaker", "Pocket 12"
    if gps:
        exif[GPS_IFD] = GPS
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif.tobytes(), comment=b"taken at home", quality=90)
    return out.getvalue()


def png(colour: str = "blue", size: tuple[int, int] = (300, 200), *, alpha: bool = False) -> bytes:
    r, g, b = COLOURS[colour]
    image = Image.new("RGBA" if alpha else "RGB", size, (r, g, b, 128) if alpha else (r, g, b))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def bomb(side: int = 60_000) -> bytes:
    """A PNG of `side` × `side` grey pixels (3.6 gigapixels by default) in a few kilobytes: one
    IHDR, then a deflate stream of zeros long enough for a few rows (it would decode on and on)."""
    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\0" * (side + 1) * 16, 9)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def truncated(data: bytes | None = None) -> bytes:
    """A JPEG cut off half way (a download that stopped)."""
    whole = data or photo("green", (800, 600))
    return whole[: len(whole) // 2]

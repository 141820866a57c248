"""Files from disk in the terminal chat (`/file PATH [CAPTION]`, `/image PATH [CAPTION]`): where
the path ends and the caption begins, and the file read within a limit."""

from __future__ import annotations

from pathlib import Path

# Enough of a file's start to tell an image from anything else.
HEAD_BYTES = 16
USAGE = "Usage: /file PATH [CAPTION], for example /file ~/voice-note.ogg, or /image ~/cat.jpg Look at him!"


def path_and_caption(argument: str) -> tuple[str, str]:
    """The file's path and the words after it; a path with spaces in it is taken whole."""
    if not argument or Path(argument).expanduser().exists():
        return argument, ""
    path, _, caption = argument.partition(" ")
    return path, caption.strip()


def read_within(argument: str, max_bytes: int) -> tuple[int, bytes, bytes]:
    """A file's size, its first bytes (what it is), and its bytes unless it is larger than
    `max_bytes` (then none are read)."""
    path = Path(argument).expanduser()
    size = path.stat().st_size
    with path.open("rb") as file:
        head = file.read(HEAD_BYTES)
    return size, head, path.read_bytes() if size <= max_bytes else b""

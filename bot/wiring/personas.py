"""The admin's personas file (`personas.toml` in the data directory, or KINDRED_PERSONAS_FILE),
watched as every admin file is (bot/wiring/watched_file.py). No file: `KINDRED_PERSONA` alone, as
before personas existed."""

from __future__ import annotations

from pathlib import Path

from bot.core.personas import PersonaBook, parse_personas
from bot.wiring.watched_file import WatchedFile


def personas_path(data_dir: Path, configured: Path | None) -> Path:
    return configured if configured is not None else data_dir / "personas.toml"


class PersonaFile:
    """A PersonaSource over one file, reloaded when it changes."""

    def __init__(self, path: Path, fallback: str) -> None:
        self.path = path
        self._file = WatchedFile(path, parse_personas, PersonaBook.single(fallback), "personas")

    def book(self) -> PersonaBook:
        return self._file.current()

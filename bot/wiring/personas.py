"""The admin's personas file (`personas.toml` in the data directory, or KINDRED_PERSONAS_FILE):
read whole at start, where a broken one stops the start with one line that names it, and read
again whenever its modification time changes, where a broken edit is refused and logged and the
personas that were good stay. No file: `KINDRED_PERSONA` alone, as before personas existed."""

from __future__ import annotations

from pathlib import Path

from bot.core.personas import PersonaBook, parse_personas
from bot.wiring.watched_file import WatchedFile


def personas_path(data_dir: Path, configured: Path | None) -> Path:
    return configured if configured is not None else data_dir / "personas.toml"


class PersonaFile(WatchedFile[PersonaBook]):
    """A PersonaSource over one file, reloaded when it changes."""

    def __init__(self, path: Path, fallback: str) -> None:
        super().__init__(path, parse_personas, PersonaBook.single(fallback), what="personas")

    def book(self) -> PersonaBook:
        return self.current()

"""The admin's personas file (`personas.toml` in the data directory, or KINDRED_PERSONAS_FILE):
read whole at start, where a broken one stops the start with one line that names it, and read
again whenever its modification time changes, where a broken edit is refused and logged and the
personas that were good stay. No file: `KINDRED_PERSONA` alone, as before personas existed."""

from __future__ import annotations

import logging
from pathlib import Path

from bot.core.errors import ConfigError
from bot.core.personas import PersonaBook, parse_personas

log = logging.getLogger(__name__)

# (modification time in ns, size): what says the file changed. None: no file.
Stamp = tuple[int, int] | None


def personas_path(data_dir: Path, configured: Path | None) -> Path:
    return configured if configured is not None else data_dir / "personas.toml"


class PersonaFile:
    """A PersonaSource over one file, reloaded when it changes."""

    def __init__(self, path: Path, fallback: str) -> None:
        self.path = path
        self._fallback = PersonaBook.single(fallback)
        self._stamp, self._book = self._read()  # raises ConfigError: the start stops

    def book(self) -> PersonaBook:
        try:
            stamp = _stamp(self.path)
        except OSError as exc:
            log.error("personas: cannot read %s (%s); the personas loaded before stay", self.path, exc)
            return self._book
        if stamp != self._stamp:
            try:
                self._stamp, self._book = self._read()
                log.info("personas: %s reloaded (%s)", self.path, ", ".join(self._book.names))
            except ConfigError as exc:
                # Remember the broken stamp: the same broken edit is logged once, not per message.
                self._stamp = stamp
                log.error("personas: the edit is refused, the personas loaded before stay: %s", exc)
        return self._book

    def _read(self) -> tuple[Stamp, PersonaBook]:
        """The file's stamp and personas, read in one piece. A file that changed while it was
        read (an editor still writing) is refused: the next look reads it whole."""
        try:
            before = _stamp(self.path)
            if before is None:
                return None, self._fallback
            text = self.path.read_text(encoding="utf-8")
            after = _stamp(self.path)
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{self.path}: cannot be read ({exc})") from None
        if after != before:
            raise ConfigError(f"{self.path}: it changed while it was read")
        return before, parse_personas(text, str(self.path))


def _stamp(path: Path) -> Stamp:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return found.st_mtime_ns, found.st_size

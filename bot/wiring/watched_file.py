"""An admin's TOML file in the data directory (personas.toml, models.toml): read whole at start,
where a broken one stops the start with one line that names it, and read again whenever its
modification time changes, where a broken edit is refused and logged and what was good stays.
No file: the fallback, as before such files existed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from bot.core.errors import ConfigError

log = logging.getLogger(__name__)
T = TypeVar("T")

# (modification time in ns, size): what says the file changed. None: no file.
Stamp = tuple[int, int] | None


class WatchedFile(Generic[T]):
    """What one file says, parsed by `parse(text, where)`, reloaded when the file changes."""

    def __init__(self, path: Path, parse: Callable[[str, str], T], fallback: T, *, what: str) -> None:
        self.path = path
        self._parse = parse
        self._fallback = fallback
        self._what = what
        self._stamp, self._value = self._read()  # raises ConfigError: the start stops

    def current(self) -> T:
        try:
            stamp = _stamp(self.path)
        except OSError as exc:
            log.error(
                "%s: cannot read %s (%s); the %s loaded before stay", self._what, self.path, exc, self._what
            )
            return self._value
        if stamp != self._stamp:
            try:
                self._stamp, self._value = self._read()
                log.info("%s: %s reloaded", self._what, self.path)
            except ConfigError as exc:
                # Remember the broken stamp: the same broken edit is logged once, not per message.
                self._stamp = stamp
                log.error(
                    "%s: the edit is refused, the %s loaded before stay: %s", self._what, self._what, exc
                )
        return self._value

    def _read(self) -> tuple[Stamp, T]:
        """The file's stamp and contents, read in one piece. A file that changed while it was
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
        return before, self._parse(text, str(self.path))


def _stamp(path: Path) -> Stamp:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return found.st_mtime_ns, found.st_size

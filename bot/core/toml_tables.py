"""What the admin's TOML lists share (personas.toml, models.toml): the document read with tomllib
(its own message, line and column, for a syntax error), its `[[what]]` tables, names used once,
and the `default` that names one of them."""

from __future__ import annotations

import tomllib
from typing import Any

from bot.core.errors import ConfigError


def read_tables(
    text: str, where: str, what: str, *, most: int, needs: str
) -> tuple[dict[str, Any], list[Any]]:
    """The document and its `[[what]]` tables, at least one and at most `most`. Raises
    ConfigError with one line that names `where`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    entries = data.get(what)
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{where}: no {what}s; each one is a [[{what}]] table with {needs}")
    if len(entries) > most:
        raise ConfigError(f"{where}: {len(entries)} {what}s; at most {most} fit a picker")
    return data, entries


def named_default(data: dict[str, Any], names: list[str], where: str, what: str) -> str:
    """The `default` name (unset: the first), once each name is known to be used once."""
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ConfigError(f"{where}: the {what} name {twice[0]!r} is used twice")
    default = data.get("default", names[0])
    if not isinstance(default, str) or default.strip().lower() not in names:
        raise ConfigError(f"{where}: default = {default!r} names no {what}; there are {', '.join(names)}")
    return default.strip().lower()


def text_field(entry: dict[str, Any], key: str, place: str, limit: int) -> str | None:
    """A string field, stripped; None when absent or empty."""
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{place}: {key} must be a string")
    value = value.strip()
    if len(value) > limit:
        raise ConfigError(f"{place}: {key} is over {limit} characters")
    return value or None

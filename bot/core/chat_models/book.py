"""The admin's models, read from TOML text (`models.toml`): for each, the word /model takes, where
it runs (a local model, or an OpenAI-compatible server whose key is named by an environment
variable, never written here), whether it sees images, its context size, its prices per 1M tokens,
and who may use it.

Pure data: reading the file, the environment and the servers is the composition root's business.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.core.errors import ConfigError
from bot.core.toml_tables import named_default, read_tables, text_field

# A name is typed after /model, offered as a Discord choice (at most 25) and carried in a Telegram
# button's data (64 bytes): one short word, as a persona's.
NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,31}")
# A person as Kindred names them everywhere: `telegram:42`, `discord:1234`.
PERSON = re.compile(r"[a-z][a-z0-9-]*:[^\s,]{1,64}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
MAX_MODELS = 25
MAX_CONTEXT = 10_000_000
_FIELDS = {
    "name",
    "backend",
    "model",
    "url",
    "api_key_env",
    "vision",
    "context",
    "price_in",
    "price_out",
    "who",
    "best_of",
}
_TOP = {"currency", "default", "model"}

Backend = Literal["local", "openai"]
EVERYONE = "everyone"
ADMINS = "admins"


@dataclass(frozen=True, slots=True)
class ChatModel:
    name: str
    backend: Backend
    # local: "bundled", a directory or a Hugging Face id; openai: the served model's name.
    model: str
    # openai: the API's base, ending in /v1.
    url: str | None = None
    # openai: the environment variable that holds the key (its name only); None: no key.
    api_key_env: str | None = None
    vision: bool = False
    # Tokens the model attends to; None: the backend's own (a local model's config, else 2048).
    context: int | None = None
    # Per 1M tokens in and out, in the list's currency; None: no price given.
    price_in: float | None = None
    price_out: float | None = None
    # "everyone", "admins", or the people (platform-qualified ids) who may choose it.
    who: str | tuple[str, ...] = EVERYONE
    # The serving reward model chooses among this model's sampled replies too (best-of-n), as it
    # does the base model's; off unless the admin says so. No adapter serves it, nor a canary.
    best_of: bool = False

    def may_use(self, user_id: str, *, admin: bool) -> bool:
        """Admins may use every model; a list names the others who may."""
        if self.who == EVERYONE or admin:
            return True
        return self.who != ADMINS and user_id in self.who


@dataclass(frozen=True, slots=True)
class ModelBook:
    """Every model, in the file's order, and the one a chat has until someone picks. Empty: no
    file, and the configured model (KINDRED_MODEL …) answers everywhere."""

    models: tuple[ChatModel, ...] = ()
    default: str | None = None
    currency: str = ""

    def find(self, name: str) -> ChatModel | None:
        wanted = name.strip().lower()
        return next((m for m in self.models if m.name == wanted), None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.models)

    @property
    def default_model(self) -> ChatModel | None:
        return self.find(self.default) if self.default else None

    def usable(self, user_id: str, *, admin: bool) -> tuple[ChatModel, ...]:
        return tuple(m for m in self.models if m.may_use(user_id, admin=admin))

    def price(self, name: str) -> tuple[float, float] | None:
        """(in, out) per 1M tokens, in `currency`; None: an unknown model, or one without prices."""
        found = self.find(name)
        if found is None or found.price_in is None or found.price_out is None:
            return None
        return found.price_in, found.price_out


def parse_models(text: str, where: str = "models.toml") -> ModelBook:
    """The models in `text`. Raises ConfigError with one line that names `where` and what is
    wrong: tomllib's message (with its line and column) for a syntax error, else the model."""
    data, entries = read_tables(text, where, "model", most=MAX_MODELS, needs="a name, backend and model")
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: currency, default, [[model]])")
    models = tuple(_model(entry, number, where) for number, entry in enumerate(entries, 1))
    default = named_default(data, [m.name for m in models], where, "model")
    chosen = next(m for m in models if m.name == default)
    if chosen.who != EVERYONE:
        raise ConfigError(f'{where}: the default model {default!r} must be for everyone (who = "everyone")')
    currency = data.get("currency", "")
    if not isinstance(currency, str) or len(currency.strip()) > 16:
        raise ConfigError(f'{where}: currency must be a short string, such as "USD"')
    currency = currency.strip()
    if not currency and any(m.price_in is not None for m in models):
        raise ConfigError(f'{where}: prices are given, so say their currency (currency = "USD")')
    return ModelBook(models, default, currency)


def _model(entry: Any, number: int, where: str) -> ChatModel:
    place = f"{where}: model {number}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{place} is not a table")
    if "api_key" in entry:
        raise ConfigError(
            f"{place}: a key is never written in this file; name the environment variable that holds it "
            '(api_key_env = "OPENAI_API_KEY")'
        )
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise ConfigError(f"{place} has an unknown key {unknown[0]!r} (known: {', '.join(sorted(_FIELDS))})")
    name = _text(entry, "name", place)
    if name is None or not NAME.fullmatch(name):
        raise ConfigError(
            f"{place}: name must be one lower-case word (a-z, 0-9, '.', '-', '_'), up to 32 characters"
        )
    place = f"{where}: model {name!r}"
    written = _text(entry, "backend", place)
    if written != "local" and written != "openai":
        raise ConfigError(f'{place}: backend must be "local" or "openai", not {written!r}')
    backend: Backend = "local" if written == "local" else "openai"
    model = _text(entry, "model", place)
    if not model:
        raise ConfigError(f"{place} has no model (a Hugging Face id or folder, or the served model's name)")
    url, key = _text(entry, "url", place), _text(entry, "api_key_env", place)
    if backend == "openai" and not (url and url.startswith(("http://", "https://"))):
        raise ConfigError(f'{place}: an openai model needs url = "http(s)://…/v1"')
    if backend == "local" and (url or key):
        raise ConfigError(f"{place}: a local model takes no url or api_key_env")
    if key is not None and not ENV_NAME.fullmatch(key):
        raise ConfigError(f"{place}: api_key_env must be an environment variable's name")
    price_in, price_out = _price(entry, "price_in", place), _price(entry, "price_out", place)
    if (price_in is None) != (price_out is None):
        raise ConfigError(f"{place}: give both price_in and price_out (per 1M tokens), or neither")
    return ChatModel(
        name, backend, model, url, key, _flag(entry, "vision", place), _context(entry, place),
        price_in, price_out, _who(entry.get("who", EVERYONE), place), _flag(entry, "best_of", place),
    )  # fmt: skip


def _text(entry: dict[str, Any], key: str, place: str) -> str | None:
    return text_field(entry, key, place, 500)


def _flag(entry: dict[str, Any], key: str, place: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{place}: {key} must be true or false")
    return value


def _context(entry: dict[str, Any], place: str) -> int | None:
    value = entry.get("context")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 256 <= value <= MAX_CONTEXT:
        raise ConfigError(f"{place}: context must be a whole number of tokens, 256 or more")
    return value


def _price(entry: dict[str, Any], key: str, place: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{place}: {key} must be a number, 0 or more (per 1M tokens)")
    return float(value)


def _who(value: Any, place: str) -> str | tuple[str, ...]:
    if value in (EVERYONE, ADMINS):
        return str(value)
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) and PERSON.fullmatch(v.strip()) for v in value)
    ):
        return tuple(v.strip() for v in value)
    raise ConfigError(
        f'{place}: who must be "everyone", "admins" or a list of people such as ["telegram:123"]'
    )

"""What every settings section shares: how it reads the environment, and its small checks."""

from __future__ import annotations

from pydantic import AliasChoices
from pydantic_settings import SettingsConfigDict

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def section_config(prefix: str = "KINDRED_") -> SettingsConfigDict:
    # env_file stays off unless load_settings passes one: a test never reads a stray `.env`.
    # No populate_by_name: it would also read prefix + field name for a field that names its own
    # variable (KINDRED_BACKEND beside KINDRED_INFERENCE_BACKEND). Such a field is built by that name.
    return SettingsConfigDict(env_prefix=prefix, env_file=None, env_file_encoding="utf-8", extra="ignore")


def env_names(*names: str) -> AliasChoices:
    return AliasChoices(*names)


def http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value

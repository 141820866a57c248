"""Logging set up once in main(). Secrets never reach a log line, even inside a library's message.

python-telegram-bot puts the bot token in every request URL, and httpx logs request URLs; a
traceback can quote them too. The redaction works on the formatted line, so it covers all of that.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

REDACTED = "***"


class RedactingFormatter(logging.Formatter):
    def __init__(self, inner: logging.Formatter, secrets: Iterable[str]) -> None:
        super().__init__()
        self.inner = inner
        self.secrets = redaction_order(secrets)

    def format(self, record: logging.LogRecord) -> str:
        return redact(self.inner.format(record), self.secrets)


def redaction_order(secrets: Iterable[str]) -> list[str]:
    """Longest first, so a secret that contains another is replaced whole. Very short values are
    left out: replacing "" or "a" everywhere would shred the line and hide nothing."""
    return sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)


def redact(text: str, ordered_secrets: Iterable[str]) -> str:
    """`text` with every secret (from `redaction_order`) replaced by ***."""
    for secret in ordered_secrets:
        text = text.replace(secret, REDACTED)
    return text


def setup_logging(level: str, secrets: Iterable[str]) -> None:
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    secrets = list(secrets)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(RedactingFormatter(handler.formatter or logging.Formatter(), secrets))
    if level != "DEBUG":
        # One line per HTTP request is noise at INFO; the bot's own lines say what happened.
        logging.getLogger("httpx").setLevel(logging.WARNING)

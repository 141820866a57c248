"""Secrets never reach a log line: the redaction works on the formatted line, tracebacks included."""

from __future__ import annotations

import io
import logging

from bot.adapters.telegram.secret import derived_webhook_secret
from bot.cli.logs import REDACTED, RedactingFormatter
from bot.wiring.settings import InferenceSettings, Settings, StoreSettings, TelegramSettings, secret_values

TOKEN = "123456:AAH-super-secret-token"


def format_with(secrets: list[str], record: logging.LogRecord) -> str:
    return RedactingFormatter(logging.Formatter("%(message)s"), secrets).format(record)


def test_a_secret_inside_a_message_and_a_traceback_is_replaced() -> None:
    try:
        raise RuntimeError(f"POST https://api.telegram.org/bot{TOKEN}/getMe failed")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "calling %s", (TOKEN,), None)
        import sys

        record.exc_info = sys.exc_info()
    line = format_with([TOKEN], record)
    assert TOKEN not in line and line.count(REDACTED) == 2


def test_short_values_are_not_treated_as_secrets() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "a b c", (), None)
    assert format_with(["a", "b"], record) == "a b c"


def test_every_configured_secret_is_redacted_including_the_derived_webhook_secret() -> None:
    settings = Settings(
        telegram=TelegramSettings(TELEGRAM_BOT_TOKEN=TOKEN),
        store=StoreSettings(DATABASE_URL="postgresql://kindred:db-password-1@localhost/kindred"),
        inference=InferenceSettings(openai_api_key="sk-openai-secret"),
    )
    secrets = secret_values(settings)
    for value in (TOKEN, "db-password-1", "sk-openai-secret", derived_webhook_secret(TOKEN)):
        assert value in secrets


def test_setup_logging_redacts_on_the_root_handlers() -> None:
    from bot.cli.logs import setup_logging

    root = logging.getLogger()
    saved = root.handlers[:]
    stream = io.StringIO()
    root.handlers = [logging.StreamHandler(stream)]
    try:
        setup_logging("INFO", [TOKEN])
        logging.getLogger("telegram.ext").warning("token is %s", TOKEN)
    finally:
        root.handlers = saved
    assert TOKEN not in stream.getvalue() and REDACTED in stream.getvalue()

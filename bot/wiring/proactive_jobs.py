"""`kindred.proactive.beat` (the `default` queue): one beat of the proactive check-ins.

Beat sends it every few minutes (KINDRED_PROACTIVE_CRON); without a broker, `kindred run` runs it
in-process. Payload: {} or {"now": ISO time} (a test's simulated clock). The job takes the
store and the messengers of the configured platforms (python-telegram-bot's `Bot`, discord.py's
HTTP client), which connect only when there is something to send. The embedder, needed to store a
sent message as a turn, is loaded by the first message; no language model is used at all.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from bot.core.chat.ports import Messenger
from bot.core.errors import JobError
from bot.core.jobs import JobPayload, JobRegistry
from bot.core.proactive.beat import ProactiveBeat
from bot.wiring.job_store import StoreAccess
from bot.wiring.memory_jobs import Models
from bot.wiring.settings import Settings

BEAT_JOB = "kindred.proactive.beat"


def _tokens(settings: Settings) -> dict[str, str]:
    """Each chat platform with a token here, and its token."""
    given = {"telegram": settings.telegram.bot_token, "discord": settings.discord.bot_token}
    return {
        name: token.get_secret_value()
        for name, token in given.items()
        if token and token.get_secret_value().strip()
    }


def reachable(settings: Settings) -> Callable[[str], bool]:
    """Whether beat can write to a person: their platform (their id's prefix) has a token here."""
    platforms = frozenset(_tokens(settings))
    return lambda user_id: user_id.partition(":")[0] in platforms


def messengers(settings: Settings) -> dict[str, Messenger]:
    """One messenger per platform with a token; none for the terminal (it has nobody to write to)."""
    found: dict[str, Messenger] = {}
    tokens = _tokens(settings)
    if "telegram" in tokens:
        from bot.adapters.telegram.adapter import TelegramConfig
        from bot.adapters.telegram.messenger import TelegramMessenger

        config = TelegramConfig(token=tokens["telegram"], api_base_url=settings.telegram.api_base_url)
        found["telegram"] = TelegramMessenger(config.token, *config.base_urls)
    if "discord" in tokens:
        from bot.adapters.discord.messenger import DiscordMessenger

        found["discord"] = DiscordMessenger(tokens["discord"])
    return found


def beat_time(payload: JobPayload) -> datetime:
    """The beat's moment: now, or the payload's `now` (an aware ISO time) for a simulated clock."""
    given = payload.get("now")
    if given is None:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(str(given))
    except ValueError:
        raise JobError(f"{BEAT_JOB}: now must be an ISO time, not {given!r}") from None
    if moment.tzinfo is None:
        raise JobError(f"{BEAT_JOB}: now must carry its UTC offset")
    return moment.astimezone(UTC)


def add_proactive_jobs(
    registry: JobRegistry,
    settings: Settings,
    stores: StoreAccess,
    models: Models,
    *,
    reach: Callable[[Settings], dict[str, Messenger]] = messengers,
) -> None:
    """Register the beat job. `reach`: the messengers, per platform (a test points them at fakes)."""

    @registry.job(BEAT_JOB, soft_s=240, hard_s=300, retries=1, retry_delay_s=30)
    async def beat(payload: JobPayload) -> JobPayload:
        now = beat_time(payload)
        async with stores() as store:
            found = reach(settings)
            try:
                report = await ProactiveBeat(store, found, models.embedder.get).run(now)
            finally:
                for messenger in found.values():
                    await messenger.close()
        return report.as_payload()

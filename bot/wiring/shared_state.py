"""Where replicas share their state: Redis (KINDRED_SHARED_STATE_URL, else REDIS_URL), or this
process alone. Both give the same three ports, so nothing past here knows which."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.core.chat.ports import Buckets, Intake
from bot.core.usage.ports import Holds
from bot.shared_state.local_buckets import LocalBuckets
from bot.shared_state.local_holds import LocalHolds
from bot.shared_state.local_intake import LocalIntake
from bot.wiring.settings import Settings


@dataclass(frozen=True)
class SharedState:
    intake: Intake
    buckets: Buckets
    # Room held for the replies in flight, that budgets count ([personal] 1).
    holds: Holds
    close: Callable[[], Awaitable[None]]
    where: str  # "redis" or "local", for the log and /healthz

    @staticmethod
    def local() -> SharedState:
        async def nothing() -> None:
            pass

        return SharedState(LocalIntake(), LocalBuckets(), LocalHolds(), nothing, "local")


def open_shared_state(settings: Settings) -> SharedState:
    """The shared state, not yet connected: Redis is first asked by the first update, so a Redis
    that is still starting delays no start-up (an update meanwhile is answered 503 and sent again)."""
    url = settings.shared_state_url
    if url is None:
        return SharedState.local()
    from bot.shared_state.connection import connect
    from bot.shared_state.redis_buckets import RedisBuckets
    from bot.shared_state.redis_holds import RedisHolds
    from bot.shared_state.redis_intake import RedisIntake

    client = connect(url)
    intake = RedisIntake(client, lease_s=settings.shared.lease_s)

    async def close() -> None:
        await intake.close()
        await client.aclose()

    return SharedState(intake, RedisBuckets(client), RedisHolds(client), close, "redis")

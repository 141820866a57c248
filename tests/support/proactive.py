"""What the proactive wiring tests share: people built on a real store, on a simulated clock."""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.core.models import NewTurn
from bot.core.proactive.models import ProactiveSettings
from bot.core.store import Store
from tests.support.fakes import HashEmbedder


async def working_for_hours(store: Store, person: str, hours: float, end: datetime) -> None:
    """`person` writing every 10 minutes for `hours`, up to `end`, in their private chat: a long
    session."""
    embedder = HashEmbedder()
    steps = int(hours * 6)
    for step in range(steps + 1):
        at = end - timedelta(minutes=10 * (steps - step))
        text = f"still on the report, part {step}"
        await store.turns.add_turn(
            NewTurn(person, person, "user", text, embedder.vector(text), embedder.model_name, at)
        )


async def opt_in(store: Store, person: str, at: datetime, timezone: str = "Europe/Berlin") -> None:
    settings = ProactiveSettings(enabled=True, timezone=timezone)
    await store.proactive.save_proactive_settings(person, settings, at)

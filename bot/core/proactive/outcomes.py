"""How a person took a proactive message: what the conversation asks when they write or react.

- A positive reaction to the message, a "yes", or any reply within the reply window (2 h) that is
  no decline: accepted, and one `proactive_success` signal (γ) on the message's turn.
- A decline ("no thanks", "not now", 👎): dismissed; a declined habit is never offered again.
- "Don't suggest this again" (in reply): dismissed, and that trigger is off for the person.
Each message gets one outcome, the first; later replies and reactions change nothing. "Remind me
…" messages are answered here too, instead of the model: they are commands in plain words.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from bot.core.errors import StoreUnavailable
from bot.core.learning import record_proactive_success
from bot.core.proactive.commands import ProactiveCommands
from bot.core.proactive.models import LedgerRow, SentRecord
from bot.core.proactive.policy import DEFAULT, ProactivePolicy
from bot.core.proactive.reminder_text import is_reminder_request
from bot.core.proactive.replies import is_dont_suggest_again, outcome
from bot.core.store import Store

log = logging.getLogger(__name__)
HABIT = "habit"
NOT_MINE = "That button belongs to a message I can't match to you any more; /proactive has every setting."


class ProactiveReplies:
    def __init__(
        self,
        store: Store,
        *,
        policy: ProactivePolicy = DEFAULT,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        reachable: Callable[[str], bool] = lambda user_id: True,
    ) -> None:
        self.store = store
        self.policy = policy
        self._clock = clock
        self.commands = ProactiveCommands(store.proactive, policy=policy, clock=clock, reachable=reachable)

    async def on_message(self, user_id: str, chat_id: str, text: str, at: datetime) -> str | None:
        """After the person's turn is stored: the answer to give instead of the model's (a reminder
        request, a "don't suggest this again"), or None. Never fails the message."""
        try:
            if is_reminder_request(text):
                return await self.commands.remind(user_id, chat_id, text)
            row = await self.store.proactive.awaiting_outcome(user_id, chat_id, at - self.policy.reply_window)
            if row is None or row.sent_at is None:
                return None
            if is_dont_suggest_again(text):
                await self._dismiss(row, at)
                return await self.commands.never_again(user_id, row.trigger)
            verdict = outcome(SentRecord(row.key, row.trigger, row.sent_at), text, at, self.policy)
            if verdict is True:
                await self._accept(row, at)
            elif verdict is False:
                await self._dismiss(row, at)
        except StoreUnavailable as exc:
            log.warning("proactive: a reply's outcome was not recorded: %s", exc)
        return None

    async def never_again_on(self, platform: str, chat_id: str, message_id: str, user_id: str) -> str:
        """The "don't suggest this again" button under a proactive message: that message is
        dismissed and its trigger is off for the person who pressed (only its own person may)."""
        link = await self.store.turns.find_message(platform, chat_id, message_id)
        row = None if link is None else await self.store.proactive.ledger_row(link.turn_id)
        if row is None or row.user_id != user_id:
            return NOT_MINE
        await self._dismiss(row, self._clock())
        return await self.commands.never_again(user_id, row.trigger)

    async def on_reaction(self, turn_id: int, value: float, at: datetime) -> None:
        """A reaction on a stored turn: if it is a proactive message, its outcome."""
        try:
            row = await self.store.proactive.ledger_row(turn_id)
            if row is None or row.status != "sent":
                return
            if value > 0:
                await self._accept(row, at)
            elif value < 0:
                await self._dismiss(row, at)
        except StoreUnavailable as exc:
            log.warning("proactive: a reaction's outcome was not recorded: %s", exc)

    async def _accept(self, row: LedgerRow, at: datetime) -> None:
        if await self.store.proactive.record_outcome(row.key, "accepted", at) and row.turn_id is not None:
            # Keyed by the message: however often it is accepted again, γ counts once.
            await record_proactive_success(self.store.rewards, row.turn_id, f"proactive:{row.key}", at)

    async def _dismiss(self, row: LedgerRow, at: datetime) -> None:
        if not await self.store.proactive.record_outcome(row.key, "dismissed", at) or row.trigger != HABIT:
            return
        settings = await self.store.proactive.proactive_settings(row.user_id)
        declined = replace(settings, declined=settings.declined | {row.key})
        await self.store.proactive.save_proactive_settings(row.user_id, declined, at)

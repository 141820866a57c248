"""A conversation under budgets, as `bot.wiring.kindred.build` wires one, for the budget tests:
the real core and store, holds in this process or shared through Redis, the budgets given as
TOML text (parsed as budgets.toml is)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bot.core.chat.access import Access
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.ports import Inference
from bot.core.events import Refusal, ReplyDone, ReplyEvent, UserMessage
from bot.core.store import Store
from bot.core.usage import (
    Allowance,
    BudgetBook,
    Holds,
    Prices,
    parse_budgets,
    store_meter,
)
from bot.shared_state.local_holds import LocalHolds
from tests.support.fakes import HashEmbedder


class Budgets:
    def __init__(self, text: str) -> None:
        self.book = parse_budgets(text)

    def budgets(self) -> BudgetBook:
        return self.book


def under_budgets(store: Store, budgets: str | None) -> dict[str, Any]:
    """A Conversation's meter and allowance under these budgets, holds in this process; {}: none."""
    if budgets is None:
        return {}
    meter = store_meter(store)
    return {"meter": meter, "allowance": Allowance(store.usage, LocalHolds(), Budgets(budgets), meter)}


def policy(max_new_tokens: int) -> ConversationPolicy:
    return ConversationPolicy(
        persona="You are Kindred.", recent_turns=0, max_new_tokens=max_new_tokens, base_model="smol"
    )


def budgeted(
    store: Store,
    holds: Holds,
    budgets: str,
    inference: Inference,
    *,
    access: Access | None = None,
    prices: Prices | None = None,
    max_new_tokens: int = 100,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Conversation:
    meter = store_meter(store, prices, clock)
    return Conversation(
        store,
        HashEmbedder(),
        inference,
        policy(max_new_tokens),
        clock=clock,
        meter=meter,
        allowance=Allowance(store.usage, holds, Budgets(budgets), meter, clock=clock),
        access=access,
    )


async def said(
    conversation: Conversation, user: str, chat: str, text: str, key: str, *, private: bool = True,
    places: tuple[str, ...] = (),
) -> ReplyDone | Refusal:  # fmt: skip
    """The last event of the answer to one message: the reply, or the refusal."""
    message = UserMessage(user, chat, text, datetime.now(UTC), key, private, places=places)
    events: list[ReplyEvent] = [event async for event in conversation.handle_message(message)]
    last = events[-1]
    assert isinstance(last, ReplyDone | Refusal), last
    return last

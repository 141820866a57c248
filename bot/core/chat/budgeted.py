"""A reply within its budgets: before the model writes, room is held for the most the reply can
use (every sample reads the whole prompt and writes up to the token limit), where a budget
applies to the person or their group chat ([personal] 1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.core.chat.access import Access
from bot.core.chat.writing import ReplyWriter
from bot.core.events import UserMessage
from bot.core.models import ChatMessage
from bot.core.usage import Allowance, Held, OutOfBudget

if TYPE_CHECKING:
    from bot.core.chat.conversation import ConversationPolicy


class ReplyRoom:
    def __init__(
        self,
        allowance: Allowance | None,
        access: Access,
        policy: ConversationPolicy,
    ) -> None:
        self.allowance = allowance
        self.access = access
        self._policy = policy

    async def hold(
        self,
        message: UserMessage,
        group: str | None,
        messages: Sequence[ChatMessage],
        samples: int,
        writer: ReplyWriter,
    ) -> Held | OutOfBudget:
        """`writer`: the chat's model, whose tokenizer counts the prompt and whose price holds."""
        if self.allowance is None:
            return Held()
        tier = self.access.tier(message.user_id, *message.places)
        count = writer.inference.count_tokens
        read = sum(count(m.content) for m in messages) * max(1, samples)
        written = self._policy.max_new_tokens * max(1, samples)
        return await self.allowance.reserve(message.user_id, tier, group, writer.base_model, read, written)

    async def release(self, held: Held | OutOfBudget) -> None:
        """Give the room back (again is harmless)."""
        if self.allowance is not None and isinstance(held, Held):
            await self.allowance.release(held)

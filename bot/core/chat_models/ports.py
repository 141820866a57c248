"""The models room's boundaries: where each chat's choice is kept, where the admin's list comes
from (a file that may change while Kindred runs), and what builds a listed model's Inference."""

from __future__ import annotations

from typing import Protocol

from bot.core.chat.ports import Inference
from bot.core.chat_models.book import ChatModel, ModelBook


class ModelChoices(Protocol):
    """Each chat's model, as someone picked it (none picked: the persona's, else the default)."""

    async def choose(self, chat_id: str, model: str, owner: str | None) -> None:
        """Keep `model` for the chat, replacing an earlier choice. `owner`: the person whose
        private chat it is (forgotten with them); None in a group."""
        ...

    async def chosen(self, chat_id: str) -> str | None:
        """The name picked for the chat, or None."""
        ...

    async def chosen_by(self, owner: str) -> list[tuple[str, str]]:
        """(chat, model) of each private chat of `owner` that has a choice."""
        ...


class ModelSource(Protocol):
    """The admin's models as they are now. Never raises: a list that cannot be read now leaves
    the last good one in place."""

    def book(self) -> ModelBook: ...


class ModelBackends(Protocol):
    """Each listed model's Inference, built on first use and kept."""

    async def inference(self, model: ChatModel) -> Inference:
        """The model's Inference. Raises InferenceError (with a reason that never holds a key)
        when it cannot be built: its key's variable unset, its files missing."""
        ...

    def is_configured(self, model: ChatModel) -> bool:
        """Whether `model` is the configured one (KINDRED_MODEL …): the base the learned adapters
        were trained on, already loaded."""
        ...

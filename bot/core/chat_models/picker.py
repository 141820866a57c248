"""/model: the models a person may use, each chat's choice, and the model a reply comes from.

The order a reply's model is found in: the chat's /model choice, then the persona's default
model, then the list's default; each only where the person writing may use it. In a group only
its admins pick (the platform says who they are: the adapter passes `may_change`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.core.chat.ports import Inference
from bot.core.chat_models.book import ChatModel
from bot.core.chat_models.ports import ModelBackends, ModelChoices, ModelSource
from bot.core.errors import StoreUnavailable
from bot.core.personas import PersonaPicker

log = logging.getLogger(__name__)

GROUP_ADMINS_ONLY = "Only this group's admins can change my model here."
STORE_DOWN = "I can't change my model right now (my store is unavailable); try again soon."
ONE_MODEL = "One model answers here, the one my admin configured; there are no others to pick."


@dataclass(frozen=True, slots=True)
class ModelMenu:
    """What a picker shows: the names the person may pick, the one answering now, the same in words."""

    names: tuple[str, ...]
    current: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Serving:
    """The model one reply comes from: its Inference, and whether it is the configured one (the
    base the learned adapters were trained on; another model is outside the canary)."""

    model: ChatModel
    inference: Inference
    configured: bool


def listing(models: tuple[ChatModel, ...], current: str | None) -> str:
    shown = ", ".join(f"{m.name} (now)" if m.name == current else m.name for m in models)
    return f"Models you may use: {shown}. /model NAME picks one."


class ModelPicker:
    def __init__(
        self,
        source: ModelSource,
        choices: ModelChoices,
        backends: ModelBackends,
        is_admin: Callable[[str], bool],
        personas: PersonaPicker | None = None,
    ) -> None:
        self.source = source
        self.choices = choices
        self.backends = backends
        self._is_admin = is_admin
        self._personas = personas

    def usable(self, user_id: str) -> tuple[ChatModel, ...]:
        return self.source.book().usable(user_id, admin=self._is_admin(user_id))

    async def current(self, chat_id: str, user_id: str, persona_model: str | None) -> ChatModel | None:
        """The model a reply to `user_id` in this chat comes from; None: the configured one (no
        models file). A store that cannot say gives the persona's or the default."""
        book = self.source.book()
        if not book.models:
            return None
        try:
            chosen = await self.choices.chosen(chat_id)
        except StoreUnavailable as exc:
            log.warning("models: cannot read %s's choice (%s); the default answers", chat_id, exc)
            chosen = None
        admin = self._is_admin(user_id)
        for name in (chosen, persona_model):
            found = book.find(name) if name else None
            if found is not None and found.may_use(user_id, admin=admin):
                return found
        return book.default_model

    async def serving(self, chat_id: str, user_id: str, persona_model: str | None) -> Serving | None:
        """The model and Inference a reply comes from; None: the configured model. Raises
        InferenceError when the chosen model cannot be built."""
        model = await self.current(chat_id, user_id, persona_model)
        if model is None:
            return None
        configured = self.backends.is_configured(model)
        return Serving(model, await self.backends.inference(model), configured)

    async def menu(self, chat_id: str, user_id: str) -> ModelMenu:
        """/model alone: the model answering now and the others the person may pick."""
        book = self.source.book()
        if not book.models:
            return ModelMenu((), None, ONE_MODEL)
        current = await self.current(chat_id, user_id, await self._persona_model(chat_id))
        usable = self.usable(user_id)
        name = current.name if current else None
        text = f"I answer with {name} in this chat.\n\n{listing(usable, name)}"
        return ModelMenu(tuple(m.name for m in usable), name, text)

    async def pick(
        self, chat_id: str, user_id: str, name: str, *, owner: str | None, may_change: bool = True
    ) -> str:
        """/model NAME: the answer in plain words. `owner`: the person, in a private chat; None in
        a group. Nothing is kept for an unknown name, a model the person may not use, or a person
        who may not change the group's."""
        book = self.source.book()
        if not book.models:
            return ONE_MODEL
        model = book.find(name)
        shown = " ".join(name.split())[:40]
        if model is None:
            current = await self.current(chat_id, user_id, await self._persona_model(chat_id))
            usable = listing(self.usable(user_id), current.name if current else None)
            return f"I have no model called {shown!r}. {usable}"
        if not model.may_use(user_id, admin=self._is_admin(user_id)):
            return f"You may not use {model.name}; ask my admin. {listing(self.usable(user_id), None)}"
        if not may_change:
            return GROUP_ADMINS_ONLY
        try:
            await self.choices.choose(chat_id, model.name, owner)
        except StoreUnavailable:
            return STORE_DOWN
        return f"Done: I answer with {model.name} in this chat now. What I know about you stays the same."

    async def _persona_model(self, chat_id: str) -> str | None:
        return (await self._personas.persona(chat_id)).model if self._personas else None

    def price(self, name: str) -> tuple[float, float] | None:
        """(in, out) per 1M tokens of the model called `name`, in `currency`; None: no price."""
        return self.source.book().price(name)

    @property
    def currency(self) -> str:
        return self.source.book().currency

"""The admins' /train_now, /rollback and /canary [stop], answered by the core's TrainingCommands."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.gates import training_for
from bot.adapters.telegram.commands.feature import Feature, Handler, words
from bot.adapters.telegram.ids import user_key
from bot.core.learning.commands import TrainingCommands


class Learning(Feature):
    def handlers(self) -> list[Handler]:
        return [
            self.command("train_now", self.train_now),
            self.command("rollback", self.rollback),
            self.command("canary", self.canary),
        ]

    async def train_now(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self._answer(update, lambda training, admin: training.train_now(admin))

    async def rollback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self._answer(update, lambda training, admin: training.rollback())

    async def canary(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self._answer(update, lambda training, admin: training.canary(admin, words(context)))

    async def _answer(self, update: Update, ask: Callable[[TrainingCommands, str], Awaitable[str]]) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        admin = user_key(person.id)
        training = training_for(self.services, admin)
        if isinstance(training, str):
            await message.reply_text(training)
        else:
            await message.reply_text(await ask(training, admin))

"""The admins' /train_now, /rollback and /canary [stop], answered by the core's TrainingCommands."""

from __future__ import annotations

from typing import Literal

from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key
from bot.adapters.gates import training_for


async def train_now(interaction: Interaction) -> None:
    admin = user_key(interaction.user.id)
    training = training_for(kindred_of(interaction.client).services, admin)
    if isinstance(training, str):
        await reply_text(interaction, training)
        return
    await interaction.response.defer(ephemeral=True, thinking=True)  # it waits up to 3 s for the run
    await interaction.followup.send(await training.train_now(admin), ephemeral=True)


async def rollback(interaction: Interaction) -> None:
    training = training_for(kindred_of(interaction.client).services, user_key(interaction.user.id))
    await reply_text(interaction, training if isinstance(training, str) else await training.rollback())


@app_commands.describe(
    action="stop: end the trial; the serving variant keeps serving", reason="with stop: why, for the record"
)
async def canary(
    interaction: Interaction, action: Literal["stop"] | None = None, reason: str | None = None
) -> None:
    admin = user_key(interaction.user.id)
    training = training_for(kindred_of(interaction.client).services, admin)
    if isinstance(training, str):
        await reply_text(interaction, training)
        return
    # A reason alone changes nothing: only `action: stop` stops.
    argument = "" if action is None else f"{action} {reason or ''}"
    await reply_text(interaction, await training.canary(admin, argument))


LEARNING = Feature(
    commands=(
        ("train_now", "admins: train tonight's adapter now", train_now),
        ("rollback", "admins: serve the adapter version before this one", rollback),
        ("canary", "admins: the candidate on trial, or stop it", canary),
    )
)

"""The admins' /train_now and /rollback, answered by the core's TrainingCommands."""

from __future__ import annotations

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


LEARNING = Feature(
    commands=(
        ("train_now", "admins: train tonight's adapter now", train_now),
        ("rollback", "admins: serve the adapter version before this one", rollback),
    )
)

"""/privacy: what is kept and why, with its `training` switch for whether rated replies train and
its `files` switch for whether the files a person sends are kept."""

from __future__ import annotations

from typing import Literal

from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key


@app_commands.describe(
    training="on: your rated replies help me improve at night; off: they never do",
    files="keep: the files you send stay until you forget them; delete: each goes once read",
)
async def privacy(
    interaction: Interaction,
    training: Literal["on", "off"] | None = None,
    files: Literal["keep", "delete"] | None = None,
) -> None:
    controls = kindred_of(interaction.client).services.controls
    user_id = user_key(interaction.user.id)
    if training and files:
        # One answer each, in one message: both switches were set.
        first = await controls.privacy(user_id, f"training {training}")
        await reply_text(interaction, f"{first}\n\n{await controls.privacy(user_id, f'files {files}')}")
        return
    argument = f"training {training}" if training else f"files {files}" if files else ""
    await reply_text(interaction, await controls.privacy(user_id, argument))


PRIVACY = Feature(commands=(described("privacy", privacy),))

"""/model, the picker: alone it shows the model answering in the chat and the others the person
may use; `/model use:` (its choices offered as the admin's file says now, only those the person
may use) switches. In a server only those Discord lets manage it switch, as /persona."""

from __future__ import annotations

from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, chat_of, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key
from bot.core.chat_models import ONE_MODEL


async def model_choices(interaction: Interaction, typed: str) -> list[app_commands.Choice[str]]:
    """The models the person may use whose name starts with what was typed; read at each
    keystroke, so a file edited while Kindred runs is offered as it is now."""
    picker = kindred_of(interaction.client).services.models
    usable = picker.usable(user_key(interaction.user.id)) if picker is not None else ()
    wanted = typed.strip().lower()
    return [app_commands.Choice(name=m.name, value=m.name) for m in usable if m.name.startswith(wanted)][:25]


@app_commands.describe(use="the model I should answer with in this chat")
@app_commands.autocomplete(use=model_choices)
async def model(interaction: Interaction, use: str | None = None) -> None:
    picker = kindred_of(interaction.client).services.models
    if picker is None:
        await reply_text(interaction, ONE_MODEL)
        return
    chat, person = chat_of(interaction), user_key(interaction.user.id)
    if not use:
        await reply_text(interaction, (await picker.menu(chat, person)).text)
        return
    private = bool(interaction.context.dm_channel)
    may_change = private or interaction.guild_id is None or interaction.permissions.manage_guild
    owner = person if private else None
    await reply_text(interaction, await picker.pick(chat, person, use, owner=owner, may_change=may_change))


MODEL = Feature(commands=(described("model", model),))

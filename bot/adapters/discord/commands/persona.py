"""/persona, the picker: alone it shows the chat's persona and the others; `/persona who:` (its
choices offered as the admin's file says now) switches. In a server only those Discord lets
manage it switch (the member's Manage Server permission)."""

from __future__ import annotations

from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, chat_of, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key


async def persona_choices(interaction: Interaction, typed: str) -> list[app_commands.Choice[str]]:
    """The personas whose name starts with what was typed; read at each keystroke, so a file
    edited while Kindred runs is offered as it is now."""
    picker = kindred_of(interaction.client).services.personas
    names = picker.source.book().names if picker is not None else ()
    return [app_commands.Choice(name=n, value=n) for n in names if n.startswith(typed.strip().lower())][:25]


@app_commands.describe(who="who I should be in this chat")
@app_commands.autocomplete(who=persona_choices)
async def persona(interaction: Interaction, who: str | None = None) -> None:
    services = kindred_of(interaction.client).services
    picker = services.personas
    if picker is None:
        await reply_text(interaction, services.controls.persona_text())
        return
    chat = chat_of(interaction)
    if not who:
        await reply_text(interaction, (await picker.menu(chat)).text)
        return
    private = bool(interaction.context.dm_channel)
    may_change = private or interaction.guild_id is None or interaction.permissions.manage_guild
    owner = user_key(interaction.user.id) if private else None
    await reply_text(interaction, await picker.pick(chat, who, owner=owner, may_change=may_change))


PERSONA = Feature(commands=(described("persona", persona),))

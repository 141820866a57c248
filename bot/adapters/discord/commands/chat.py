"""/chat, which talks with Kindred wherever the app is installed."""

from __future__ import annotations

from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, chat_of
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.feedback import feedback_view
from bot.adapters.discord.policy import places, reactions_reach_me, user_key
from bot.adapters.discord.reply import deliver
from bot.adapters.discord.surfaces import InteractionSurface
from bot.core.chat.access import NOT_ALLOWED
from bot.core.chat.ratelimit import slow_down
from bot.core.events import UserMessage


@app_commands.describe(message="what you want to say")
async def chat(interaction: Interaction, message: str) -> None:
    kindred = kindred_of(interaction.client)
    services = kindred.services
    user_id = user_key(interaction.user.id)
    if not services.access.may_talk(user_id, *places(interaction.guild_id)):
        await interaction.response.send_message(NOT_ALLOWED, ephemeral=True)
        return
    wait_s = await services.limiter.take(user_id)
    if wait_s > 0:
        await interaction.response.send_message(slow_down(wait_s), ephemeral=True)
        return
    # Answer within Discord's 3 s at once; the reply then fills the "thinking…" message.
    await interaction.response.defer(thinking=True)
    user_message = UserMessage(
        user_id=user_id,
        chat_id=chat_of(interaction),
        text=message,
        sent_at=interaction.created_at,
        idempotency_key=f"discord-interaction:{interaction.id}",
        # A DM with the bot is private; a server channel or someone else's DM is not.
        private=is_private(interaction),
        places=places(interaction.guild_id),
    )
    wants_buttons = kindred.options.feedback_buttons and needs_buttons(interaction)
    buttons = feedback_view() if wants_buttons else None
    async with kindred.in_flight.track():
        await deliver(
            services.conversation,
            user_message,
            InteractionSurface(interaction, timeout_s=kindred.options.request_timeout_s),
            interval_s=kindred.options.edit_interval_s,
            first_delay_s=kindred.options.first_show_delay_s,
            unlinked=kindred.unlinked,
            buttons=buttons,
            spoken=services.spoken,
        )


def is_private(interaction: Interaction) -> bool:
    """Only a DM with the bot itself: elsewhere others may read the reply."""
    return bool(interaction.context.dm_channel)


def needs_buttons(interaction: Interaction) -> bool:
    """Whether reactions on a reply here would never reach Kindred (a user install elsewhere)."""
    guild_id = interaction.guild_id
    in_my_server = guild_id is not None and interaction.client.get_guild(guild_id) is not None
    return not reactions_reach_me(in_my_dm=interaction.context.dm_channel, in_my_server=in_my_server)


CHAT = Feature(commands=(("chat", "talk with me, anywhere the app is installed", chat),))

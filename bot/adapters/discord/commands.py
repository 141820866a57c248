"""The slash commands, as one command tree: /chat, /memories, /forget, /confirm, /correct,
/export, /persona, /privacy (with its `training` switch), /app and /apps (apps.py), /proactive and
/reminders (proactive.py), /help, and the admins' /train_now and /rollback. Each is a thin
translation to the core's Conversation, Controls or TrainingCommands."""

from __future__ import annotations

import gzip
import io
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Literal

import discord
from discord import app_commands

from bot.adapters.delivery import SORRY
from bot.adapters.discord.apps import app, apps
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.feedback import feedback_view
from bot.adapters.discord.memory_buttons import forget_all_view, pager
from bot.adapters.discord.options import MESSAGE_LIMIT
from bot.adapters.discord.policy import chat_key, places, reactions_reach_me, user_key
from bot.adapters.discord.proactive import proactive, reminders
from bot.adapters.discord.reply import deliver
from bot.adapters.discord.surfaces import InteractionSurface
from bot.adapters.streaming import split_text
from bot.core.chat.access import NOT_ALLOWED
from bot.core.chat.ratelimit import slow_down
from bot.core.errors import InvalidInput
from bot.core.events import UserMessage
from bot.core.learning.commands import ADMINS_ONLY, NOT_WIRED
from bot.core.memory.controls import COMMANDS, FORGET_ALL_ASK

log = logging.getLogger(__name__)

Interaction = discord.Interaction[Any]
Callback = Callable[..., Coroutine[Any, Any, None]]
EXPORT_NAME = "kindred-memories.jsonl"
NOTHING_TO_EXPORT = "I don't keep any memories of yours yet, so there is nothing to export."
TOO_BIG = "Your export is larger than Discord lets me send here. Ask my admin for `kindred memory export`."
DESCRIPTIONS = {command.name: command.description for command in COMMANDS}


async def reply_text(interaction: Interaction, text: str) -> None:
    """An ephemeral answer of any length: Discord takes 2,000 characters a message."""
    first, *rest = split_text(text, MESSAGE_LIMIT)
    await interaction.response.send_message(first, ephemeral=True)
    for piece in rest:
        await interaction.followup.send(piece, ephemeral=True)


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
    )
    wants_buttons = kindred.options.feedback_buttons and needs_buttons(interaction)
    buttons = feedback_view() if wants_buttons else None
    async with kindred.in_flight.track():
        await deliver(
            services.conversation,
            user_message,
            InteractionSurface(interaction),
            interval_s=kindred.options.edit_interval_s,
            unlinked=kindred.unlinked,
            buttons=buttons,
        )


def is_private(interaction: Interaction) -> bool:
    """Only a DM with the bot itself: elsewhere others may read the reply."""
    return bool(interaction.context.dm_channel)


def needs_buttons(interaction: Interaction) -> bool:
    """Whether reactions on a reply here would never reach Kindred (a user install elsewhere)."""
    guild_id = interaction.guild_id
    in_my_server = guild_id is not None and interaction.client.get_guild(guild_id) is not None
    return not reactions_reach_me(in_my_dm=interaction.context.dm_channel, in_my_server=in_my_server)


def chat_of(interaction: Interaction) -> str:
    """The chat a slash command was used in, keyed as its messages are (a DM is the person's)."""
    return chat_key(interaction.channel_id or interaction.user.id)


async def memories(interaction: Interaction) -> None:
    controls = kindred_of(interaction.client).services.controls
    page = await controls.memories_page(user_key(interaction.user.id), 1, chat_id=chat_of(interaction))
    await interaction.response.send_message(page.render(), view=pager(page), ephemeral=True)


@app_commands.describe(memory="the memory's number from /memories, or all")
async def forget(interaction: Interaction, memory: str) -> None:
    user_id = user_key(interaction.user.id)
    if memory.strip().lower() == "all":
        await interaction.response.send_message(FORGET_ALL_ASK, view=forget_all_view(), ephemeral=True)
        return
    controls = kindred_of(interaction.client).services.controls
    answer = await controls.forget_one(user_id, memory, chat_id=chat_of(interaction))
    await interaction.response.send_message(answer, ephemeral=True)


# Like /forget, open to everyone the allowlist keeps out: a person may always manage what is kept.
@app_commands.describe(memory="the memory's number from /memories")
async def confirm(interaction: Interaction, memory: str) -> None:
    controls = kindred_of(interaction.client).services.controls
    answer = await controls.confirm(user_key(interaction.user.id), memory, chat_id=chat_of(interaction))
    await interaction.response.send_message(answer, ephemeral=True)


@app_commands.describe(memory="the memory's number from /memories", text="what is true now")
async def correct(interaction: Interaction, memory: str, text: str) -> None:
    controls = kindred_of(interaction.client).services.controls
    # Controls reads "ID text": a memory option with a space in it ("5 6") must not lend "6" to the text.
    number = memory.strip() if len(memory.split()) == 1 else "?"
    answer = await controls.correct(
        user_key(interaction.user.id), f"{number} {text}", chat_id=chat_of(interaction)
    )
    await reply_text(interaction, answer)


async def export(interaction: Interaction) -> None:
    await interaction.response.defer(ephemeral=True, thinking=True)
    controls = kindred_of(interaction.client).services.controls
    try:
        data = await controls.export_jsonl(user_key(interaction.user.id), chat_id=chat_of(interaction))
    except InvalidInput as too_big:
        await interaction.followup.send(str(too_big), ephemeral=True)
        return
    if not data:
        await interaction.followup.send(NOTHING_TO_EXPORT, ephemeral=True)
        return
    name = EXPORT_NAME
    if len(data) > interaction.filesize_limit:
        data, name = gzip.compress(data), EXPORT_NAME + ".gz"
    if len(data) > interaction.filesize_limit:
        await interaction.followup.send(TOO_BIG, ephemeral=True)
        return
    file = discord.File(io.BytesIO(data), filename=name)
    await interaction.followup.send("Everything I keep about you:", file=file, ephemeral=True)


async def persona(interaction: Interaction) -> None:
    await reply_text(interaction, kindred_of(interaction.client).services.controls.persona_text())


@app_commands.describe(training="on: your rated replies help me improve at night; off: they never do")
async def privacy(interaction: Interaction, training: Literal["on", "off"] | None = None) -> None:
    controls = kindred_of(interaction.client).services.controls
    argument = f"training {training}" if training else ""
    await reply_text(interaction, await controls.privacy(user_key(interaction.user.id), argument))


async def train_now(interaction: Interaction) -> None:
    services = kindred_of(interaction.client).services
    admin = user_key(interaction.user.id)
    if not services.access.is_admin(admin):
        await reply_text(interaction, ADMINS_ONLY)
        return
    if services.training is None:
        await reply_text(interaction, NOT_WIRED)
        return
    await interaction.response.defer(ephemeral=True, thinking=True)  # it waits up to 3 s for the run
    await interaction.followup.send(await services.training.train_now(admin), ephemeral=True)


async def rollback(interaction: Interaction) -> None:
    services = kindred_of(interaction.client).services
    if not services.access.is_admin(user_key(interaction.user.id)):
        await reply_text(interaction, ADMINS_ONLY)
    elif services.training is None:
        await reply_text(interaction, NOT_WIRED)
    else:
        await reply_text(interaction, await services.training.rollback())


async def help_(interaction: Interaction) -> None:
    lines = [f"/{name} — {description}" for name, description, _ in command_table()]
    intro = "I'm a companion that remembers what you tell me. DM me, mention me, or use /chat."
    reactions = "React to my replies (👍 👎 ❤️) to tell me what helped."
    await reply_text(interaction, "\n".join([intro, reactions, "", *lines]))


def command_table() -> list[tuple[str, str, Callback]]:
    return [
        ("chat", "talk with me, anywhere the app is installed", chat),
        ("memories", DESCRIPTIONS["memories"], memories),
        ("forget", DESCRIPTIONS["forget"], forget),
        ("confirm", DESCRIPTIONS["confirm"], confirm),
        ("correct", DESCRIPTIONS["correct"], correct),
        ("export", DESCRIPTIONS["export"], export),
        ("persona", DESCRIPTIONS["persona"], persona),
        ("privacy", DESCRIPTIONS["privacy"], privacy),
        ("app", DESCRIPTIONS["app"], app),
        ("apps", DESCRIPTIONS["apps"], apps),
        ("proactive", DESCRIPTIONS["proactive"], proactive),
        ("reminders", DESCRIPTIONS["reminders"], reminders),
        ("help", DESCRIPTIONS["help"], help_),
        ("train_now", "admins: train tonight's adapter now", train_now),
        ("rollback", "admins: serve the adapter version before this one", rollback),
    ]


async def on_command_error(interaction: Interaction, error: app_commands.AppCommandError) -> None:
    log.error("/%s failed", interaction.command.name if interaction.command else "?", exc_info=error)
    if interaction.response.is_done():
        await interaction.followup.send(SORRY, ephemeral=True)
    else:
        await interaction.response.send_message(SORRY, ephemeral=True)


def command_tree(client: discord.Client) -> app_commands.CommandTree[discord.Client]:
    """Every command, usable in servers, in DMs with Kindred and, when a person installs the app to
    their account, in any other chat."""
    tree = app_commands.CommandTree(
        client,
        allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=True),
        allowed_installs=app_commands.AppInstallationType(guild=True, user=True),
    )
    for name, description, callback in command_table():
        tree.add_command(app_commands.Command(name=name, description=description, callback=callback))
    tree.error(on_command_error)
    return tree

"""/app and /apps on Discord: the deferred answer edited as the build's steps pass, then the link
as a link button. Answers are ephemeral: a link is its app's key, for the person who asked. A build
that may work when asked again carries a "Try again" button that re-runs the same request."""

from __future__ import annotations

import logging
import re
from typing import Any, Literal

import discord
from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, chat_of, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key
from bot.adapters.gates import miniapps_of
from bot.core.miniapps.build import STEPS
from bot.core.miniapps.commands import RETRY_GONE, RETRY_LABEL, AppAnswer, Show

log = logging.getLogger(__name__)
Button = discord.ui.Button[discord.ui.View]
OPEN = "Open the app"


class AppRetryButton(discord.ui.DynamicItem[Button], template=r"kindred:app-retry:(?P<id>[0-9a-f]{32})"):
    def __init__(self, retry_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.primary,
                label=RETRY_LABEL,
                custom_id=f"kindred:app-retry:{retry_id}",
            )
        )
        self.retry_id = retry_id

    @classmethod
    async def from_custom_id(
        cls, interaction: Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> AppRetryButton:
        return cls(match["id"])

    async def callback(self, interaction: Interaction) -> None:
        commands = miniapps_of(kindred_of(interaction.client).services)
        if isinstance(commands, str) or not commands.may_retry(user_key(interaction.user.id), self.retry_id):
            refusal = commands if isinstance(commands, str) else RETRY_GONE
            await interaction.response.send_message(refusal, ephemeral=True)
            return
        await interaction.response.edit_message(content=STEPS["understanding"], view=None)
        answer = await commands.retry(user_key(interaction.user.id), self.retry_id, _progress(interaction))
        await _finish(interaction, answer)


def _progress(interaction: Interaction) -> Show:
    async def show(step: str) -> None:
        try:
            await interaction.edit_original_response(content=step)
        except discord.HTTPException as exc:  # progress is a courtesy; the answer still comes
            log.info("app progress not shown: %s", exc)

    return show


async def _finish(interaction: Interaction, answer: AppAnswer) -> None:
    view = link_view(answer)
    if view is None:
        await interaction.edit_original_response(content=answer.text, view=None)
    else:
        await interaction.edit_original_response(content=answer.text, view=view)


def link_view(answer: AppAnswer) -> discord.ui.View | None:
    if answer.retry_id is not None:
        view = discord.ui.View(timeout=None)
        view.add_item(AppRetryButton(answer.retry_id))
        return view
    if answer.url is None or not answer.url.startswith(("https://", "http://")):
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(style=discord.ButtonStyle.link, label=OPEN, url=answer.url))
    return view


@app_commands.describe(request="what the app is for, e.g. a packing list for my beach trip")
async def app(interaction: Interaction, request: str = "") -> None:
    apps = miniapps_of(kindred_of(interaction.client).services)
    if isinstance(apps, str):
        await interaction.response.send_message(apps, ephemeral=True)
        return
    await interaction.response.defer(ephemeral=True, thinking=True)
    answer = await apps.build(
        user_key(interaction.user.id), chat_of(interaction), request, _progress(interaction)
    )
    await _finish(interaction, answer)


@app_commands.describe(action="list your apps, serve an older version, or end a link", app="the app's number",
                       version="the version to serve")  # fmt: skip
async def apps(
    interaction: Interaction,
    action: Literal["list", "restore", "revoke"] = "list",
    app: int | None = None,
    version: int | None = None,
) -> None:
    commands = miniapps_of(kindred_of(interaction.client).services)
    if isinstance(commands, str):
        await interaction.response.send_message(commands, ephemeral=True)
        return
    words = [] if action == "list" else [action, *(str(n) for n in (app, version) if n is not None)]
    await reply_text(interaction, await commands.manage(user_key(interaction.user.id), " ".join(words)))


MINIAPPS = Feature(commands=(described("app", app), described("apps", apps)), buttons=(AppRetryButton,))

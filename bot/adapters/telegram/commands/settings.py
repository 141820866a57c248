"""/settings: a person's choices on one message, a row of buttons for each; a button pressed
applies the choice (through the command that sets it) and the message shows the settings anew.
`/settings web` (or its button) gives a signed link to the same settings as a page. In a group
only the group's settings show, and only its admins change them, as /persona checks."""

from __future__ import annotations

from telegram import Chat, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, Message, Update
from telegram.constants import ChatType
from telegram.error import BadRequest
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler, words
from bot.adapters.telegram.commands.picking import is_chat_admin
from bot.adapters.telegram.ids import chat_key, user_key
from bot.core.settings import RowView, SettingsScreen, Who

PREFIX = "settings:"
WEB = PREFIX + "web"
PER_ROW = 3
# No preview of a settings link: Telegram's servers would fetch the person's page to draw one.
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


def keyboard(views: list[RowView], web: bool) -> InlineKeyboardMarkup:
    """A row of buttons per setting that has choices (three to a row), the current one marked;
    then the web page's button."""
    rows: list[list[InlineKeyboardButton]] = []
    for view in views:
        buttons = [
            InlineKeyboardButton(
                f"{'✓ ' if choice.value == view.current else ''}{view.key}: {choice.label}",
                callback_data=f"{PREFIX}{view.key}:{choice.value}",
            )
            for choice in view.choices
        ]
        rows += [buttons[i : i + PER_ROW] for i in range(0, len(buttons), PER_ROW)]
    if web:
        rows.append([InlineKeyboardButton("Open as a web page", callback_data=WEB)])
    return InlineKeyboardMarkup(rows)


class Settings(Feature):
    def handlers(self) -> list[Handler]:
        return [
            self.command("settings", self.settings),
            CallbackQueryHandler(self.guarded(self.pressed), pattern=f"^{PREFIX}"),
        ]

    async def settings(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/settings shows them; /settings web gives the page's link; /settings KEY VALUE sets one."""
        message, person = update.effective_message, update.effective_user
        assert message and person
        screen = self.services.settings()
        key, _, value = words(context).strip().partition(" ")
        if key.lower() == "web" and not value:
            link = screen.web_link(self._who(message.chat, person.id))
            await message.reply_text(link, link_preview_options=NO_PREVIEW)
            return
        answer = ""
        if key:
            who = await self._deciding(message.chat, person.id, context)
            answer = await screen.choose(who, key, value)
        await self._show(message, screen, self._who(message.chat, person.id), answer)

    async def pressed(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None and query.data is not None
        shown = query.message
        await query.answer()
        if not isinstance(shown, Message):
            return
        screen = self.services.settings()
        if query.data == WEB:
            link = screen.web_link(self._who(shown.chat, query.from_user.id))
            await shown.reply_text(link, link_preview_options=NO_PREVIEW)
            return
        key, _, value = query.data.removeprefix(PREFIX).partition(":")
        who = await self._deciding(shown.chat, query.from_user.id, context)
        answer = await screen.choose(who, key, value)
        views = await screen.views(who)
        try:
            await shown.edit_text(await screen.text(who, answer), reply_markup=self._keyboard(views, who))
        except BadRequest as exc:  # the same button pressed twice: nothing changed to show
            if "not modified" not in exc.message:
                raise

    async def _show(self, message: Message, screen: SettingsScreen, who: Who, answer: str) -> None:
        views = await screen.views(who)
        text = await screen.text(who, answer)
        await message.reply_text(text, reply_markup=self._keyboard(views, who))

    def _keyboard(self, views: list[RowView], who: Who) -> InlineKeyboardMarkup:
        return keyboard(views, web=who.private_chat and self.services.settings_links is not None)

    def _who(self, chat: Chat, person: int, *, admin: bool = False) -> Who:
        private = chat.type == ChatType.PRIVATE
        return Who(user_key(person), chat_key(chat.id), private, private, private or admin)

    async def _deciding(self, chat: Chat, person: int, context: ContextTypes.DEFAULT_TYPE) -> Who:
        """Who makes a choice: in a group, whether Telegram names them an admin decides whether
        the group's settings change."""
        private = chat.type == ChatType.PRIVATE
        admin = not private and await is_chat_admin(context, chat.id, person)
        return self._who(chat, person, admin=admin)

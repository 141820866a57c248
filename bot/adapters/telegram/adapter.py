"""The Telegram adapter: a python-telegram-bot Application wired to the core, by polling or webhook.

Receiving updates (the Updater's long poll, or the web app's webhook route) is kept apart from
handling them (the handlers in chat.py, commands/ and feedback.py).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from telegram import Bot, Update
from telegram.error import InvalidToken, NetworkError, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    MessageReactionHandler,
    filters,
)

from bot.adapters.base import Services
from bot.adapters.telegram.chat import FEEDBACK_DOWN, FEEDBACK_UP, ChatHandler, ChatPolicy
from bot.adapters.telegram.commands import bot_commands, command_handlers
from bot.adapters.telegram.delivery_rule import MaybeDelivered
from bot.adapters.telegram.documents import DOCUMENTS, DocumentHandler
from bot.adapters.telegram.feedback import Feedback
from bot.adapters.telegram.flood import SharedFloodLimiter
from bot.adapters.telegram.ordering import Admitted, PerChatOrder
from bot.adapters.telegram.photos import PHOTOS, PhotoHandler
from bot.adapters.telegram.resend import RESEND_PATTERN, Resend
from bot.adapters.telegram.secret import derived_webhook_secret
from bot.adapters.telegram.transport import AiohttpRequest
from bot.adapters.telegram.unreadable import UNREADABLE
from bot.adapters.telegram.voice import NOTES, VoiceHandler
from bot.core.errors import ConfigError, KindredError, PlatformUnreachable, SharedStateUnavailable

log = logging.getLogger(__name__)

# message_reaction is not delivered unless asked for by name.
ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY, Update.MESSAGE_REACTION]
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# Updates in flight, running or waiting their chat's turn. Waiting ones are cheap.
MAX_CONCURRENT_UPDATES = 4096
HTTP_CONNECTIONS = 16
# Flood control (429) is waited out for as long as Telegram names, this many times in a row: five
# gave up after about 6 s of 429s with retry_after 1, and each call given up lost its message
# (bench/soak.py).
FLOOD_RETRIES = 20
DEFAULT_WEBHOOK_PATH = "/telegram/webhook"
# Posts Telegram may have open at once (its default is 40): each is answered once its update is
# handled, so this bounds the updates in hand at a time, over every replica together.
WEBHOOK_CONNECTIONS = 100


@dataclass(frozen=True)
class TelegramConfig:
    token: str = field(repr=False)
    api_base_url: str = "https://api.telegram.org/bot"
    webhook_url: str | None = None
    # Derived from the token when not given, so that every replica agrees on it.
    webhook_secret: str | None = field(default=None, repr=False)
    chat: ChatPolicy = field(default_factory=ChatPolicy)
    # Telegram asks bots to stay under about 30 messages a second overall.
    sends_per_second: float = 30.0
    poll_timeout_s: float = 10.0
    # A webhook post is answered once its update is handled, so that an update whose replica died
    # is sent again (to another one); one that takes longer is answered after this long, before
    # Telegram gives up on the post and sends it again anyway.
    webhook_answer_s: float = 8.0

    @property
    def base_urls(self) -> tuple[str, str]:
        """(API, file) base URLs; PTB appends the token to each, as Telegram's own endpoint expects."""
        base = self.api_base_url.rstrip("/")
        root = base.removesuffix("/bot")
        return f"{root}/bot", f"{root}/file/bot"

    @property
    def secret(self) -> str:
        if self.webhook_secret:
            return self.webhook_secret
        return derived_webhook_secret(self.token)

    @property
    def bot_id(self) -> str:
        """The bot's public id, the token's first part: keys in shared state are per bot."""
        return self.token.split(":", 1)[0]

    @property
    def webhook_path(self) -> str | None:
        if self.webhook_url is None:
            return None
        return urlsplit(self.webhook_url).path or DEFAULT_WEBHOOK_PATH


def read_update(body: bytes, bot: Bot) -> Update | None:
    """A webhook body as PTB's Update, or None (logged) for one that is not an update Telegram
    could have sent: not JSON, not an object, or without an integer update_id."""
    try:
        data = json.loads(body)
        if not isinstance(data, dict):
            raise TypeError("not an object")
        update = Update.de_json(data, bot)
        # The shared intake keys retries by the id: only an int names an update.
        if update is None or type(update.update_id) is not int:
            raise TypeError("no integer update_id")
    except UNREADABLE as exc:  # json's and PTB's errors on a malformed update: answered 400
        log.warning("telegram webhook: unreadable update (%s)", type(exc).__name__)
        return None
    return update


class TelegramAdapter:
    name = "telegram"

    def __init__(self, config: TelegramConfig, services: Services) -> None:
        self.config = config
        self.services = services
        self._requests: tuple[AiohttpRequest, ...] = ()
        self.order = PerChatOrder(MAX_CONCURRENT_UPDATES, services.intake)
        self.application = self._build()

    def _build(self) -> Application:  # type: ignore[type-arg]
        api, files = self.config.base_urls
        # Kept, so that a start that fails half-way can still close their sessions (below).
        self._requests = (
            AiohttpRequest(HTTP_CONNECTIONS),
            AiohttpRequest(1, read_timeout=5.0 + self.config.poll_timeout_s, skip_unreadable_updates=True),
        )
        builder = (
            ApplicationBuilder()
            .token(self.config.token)
            .base_url(api)
            .base_file_url(files)
            .concurrent_updates(self.order)
            .request(self._requests[0])
            # The long poll has a connection of its own, so replies never wait behind it.
            .get_updates_request(self._requests[1])
            .rate_limiter(
                SharedFloodLimiter(
                    self.services.limiter.buckets,
                    overall_per_s=self.config.sends_per_second,
                    bot_id=self.config.bot_id,
                    max_retries=FLOOD_RETRIES,
                )
            )
        )
        if self.config.webhook_url is not None:
            builder = builder.updater(None)
        application = builder.build()
        chat = ChatHandler(self.services, self.config.chat)
        feedback = Feedback(self.services)
        application.add_handlers(command_handlers(self.services))
        application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, chat))
        if self.services.voice is not None:
            application.add_handler(MessageHandler(NOTES, VoiceHandler(chat, self.services.voice)))
        if self.services.images is not None:
            # Before any handler of all documents: an image sent as a file is seen, not read.
            application.add_handler(MessageHandler(PHOTOS, PhotoHandler(chat, self.services.images)))
        if self.services.documents is not None:
            handler = DocumentHandler(chat, self.services.documents)
            application.add_handler(MessageHandler(DOCUMENTS, handler))
        application.add_handler(MessageReactionHandler(feedback.on_reaction))
        application.add_handler(
            CallbackQueryHandler(feedback.on_button, pattern=f"^({FEEDBACK_UP}|{FEEDBACK_DOWN})$")
        )
        application.add_handler(CallbackQueryHandler(Resend(self.services).on_button, pattern=RESEND_PATTERN))
        application.add_error_handler(self._on_error)
        return application

    async def start(self) -> None:
        """Connect and serve. A failed start leaves nothing open, and the adapter can start again."""
        try:
            await self._start()
        except InvalidToken:
            await self._close_quietly()
            # PTB's message quotes the token; this one never does.
            raise ConfigError(
                "TELEGRAM_BOT_TOKEN was refused by the Bot API (or TELEGRAM_API_BASE_URL is wrong)"
            ) from None
        except NetworkError as exc:  # refused, timed out, reset, or a 5xx from the API or a proxy
            await self._close_quietly()
            raise PlatformUnreachable(
                f"telegram: the Bot API cannot be reached ({type(exc).__name__})"
            ) from None
        except TelegramError as exc:
            await self._close_quietly()
            raise KindredError(f"telegram: cannot start ({type(exc).__name__})") from None

    async def _start(self) -> None:
        application = self.application
        await application.initialize()  # getMe: a bad token fails here, before anything else
        await application.bot.set_my_commands(bot_commands())
        if self.config.webhook_url is not None:
            await application.bot.set_webhook(
                self.config.webhook_url,
                secret_token=self.config.secret,
                allowed_updates=ALLOWED_UPDATES,
                max_connections=WEBHOOK_CONNECTIONS,
            )
        await application.start()
        if application.updater is not None:
            await application.updater.start_polling(
                timeout=int(self.config.poll_timeout_s), allowed_updates=ALLOWED_UPDATES
            )
        log.info("telegram: serving as @%s (%s)", application.bot.username, self.mode)

    async def _close_quietly(self) -> None:
        try:
            await self.stop()
            # PTB shuts down only what finished initialising: a getMe that failed leaves the HTTP
            # sessions open ("Unclosed client session" at exit) unless they are closed here.
            for request in self._requests:
                await request.shutdown()
        except Exception as exc:  # the start failure is what the admin needs to see
            log.debug("telegram: cleanup after a failed start: %s", type(exc).__name__)
        # A fresh Application for the next attempt: PTB's is not meant to start twice.
        self.application = self._build()

    @property
    def mode(self) -> str:
        return "webhook" if self.config.webhook_url else "long polling"

    async def stop(self) -> None:
        application = self.application
        if application.updater is not None and application.updater.running:
            await application.updater.stop()
        if application.running:
            await application.stop()
        await application.shutdown()

    async def handle_webhook(self, headers: Mapping[str, str], body: bytes) -> tuple[int, str]:
        """One webhook POST: (status, text). Anything without the secret is refused unread."""
        given = headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self.config.secret.encode()):
            return 403, "forbidden"
        if not self.application.running:
            return 503, "stopping"  # Telegram retries later, to whichever replica is up then
        update = read_update(body, self.application.bot)
        if update is None:
            return 400, "bad update"
        chat = update.effective_chat
        bot = self.config.bot_id
        try:
            admission = await self.services.intake.admit(
                f"telegram:{bot}:{update.update_id}", None if chat is None else f"telegram:{bot}:{chat.id}"
            )
        except SharedStateUnavailable as exc:
            log.warning("telegram webhook: %s; answered 503, Telegram sends the update again", exc)
            return 503, "shared state unavailable"
        if admission.verdict == "duplicate":
            return 200, "ok"  # Telegram retried a post it thinks failed: answer once only
        if admission.verdict == "busy":
            # Another live replica has it in hand; Telegram asks again later. Not a 503: a proxy
            # would try the next replica (which says the same) and count this one as failing.
            return 429, "in hand elsewhere"
        if not self.application.running:  # it began to stop while the update was being admitted
            await self.services.intake.release(admission)
            return 503, "stopping"
        handled = asyncio.get_running_loop().create_future()
        self.order.admitted[update.update_id] = Admitted(admission, handled)
        # No await between the check above and this put: a stop cannot slip in and strand it.
        self.application.update_queue.put_nowait(update)
        try:
            await asyncio.wait_for(asyncio.shield(handled), self.config.webhook_answer_s)
        except asyncio.CancelledError:
            if not handled.cancelled():
                raise  # this request was cancelled, not the update
            return 503, "stopping"
        except TimeoutError:
            pass  # still being handled: answered now, before Telegram gives up on the post
        return 200, "ok"

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        error = context.error
        if isinstance(error, MaybeDelivered):
            # Only an answer that is no stored turn gets here (a command's: replies are recorded as
            # of unknown delivery). It is a read, so it is not offered again: the person can repeat
            # the command. Said once, for an admin, without the answer's words.
            chat = update.effective_chat if isinstance(update, Update) else None
            log.warning(
                "telegram: a command's answer in chat %s may not have arrived (%s); not sent again",
                chat.id if chat is not None else "?",
                error,
            )
            return
        log.warning("telegram: handling an update failed: %s: %s", type(error).__name__, error)

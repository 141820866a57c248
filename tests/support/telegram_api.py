"""A loopback fake of the Telegram Bot API server for end-to-end tests.

The real python-telegram-bot talks HTTP to it through ``Bot(base_url=fake.base_url,
base_file_url=fake.base_file_url)``, and it answers with the JSON shapes and error texts of
https://core.telegram.org/bots/api, so PTB's own request encoding, response parsing and error
mapping all run for real. Tests queue what users do with the ChatWorld builders it inherits
(private_message, group_message, reaction, callback), inject failures with ``fail_next``/``block``
(before the method acts, or, for the ``*_after`` kinds, after it delivered: a 500 or an answer
that never comes), and read back what the bot did from ``calls``, ``chats``, ``texts()``, ``drafts``..."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import re
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from aiohttp import web

from tests.support import telegram_updates as tu
from tests.support.started import Started
from tests.support.telegram_files import MAX_DOWNLOAD, SentVoice, heard_voice
from tests.support.telegram_updates import JSON

FailureKind = Literal[
    "retry_after", "not_modified", "blocked", "reset", "server_error", "server_error_after", "timeout_after"
]
# Faults after delivery: the method acts (the message is stored), then the answer is a 500, or
# nothing for this long, past any client's read timeout.
AFTER_DELIVERY: frozenset[str] = frozenset({"server_error_after", "timeout_after"})
HANG_S = 60.0

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)
BLOCKED = "Forbidden: bot was blocked by the user"
SERVER_ERROR = "Internal Server Error"
WEBHOOK_ACTIVE = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
POLL_TERMINATED = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
)
QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
# With an empty allowed_updates Telegram sends every type except these opt-in ones.
OPT_IN_UPDATES = frozenset({"message_reaction", "message_reaction_count", "chat_member"})
MAX_TEXT = 4096
DEFAULT_TOKEN = "123456789:AAHfakeTokenForKindredTests-0123456789"
# Parameters whose string value is user text or an opaque id: never JSON-decode them, or a
# message "[1]" or a callback id "42" would change type.
_VERBATIM = frozenset(
    "text caption data callback_query_id secret_token url file_id document parse_mode action"
    " language_code inline_message_id business_connection_id emoji".split()
)
_JSON_SCALAR = re.compile(r"-?\d+(\.\d+)?|true|false|null")


@dataclass
class Call:
    method: str
    params: JSON
    at: float
    failed: str | None = None  # the injected kind, or the description of the error answered
    # The message a send stored, kept even when its answer then failed (`*_after`): the id the bot
    # never learned, which a person can still react to.
    message_id: int | None = None


@dataclass(frozen=True)
class Upload:
    filename: str
    data: bytes
    mime_type: str


@dataclass
class SentDocument:
    chat_id: int
    file_id: str
    file_unique_id: str
    filename: str
    data: bytes
    mime_type: str
    caption: str | None


@dataclass
class _Outage:
    kind: FailureKind
    until: float
    retry_after: int
    methods: frozenset[str] | None  # None: every method but getMe and getUpdates


@dataclass
class _Failure:
    method: str
    kind: FailureKind
    times: int
    retry_after: int
    chat_id: int | None


class ApiError(Exception):
    def __init__(self, status: int, description: str, parameters: JSON | None = None) -> None:
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters


class _Reset(Exception):
    """Drop the connection without an answer."""


async def _read_params(request: web.Request) -> JSON:
    raw: dict[str, Any] = dict(request.query)
    if request.content_type == "application/json" and request.can_read_body:
        body = await request.json()
        return {**{k: _decode(k, v) for k, v in raw.items()}, **body}
    # PTB posts url-encoded forms, or multipart when a file goes along; every non-string value
    # arrives json.dumps-ed inside a form field (see telegram/request/_requestparameter.py).
    for key, value in (await request.post()).items():
        raw[key] = (
            Upload(value.filename, value.file.read(), value.content_type)
            if isinstance(value, web.FileField)
            else value
        )
    return {key: _decode(key, value) for key, value in raw.items()}


def _decode(key: str, value: Any) -> Any:
    if not isinstance(value, str) or key in _VERBATIM:
        return value
    text = value.strip()
    if text.startswith(("{", "[")) or _JSON_SCALAR.fullmatch(text):
        try:
            return json.loads(text)
        except ValueError:
            return value
    return value


def _error_body(status: int, description: str, parameters: JSON | None = None) -> web.Response:
    body: JSON = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return web.json_response(body, status=status)


class FakeTelegramBotApi(tu.ChatWorld, Started):
    def __init__(
        self, token: str = DEFAULT_TOKEN, *, username: str = tu.BOT_USERNAME, first_name: str = "Kindred"
    ) -> None:
        bot_id = int(token.split(":", 1)[0])
        super().__init__({"id": bot_id, "is_bot": True, "first_name": first_name, "username": username})
        self.token = token
        self.calls: list[Call] = []
        # Called with every call answered successfully: lets a load generator wait without polling.
        self.listeners: list[Callable[[Call], None]] = []
        self.drafts: defaultdict[int, list[str]] = defaultdict(list)
        self.deleted: defaultdict[int, list[str]] = defaultdict(list)  # the texts of deleted messages
        self.documents: list[SentDocument] = []
        self.voices: list[SentVoice] = []
        self.commands: list[JSON] = []
        self.callback_answers: list[JSON] = []
        self.bot_reactions: list[JSON] = []
        # (chat id, user id) of each group's administrators, as getChatMember answers.
        self.admins: set[tuple[int, int]] = set()
        self.webhook: JSON | None = None
        self.allowed_updates: list[str] | None = None
        self._failures: list[_Failure] = []
        self._outages: list[_Outage] = []
        # Called after every enqueue (opt-in): a webhook pusher (telegram_push.py) wakes here.
        self.enqueue_listeners: list[Callable[[], None]] = []
        self._blocked: set[int] = set()
        # While set: sendMessage keeps the message, then answers only once released (hold_sends).
        self._sends_held: asyncio.Event | None = None
        self._file_ids = itertools.count(1)
        self._new_update = asyncio.Event()
        self._poll_generation = 0
        self._closing = False
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._handlers: dict[str, Callable[[JSON], Awaitable[Any]]] = {
            name.removeprefix("_m_"): getattr(self, name) for name in dir(self) if name.startswith("_m_")
        }

    # -- lifecycle ---------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    async def start(self) -> None:
        self._closing = False
        app = web.Application(client_max_size=50 * 1024 * 1024)  # Telegram's upload limit
        app.router.add_route("*", "/bot{token}/{method}", self._serve)
        app.router.add_get("/file/bot{token}/{path:.+}", self._serve_file)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        # On the port it was given (a test that starts it late), or on any free one.
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        self._closing = True
        self._wake_pollers()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- HTTP --------------------------------------------------------------------------------------
    async def _serve(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token:
            return _error_body(401, "Unauthorized")
        params = await _read_params(request)
        asked = request.match_info["method"]
        # Telegram matches method names case-insensitively.
        method = next((name for name in self._handlers if name.lower() == asked.lower()), asked)
        call = Call(method, params, time.monotonic())
        self.calls.append(call)
        try:
            if method not in self._handlers:
                raise ApiError(404, "Not Found")
            after = await self._injected_failure(call)
            result = await self._handlers[method](params)
            if isinstance(result, dict) and isinstance(result.get("message_id"), int):
                call.message_id = result["message_id"]
            if after is not None:
                await self._fail_after_delivery(call, after)
            for listener in self.listeners:
                listener(call)
            return web.json_response({"ok": True, "result": result})
        except ApiError as err:
            call.failed = call.failed or err.description
            return _error_body(err.status, err.description, err.parameters)
        except _Reset:
            if request.transport is not None:
                request.transport.abort()
            return web.Response()  # never reaches the client: the socket is already gone

    async def _serve_file(self, request: web.Request) -> web.StreamResponse:
        """A file's bytes, at the path getFile named (Telegram's file server answers 404 otherwise)."""
        stored = self.files.by_path(request.match_info["path"])
        if request.match_info["token"] != self.token or stored is None:
            return web.Response(status=404, text="Not Found")
        self.files.downloads.append(stored.path)
        return web.Response(body=stored.data, content_type="application/octet-stream")

    async def _injected_failure(self, call: Call) -> FailureKind | None:
        """Fails the call now, or returns the fault due after the method has acted."""
        chat_id = call.params.get("chat_id")
        due: list[tuple[FailureKind, int]] = []
        for failure in list(self._failures):
            if failure.method == call.method and failure.chat_id in (None, chat_id):
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.remove(failure)
                due.append((failure.kind, failure.retry_after))
                break
        now = time.monotonic()
        self._outages = [o for o in self._outages if o.until > now]
        for outage in self._outages:
            if outage.methods is None and call.method not in ("getMe", "getUpdates"):
                due.append((outage.kind, outage.retry_after))
            if outage.methods is not None and call.method in outage.methods:
                due.append((outage.kind, outage.retry_after))
        for kind, retry_after in due:
            if kind not in AFTER_DELIVERY:
                await self._fail(call, kind, retry_after)
        if chat_id in self._blocked and call.method.startswith(("send", "edit", "setMessageReaction")):
            call.failed = "blocked"
            raise ApiError(403, BLOCKED)
        return due[0][0] if due else None

    async def _fail_after_delivery(self, call: Call, kind: FailureKind) -> None:
        call.failed = kind
        if kind == "server_error_after":
            raise ApiError(500, SERVER_ERROR)
        await asyncio.sleep(HANG_S)  # the client times out; the runner's cleanup ends this

    async def _fail(self, call: Call, kind: FailureKind, retry_after: int) -> None:
        call.failed = kind
        if kind == "retry_after":
            raise ApiError(429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after})
        if kind == "not_modified":
            raise ApiError(400, NOT_MODIFIED)
        if kind == "blocked":
            raise ApiError(403, BLOCKED)
        if kind == "server_error":
            raise ApiError(500, SERVER_ERROR)
        if call.method == "getUpdates":
            await asyncio.sleep(0.05)  # mid-poll, as a proxy or NAT dropping a long poll would
        raise _Reset

    # -- error injection ---------------------------------------------------------------------------
    def fail_next(
        self,
        method: str,
        kind: FailureKind,
        *,
        times: int = 1,
        retry_after: int = 1,
        chat_id: int | None = None,
    ) -> None:
        if method not in self._handlers or kind not in get_args(FailureKind):
            raise ValueError(f"cannot fail {method!r} with {kind!r}")
        self._failures.append(_Failure(method, kind, times, retry_after, chat_id))

    def outage(
        self,
        kind: FailureKind,
        seconds: float,
        *,
        retry_after: int = 1,
        methods: frozenset[str] | None = None,
    ) -> None:
        """For the next `seconds`, every call of `methods` (None: all but getMe and getUpdates)
        fails with `kind`: Telegram's flood control or a bad spell on its side, for a while."""
        if kind not in get_args(FailureKind):
            raise ValueError(f"cannot fail with {kind!r}")
        self._outages.append(_Outage(kind, time.monotonic() + seconds, retry_after, methods))

    def block(self, chat_id: int) -> None:
        self._blocked.add(chat_id)

    def unblock(self, chat_id: int) -> None:
        self._blocked.discard(chat_id)

    def hold_sends(self) -> None:
        """From now on sendMessage delivers the message but answers only after `release_sends`:
        the platform took it, and the sender is still waiting to hear so (a worker killed here)."""
        self._sends_held = asyncio.Event()

    def release_sends(self) -> None:
        if self._sends_held is not None:
            self._sends_held.set()
            self._sends_held = None

    # -- Bot API methods ---------------------------------------------------------------------------
    async def _m_getMe(self, p: JSON) -> JSON:
        return {
            **self.bot_user,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _m_getUpdates(self, p: JSON) -> list[JSON]:
        if self.webhook is not None:
            raise ApiError(409, WEBHOOK_ACTIVE)
        offset, limit = int(p.get("offset", 0)), max(1, min(100, int(p.get("limit", 100))))
        if "allowed_updates" in p:  # absent means "keep the previous setting"
            self.allowed_updates = list(p["allowed_updates"])
        if offset > 0:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        elif offset < 0:
            self.updates = self.updates[offset:]
        # A newer poll ends the one in flight, as Telegram does with two bot instances.
        self._poll_generation += 1
        generation = self._poll_generation
        self._wake_pollers()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(p.get("timeout", 0))
        while True:
            if generation != self._poll_generation:
                raise ApiError(409, POLL_TERMINATED)
            ready = [u for u in self.updates if self._wanted(u)][:limit]
            remaining = deadline - loop.time()
            if ready or self._closing or remaining <= 0:
                return ready
            event = self._new_update
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)

    def _wanted(self, update: JSON) -> bool:
        kind = tu.update_type(update)
        return kind in self.allowed_updates if self.allowed_updates else kind not in OPT_IN_UPDATES

    async def _m_setWebhook(self, p: JSON) -> bool:
        url = str(p.get("url", ""))
        if not url:
            return await self._m_deleteWebhook(p)
        if not url.startswith("https://"):
            raise ApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        if p.get("drop_pending_updates"):
            self.updates.clear()
        self.webhook = {
            "url": url,
            "secret_token": p.get("secret_token"),
            "allowed_updates": p.get("allowed_updates"),
        }
        self._wake_pollers()
        return True

    async def _m_deleteWebhook(self, p: JSON) -> bool:
        if p.get("drop_pending_updates"):
            self.updates.clear()
        self.webhook = None
        return True

    async def _m_getWebhookInfo(self, p: JSON) -> JSON:
        info: JSON = {"url": "", "has_custom_certificate": False, "pending_update_count": len(self.updates)}
        if self.webhook is not None:
            info["url"] = self.webhook["url"]
            if self.webhook["allowed_updates"] is not None:
                info["allowed_updates"] = self.webhook["allowed_updates"]
        return info

    async def _m_setMyCommands(self, p: JSON) -> bool:
        self.commands = list(p.get("commands", []))
        return True

    async def _m_getMyCommands(self, p: JSON) -> list[JSON]:
        return self.commands

    async def _m_sendMessage(self, p: JSON) -> JSON:
        chat = self._chat(p)
        text = str(p.get("text", ""))
        self._check_text(text, too_long="Bad Request: message is too long")
        message = tu.message_json(
            chat.claim_id(),
            chat.data,
            self.bot_user,
            text,
            entities=p.get("entities"),
            reply_to_message=self._reply_target(chat, p),
            reply_markup=p.get("reply_markup"),
        )
        chat.store(message, p.get("reply_markup"))
        if self._sends_held is not None:
            await self._sends_held.wait()
        return message

    async def _m_editMessageText(self, p: JSON) -> JSON:
        stored = self._editable(p)
        text, markup = str(p.get("text", "")), p.get("reply_markup")
        self._check_text(text, too_long="Bad Request: MESSAGE_TOO_LONG")
        if text == stored.text and markup == stored.reply_markup:
            raise ApiError(400, NOT_MODIFIED)
        stored.data["text"] = text
        stored.data.pop("entities", None)
        if p.get("entities"):
            stored.data["entities"] = p["entities"]
        stored.history.append(text)
        return self._apply_markup(stored, markup)

    async def _m_deleteMessage(self, p: JSON) -> bool:
        chat = self._chat(p)
        stored = chat.messages.get(p.get("message_id", -1))
        if stored is None:
            raise ApiError(400, "Bad Request: message to delete not found")
        if stored.sender_id != self.bot_user["id"] and chat.data.get("type") != "private":
            raise ApiError(400, "Bad Request: message can't be deleted")  # not without admin rights
        del chat.messages[p["message_id"]]
        self.deleted[chat.data["id"]].append(stored.text or "")
        return True

    async def _m_editMessageReplyMarkup(self, p: JSON) -> JSON:
        stored = self._editable(p)
        if p.get("reply_markup") == stored.reply_markup:
            raise ApiError(400, NOT_MODIFIED)
        return self._apply_markup(stored, p.get("reply_markup"))

    async def _m_sendMessageDraft(self, p: JSON) -> bool:
        chat = self._chat(p)
        self.drafts[chat.data["id"]].append(str(p.get("text", "")))
        return True

    async def _m_sendChatAction(self, p: JSON) -> bool:
        self._chat(p)
        return True

    async def _m_answerCallbackQuery(self, p: JSON) -> bool:
        query_id = str(p.get("callback_query_id"))
        if query_id not in self.open_queries:
            raise ApiError(400, QUERY_INVALID)
        self.callback_answers.append(
            {"callback_query_id": query_id, "text": p.get("text"), "show_alert": bool(p.get("show_alert"))}
        )
        return True

    async def _m_getChatMember(self, p: JSON) -> JSON:
        chat, user_id = self._chat(p), int(p["user_id"])
        user = self._users.get(user_id) or tu.user_json(user_id)
        if (chat.data["id"], user_id) not in self.admins:
            return {"status": "member", "user": user}
        rights = ("can_be_edited is_anonymous can_manage_chat can_delete_messages can_manage_video_chats "
                  "can_restrict_members can_promote_members can_change_info can_invite_users "
                  "can_post_stories can_edit_stories can_delete_stories").split()  # fmt: skip
        return {"status": "administrator", "user": user, **dict.fromkeys(rights, False)}

    async def _m_setMessageReaction(self, p: JSON) -> bool:
        chat = self._chat(p)
        self.bot_reactions.append(
            {"chat_id": chat.data["id"], "message_id": p.get("message_id"), "reaction": p.get("reaction", [])}
        )
        return True

    async def _m_sendDocument(self, p: JSON) -> JSON:
        chat, document = self._chat(p), p.get("document")
        if not isinstance(document, Upload):
            # Re-sending by file_id or URL is not needed by Kindred, so the fake does not serve it.
            raise ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        n = next(self._file_ids)
        sent = SentDocument(
            chat.data["id"],
            f"BQACAgIAAxkDAAI{n:08d}",
            f"AgAD{n:06d}",
            document.filename,
            document.data,
            document.mime_type,
            p.get("caption"),
        )
        self.documents.append(sent)
        message = tu.message_json(chat.claim_id(), chat.data, self.bot_user, None)
        message["document"] = {
            "file_name": sent.filename,
            "mime_type": sent.mime_type,
            "file_id": sent.file_id,
            "file_unique_id": sent.file_unique_id,
            "file_size": len(sent.data),
        }
        if sent.caption:
            message["caption"] = sent.caption
        chat.store(message)
        return message

    async def _m_sendVoice(self, p: JSON) -> JSON:
        chat, voice = self._chat(p), p.get("voice")
        if not isinstance(voice, Upload):
            raise ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        sent = heard_voice(chat.data["id"], voice.data, p.get("duration"))
        if sent is None:  # Telegram plays only OGG/Opus as a voice note
            raise ApiError(400, "Bad Request: VOICE_MESSAGES_FORBIDDEN or not an OGG/Opus file")
        self.voices.append(sent)
        message = tu.message_json(chat.claim_id(), chat.data, self.bot_user, None)
        n = len(self.voices)
        message["voice"] = {
            "file_id": f"AwACAgIAAxkDAAI{n:08d}", "file_unique_id": f"AgAV{n:06d}",
            "duration": round(sent.seconds), "mime_type": "audio/ogg", "file_size": len(sent.data),
        }  # fmt: skip
        chat.store(message)
        return message

    async def _m_getFile(self, p: JSON) -> JSON:
        stored = self.files.files.get(str(p.get("file_id")))
        if stored is None:
            raise ApiError(400, "Bad Request: invalid file_id")
        if len(stored.data) > MAX_DOWNLOAD:
            raise ApiError(400, "Bad Request: file is too big")
        return {
            "file_id": stored.file_id, "file_unique_id": stored.file_unique_id,
            "file_size": len(stored.data), "file_path": stored.path,
        }  # fmt: skip

    async def _m_close(self, p: JSON) -> bool:
        return True

    async def _m_logOut(self, p: JSON) -> bool:
        return True

    # -- method helpers ----------------------------------------------------------------------------
    @staticmethod
    def _check_text(text: str, *, too_long: str) -> None:
        if not text.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if tu.utf16_len(text) > MAX_TEXT:
            raise ApiError(400, too_long)

    def _chat(self, p: JSON) -> tu.FakeChat:
        chat_id = p.get("chat_id")
        if not isinstance(chat_id, int):
            raise ApiError(400, "Bad Request: chat not found" if chat_id else "Bad Request: chat_id is empty")
        return self.chat(chat_id)

    def _reply_target(self, chat: tu.FakeChat, p: JSON) -> JSON | None:
        reply = p.get("reply_parameters") or {}
        message_id = reply.get("message_id", p.get("reply_to_message_id"))
        if message_id is None:
            return None
        if message_id in chat.messages:
            return chat.messages[message_id].data
        if reply.get("allow_sending_without_reply") or p.get("allow_sending_without_reply"):
            return None
        raise ApiError(400, "Bad Request: message to be replied not found")

    def _editable(self, p: JSON) -> tu.StoredMessage:
        stored = self._chat(p).messages.get(p.get("message_id", -1))
        if stored is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if stored.sender_id != self.bot_user["id"]:
            raise ApiError(400, "Bad Request: message can't be edited")
        return stored

    @staticmethod
    def _apply_markup(stored: tu.StoredMessage, markup: JSON | None) -> JSON:
        stored.reply_markup = markup
        stored.data.pop("reply_markup", None)
        if markup is not None and "inline_keyboard" in markup:
            stored.data["reply_markup"] = markup
        stored.data["edit_date"] = tu.now()
        return copy.deepcopy(stored.data)

    def updates_changed(self) -> None:
        self._wake_pollers()
        for listener in self.enqueue_listeners:
            listener()

    def _wake_pollers(self) -> None:
        self._new_update.set()
        self._new_update = asyncio.Event()

    # -- reading back ------------------------------------------------------------------------------
    def calls_of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    # The timeout bounds a polling loop, not one awaitable, so asyncio.timeout (ASYNC109) does not fit.
    async def wait_until(
        self,
        predicate: Callable[[], object],
        timeout: float = 10.0,  # noqa: ASYNC109
        *,
        what: str | None = None,
    ) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                recent = ", ".join(c.method + (f"[{c.failed}]" if c.failed else "") for c in self.calls[-12:])
                raise AssertionError(
                    f"not true within {timeout}s: {what or getattr(predicate, '__name__', repr(predicate))}; "
                    f"last calls: {recent or 'none'}; bot texts: "
                    f"{ {cid: self.texts(cid) for cid in self.chats} }"
                )
            await asyncio.sleep(0.01)

    async def wait_for_call(self, method: str, count: int = 1, timeout: float = 10.0) -> list[Call]:  # noqa: ASYNC109
        """Waits until `method` was called `count` times; returns all its calls so far."""
        await self.wait_until(lambda: len(self.calls_of(method)) >= count, timeout, what=f"{count}× {method}")
        return self.calls_of(method)

"""Chat in a terminal, or answer a pipe line by line. A thin translator over the core."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from bot.adapters.console_files import USAGE, path_and_caption, read_within
from bot.adapters.console_help import HELP
from bot.adapters.console_persona import setting_answer
from bot.adapters.console_surface import TERMINAL, ConsoleSpeaker, ConsoleSurface
from bot.adapters.delivery import deliver
from bot.adapters.spoken import SpeakTo
from bot.core.chat.conversation import Conversation
from bot.core.chat.documents import ChatDocuments
from bot.core.chat.images import Images
from bot.core.chat.spoken import NO_BACKEND, SpokenReplies
from bot.core.chat.voice import VoiceNotes
from bot.core.errors import StoreUnavailable
from bot.core.events import DocumentNote, ImageNote, Reaction, ReplyEvent, UserMessage, VoiceNote
from bot.core.media.kinds import looks_like_document
from bot.core.media.models import MediaFile, looks_like_image
from bot.core.memory.controls import FORGET_ALL_ASK, Controls, page_number
from bot.core.miniapps.commands import AppCommands
from bot.core.proactive.commands import PROACTIVE_NOT_WIRED, ProactiveCommands

CHAT_ID = "console"
# A pipe has no buttons: the line after "/forget all" is the answer, and only "yes" deletes.
FORGET_ALL_PROMPT = FORGET_ALL_ASK + " Type yes to forget everything; anything else keeps it."
KEPT = "Kept. Nothing was forgotten."
NO_CONTROLS = "Memory commands aren't available in this chat."
NO_APPS = "Apps aren't available in this chat."
NO_FILES = "Files aren't available in this chat."
# The terminal has no buttons: a build that may work when asked again says how to ask.
RETRY_HINT = "Type /app retry to try the same request again."
STORE_DOWN = "I can't reach my memory right now, so nothing changed. Try again in a moment."
LOADING = (
    "Loading the model (the very first start also prepares it, once); "
    "type away, I'll answer as soon as it is ready."
)
STILL_LOADING = "(still loading: I'll answer once the model is ready)"
# What needs no model, so it is answered while the model is still loading.
NEEDS_NOTHING = ("/help", "/quit")


@dataclass
class ConsoleIO:
    read_line: Callable[[], str]
    out: TextIO
    err: TextIO
    interactive: bool
    # Called when the chat ends: puts the terminal back as it was found.
    restore: Callable[[], None] = lambda: None


def default_io() -> ConsoleIO:
    # Invalid UTF-8 on a pipe becomes U+FFFD instead of an exception that ends the chat.
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")
    interactive = sys.stdin.isatty()
    if interactive:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and history for input())

        def read() -> str:
            try:
                return input("you › ") + "\n"
            except EOFError:
                return ""

        return ConsoleIO(read, sys.stdout, sys.stderr, True, restore=_terminal_restorer())
    return ConsoleIO(sys.stdin.readline, sys.stdout, sys.stderr, False)


def _terminal_restorer() -> Callable[[], None]:
    """readline turns echo and line editing off while it reads. A chat that ends while a read
    still waits (Ctrl-C, a failed start) would leave the person's terminal that way."""
    try:
        import termios

        fd = sys.stdin.fileno()
        found = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):  # not a POSIX terminal
        return lambda: None

    def restore() -> None:
        with contextlib.suppress(OSError):
            termios.tcsetattr(fd, termios.TCSADRAIN, found)

    return restore


def _read_in_thread(read_line: Callable[[], str]) -> asyncio.Future[str]:
    """`read_line()` on a daemon thread. Not the loop's executor: a read still waiting for the
    person's Enter must not keep the process alive when the chat ends on an error."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def settle(line: str | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line or "")

    def read() -> None:
        line: str | None = None
        error: BaseException | None = None
        try:
            line = read_line()
        except BaseException as exc:  # reaches the loop, which raises it in the chat
            error = exc
        # The chat may have ended (and its loop closed) while this read waited.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, line, error)

    threading.Thread(target=read, name="kindred-console-read", daemon=True).start()
    return future


@dataclass(frozen=True, slots=True)
class ChatParts:
    """What the chat answers with: the conversation (with its models) and the commands' parts."""

    conversation: Conversation
    controls: Controls | None = None
    apps: AppCommands | None = None
    proactive: ProactiveCommands | None = None
    voice: VoiceNotes | None = None
    images: Images | None = None
    documents: ChatDocuments | None = None
    # /voice, and where a spoken reply is written (over the last one).
    spoken: SpokenReplies | None = None
    spoken_file: Path | None = None


class ConsoleChat:
    """The chat. `conversation` is either ready, or still loading (an awaitable of `ChatParts`):
    then the prompt shows at once, lines are read as they come, and each waits, in order, until
    the parts are ready. A load that fails ends the chat with its error, even mid-read."""

    def __init__(
        self,
        conversation: Conversation | Awaitable[ChatParts],
        user_id: str,
        io: ConsoleIO,
        *,
        controls: Controls | None = None,
        apps: AppCommands | None = None,
        proactive: ProactiveCommands | None = None,
        voice: VoiceNotes | None = None,
        images: Images | None = None,
        documents: ChatDocuments | None = None,
    ) -> None:
        self._parts: ChatParts | None = None
        self._loading: asyncio.Future[ChatParts] | None = None
        if isinstance(conversation, Conversation):
            self._parts = ChatParts(conversation, controls, apps, proactive, voice, images, documents)
        else:
            self._loading = asyncio.ensure_future(conversation)
        self.user_id = user_id
        self.io = io
        self.last_reply_turn: int | None = None
        self.asked_forget_all = False
        self._told_still_loading = False

    @property
    def conversation(self) -> Conversation:
        return self._ready_parts().conversation

    @property
    def controls(self) -> Controls | None:
        return self._ready_parts().controls

    @property
    def apps(self) -> AppCommands | None:
        return self._ready_parts().apps

    async def run(self) -> None:
        if self.io.interactive:
            self._say_err(f"Kindred is listening, {self.user_id}. /help for commands.")
        if self._parts is None:
            self._say_err(LOADING)
        try:
            while True:
                line = await self._next_line()
                if line == "":
                    return
                text = line.rstrip("\n")
                if text.strip() == "/quit":
                    return
                await self.handle(text)
        finally:
            self.io.restore()

    async def handle(self, text: str) -> None:
        command, _, rest = text.strip().partition(" ")
        rest = rest.strip()
        if command not in NEEDS_NOTHING or self.asked_forget_all:
            await self._until_ready()
        if self.asked_forget_all:
            self.asked_forget_all = False
            await self._controlled(self._forget_all(text.strip().lower() == "yes"))
        elif command == "/help":
            self._say(HELP)
        elif command == "/react":
            await self._react(rest)
        elif command in ("/memories", "/forget", "/confirm", "/correct", "/privacy"):
            await self._controlled(self._memory_command(command, rest))
        elif command in ("/app", "/apps"):
            await self._controlled(self._app_command(command, rest))
        elif command in ("/proactive", "/reminders"):
            await self._controlled(self._proactive_command(command, rest))
        elif command in ("/voice", "/persona", "/model", "/usage", "/settings"):
            answer = setting_answer(self._ready_parts(), command, self.user_id, rest)
            await self._controlled(self._said(answer))
        elif command in ("/file", "/image"):
            await self._file(rest, image=command == "/image")
        else:
            await self._chat(text)

    async def _controlled(self, command: Coroutine[Any, Any, None]) -> None:
        # A chat line survives a store outage through the outbox; a memory command just says so.
        try:
            await command
        except StoreUnavailable:
            self._say(STORE_DOWN)

    async def _said(self, answer: Awaitable[str] | None) -> None:
        self._say(await answer if answer is not None else NO_BACKEND)

    async def _memory_command(self, command: str, argument: str) -> None:
        controls = self.controls
        if controls is None:
            self._say(NO_CONTROLS)
        elif command == "/memories":
            page = await controls.memories_page(self.user_id, page_number(argument or "1"), chat_id=CHAT_ID)
            self._say(page.render() + (f"\nOlder: /memories {page.page + 1}" if page.has_next else ""))
        elif command == "/forget" and argument.lower() in ("all", "everything"):
            self.asked_forget_all = True
            self._say(FORGET_ALL_PROMPT)
        elif command == "/forget":
            self._say(await controls.forget_one(self.user_id, argument, chat_id=CHAT_ID))
        elif command == "/confirm":
            self._say(await controls.confirm(self.user_id, argument, chat_id=CHAT_ID))
        elif command == "/privacy":
            self._say(await controls.privacy(self.user_id, argument))
        else:
            self._say(await controls.correct(self.user_id, argument, chat_id=CHAT_ID))

    async def _app_command(self, command: str, argument: str) -> None:
        if self.apps is None:
            self._say(NO_APPS)
        elif command == "/apps":
            self._say(await self.apps.manage(self.user_id, argument))
        else:
            if argument.lower() == "retry":
                answer = await self.apps.retry(self.user_id, None, self._progress)
            else:
                answer = await self.apps.build(self.user_id, CHAT_ID, argument, self._progress)
            self._say(answer.text + (f"\n{RETRY_HINT}" if answer.retry_id is not None else ""))

    async def _proactive_command(self, command: str, argument: str) -> None:
        commands = self._ready_parts().proactive
        if commands is None:
            self._say(PROACTIVE_NOT_WIRED)
        elif command == "/proactive":
            self._say(await commands.proactive(self.user_id, argument))
        else:
            self._say(await commands.reminders(self.user_id, argument))

    async def _forget_all(self, sure: bool) -> None:
        if sure and self.controls is not None:
            self._say(await self.controls.forget_all(self.user_id))
        else:
            self._say(KEPT)

    async def _chat(self, text: str) -> None:
        await self._reply(
            self.conversation.handle_message(UserMessage(self.user_id, CHAT_ID, text, datetime.now(UTC)))
        )

    async def _file(self, argument: str, *, image: bool) -> None:
        """A file from disk, as if the person had sent it: an image (by its content, or with /image)
        is seen, a document kept (its summary shown), anything else heard; then answered."""
        parts = self._ready_parts()
        if parts.voice is None and parts.images is None and parts.documents is None:
            self._say(NO_FILES)
            return
        path, caption = path_and_caption(argument)
        if not path:
            self._say(USAGE)
            return
        limits = [part.policy.max_bytes for part in (parts.voice, parts.images) if part is not None]
        limits += [parts.documents.max_bytes] if parts.documents is not None else []
        try:
            size, head, data = await asyncio.to_thread(read_within, path, max(limits))
        except OSError as exc:
            self._say(f"I can't read {path}: {exc.strerror or type(exc).__name__}.")
            return
        name, sent = Path(path).name, datetime.now(UTC)
        if image or looks_like_image(head) or (parts.voice is None and parts.documents is None):
            photo = ImageNote(
                self.user_id, CHAT_ID, MediaFile("image", data, name), sent, caption=caption.strip()
            )
            await self._image(parts.images, size, photo)
            return
        if parts.documents is not None and (parts.voice is None or looks_like_document(data)):
            if (refused := parts.documents.refusal(size, name)) is not None:
                self._say(refused.text)
                return
            document = DocumentNote(
                self.user_id, CHAT_ID, MediaFile("document", data, name), sent, caption=caption.strip()
            )
            await self._reply(parts.documents.handle(document, self._progress))
            return
        assert parts.voice is not None
        if (refused := parts.voice.refusal(size, None)) is not None:
            self._say(refused.text)
            return
        note = VoiceNote(self.user_id, CHAT_ID, MediaFile("audio", data, name), sent, caption=caption)
        await self._reply(parts.voice.handle(note, self._progress))

    async def _image(self, images: Images | None, size: int, note: ImageNote) -> None:
        if images is None:
            self._say(NO_FILES)
            return
        why = images.refusal(size)
        await self._reply(images.refused(note, why) if why is not None else images.handle(note))

    async def _progress(self, step: str) -> None:
        self._say_err(step)

    async def _reply(self, events: AsyncIterator[ReplyEvent]) -> None:
        surface = ConsoleSurface(self.io.out, "kindred › " if self.io.interactive else "")
        layout = replace(TERMINAL, notices=self._say_err)
        parts, speak = self._ready_parts(), None
        if parts.spoken is not None and parts.spoken_file is not None:
            speak = SpeakTo(parts.spoken, self.user_id, ConsoleSpeaker(parts.spoken_file, self.io.err))
        delivered = await deliver(events, surface, layout, speak=speak)
        if delivered.done is not None:
            self.last_reply_turn = delivered.done.turn_id

    async def _react(self, emoji: str) -> None:
        if not emoji:
            self._say("Usage: /react EMOJI, for example /react 👍")
            return
        if self.last_reply_turn is None:
            self._say("There is no reply of mine to react to yet.")
            return
        reaction = Reaction(self.user_id, self.last_reply_turn, emoji, datetime.now(UTC))
        value = await self.conversation.handle_reaction(reaction)
        if value is None:
            self._say(f"Noted, but {emoji} has no meaning for me yet (try 👍 or 👎).")
        else:
            self._say(f"Thanks for the {emoji}.")

    def _ready_parts(self) -> ChatParts:
        if self._parts is None:
            raise RuntimeError("the chat's parts are still loading")  # _until_ready comes first
        return self._parts

    async def _until_ready(self) -> None:
        if self._parts is not None:
            return
        assert self._loading is not None
        if not self._loading.done() and not self._told_still_loading:
            self._told_still_loading = True
            self._say_err(STILL_LOADING)
        self._parts = await self._loading

    async def _next_line(self) -> str:
        """The next line, read on a thread of its own; "" at the end of input. While the parts
        load, a failed load wins over a line that has not come yet."""
        line = _read_in_thread(self.io.read_line)
        loading = self._loading
        if self._parts is None and loading is not None and not loading.done():
            either: set[asyncio.Future[Any]] = {line, loading}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        failed = loading.exception() if loading is not None and loading.done() else None
        if failed is not None:
            raise failed
        return await line

    def _say(self, text: str) -> None:
        self.io.out.write(text + "\n")
        self.io.out.flush()

    def _say_err(self, text: str) -> None:
        self.io.err.write(text + "\n")
        self.io.err.flush()

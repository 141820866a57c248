"""What a person can see and change about what Kindred keeps: the chat commands' logic.

Every adapter renders these answers its own way; none of them decides what the answers say.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.core.errors import InvalidInput, StoreUnavailable
from bot.core.learning import RewardWeights, control_used
from bot.core.media.ports import FileShelf
from bot.core.memory import curation, operations
from bot.core.memory.jsonl_format import listing_record, size_words
from bot.core.memory.kinds import UNLISTED
from bot.core.memory.person_records import export_bytes
from bot.core.memory.ports import Embedder
from bot.core.memory.recall import document_source
from bot.core.models import DOCUMENT, Memory, Revision
from bot.core.store import Store
from bot.core.text import clean_message

log = logging.getLogger(__name__)

PAGE_SIZE = 5
MAX_CORRECTION_CHARS = 500
FOOTER = "Forget one with /forget ID, confirm it with /confirm ID, fix it with /correct ID new text."
# A control used within this time after a reply answers it (the reward's session gap).
SESSION_GAP = RewardWeights().session_gap
# A memory line in a chat list: enough to recognise it, short enough for a phone screen.
LINE_CHARS = 160
# /export is one file; Telegram fails a bot's upload over 50 MB only once it is built: refused before.
MAX_CHAT_EXPORT_BYTES = 45 * 2**20
EXPORT_TOO_BIG = (
    "Everything I keep about you is more than {size}, too much to send as one file here. "
    "My admin can write it whole with `kindred memory export --user …`."
)

PRIVACY = (
    "What I keep: the messages you send me, as memories that only your conversations with me can "
    "recall; my replies, as our conversation (never as memories about you), each with what I was "
    "given to write it; and the reactions you give my replies. I use them to answer you better. "
    "Each night, people's reactions also train a small adapter that improves how I reply; people "
    "who switch training off are left out of it. A share of my replies may come from a new version "
    "under trial, which keeps serving only if people's reactions show it does better; people who "
    "switch training off always get the version that serves everyone, never one under trial. "
    "Nothing is shared with other people or sold. "
    "/memories shows what I remember of what you told me, /forget deletes one memory or all of "
    "them, and /export sends you everything, my replies, your settings and usage included, as a "
    "file. What you forget leaves every later training set, and since every night trains again "
    "from the base model, the model I serve forgets it within one night."
)
PRIVACY_USAGE = (
    "/privacy shows what I keep and why. /privacy training off leaves your replies out of the "
    "nightly training; /privacy training on lets them in again. /privacy files keep keeps the files "
    "you send me until you forget them; /privacy files delete (the default) deletes each once read."
)
FILES_KEEP = (
    "Done: from now on I keep the files you send me (what I read from them, and the file itself) "
    "until you forget them with /forget file NAME or /forget all. /privacy files delete stops that."
)
FILES_DELETE = (
    "Done: from now on I delete each file you send me once I have read it; what I read from it "
    "stays a memory until you forget it. Files I kept before stay until you /forget them. "
    "/privacy files keep keeps them again."
)
TRAINING_OFF = (
    "Done: training is off for you. From tonight on, none of your replies or reactions train the "
    "model, and since every night trains again from the base model, what it learnt from them goes "
    "within one night. /privacy training on turns it back on."
)
TRAINING_ON = (
    "Done: training is on for you. From tonight on, your reactions to my replies help train how I "
    "reply. /privacy training off turns it off again."
)
APP_SOON = (
    "Building small web tools for you is coming soon. For now I can chat, remember, and forget on request."
)
OPT_OUT_FORGOTTEN = (
    "Your choice to keep your chats out of training went too: send /privacy training off again."
)
FORGET_ALL_ASK = (
    "This deletes every memory, message and reaction I keep about you, and your settings and usage, "
    "for good. Are you sure?"
)


@dataclass(frozen=True, slots=True)
class CommandInfo:
    name: str
    description: str


COMMANDS = (
    CommandInfo("start", "say hello"), CommandInfo("help", "what I can do"),
    CommandInfo("memories", "what I remember about you"),
    CommandInfo("forget", "forget one memory (/forget ID), a file (/forget file NAME) or all of them"),
    CommandInfo("confirm", "confirm a memory is right (/confirm ID)"),
    CommandInfo("correct", "correct a memory (/correct ID what is true now)"),
    CommandInfo("export", "everything I keep about you, as a file"),
    CommandInfo("persona", "who I am here, and the others to pick"),
    CommandInfo("model", "the model I answer with here, and the others you may use"),
    CommandInfo("privacy", "what I keep and why"),
    CommandInfo("voice", "whether I also answer in voice notes (/voice on or off)"),
    CommandInfo("usage", "what you used today and this month"),
    CommandInfo("settings", "your choices on one screen (/settings web: the same as a web page)"),
    CommandInfo("app", "build a small web app for you (/app a packing list)"),
    CommandInfo("apps", "your apps: list them, restore a version, revoke a link"),
    CommandInfo("proactive", "whether I may write to you first (/proactive on or off), your time zone"),
    CommandInfo("reminders", "your reminders (say “remind me …”): list or cancel them"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """One page of a person's memories, newest first. `page` counts from 1."""

    memories: tuple[Memory, ...]
    page: int
    has_next: bool
    now: datetime

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    def render(self) -> str:
        if not self.memories:
            return "I don't remember anything about you yet." if self.page == 1 else "No more memories."
        lines = [f"Memories, page {self.page} (newest first):"]
        lines += [memory_line(memory, self.now) for memory in self.memories]
        lines.append(FOOTER)
        return "\n".join(lines)


def memory_line(memory: Memory, now: datetime) -> str:
    text = " ".join(memory.text.split())
    if len(text) > LINE_CHARS:
        text = text[: LINE_CHARS - 1] + "…"
    source = f"{document_source(memory, 'your')}: " if memory.kind == DOCUMENT else ""
    return f"#{memory.id} · {memory.kind} · {age(memory.created_at, now)} · {standing(memory)}{source}{text}"


def standing(memory: Memory) -> str:
    """What a person should know about a memory besides its text: replaced, past, confirmed."""
    marks = {
        "superseded": f"replaced by #{memory.superseded_by}" if memory.superseded_by else "replaced",
        "merged": f"same as #{memory.superseded_by}" if memory.superseded_by else "merged",
        "archived": "summarised",
        "past": "past",
    }
    found = [marks[memory.status]] if memory.status in marks else []
    if memory.verification > 0:
        found.append("confirmed")
    if memory.pinned:
        found.append("kept")
    return f"[{', '.join(found)}] " if found else ""


def age(then: datetime, now: datetime) -> str:
    seconds = max((now - then).total_seconds(), 0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


# Ids and page numbers people type: ASCII digits only ("²" is a digit to str.isdigit, not to int),
# and short enough for a 64-bit integer column.
MAX_NUMBER_DIGITS = 18


def whole_number(text: str) -> int | None:
    text = text.strip()
    if text.isascii() and text.isdigit() and len(text) <= MAX_NUMBER_DIGITS:
        return int(text)
    return None


def page_number(text: str) -> int:
    """A typed page number; anything else is page 1."""
    return max(whole_number(text) or 1, 1)


def training_setting(consent: bool | None, default: bool) -> str:
    """One line: whether this person's replies train tonight, and why."""
    on = default if consent is None else consent
    why = "the default here" if consent is None else "your choice"
    change = "off" if on else "on"
    return (
        f"Training with your replies: {'on' if on else 'off'} ({why}). "
        f"/privacy training {change} turns it {change}."
    )


def files_setting(keep: bool) -> str:
    """One line: whether the files this person sends are kept once read."""
    if keep:
        return (
            "Files you send me: kept, until you forget them (your choice). "
            "/privacy files delete deletes them once read."
        )
    return (
        "Files you send me: deleted once I have read them (the default); what I read from them stays "
        "a memory until you forget it. /privacy files keep keeps the files too."
    )


def help_text(persona_name: str = "Kindred") -> str:
    commands = "\n".join(f"/{c.name} — {c.description}" for c in COMMANDS)
    return (
        f"I'm {persona_name}, a companion that remembers what you tell me. Just write to me.\n"
        f"React to my replies (👍 👎 ❤️) to tell me what helped.\n\n{commands}"
    )


class Controls:
    def __init__(
        self,
        store: Store,
        persona: str,
        *,
        page_size: int = PAGE_SIZE,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        embedder: Embedder | None = None,
        default_training_consent: bool = True,
        session_gap: timedelta = SESSION_GAP,
        max_export_bytes: int = MAX_CHAT_EXPORT_BYTES,
        shelf: FileShelf | None = None,
    ) -> None:
        self.store = store
        # The files of people who asked that they be kept; forgetting a file deletes it there too.
        self.shelf = shelf
        self.max_export_bytes = max_export_bytes
        self.embedder = embedder
        self.persona = persona
        self.page_size = page_size
        self._clock = clock
        # The admin's choice for people who never used /privacy training (core/learning/dataset.py).
        self.default_training_consent = default_training_consent
        # A control used this soon after a reply counts as a tool use of it (core/learning/signals.py).
        self.session_gap = session_gap

    async def memories_page(self, user_id: str, page: int, *, chat_id: str | None = None) -> MemoryPage:
        """Newest first: the latest memories are the ones a person checks. What the person said,
        what was extracted from it, and summaries; the bot's replies are in the chat itself, and
        in /export (core/memory/kinds.py: UNLISTED). With `chat_id` (the /memories command, not a page
        button), opening it right after a reply counts as a tool use of that reply."""
        await self._used("memories", user_id, chat_id)
        page = max(page, 1)
        total = await self.store.memories.memory_count(user_id, without_kinds=tuple(UNLISTED))
        end = total - (page - 1) * self.page_size
        start = max(end - self.page_size, 0)
        found = (
            await self.store.memories.list_memories(
                user_id, end - start, start, without_kinds=tuple(UNLISTED)
            )
            if end > 0
            else []
        )
        return MemoryPage(tuple(reversed(found)), page, start > 0, self._clock())

    async def forget_one(self, user_id: str, argument: str, *, chat_id: str | None = None) -> str:
        """/forget ID, or /forget file NAME: every passage of one file the person shared."""
        verb, _, name = argument.strip().partition(" ")
        if verb.lower() == "file":
            return await self.forget_file(user_id, name.strip(), chat_id=chat_id)
        memory_id = whole_number(argument.strip().lstrip("#"))
        if memory_id is None:
            return "Tell me which memory: /forget ID (the number from /memories), or /forget all."
        if await self.store.memories.forget(user_id, memory_id):
            await self._used("forget", user_id, chat_id)
            return f"Forgotten: memory #{memory_id}. It will not come up again."
        return f"I have no memory #{memory_id} of yours. /memories lists them."

    async def forget_file(self, user_id: str, name: str, *, chat_id: str | None = None) -> str:
        """Forget every passage kept of the file called `name` (as /memories shows it; any case)."""
        if not name:
            return "Tell me which file: /forget file NAME, with the name /memories shows."
        wanted = name.casefold()
        passages = [
            memory.id
            async for memory in operations.all_memories(self.store.memories, user_id)
            if memory.kind == DOCUMENT and str(memory.meta.get("file", "")).casefold() == wanted
        ]
        files = await self.shelf.remove(user_id, name) if self.shelf is not None else 0
        if not passages and not files:
            return f"I keep no file called {name}. /memories lists what I keep."
        for memory_id in passages:
            await self.store.memories.forget(user_id, memory_id)
        await self._used("forget", user_id, chat_id)
        also = " The file itself is deleted too." if files else ""
        return f"Forgotten: {name}, all {len(passages)} passages of it. None will come up again.{also}"

    async def confirm(self, user_id: str, argument: str, *, chat_id: str | None = None) -> str:
        """The person says a memory is right: it counts as verified (v = 1) from now on."""
        memory_id = whole_number(argument.strip().lstrip("#"))
        if memory_id is None:
            return "Tell me which memory: /confirm ID (the number from /memories)."
        revision = Revision(verification=1.0, updated_at=self._clock())
        if await self.store.curation.revise_memory(user_id, memory_id, revision):
            await self._used("confirm", user_id, chat_id)
            return f"Thanks, memory #{memory_id} is confirmed. I'll rely on it."
        return f"I have no memory #{memory_id} of yours. /memories lists them."

    async def correct(self, user_id: str, argument: str, *, chat_id: str | None = None) -> str:
        """The person says what is true instead: a new, confirmed memory replaces the old one."""
        number, _, text = argument.strip().partition(" ")
        memory_id = whole_number(number.lstrip("#"))
        text = " ".join(text.split())
        if memory_id is None or not text:
            return "Tell me which memory and what is true now: /correct ID new text."
        if len(text) > MAX_CORRECTION_CHARS:
            return f"Please keep a correction under {MAX_CORRECTION_CHARS} characters."
        try:
            text = clean_message(text, MAX_CORRECTION_CHARS)  # controls and lone surrogates out
        except InvalidInput as exc:
            return str(exc)
        found = await self.store.curation.get_memories(user_id, [memory_id])
        if not found:
            return f"I have no memory #{memory_id} of yours. /memories lists them."
        if not found[0].recallable and found[0].superseded_by is not None:
            return f"Memory #{memory_id} was already replaced by #{found[0].superseded_by}; correct that one."
        if self.embedder is None:
            return "I can't take corrections here right now; /forget the memory and tell me again."
        new_id = await curation.replace(self.store, self.embedder, found[0], text, self._clock())
        await self._used("correct", user_id, chat_id)
        return f"Corrected: #{new_id} now says “{text}”, and #{memory_id} will not come up again."

    async def forget_all(self, user_id: str) -> str:
        opted_out = await self.store.learning.training_consent(user_id) is False
        count = await self.store.memories.forget_all(user_id)
        files = await self.shelf.remove_all(user_id) if self.shelf is not None else 0
        done = f"Done. I forgot everything about you ({count} memories" + (
            f", and the {files} files you asked me to keep)." if files else ")."
        )
        # Not even the id is kept, so neither is the choice: a new person gets the default.
        return f"{done} {OPT_OUT_FORGOTTEN}" if opted_out else done

    async def export_jsonl(self, user_id: str, *, chat_id: str | None = None) -> bytes:
        """Every memory as the JSONL that `kindred memory import` reads back, then the person's
        settings and usage, which it keeps aside (person_records.py). Raises InvalidInput, with
        words for the person, as soon as it grows past `max_export_bytes`: nothing is sent."""
        await self._used("export", user_id, chat_id)
        data = await export_bytes(self.store, user_id, listing_record, self.max_export_bytes)
        if data is None:
            raise InvalidInput(EXPORT_TOO_BIG.format(size=size_words(self.max_export_bytes)))
        return data

    async def privacy(self, user_id: str, argument: str = "") -> str:
        """/privacy [training on|off]: what Kindred keeps and this person's training setting, or
        the setting changed, in plain words; anything else says how to use it."""
        words = " ".join(argument.lower().split())
        if words in ("training on", "training off"):
            on = words == "training on"
            await self.store.learning.set_training_consent(user_id, on)
            return TRAINING_ON if on else TRAINING_OFF
        if words in ("files keep", "files delete"):
            keep = words == "files keep"
            await self.store.turns.set_keep_files(user_id, keep)
            return FILES_KEEP if keep else FILES_DELETE
        if words:
            return PRIVACY_USAGE
        try:
            consent = await self.store.learning.training_consent(user_id)
            keep = await self.store.turns.keeps_files(user_id)
        except StoreUnavailable:
            return f"{PRIVACY}\n\n(I can't read your settings right now; try again soon.)"
        training = training_setting(consent, self.default_training_consent)
        return f"{PRIVACY}\n\n{training}\n{files_setting(keep)}"

    async def _used(self, command: str, user_id: str, chat_id: str | None) -> None:
        """Count a memory control used right after a reply as a tool use of it (α). Never fails
        the control itself: the signal is a nicety, the person's request is not."""
        if chat_id is None:
            return
        try:
            await control_used(self.store, user_id, chat_id, command, self._clock(), self.session_gap)
        except StoreUnavailable as exc:
            log.warning("could not count /%s as a tool use: %s", command, exc)

    async def mark_unreachable(self, user_id: str) -> None:
        """The person blocked the bot: stop reaching out to them until they write again."""
        try:
            await self.store.turns.set_user_active(user_id, False)
        except StoreUnavailable:
            log.warning("could not mark %s inactive: the store is unavailable", user_id)

    async def stats_text(self) -> str:
        stats = await self.store.stats()
        return (
            f"{stats.backend}: {stats.users} people, {stats.turns} turns, "
            f"{stats.memories} memories, {stats.feedback_events} reactions"
        )

    def persona_text(self) -> str:
        return f"This is who I am, as my admin set me up:\n\n{self.persona}"

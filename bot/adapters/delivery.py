"""One reply, from the core's events to a platform's messages, the same way on every platform.

The delivery consumes every reply event, paces and splits the growing text (`streaming.py`), ends
the reply with its words (`ReplyDone.text`: a reply the token budget cut ends at its last whole
sentence, and the tail that streamed is edited away) and, after a blank line, a short plain
notice when there is one (the store is down, the model failed mid-reply, something broke), and
links the messages that show it to the stored turn. A platform adds only a `Surface`: send, edit,
delete and finish. For a person who turned spoken replies on, the finished reply then comes as a
voice note too (`spoken.py`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.adapters import streaming
from bot.adapters.spoken import SpeakTo, speak_reply
from bot.adapters.streaming import EDIT_INTERVAL_S, StreamedReply
from bot.core.chat.conversation import Conversation
from bot.core.errors import KindredError
from bot.core.events import AnsweredBefore, Refusal, ReplyChunk, ReplyDone, ReplyEvent

log = logging.getLogger(__name__)

SORRY = "Sorry, something went wrong on my side and I couldn't answer that. Please try again."


class NotShown(Exception):
    """The platform did not show a message: it refused, the person is gone, the network failed.

    Surfaces raise it in place of their SDK's errors. The delivery then skips the growing text but
    still tries the finished reply once (a network blip mid-stream must not leave a cut reply with
    no notice), and consumes the reply to the end, so that it is stored all the same.
    """


class MaybeShown(NotShown):
    """A send whose request was written, then failed (a 5xx, no answer): the person may have the
    message or not. Nothing more of the reply is tried, since sending again could show it twice;
    the stored reply is recorded as of unknown delivery (core/chat/doubts.py)."""


class Gone(NotShown):
    """The person or chat is gone for good (blocked the bot, left, deleted it): nothing more of the
    reply is tried."""


class Surface(streaming.Surface, Protocol):
    async def finish(self, message_ids: Sequence[str], stored: bool) -> None:
        """The finished reply shows in `message_ids` (in order): add what a finished reply carries
        (feedback buttons for a `stored` one, a terminal's line end)."""
        ...


@dataclass(frozen=True, slots=True)
class Layout:
    """How one platform shows a growing reply."""

    limit: int
    measure: Callable[[str], int] = len
    interval_s: float = EDIT_INTERVAL_S
    # A reply finished within this long is shown once, whole.
    first_delay_s: float = 0.0
    # A live preview that is not yet a message (Telegram's sendMessageDraft), where there is one.
    draft: Callable[[str], Awaitable[None]] | None = None
    # Chat platforms trim a message's outer whitespace; a terminal prints words exactly as they come.
    verbatim: bool = False
    # A surface that cannot take back what it showed (a terminal) streams whole sentences only:
    # a reply the budget cuts ends at its last one (`StreamedReply`).
    hold_tail: bool = False
    # Where a finished reply's notice (the store was down) goes when the surface has a channel apart
    # for it, as a terminal has stderr, so that a pipe reads only the reply; None: after the words.
    notices: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class LinkTo:
    """Where a reply's messages are recorded, so that a reaction on any of them reaches its turn."""

    conversation: Conversation
    platform: str
    chat_id: str
    user_id: str


@dataclass(frozen=True, slots=True)
class Delivered:
    message_ids: tuple[str, ...]
    # None when the reply ended without one: refused, failed mid-stream.
    done: ReplyDone | None
    # Why showing stopped, if it did; the reply was consumed (and stored) all the same.
    not_shown: NotShown | None


def with_notice(words: str, notice: str | None) -> str:
    """A reply's words, then after a blank line a short plain notice. The words already written
    stay: a person keeps what they read, and learns why it stopped or what was not saved."""
    return "\n\n".join(part for part in (words.strip(), notice) if part)


class _Showing:
    """Display steps. After the first one the platform does not show, the growing text is skipped;
    the finished reply is tried once more (`retry`) unless the person is gone, and when it shows,
    the steps after it run again."""

    def __init__(self) -> None:
        self.refused: NotShown | None = None

    async def attempt(self, step: Callable[[], Awaitable[object]], *, retry: bool = False) -> None:
        if isinstance(self.refused, Gone | MaybeShown) or (self.refused is not None and not retry):
            return
        try:
            await step()
        except NotShown as exc:
            log.warning("a reply could not be shown: %s", exc)
            self.refused = exc
        else:
            if retry:
                self.refused = None  # the finished reply shows after all


async def deliver(
    events: AsyncIterable[ReplyEvent],
    surface: Surface,
    layout: Layout,
    *,
    link: LinkTo | None = None,
    speak: SpeakTo | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Delivered:
    """Show the reply in `events` on `surface`; every event is consumed whatever the platform does.

    A finished reply is linked (when `link` is given) to every message that shows it, including
    those shown before showing failed; then, with `speak`, said as a voice note to a person who
    asked for spoken replies.
    """
    reply = StreamedReply(
        surface,
        limit=layout.limit,
        measure=layout.measure,
        interval_s=layout.interval_s,
        first_delay_s=layout.first_delay_s,
        draft=layout.draft,
        verbatim=layout.verbatim,
        hold_tail=layout.hold_tail,
        clock=clock,
    )
    showing = _Showing()
    ending: ReplyDone | Refusal | AnsweredBefore | None = None
    try:
        async for event in events:
            if isinstance(event, ReplyChunk):
                await showing.attempt(lambda: reply.add(event.text))  # noqa: B023 (awaited at once)
            else:
                ending = event
    except KindredError as exc:
        # The core keeps what it could not store; the person at least hears that it failed.
        log.error("a reply failed: %s", exc)
        ending = Refusal(SORRY)
    if isinstance(ending, AnsweredBefore):
        # A second delivery: the person has the reply. What a lead (a voice note's echo) showed
        # of it goes.
        await showing.attempt(reply.withdraw)
        return Delivered((), None, showing.refused)
    done = ending if isinstance(ending, ReplyDone) else None
    if done is not None and done.notice and layout.notices is not None:
        final = with_notice(done.text, None)
        layout.notices(done.notice)
    elif done is not None:
        final = with_notice(done.text, done.notice)
    else:
        final = with_notice(reply.text_so_far, ending.text if ending is not None else None)
    await showing.attempt(lambda: reply.finish(final), retry=True)
    ids = reply.message_ids
    if link is not None and done is not None:
        await link.conversation.link_reply(link.platform, link.chat_id, ids, done, link.user_id)
        if isinstance(showing.refused, MaybeShown) and done.turn_id is not None:
            doubts = link.conversation.doubts
            await doubts.maybe_shown(link.platform, link.chat_id, done.turn_id, link.user_id)
    stored = done is not None and done.turn_id is not None
    await showing.attempt(lambda: surface.finish(ids, stored))
    delivered = Delivered(tuple(ids), done, showing.refused)
    if speak is not None:
        await speak_reply(delivered, speak, link)
    return delivered

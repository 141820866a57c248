"""The simulated people of bench/soak.py. Each writes, waits for the answer (or gives up after a
while, as a person would), thinks, and does something else, until the soak's end: chats mostly,
reactions and 👍/👎 presses on the bot's replies, commands, an app build now and then, and a few
reminders. Each keeps a log of what it did and what it expects back, for the checks. A person told
that a reply may not have arrived (core/chat/doubts.py) reads which one the notice quotes, and
presses "send it again" only when that reply has not shown in their chat."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from bench.parts.soak.kinds import (
    APP,
    DOUBT,
    MEMORIES,
    PRIVACY_KIND,
    REMINDER_OK,
    REMINDERS,
    REPLY,
    SETTING,
    kind_of,
)
from bot.adapters.telegram.chat import FEEDBACK_DOWN, FEEDBACK_UP
from bot.core.chat.doubts import doubt_notice
from tests.support.telegram_api import FakeTelegramBotApi

ANSWER_WAIT_S = 90.0
# A chat reply is quick: a person who hears nothing for this long writes again (and so sees the
# notice that a reply may not have arrived, if it did not).
REPLY_WAIT_S = 30.0
POLL_S = 0.25
COMMANDS = {"/memories": MEMORIES, "/privacy": PRIVACY_KIND, "/reminders": REMINDERS}
# What a person does next, and how often (the rest of 1.0 is chat).
REACT, PRESS, COMMAND, BUILD, BURST = 0.12, 0.06, 0.12, 0.04, 0.08
BUILDS_EACH = 1  # an app build is slow work on the worker: one per person is plenty of them


@dataclass
class Person:
    user: int
    rng: random.Random
    expected: Counter[str] = field(default_factory=Counter)  # kinds of bot message owed
    sequence: list[str] = field(default_factory=list)  # the same, in order
    asked_at: list[float] = field(default_factory=list)  # when each was asked (time.monotonic)
    reactions: int = 0  # message_reaction updates sent, each on another reply
    presses: int = 0  # 👍/👎 button presses, each on another reply
    reminders: list[str] = field(default_factory=list)  # each reminder's task, to ring once
    chat_sent: list[float] = field(default_factory=list)  # when each chat message was queued
    tags: list[str] = field(default_factory=list)  # each chat message's tag, in the order sent
    timeouts: int = 0
    resends: int = 0  # "send it again" presses
    builds: int = 0
    # Past this moment (the load's end) nobody waits for an answer any more: the drain does.
    patience_until: float = float("inf")
    remind_in: str = "1 minute"
    reacted_on: set[int] = field(default_factory=set)  # the replies' message ids reacted to
    pressed_on: set[int] = field(default_factory=set)  # and those whose 👍/👎 was pressed
    _notices_seen: set[int] = field(default_factory=set)  # pressed, or there before they last wrote


def owe(person: Person, kind: str) -> None:
    person.expected[kind] += 1
    person.sequence.append(kind)
    person.asked_at.append(time.monotonic())


def bot_kinds(api: FakeTelegramBotApi, user: int) -> list[tuple[int, str]]:
    return [(int(m.data["message_id"]), kind_of(m.text)) for m in api.bot_messages(user)]


async def wait_for(api: FakeTelegramBotApi, person: Person, kind: str) -> bool:
    """Until the chat holds as many messages of `kind` as the person is owed; a notice that a reply
    may not have arrived, meanwhile, is answered with its button when one is indeed missing."""
    patience = REPLY_WAIT_S if kind == REPLY else ANSWER_WAIT_S
    deadline = min(time.monotonic() + patience, person.patience_until)
    while True:
        if sum(1 for _, k in bot_kinds(api, person.user) if k == kind) >= person.expected[kind]:
            return True
        ask_again(api, person)
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(POLL_S)
    person.timeouts += 1
    return False


def replies(api: FakeTelegramBotApi, person: Person) -> list[int]:
    return [message_id for message_id, kind in bot_kinds(api, person.user) if kind == REPLY]


def ask_again(api: FakeTelegramBotApi, person: Person) -> bool:
    """Presses the "send it again" of a notice that came since the person last wrote, when the reply
    it quotes has not shown in the chat; a person who has that reply leaves it alone."""
    shown = api.bot_messages(person.user)
    for message in shown:
        message_id = int(message.data["message_id"])
        buttons = (message.reply_markup or {}).get("inline_keyboard") or [[{}]]
        data = buttons[0][0].get("callback_data")
        if kind_of(message.text) != DOUBT or not data or message_id in person._notices_seen:
            continue
        person._notices_seen.add(message_id)
        # The notice quotes its reply's opening words (the tag among them): is it one of these?
        if any(doubt_notice(m.text or "") == message.text for m in shown if kind_of(m.text) != DOUBT):
            continue
        person.resends += 1
        api.callback(person.user, message_id, person.user, str(data))
        return True
    return False


def say(api: FakeTelegramBotApi, person: Person, text: str) -> None:
    """A chat message, tagged so that its reply can be told apart (bench/parts/soak/bot.py)."""
    person._notices_seen |= {
        int(m.data["message_id"]) for m in api.bot_messages(person.user) if kind_of(m.text) == DOUBT
    }
    tag = f"[r{len(person.tags)}]"
    person.tags.append(tag)
    owe(person, REPLY)
    person.chat_sent.append(time.monotonic())
    api.private_message(person.user, f"{text} {tag}")


async def chat(api: FakeTelegramBotApi, person: Person, text: str, *, burst: int = 1) -> None:
    """`burst` messages one after the other without waiting, as people often write; then their replies."""
    for n in range(burst):
        say(api, person, text if n == 0 else f"{text}, and one more thing")
    await wait_for(api, person, REPLY)


async def react(api: FakeTelegramBotApi, person: Person) -> bool:
    fresh = [m for m in replies(api, person) if m not in person.reacted_on]
    if not fresh:
        return False
    message_id = person.rng.choice(fresh)
    person.reacted_on.add(message_id)
    person.reactions += 1
    api.reaction(person.user, message_id, person.user, old=[], new=[person.rng.choice(["👍", "❤", "👎"])])
    return True


async def press(api: FakeTelegramBotApi, person: Person) -> bool:
    fresh = [m for m in replies(api, person) if m not in person.pressed_on]
    if not fresh:
        return False
    message_id = person.rng.choice(fresh)
    person.pressed_on.add(message_id)
    person.presses += 1
    api.callback(person.user, message_id, person.user, person.rng.choice([FEEDBACK_UP, FEEDBACK_DOWN]))
    return True


async def command(api: FakeTelegramBotApi, person: Person) -> None:
    name = person.rng.choice(sorted(COMMANDS))
    owe(person, COMMANDS[name])
    api.private_message(person.user, name)
    await wait_for(api, person, COMMANDS[name])


async def build(api: FakeTelegramBotApi, person: Person) -> None:
    person.builds += 1
    owe(person, APP)
    api.private_message(person.user, f"/app a packing list for trip {person.user}-{person.builds}")
    await wait_for(api, person, APP)


async def remind(api: FakeTelegramBotApi, person: Person) -> None:
    """A zone and no quiet hours first (a reminder waits for both), then "remind me in 1 minute to …"."""
    for setting in ("/proactive timezone Europe/Berlin", "/proactive quiet 0-0"):
        owe(person, SETTING)
        api.private_message(person.user, setting)
        await wait_for(api, person, SETTING)
    task = f"water the plants r{person.user}"
    person.reminders.append(task)
    owe(person, REMINDER_OK)
    api.private_message(person.user, f"remind me in {person.remind_in} to {task}")
    await wait_for(api, person, REMINDER_OK)


async def live(api: FakeTelegramBotApi, person: Person, until: float, think_s: float, reminds: bool) -> None:
    """One person's soak: a first chat, a reminder if asked, then random actions until `until`."""
    person.patience_until = until
    await asyncio.sleep(person.rng.uniform(0, think_s))
    await chat(api, person, f"hello, I am {person.user} and I like hiking and tea")
    if reminds:
        await remind(api, person)
    n = 0
    while time.monotonic() < until:
        await asyncio.sleep(person.rng.expovariate(1 / think_s))
        if time.monotonic() >= until:
            break
        n += 1
        roll = person.rng.random()
        if roll < REACT and await react(api, person):
            continue
        roll -= REACT
        if roll < PRESS and await press(api, person):
            continue
        roll -= PRESS
        if roll < COMMAND:
            await command(api, person)
        elif roll < COMMAND + BUILD and person.builds < BUILDS_EACH:
            await build(api, person)
        elif roll < COMMAND + BUILD + BURST:
            await chat(api, person, f"message {n} from {person.user}: two things at once", burst=2)
        else:
            await chat(api, person, f"message {n} from {person.user}: today I walked by the river")

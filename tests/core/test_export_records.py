"""/export carries the person's settings and usage after their memories, and /forget all deletes
them, on SQLite and on PostgreSQL: a private chat's persona choice goes with its person, a group's
stays the group's, and the person's share of a group's usage goes while the others' stays."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, time, timedelta
from typing import Any

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyDone, UserMessage
from bot.core.memory.controls import Controls
from bot.core.memory.jsonl_format import RECORD_KEY, parse_lines
from bot.core.personas import PersonaBook, PersonaPicker, parse_personas
from bot.core.proactive.models import ProactiveSettings
from bot.core.store import Store
from tests.support.fakes import HashEmbedder, ScriptedInference

T0 = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)
ANN, BOB, DM, GROUP = "telegram:1", "telegram:2", "telegram:1", "telegram:-100"
BOOK = parse_personas(
    '[[persona]]\nname = "kindred"\nprompt = "You are Kindred."\n'
    '[[persona]]\nname = "coach"\nprompt = "You are a coach."\n'
    '[[persona]]\nname = "tutor"\nprompt = "You are a tutor."\n'
)
CHOSEN = ProactiveSettings(
    enabled=True, timezone="Europe/Lisbon", quiet_start=time(23, 0), quiet_end=time(7, 30),
    disabled=frozenset({"break"}),
)  # fmt: skip


class Fixed:
    def __init__(self, book: PersonaBook) -> None:
        self._book = book

    def book(self) -> PersonaBook:
        return self._book


async def say(store: Store, user: str, chat: str, text: str) -> None:
    picker = PersonaPicker(Fixed(BOOK), store.personas)
    conversation = Conversation(
        store, HashEmbedder(), ScriptedInference("Noted."), ConversationPolicy(persona="p"), personas=picker
    )
    message = UserMessage(user, chat, text, T0, private=chat == DM)
    events = [event async for event in conversation.handle_message(message)]
    assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None


async def everything_chosen(store: Store) -> None:
    """Ann picks a persona in her chat and every setting; the group's admins pick its own."""
    picker = PersonaPicker(Fixed(BOOK), store.personas)
    await picker.pick(DM, "coach", owner=ANN)
    await picker.pick(GROUP, "tutor", owner=None)
    await store.models.choose(DM, "big", ANN)
    await store.models.choose(GROUP, "small", None)
    await say(store, ANN, DM, "My sister Mira lives in Lisbon.")
    await say(store, ANN, GROUP, "Good morning, everyone.")
    await say(store, BOB, GROUP, "Morning, Ann!")
    await store.turns.set_spoken_replies(ANN, True)
    await store.learning.set_training_consent(ANN, False)
    await store.turns.set_keep_files(ANN, True)
    await store.proactive.save_proactive_settings(ANN, CHOSEN, T0)


async def replies(store: Store) -> Counter[tuple[str, bool]]:
    """Replies counted per person and per group chat (`kindred usage`'s sums), today and
    yesterday: the meter counts on today's clock, and a test may run across midnight."""
    today = datetime.now(UTC).date()
    counted: Counter[tuple[str, bool]] = Counter()
    for day in await store.usage.days(today - timedelta(days=1), today):
        counted[(day.who, day.group)] += day.replies
    return counted


def lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


async def test_export_holds_settings_and_usage_after_the_memories_and_import_keeps_them_aside(
    any_store: Store,
) -> None:
    await everything_chosen(any_store)
    data = await Controls(any_store, "p").export_jsonl(ANN)
    exported = lines(data)
    memories = [line for line in exported if RECORD_KEY not in line]
    assert exported[: len(memories)] == memories  # the memory lines first, exactly as before
    assert {line["text"] for line in memories} >= {
        "My sister Mira lives in Lisbon.",
        "Good morning, everyone.",
    }
    settings = [line for line in exported if line.get(RECORD_KEY) == "setting"]
    assert settings == [
        {"record": "setting", "name": "persona", "chat": DM, "value": "coach"},  # not the group's
        {"record": "setting", "name": "model", "chat": DM, "value": "big"},
        {"record": "setting", "name": "spoken_replies", "value": True},
        {"record": "setting", "name": "training", "value": False},
        {"record": "setting", "name": "keep_files", "value": True},
        {"record": "setting", "name": "proactive", "value": {
            "enabled": True, "timezone": "Europe/Lisbon", "quiet_start": "23:00", "quiet_end": "07:30",
            "disabled": ["break"], "declined": [],
        }},
    ]  # fmt: skip
    used = [line for line in exported if line.get(RECORD_KEY) == "usage"]
    assert [(line["kind"], line["group"]) for line in used] == [("reply", None), ("reply", GROUP)]
    assert all(line["tokens_in"] > 0 and line["tokens_out"] > 0 and line["amount"] == 1.0 for line in used)
    assert exported[len(memories) :] == settings + used
    parsed = parse_lines(data.splitlines(keepends=True))
    assert parsed.errors == [] and len(parsed.items) == len(memories)
    assert parsed.aside == {"setting": 6, "usage": 2}
    assert parsed.aside_words().startswith(", kept aside 6 setting and 2 usage lines (not memories")


async def test_defaults_are_not_written_and_nobody_exports_nothing(any_store: Store) -> None:
    await say(any_store, BOB, GROUP, "Morning!")
    exported = lines(await Controls(any_store, "p").export_jsonl(BOB))
    # Bob chose nothing: no setting line; his one reply in the group is his usage.
    assert [line[RECORD_KEY] for line in exported if RECORD_KEY in line] == ["usage"]
    assert await Controls(any_store, "p").export_jsonl("telegram:404") == b""


async def test_forget_all_deletes_settings_usage_and_the_private_persona_but_not_the_groups(
    any_store: Store,
) -> None:
    await everything_chosen(any_store)
    assert await replies(any_store) == {(ANN, False): 2, (BOB, False): 1, (GROUP, True): 2}
    controls = Controls(any_store, "p")
    assert (await controls.forget_all(ANN)).startswith("Done. I forgot everything about you")
    assert await controls.export_jsonl(ANN) == b""
    assert await any_store.personas.chosen(DM) is None and await any_store.personas.chosen_by(ANN) == []
    assert await any_store.personas.chosen(GROUP) == "tutor"  # the group's, made by its admins
    assert await any_store.models.chosen_by(ANN) == [] and await any_store.models.chosen(GROUP) == "small"
    assert await any_store.usage.records(ANN) == []
    assert await replies(any_store) == {(BOB, False): 1, (GROUP, True): 1}  # the group keeps Bob's share only
    assert not await any_store.turns.speaks_replies(ANN) and not await any_store.turns.keeps_files(ANN)
    assert await any_store.learning.training_consent(ANN) is None
    assert await any_store.proactive.proactive_settings(ANN) == ProactiveSettings()
    assert len(lines(await controls.export_jsonl(BOB))) > 0  # Bob keeps everything

"""What the controls add for learning ([learning]), on SQLite and on Postgres + pgvector: a memory
control used right after a reply counts as a tool use of it (α), the signal functions later issues
call, and the privacy switch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.learning.signals import answered_reply, record_proactive_success, record_tool_use
from bot.core.memory.controls import (
    OPT_OUT_FORGOTTEN,
    PRIVACY,
    PRIVACY_USAGE,
    TRAINING_OFF,
    TRAINING_ON,
    Controls,
)
from bot.core.models import NewTurn
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()
T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
GAP = timedelta(minutes=30)


async def said(store: Store, role: str, text: str, at: datetime = T0, chat: str = "c1") -> int:
    made = await store.turns.add_turn(
        NewTurn("ann", chat, role, text, EMB.vector(text), EMB.model_name, at)  # type: ignore[arg-type]
    )
    return made.id


async def tool_uses(store: Store, turn_id: int) -> int:
    record = await store.rewards.reply_record(turn_id, 0)
    assert record is not None
    return record.tool_uses


def controls(store: Store, at: datetime, **options: object) -> Controls:
    return Controls(store, "persona", clock=lambda: at, embedder=EMB, **options)  # type: ignore[arg-type]


async def test_each_memory_control_right_after_a_reply_is_a_tool_use(any_store: Store) -> None:
    await said(any_store, "user", "I like tea")
    reply = await said(any_store, "assistant", "Tea it is.", T0 + timedelta(seconds=1))
    [memory] = [m for m in await any_store.memories.list_memories("ann", 5) if m.text == "I like tea"]
    at = T0 + timedelta(minutes=2)
    used = controls(any_store, at)
    await used.memories_page("ann", 1, chat_id="c1")
    await used.confirm("ann", str(memory.id), chat_id="c1")
    await controls(any_store, at + timedelta(seconds=1)).correct(
        "ann", f"{memory.id} I love tea", chat_id="c1"
    )
    await controls(any_store, at + timedelta(seconds=2)).export_jsonl("ann", chat_id="c1")
    assert await tool_uses(any_store, reply) == 4
    [newer] = [m for m in await any_store.memories.list_memories("ann", 9) if m.text == "I love tea"]
    await controls(any_store, at + timedelta(seconds=3)).forget_one("ann", str(newer.id), chat_id="c1")
    assert await tool_uses(any_store, reply) == 5


async def test_a_replayed_use_counts_once(any_store: Store) -> None:
    reply = await said(any_store, "assistant", "Hello!")
    same_moment = controls(any_store, T0 + timedelta(minutes=1))
    await same_moment.memories_page("ann", 1, chat_id="c1")
    await same_moment.memories_page("ann", 1, chat_id="c1")
    assert await tool_uses(any_store, reply) == 1


async def test_only_a_recent_reply_in_the_same_chat_is_credited(any_store: Store) -> None:
    reply = await said(any_store, "assistant", "Hello!")
    await controls(any_store, T0 + GAP + timedelta(seconds=1)).memories_page("ann", 1, chat_id="c1")
    await controls(any_store, T0 + timedelta(minutes=1)).memories_page("ann", 1, chat_id="elsewhere")
    await controls(any_store, T0 + timedelta(minutes=1)).memories_page("ann", 1)  # a page button: no chat
    await controls(any_store, T0 + timedelta(minutes=1)).forget_one(
        "ann", "999", chat_id="c1"
    )  # no such memory
    assert await tool_uses(any_store, reply) == 0
    await said(any_store, "user", "and another thing", T0 + timedelta(minutes=2))
    await controls(any_store, T0 + timedelta(minutes=3)).memories_page("ann", 1, chat_id="c1")
    assert await tool_uses(any_store, reply) == 0, "the person wrote since: the reply is not answered"


async def test_the_session_gap_is_the_controls_own_setting(any_store: Store) -> None:
    reply = await said(any_store, "assistant", "Hello!")
    late = T0 + timedelta(hours=2)
    await controls(any_store, late, session_gap=timedelta(hours=3)).memories_page("ann", 1, chat_id="c1")
    assert await tool_uses(any_store, reply) == 1
    assert await answered_reply(any_store.turns, "ann", "c1", late, GAP) is None
    assert await answered_reply(any_store.turns, "ann", "c1", T0 + GAP, GAP) == reply


async def test_signals_for_apps_and_proactive_messages_count_once_per_key(any_store: Store) -> None:
    reply = await said(any_store, "assistant", "How did the interview go?")
    for _ in range(2):  # a retried job reports the same events again
        await record_tool_use(any_store.rewards, reply, "app:7:open-1", T0)
        await record_proactive_success(any_store.rewards, reply, "answer:42", T0)
    await record_tool_use(any_store.rewards, reply, "app:7:open-2", T0)
    record = await any_store.rewards.reply_record(reply, 0)
    assert record is not None and (record.tool_uses, record.proactive_successes) == (2, 1)


async def test_privacy_shows_the_setting_and_switches_it(any_store: Store) -> None:
    privacy = controls(any_store, T0).privacy
    shown = await privacy("ann", "")
    assert shown.startswith(PRIVACY) and "Training with your replies: on (the default here)" in shown
    assert await privacy("ann", "  Training   OFF ") == TRAINING_OFF
    assert await any_store.learning.training_consent("ann") is False
    assert "off (your choice)" in await privacy("ann")
    assert await privacy("ann", "training on") == TRAINING_ON
    assert await any_store.learning.training_consent("ann") is True
    default_off = controls(any_store, T0, default_training_consent=False)
    assert "off (the default here)" in await default_off.privacy("bob", "")
    assert await any_store.learning.training_consent("bob") is None, "showing it sets nothing"


@pytest.mark.parametrize("argument", ["training", "off", "training maybe", "please stop", "training on now"])
async def test_anything_else_says_how_to_use_it(any_store: Store, argument: str) -> None:
    assert await controls(any_store, T0).privacy("ann", argument) == PRIVACY_USAGE
    assert await any_store.learning.training_consent("ann") is None


def test_the_privacy_text_says_what_training_does_and_how_forgetting_reaches_it() -> None:
    for promise in ("Each night", "switch training off", "every later training set", "within one night"):
        assert promise in PRIVACY


def test_the_privacy_text_says_replies_may_come_from_a_trial_and_who_stays_out_of_it() -> None:
    """[canary]: a share of replies comes from a candidate on trial; opting out of training keeps
    a person on the serving version."""
    assert "A share of my replies may come from a new version under trial" in PRIVACY
    assert "switch training off always get the version that serves everyone, never one under trial" in PRIVACY


async def test_forget_all_tells_a_person_who_had_opted_out_that_the_choice_went_too(store: Store) -> None:
    await said(store, "user", "I like tea")
    used = controls(store, T0)
    assert OPT_OUT_FORGOTTEN not in await used.forget_all("ann")
    await said(store, "user", "I like coffee")
    await used.privacy("ann", "training off")
    answer = await used.forget_all("ann")
    assert (
        answer.startswith("Done. I forgot everything about you (1 memories).") and OPT_OUT_FORGOTTEN in answer
    )
    assert await store.learning.training_consent("ann") is None

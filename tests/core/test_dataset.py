"""The nightly dataset ([learning]) on SQLite and on Postgres + pgvector: labels from R, the
person's training switch and the admin's default, forgetting, balance, cut replies, the window's
edges, neutral replies left out, a stable split, and statistics a night can be explained by."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyDone, UserMessage
from bot.core.learning.dataset import Dataset, DatasetPolicy, balance, build_dataset, heldout_rank
from bot.core.learning.reward import DEFAULT_REACTIONS, RewardWeights
from bot.core.models import ChatMessage, Feedback, Generation, NewTurn
from bot.core.store import Store
from tests.support.fakes import HashEmbedder, ScriptedInference

EMB = HashEmbedder()
NOW = datetime(2026, 8, 15, 3, 0, tzinfo=UTC)
AT = NOW - timedelta(days=2)
WEIGHTS = RewardWeights()
ALL_TRAIN = DatasetPolicy(heldout_share=0.0)


async def rated(
    store: Store,
    user: str,
    value: float | None,
    *,
    at: datetime = AT,
    text: str = "a reply",
    said: str = "hello",
    cut: bool = False,
    tool_uses: int = 0,
    chat: str = "c1",
    persona: str | None = None,
    model: str = "",
) -> int:
    """A stored reply with its prompt, rated by a reaction of `value` and/or tool uses; its
    variant record names `persona` and the base `model`."""
    prompt = (ChatMessage("system", "p"), ChatMessage("user", said))
    made = await store.turns.add_turn(
        NewTurn(
            user, chat, "assistant", text, EMB.vector(text), EMB.model_name, at, memory_kind="reply",
            generation=Generation(prompt, None, cut, base_model=model, persona=persona),
        )
    )  # fmt: skip
    if value is not None:
        await store.turns.record_feedback(Feedback(made.id, user, "x", value, at))
    for n in range(tool_uses):
        await store.rewards.record_signal(made.id, "tool_use", f"memories:{n}", at)
    return made.id


async def build(store: Store, policy: DatasetPolicy = ALL_TRAIN) -> Dataset:
    return await build_dataset(store, policy, WEIGHTS, NOW)


async def test_labels_come_from_r_and_neutral_replies_are_left_out(any_store: Store) -> None:
    good = await rated(any_store, "ann", 1.0)
    bad = await rated(any_store, "ann", -1.0)
    used = await rated(any_store, "ann", None, tool_uses=1)  # α: R = 1
    torn = await rated(any_store, "ann", -1.0, tool_uses=1)  # R = 0: neutral
    carried_on = await rated(any_store, "ann", -1.0, chat="c2")  # −1 + β·6 = −0.4: neutral
    for n in range(6):  # the turns that followed it, in its own chat
        said = "and " * n + "more"
        at = AT + timedelta(minutes=n + 1)
        await any_store.turns.add_turn(
            NewTurn("ann", "c2", "user", said, EMB.vector(said), EMB.model_name, at)
        )
    data = await build(any_store)
    assert [(e.turn_id, e.desirable) for e in data.train] == [(good, True), (bad, False), (used, True)]
    assert {s.turn_id for s in data.snapshots} == {good, bad, used}
    assert torn not in {s.turn_id for s in data.snapshots}
    assert carried_on not in {s.turn_id for s in data.snapshots}
    assert data.stats["left_out"] == {"opted_out": 0, "neutral": 2, "gone": 0, "filtered": 0}
    assert data.stats["only"] == {"persona": None, "model": None}


async def test_the_set_can_be_only_one_personas_or_one_models_replies(any_store: Store) -> None:
    coach_small = await rated(any_store, "ann", 1.0, persona="coach", model="smollm2-360m")
    coach_big = await rated(any_store, "bob", -1.0, persona="coach", model="qwen-7b")
    tutor_small = await rated(any_store, "ann", -1.0, persona="tutor", model="smollm2-360m")
    unnamed = await rated(any_store, "ann", 1.0)  # stored before the variant named them

    async def kept(persona: str | None = None, model: str | None = None) -> set[int]:
        data = await build(any_store, replace(ALL_TRAIN, persona=persona, model=model))
        assert data.stats["left_out"]["filtered"] == 4 - len(data.snapshots)
        assert data.stats["only"] == {"persona": persona, "model": model}
        return {example.turn_id for example in data.train}

    assert await kept() == {coach_small, coach_big, tutor_small, unnamed}
    assert await kept(persona="coach") == {coach_small, coach_big}
    assert await kept(model="smollm2-360m") == {coach_small, tutor_small}
    assert await kept(persona="coach", model="qwen-7b") == {coach_big}
    assert await kept(persona="pirate") == set()
    data = await build(any_store, replace(ALL_TRAIN, persona="coach", min_per_label=1))
    assert data.shortfall(replace(ALL_TRAIN, min_per_label=1)) is None and data.stats["people"] == 2
    # The night's set: its base model's replies, and those from before the record named a model.
    night = await build(any_store, replace(ALL_TRAIN, trains="smollm2-360m"))
    assert {example.turn_id for example in night.train} == {coach_small, tutor_small, unnamed}


async def test_snapshots_keep_r_and_all_its_parts(any_store: Store) -> None:
    turn_id = await rated(any_store, "ann", 1.0, tool_uses=2)
    [snapshot] = (await build(any_store)).snapshots
    assert (snapshot.turn_id, snapshot.user_id, snapshot.label, snapshot.split) == (
        turn_id, "ann", "desirable", "train",
    )  # fmt: skip
    assert snapshot.reward == pytest.approx(3.0)
    assert snapshot.parts["reaction"] == 1.0 and snapshot.parts["reactions"] == 1
    assert snapshot.parts["tool_uses"] == 2 and snapshot.parts["turns_followed"] == 0
    assert snapshot.parts["weights"] == {"alpha": 1.0, "beta": 0.1, "gamma": 1.0}
    json.dumps(snapshot.parts)  # JSON only: the store keeps it as such


async def test_people_who_opted_out_are_left_out(any_store: Store) -> None:
    ann = await rated(any_store, "ann", 1.0)
    await rated(any_store, "bob", 1.0)
    await any_store.learning.set_training_consent("bob", False)
    data = await build(any_store)
    assert [e.turn_id for e in data.train] == [ann]
    assert data.stats["left_out"]["opted_out"] == 1 and data.stats["people"] == 1


async def test_the_reactions_of_people_who_opted_out_label_nobodys_reply(any_store: Store) -> None:
    # A group chat: dee switched training off, and reacts to ann's replies there.
    await any_store.learning.set_training_consent("dee", False)
    both = await rated(any_store, "ann", 1.0, chat="group")
    await any_store.turns.record_feedback(Feedback(both, "dee", "x", -1.0, AT))
    only_dee = await rated(any_store, "ann", None, chat="group")
    await any_store.turns.record_feedback(Feedback(only_dee, "dee", "x", 1.0, AT))
    data = await build(any_store)
    [example] = data.train
    assert (example.turn_id, example.desirable) == (both, True)  # ann's 👍 alone, not the mean 0
    [snapshot] = data.snapshots
    assert snapshot.parts["reactions"] == 1 and snapshot.parts["reaction"] == 1.0
    assert data.stats["left_out"]["opted_out"] == 1  # only dee rated it
    # With the admin's default off, a reactor who never chose does not count either.
    await any_store.turns.record_feedback(Feedback(only_dee, "eve", "x", 1.0, AT))
    await any_store.learning.set_training_consent("ann", True)
    off = await build(any_store, DatasetPolicy(heldout_share=0.0, default_consent=False))
    assert [e.turn_id for e in off.train] == [both]
    assert len((await build(any_store)).train) == 2  # eve counts by the default on


async def test_the_admins_default_decides_for_people_who_never_chose(any_store: Store) -> None:
    await rated(any_store, "ann", 1.0)  # never chose
    cy = await rated(any_store, "cy", -1.0)
    await any_store.learning.set_training_consent("cy", True)
    off = await build(any_store, DatasetPolicy(heldout_share=0.0, default_consent=False))
    assert [e.turn_id for e in off.train] == [cy]
    on = await build(any_store, DatasetPolicy(heldout_share=0.0, default_consent=True))
    assert len(on.train) == 2


def no_prompt_quotes(data: Dataset, words: str) -> bool:
    return not any(words in m.content for e in (*data.train, *data.heldout) for m in e.prompt)


async def test_a_forgotten_memory_leaves_every_later_dataset(any_store: Store) -> None:
    model = ScriptedInference("Noted!")
    conv = Conversation(
        any_store, EMB, model, ConversationPolicy(persona="p", reactions=DEFAULT_REACTIONS), clock=lambda: AT
    )
    said = [  # (chat, text): the weather comes first, in another chat, before any memory of the code
        ("c2", "the weather is nice"),
        ("c1", "my locker code is 4711"),
        ("c1", "what do you know about lockers?"),
        ("c1", "tell me about my locker code"),
    ]
    for n, (chat, text) in enumerate(said):
        message = UserMessage("ann", chat, text, AT + timedelta(seconds=n))
        events = [e async for e in conv.handle_message(message)]
        done = events[-1]
        assert isinstance(done, ReplyDone) and done.turn_id is not None
        await any_store.turns.record_feedback(Feedback(done.turn_id, "ann", "👍", 1.0, AT))
    assert not no_prompt_quotes(await build(any_store), "4711"), "the code was in the prompts"
    [secret] = [m for m in await any_store.memories.list_memories("ann", 50) if m.text == said[1][1]]
    assert await any_store.memories.forget("ann", secret.id)
    data = await build(any_store)
    assert no_prompt_quotes(data, "4711")
    assert [e.prompt[-1].content for e in data.train] == ["the weather is nice"], "the rest stays"
    assert all("4711" not in e.completion for e in data.train)


async def test_forget_all_leaves_nothing_of_the_person(any_store: Store) -> None:
    await rated(any_store, "ann", 1.0, said="my locker code is 4711")
    bob = await rated(any_store, "bob", 1.0)
    await any_store.memories.forget_all("ann")
    data = await build(any_store)
    assert [e.turn_id for e in data.train] == [bob] and no_prompt_quotes(data, "4711")


async def test_labels_are_balanced_the_way_kto_recommends(any_store: Store) -> None:
    for _ in range(6):
        await rated(any_store, "ann", 1.0)
    for _ in range(2):
        await rated(any_store, "ann", -1.0)
    data = await build(any_store)
    assert (data.desirable_weight, data.undesirable_weight) == (1.0, 3.0)
    assert data.stats["weights"] == {"desirable": 1.0, "undesirable": 3.0}
    ratio = (data.desirable_weight * 6) / (data.undesirable_weight * 2)
    assert 1.0 <= ratio <= 4 / 3
    assert balance(2, 5) == (2.5, 1.0) and balance(3, 0) == (1.0, 1.0)


async def test_a_cut_reply_is_kept_and_flagged(any_store: Store) -> None:
    cut = await rated(any_store, "ann", 1.0, cut=True)
    whole = await rated(any_store, "ann", 1.0)
    data = await build(any_store)
    assert {e.turn_id: e.cut for e in data.train} == {cut: True, whole: False}
    assert data.stats["cut"] == 1


async def test_the_window_rolls_with_half_open_edges(any_store: Store) -> None:
    start = NOW - timedelta(days=14)
    first = await rated(any_store, "ann", 1.0, at=start)
    await rated(any_store, "ann", 1.0, at=start - timedelta(seconds=1))
    last = await rated(any_store, "ann", 1.0, at=NOW - timedelta(seconds=1))
    await rated(any_store, "ann", 1.0, at=NOW)  # written as the night began: tomorrow's
    data = await build(any_store)
    assert [e.turn_id for e in data.train] == [first, last]
    assert (data.window_start, data.window_end) == (start, NOW)
    short = await build_dataset(any_store, DatasetPolicy(window_days=1, heldout_share=0.0), WEIGHTS, NOW)
    assert [e.turn_id for e in short.train] == [last] and short.stats["window_days"] == 1


async def test_an_empty_window_is_not_enough_data(any_store: Store) -> None:
    data = await build(any_store)
    assert data.train == data.heldout == data.snapshots == ()
    assert data.stats["examples"] == {"desirable": 0, "undesirable": 0} and data.stats["people"] == 0
    reason = data.shortfall(DatasetPolicy())
    assert reason is not None and "not enough data" in reason and "at least 4" in reason


async def test_enough_of_each_label_is_no_shortfall(any_store: Store) -> None:
    for value in (1.0, -1.0) * 4:
        await rated(any_store, "ann", value)
    data = await build(any_store)
    assert data.shortfall(DatasetPolicy(min_per_label=4)) is None
    assert data.shortfall(DatasetPolicy(min_per_label=5)) is not None


async def test_the_held_out_split_is_stable_and_snapshotted(any_store: Store) -> None:
    for n in range(40):
        await rated(any_store, "ann", 1.0 if n % 2 else -1.0)
    policy = DatasetPolicy(heldout_share=0.3)
    first, again = await build(any_store, policy), await build(any_store, policy)
    assert first.heldout == again.heldout and first.train == again.train
    assert first.stats["heldout"] == {"desirable": 6, "undesirable": 6}, "30 % of each label's 20"
    assert {s.turn_id for s in first.snapshots if s.split == "heldout"} == {e.turn_id for e in first.heldout}
    for desirable in (True, False):
        held = [heldout_rank(e.turn_id) for e in first.heldout if e.desirable == desirable]
        trained = [heldout_rank(e.turn_id) for e in first.train if e.desirable == desirable]
        assert max(held) < min(trained), "the lowest hashes of each label are held out"
    json.dumps(first.stats)


async def test_a_rare_label_is_held_out_in_its_share_too(any_store: Store) -> None:
    """A night's liked replies are few: a split blind to labels could hold out almost none of them."""
    for n in range(60):
        await rated(any_store, "ann", 1.0 if n % 6 == 0 else -1.0)
    data = await build(any_store, DatasetPolicy(heldout_share=0.3))
    assert data.stats["heldout"] == {"desirable": 3, "undesirable": 15}
    assert data.stats["examples"] == {"desirable": 7, "undesirable": 35}
    one_each = await build(any_store, DatasetPolicy(heldout_share=0.05))
    assert one_each.stats["heldout"] == {"desirable": 1, "undesirable": 3}, "0.5 and 2.5 round up"


async def test_the_prompt_and_completion_are_what_was_stored(any_store: Store) -> None:
    await rated(any_store, "ann", 1.0, text="Good morning, Ann!", said="morning 🌅")
    [example] = (await build(any_store)).train
    assert example.prompt == (ChatMessage("system", "p"), ChatMessage("user", "morning 🌅"))
    assert example.completion == "Good morning, Ann!"

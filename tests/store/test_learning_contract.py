"""The learning part of the store contract ([learning]), on SQLite and on Postgres + pgvector: a
reply's Generation kept with it, the rated replies of a window, each person's training switch,
run snapshots, reaction rates per adapter version, and forgetting that reaches stored prompts."""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.core.learning.models import ExampleSnapshot, NewAdapter
from bot.core.models import ChatMessage, Feedback, Generation, NewTurn
from bot.core.store import Store
from tests.store.test_contract import EMB, T0, memory, turn

SINCE = T0 - timedelta(days=1)
UNTIL = T0 + timedelta(days=1)


def prompt(*texts: str) -> tuple[ChatMessage, ...]:
    return (ChatMessage("system", "You are kind."), *(ChatMessage("user", text) for text in texts))


def reply(
    user: str,
    text: str = "a reply",
    *,
    at: datetime = T0,
    said: tuple[str, ...] = ("hello",),
    version: int | None = None,
    cut: bool = False,
    used: tuple[int, ...] = (),
    key: str | None = None,
    reply_to: int | None = None,
) -> NewTurn:
    return NewTurn(
        user, "c1", "assistant", text, EMB.vector(text), EMB.model_name, at,
        used_memory_ids=used, memory_shares=tuple(1.0 / len(used) for _ in used), idempotency_key=key,
        reply_to=reply_to, memory_kind="reply", generation=Generation(prompt(*said), version, cut),
    )  # fmt: skip


async def react(store: Store, turn_id: int, value: float, user: str = "ann") -> None:
    await store.turns.record_feedback(Feedback(turn_id, user, "x", value, T0))


async def test_a_generation_round_trips_with_its_reply(store: Store) -> None:
    made = await store.turns.add_turn(reply("ann", said=("what's up?",), version=3, cut=True))
    await react(store, made.id, 1.0)
    [rated] = await store.learning.rated_replies(SINCE, UNTIL)
    assert (rated.turn_id, rated.user_id, rated.completion, rated.consent) == (
        made.id,
        "ann",
        "a reply",
        None,
    )
    assert rated.created_at == T0
    assert rated.generation == Generation(prompt("what's up?"), 3, True)


async def test_storing_a_reply_again_keeps_one_generation(store: Store) -> None:
    first = await store.turns.add_turn(reply("ann", key="k1:reply", said=("first",)))
    again = await store.turns.add_turn(reply("ann", key="k1:reply", said=("second",)))
    assert again.id == first.id
    await react(store, first.id, 1.0)
    [rated] = await store.learning.rated_replies(SINCE, UNTIL)
    assert rated.generation.prompt == prompt("first")


async def test_a_long_prompt_with_odd_unicode_round_trips_exactly(store: Store) -> None:
    odd = (
        "e\u0301 \U0001f469\u200d\U0001f469\u200d\U0001f467 \u200f\u05e9\u05dc\u05d5\u05dd "
        '\U0001f3f3\ufe0f\u200d\U0001f308 \u2028 \uffff \U0001d518 "q" \\ \n\t'
    )
    long = (odd * (100_000 // len(odd) + 1))[:100_000]
    made = await store.turns.add_turn(reply("ann", text=odd, said=(long, odd)))
    await store.rewards.record_signal(made.id, "tool_use", "k", T0)
    [rated] = await store.learning.rated_replies(SINCE, UNTIL)
    assert rated.generation.prompt == prompt(long, odd) and rated.completion == odd
    assert len(rated.generation.prompt[1].content) == 100_000


async def test_only_rated_replies_with_a_prompt_are_listed(store: Store) -> None:
    person = await store.turns.add_turn(turn("ann", "hi"))
    followed = await store.turns.add_turn(reply("ann", "followed only", at=T0 + timedelta(seconds=1)))
    await store.turns.add_turn(turn("ann", "and then", at=T0 + timedelta(seconds=2)))  # β only: not a rating
    reacted = await store.turns.add_turn(reply("ann", "reacted", at=T0 + timedelta(seconds=3)))
    await react(store, reacted.id, -1.0)
    used = await store.turns.add_turn(reply("ann", "tool", at=T0 + timedelta(seconds=4)))
    await store.rewards.record_signal(used.id, "tool_use", "memories:1", T0)
    proactive = await store.turns.add_turn(reply("ann", "proactive", at=T0 + timedelta(seconds=5)))
    await store.rewards.record_signal(proactive.id, "proactive_success", "p1", T0)
    old = NewTurn("ann", "c1", "assistant", "no prompt", EMB.vector("x"), EMB.model_name, T0)
    await react(store, (await store.turns.add_turn(old)).id, 1.0)  # stored before generations were kept
    await react(store, person.id, 1.0)  # a person's turn is never a reply
    listed = [rated.turn_id for rated in await store.learning.rated_replies(SINCE, UNTIL)]
    assert listed == [reacted.id, used.id, proactive.id]
    assert followed.id not in listed


async def test_the_window_is_half_open_and_an_empty_one_is_empty(store: Store) -> None:
    inside = await store.turns.add_turn(reply("ann", "inside", at=SINCE))
    edge = await store.turns.add_turn(reply("ann", "edge", at=UNTIL))
    for made in (inside, edge):
        await react(store, made.id, 1.0)
    assert [r.turn_id for r in await store.learning.rated_replies(SINCE, UNTIL)] == [inside.id]
    assert await store.learning.rated_replies(T0 + timedelta(days=5), T0 + timedelta(days=6)) == []
    assert await store.learning.rated_replies(UNTIL, SINCE) == []


async def test_consent_is_set_cleared_and_listed_with_each_reply(store: Store) -> None:
    assert await store.learning.training_consent("nobody") is None
    await store.learning.set_training_consent("ann", False)
    assert await store.learning.training_consent("ann") is False
    ann = await store.turns.add_turn(reply("ann"))
    bob = await store.turns.add_turn(reply("bob"))
    await react(store, ann.id, 1.0)
    await react(store, bob.id, 1.0, user="bob")
    assert {r.user_id: r.consent for r in await store.learning.rated_replies(SINCE, UNTIL)} == {
        "ann": False,
        "bob": None,
    }
    await store.learning.set_training_consent("bob", True)
    await store.learning.set_training_consent("ann", None)
    assert (await store.learning.training_consent("ann"), await store.learning.training_consent("bob")) == (
        None,
        True,
    )


async def test_consent_for_an_unknown_person_creates_only_their_row(store: Store) -> None:
    await store.learning.set_training_consent("newcomer", False)  # opted out before a first message
    assert await store.learning.training_consent("newcomer") is False
    assert await store.memories.memory_count("newcomer") == 0 and await store.turns.is_user_active("newcomer")
    await store.turns.add_turn(turn("newcomer", "hello"))
    assert await store.learning.training_consent("newcomer") is False, "the first message keeps the switch"


def snapshot(turn_id: int, reward: float = 1.0, split: str = "train", user: str = "ann") -> ExampleSnapshot:
    return ExampleSnapshot(
        turn_id, user, "desirable" if reward > 0 else "undesirable", split,  # type: ignore[arg-type]
        reward, {"reaction": reward, "reactions": 1, "tool_uses": 0},
    )  # fmt: skip


async def test_run_snapshots_are_kept_once_per_turn(store: Store) -> None:
    a = await store.turns.add_turn(reply("ann", "a"))
    b = await store.turns.add_turn(reply("ann", "b"))
    run = await store.adapters.start_run("job-1", T0, timedelta(hours=1))
    assert run is not None
    await store.learning.record_examples(run.id, [snapshot(b.id, -1.0, "heldout"), snapshot(a.id)])
    await store.learning.record_examples(run.id, [snapshot(a.id, 0.25)])  # again: the first stays
    await store.learning.record_examples(run.id, [snapshot(999_999)])  # a reply gone meanwhile: skipped
    await store.learning.record_examples(run.id + 1000, [snapshot(a.id)])  # no such run: nothing kept
    assert await store.learning.run_examples(run.id) == [snapshot(a.id), snapshot(b.id, -1.0, "heldout")]
    assert await store.learning.run_examples(run.id + 1000) == []
    await store.learning.record_examples(run.id, [])


async def test_reaction_rates_per_adapter_version_base_first(store: Store) -> None:
    base = [await store.turns.add_turn(reply("ann", f"b{n}")) for n in range(3)]
    v1 = [await store.turns.add_turn(reply("ann", f"v{n}", version=1)) for n in range(2)]
    old = await store.turns.add_turn(
        NewTurn("ann", "c1", "assistant", "o", EMB.vector("o"), EMB.model_name, T0)
    )
    await store.turns.add_turn(reply("ann", "long ago", at=T0 - timedelta(days=30), version=1))
    await react(store, base[0].id, 1.0)
    await react(store, base[1].id, -1.0)
    await react(store, old.id, 1.0)
    await react(store, v1[0].id, 1.0)
    await react(store, v1[0].id, -1.0, user="bob")  # a mean of 0 is not positive
    rates = await store.learning.version_rates(SINCE)
    assert [(r.adapter_version, r.replies, r.rated, r.positive) for r in rates] == [
        (None, 4, 3, 2),
        (1, 2, 1, 0),
    ]
    assert rates[0].positive_rate == 2 / 3 and rates[1].positive_rate == 0.0
    assert await store.learning.version_rates(UNTIL) == []


async def test_forgetting_a_memory_deletes_every_prompt_that_used_or_quotes_it(store: Store) -> None:
    [secret, other] = await store.memories.add_memories(
        [memory("ann", "my locker code is 4711"), memory("ann", "tea")]
    )
    used = await store.turns.add_turn(reply("ann", "used", used=(secret,), said=("hi",)))
    quoted = await store.turns.add_turn(reply("ann", "quoted", said=("so: my locker code is 4711, ok?",)))
    clean = await store.turns.add_turn(reply("ann", "clean", used=(other,), said=("tea time",)))
    bobs = await store.turns.add_turn(reply("bob", "bob's", said=("my locker code is 4711",)))
    for made in (used, quoted, clean):
        await react(store, made.id, 1.0)
    await react(store, bobs.id, 1.0, user="bob")
    run = await store.adapters.start_run("job", T0, timedelta(hours=1))
    assert run is not None
    await store.learning.record_examples(run.id, [snapshot(used.id), snapshot(clean.id)])
    assert await store.memories.forget("ann", secret)
    left = await store.learning.rated_replies(SINCE, UNTIL)
    assert [r.turn_id for r in left] == [clean.id, bobs.id], "another person's prompts are theirs"
    assert not any("4711" in m.content for r in left if r.user_id == "ann" for m in r.generation.prompt)
    assert [s.turn_id for s in await store.learning.run_examples(run.id)] == [clean.id]
    assert len(await store.turns.recent_turns("ann", "c1", 10)) == 3, "the replies stay in the history"


async def test_forgetting_a_message_deletes_the_prompts_that_quote_or_answer_it(store: Store) -> None:
    said = 'I was born in Tromsø\nand "we" moved – twice. ' + "x" * 300
    message = await store.turns.add_turn(turn("ann", said))
    # The answer's prompt holds only the start of a long message; a later one quotes it whole.
    answer = await store.turns.add_turn(
        reply("ann", "answer", said=(said[:40] + " […]",), reply_to=message.id)
    )
    later = await store.turns.add_turn(reply("ann", "later", said=(said, "and now?")))
    unrelated = await store.turns.add_turn(reply("ann", "unrelated", said=("the weather",)))
    for made in (answer, later, unrelated):
        await react(store, made.id, 1.0)
    assert await store.memories.forget("ann", message.memory_id)
    assert [r.turn_id for r in await store.learning.rated_replies(SINCE, UNTIL)] == [unrelated.id]


async def test_forgetting_a_reply_memory_deletes_its_own_prompt(store: Store) -> None:
    made = await store.turns.add_turn(reply("ann", "Your sister Ola lives in Oslo."))
    await react(store, made.id, 1.0)
    assert await store.memories.forget("ann", made.memory_id)
    assert await store.learning.rated_replies(SINCE, UNTIL) == []


async def test_forget_all_takes_generations_snapshots_and_keeps_others(store: Store) -> None:
    ann = await store.turns.add_turn(reply("ann"))
    bob = await store.turns.add_turn(reply("bob"))
    await react(store, ann.id, 1.0)
    await react(store, bob.id, 1.0, user="bob")
    await store.learning.set_training_consent("ann", False)
    run = await store.adapters.start_run("job", T0, timedelta(hours=1))
    assert run is not None
    await store.learning.record_examples(run.id, [snapshot(ann.id), snapshot(bob.id, user="bob")])
    await store.memories.forget_all("ann")
    assert [r.user_id for r in await store.learning.rated_replies(SINCE, UNTIL)] == ["bob"]
    assert [s.turn_id for s in await store.learning.run_examples(run.id)] == [bob.id]
    # The id leaves `users` with everything else ([hardening]); /forget all says so (core/controls).
    assert await store.learning.training_consent("ann") is None
    [rate] = await store.learning.version_rates(SINCE)
    assert (rate.adapter_version, rate.replies, rate.rated, rate.positive) == (None, 1, 1, 1)


async def test_an_adapter_version_is_recorded_with_replies_of_every_version(store: Store) -> None:
    adapter = await store.adapters.add_adapter(NewAdapter("global", "base", "v1", SINCE, T0))
    made = await store.turns.add_turn(reply("ann", version=adapter.version))
    await react(store, made.id, 1.0)
    [rated] = await store.learning.rated_replies(SINCE, UNTIL)
    assert rated.generation.adapter_version == adapter.version

"""Which variant answers each reply, and how it is recorded ([canary]), on a real SQLite store with the
scripted model (a fake at the inference port: the conversation's choice is what is tested here;
tests/inference tests `sample` on the engines and servers): the canary's share of replies drawn per
message from its seed, people outside the trial, and best-of-n with a reward model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyChunk, ReplyDone, UserMessage
from bot.core.learning import RewardModel
from bot.core.learning.canary import CanaryPolicy, arm_for, start
from bot.core.learning.models import NewAdapter, NewCanary, NewRewardModel, Variant
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.learning.variants import Pick, VariantPicker
from bot.core.models import Feedback, Generation
from bot.core.store import Store
from tests.support.fakes import HashEmbedder, ScriptedInference

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
EMB = HashEmbedder()


def conversation(store: Store, model: ScriptedInference, base_model: str = "smol") -> Conversation:
    policy = ConversationPolicy(
        persona="You are a test companion.", reactions=DEFAULT_REACTIONS, base_model=base_model, best_of=3
    )
    return Conversation(store, EMB, model, policy, clock=lambda: T0)


async def say(conv: Conversation, user: str, text: str, key: str) -> tuple[ReplyDone, list[str]]:
    message = UserMessage(user, f"chat-{user}", text, T0, idempotency_key=key)
    events = [event async for event in conv.handle_message(message)]
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.turn_id is not None
    await conv.store.turns.record_feedback(Feedback(done.turn_id, user, "👍", 1.0, T0))  # so it is listed
    return done, [e.text for e in events if isinstance(e, ReplyChunk)]


async def generation(store: Store, turn_id: int) -> Generation:
    rated = await store.learning.rated_replies(T0 - timedelta(days=1), T0 + timedelta(days=1))
    return next(r.generation for r in rated if r.turn_id == turn_id)


async def adapter(store: Store, path: str) -> int:
    record = await store.adapters.add_adapter(NewAdapter("global", "smol", path, T0 - timedelta(days=1), T0))
    return record.version


def prefers(text: str) -> RewardModel:
    """A reward model whose score is the reply's closeness to `text` (the context does not count)."""
    dim = EMB.dim
    weights = np.concatenate([EMB.vector(text), np.zeros(dim)]).astype(float)
    return RewardModel("test/hash-bag-of-words", dim, (0.0,) * 2 * dim, (1.0,) * 2 * dim, tuple(weights), 0.0)


async def test_the_canary_answers_the_replies_its_seed_draws_and_each_records_its_arm(store: Store) -> None:
    serving = await adapter(store, "v1")
    await store.adapters.promote_adapter(serving, T0)
    tried = await adapter(store, "v2")
    canary = await start(
        store, "smol", Variant(tried), Variant(serving), CanaryPolicy(share=0.5), seed=11, at=T0
    )
    assert canary is not None
    model = ScriptedInference("Hello there.")
    conv = conversation(store, model)
    for i in range(24):
        key = f"k{i}"
        done, _ = await say(conv, f"p{i % 4}", f"hello {i}", key)
        made = await generation(store, done.turn_id or 0)
        arm = arm_for(canary.seed, key, canary.share)
        assert (made.arm, made.canary_id, made.base_model) == (arm, canary.id, "smol")
        assert made.adapter_version == (tried if arm == "canary" else serving)
    pending = await store.trials.pending_replies(canary.id, T0 + timedelta(hours=2), 100)
    assert {p.arm for p in pending} == {"canary", "serving"} and len(pending) == 24


async def test_people_outside_the_trial_get_the_serving_variant(store: Store) -> None:
    tried = await adapter(store, "v2")
    canary = await start(store, "smol", Variant(tried), Variant(), CanaryPolicy(share=0.99), seed=3, at=T0)
    assert canary is not None
    await store.learning.set_training_consent("optout", False)
    model = ScriptedInference("Hello there.")
    for conv, user in ((conversation(store, model), "optout"), (conversation(store, model, "other"), "ann")):
        for i in range(5):
            done, _ = await say(conv, user, "hi", f"{user}{i}")
            made = await generation(store, done.turn_id or 0)
            assert (made.arm, made.canary_id, made.adapter_version) == ("serving", None, None)


async def test_a_serving_reward_model_sends_the_best_of_n(store: Store) -> None:
    best = "How was your day today?"
    record = await store.trials.add_reward_model(
        NewRewardModel("test/hash-bag-of-words", prefers(best).as_json(), {"auc": 0.9}), T0
    )
    canary = await store.trials.start_canary(
        NewCanary("smol", Variant(None, record.version, 3), Variant(), 0.5, 1, {}), T0
    )
    assert canary is not None
    await store.trials.decide_canary(canary.id, "promoted", "better", T0)
    model = ScriptedInference("Fine.", candidates=["Okay then.", best, "Fine."])
    done, chunks = await say(conversation(store, model), "ann", "evening!", "e1")
    assert done.text == best and chunks == [best]  # one whole reply, sent once chosen
    assert model.samples == [(3, None)]
    made = await generation(store, done.turn_id or 0)
    assert (made.reward_model_version, made.n, made.adapter_version) == (record.version, 3, None)


async def test_an_unreadable_reward_model_is_not_used(store: Store) -> None:
    broken = prefers("x").as_json() | {"weights": [1.0]}  # too few weights for its dimension
    record = await store.trials.add_reward_model(NewRewardModel("test/hash-bag-of-words", broken, {}), T0)
    canary = await store.trials.start_canary(
        NewCanary("smol", Variant(None, record.version, 3), Variant(), 0.5, 1, {}), T0
    )
    assert canary is not None
    await store.trials.decide_canary(canary.id, "promoted", "better", T0)
    model = ScriptedInference("Fine.")
    done, _ = await say(conversation(store, model), "ann", "evening!", "e1")
    assert done.text == "Fine." and model.samples == []  # streamed as without one
    made = await generation(store, done.turn_id or 0)
    assert (made.reward_model_version, made.n) == (None, 1)


async def test_a_rollback_under_a_canary_serves_at_once_outside_the_trial(store: Store) -> None:
    serving = await adapter(store, "v1")
    await store.adapters.promote_adapter(serving, T0)
    tried = await adapter(store, "v2")
    canary = await start(
        store, "smol", Variant(tried), Variant(serving), CanaryPolicy(share=0.99), seed=5, at=T0
    )
    assert canary is not None
    await store.adapters.serve_base("global", T0)  # /rollback: the base model serves now
    conv = conversation(store, ScriptedInference("Hello there."))
    for i in range(5):
        done, _ = await say(conv, "ann", "hi", f"r{i}")
        made = await generation(store, done.turn_id or 0)
        assert (made.adapter_version, made.arm, made.canary_id) == (None, "serving", None)


async def test_another_model_gets_the_reward_models_best_of_n_only_where_the_admin_said(store: Store) -> None:
    """An adapter serves only with its base model, and a canary is for one base model; the reward
    model scores text, so another model's samples are chosen among only with its `best_of`."""
    record = await store.trials.add_reward_model(
        NewRewardModel("test/hash-bag-of-words", prefers("hello").as_json(), {"auc": 0.9}), T0
    )
    canary = await store.trials.start_canary(
        NewCanary("smol", Variant(None, record.version, 3), Variant(), 0.5, 1, {}), T0
    )
    assert canary is not None
    await store.trials.decide_canary(canary.id, "promoted", "better", T0)
    picker = VariantPicker(store, "smol", 3)
    assert await picker.pick("ann", "k1", model="big-70b") == Pick()
    reranked = await picker.pick("ann", "k1", model="big-70b", best_of=True)
    assert (reranked.adapter, reranked.reward_model_version, reranked.n, reranked.arm) == (
        None, record.version, 3, "serving",
    )  # fmt: skip

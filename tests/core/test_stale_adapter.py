"""The serving adapter stops serving once what it learned from is taken back ([learning]): a
forgotten reply, or a person who turned training off since. On SQLite and Postgres + pgvector."""

from __future__ import annotations

from datetime import timedelta

from bot.core.learning.dataset import DatasetPolicy, build_dataset
from bot.core.learning.models import GLOBAL_SCOPE, AdapterRecord, NewAdapter
from bot.core.learning.reward import RewardWeights
from bot.core.learning.stale_adapter import recorded_examples, retire_outdated
from bot.core.store import Store
from tests.core.test_dataset import AT, NOW, rated

POLICY = DatasetPolicy(heldout_share=0.0)


async def serving_trained_on(store: Store, *turn_ids: int) -> AdapterRecord:
    """An adapter whose run kept the dataset of `turn_ids`, as a night would record it."""
    dataset = await build_dataset(store, POLICY, RewardWeights(), NOW)
    assert {s.turn_id for s in dataset.snapshots} == set(turn_ids)
    run = await store.adapters.start_run("night-1", NOW, timedelta(hours=1))
    assert run is not None
    await store.learning.record_examples(run.id, dataset.snapshots)
    await store.adapters.finish_run(run.id, "succeeded", "ok", NOW)
    record = await store.adapters.add_adapter(
        NewAdapter(GLOBAL_SCOPE, "base", "v1", AT, NOW, run_id=run.id, dataset=dataset.stats)
    )
    await store.adapters.promote_adapter(record.version, NOW)
    return record


async def test_an_adapter_with_nothing_taken_back_keeps_serving(any_store: Store) -> None:
    record = await serving_trained_on(any_store, await rated(any_store, "ann", 1.0))
    assert await retire_outdated(any_store, GLOBAL_SCOPE, POLICY, NOW) is None
    serving = await any_store.adapters.serving_adapter()
    assert serving is not None and serving.version == record.version


async def test_forgetting_all_of_a_person_it_learned_from_retires_it(any_store: Store) -> None:
    ann = await rated(any_store, "ann", 1.0)
    bob = await rated(any_store, "bob", -1.0)
    await serving_trained_on(any_store, ann, bob)
    await any_store.memories.forget_all("bob")
    why = await retire_outdated(any_store, GLOBAL_SCOPE, POLICY, NOW + timedelta(days=1))
    assert why is not None and "forgotten" in why
    assert await any_store.adapters.serving_adapter() is None  # the base model serves


async def test_a_person_who_opted_out_since_retires_it(any_store: Store) -> None:
    await serving_trained_on(any_store, await rated(any_store, "ann", 1.0))
    await any_store.learning.set_training_consent("ann", False)
    why = await retire_outdated(any_store, GLOBAL_SCOPE, POLICY, NOW)
    assert why is not None and "training off" in why
    assert await any_store.adapters.serving_adapter() is None


async def test_the_admins_default_turned_off_counts_for_people_who_never_chose(any_store: Store) -> None:
    await serving_trained_on(any_store, await rated(any_store, "ann", 1.0))
    assert await retire_outdated(any_store, GLOBAL_SCOPE, POLICY, NOW) is None
    off = DatasetPolicy(heldout_share=0.0, default_consent=False)
    assert await retire_outdated(any_store, GLOBAL_SCOPE, off, NOW) is not None


async def test_an_adapter_placed_by_hand_is_left_alone(any_store: Store) -> None:
    record = await any_store.adapters.add_adapter(NewAdapter(GLOBAL_SCOPE, "base", "hand", AT, NOW))
    await any_store.adapters.promote_adapter(record.version, NOW)
    assert await retire_outdated(any_store, GLOBAL_SCOPE, POLICY, NOW) is None


def test_recorded_examples_counts_both_splits_and_refuses_a_strange_shape() -> None:
    stats = {"examples": {"desirable": 3, "undesirable": 4}, "heldout": {"desirable": 1, "undesirable": 0}}
    assert recorded_examples(stats) == 8
    assert recorded_examples({"examples": "many"}) is None

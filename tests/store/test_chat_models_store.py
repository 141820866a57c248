"""Each chat's model ([personal] 3) on both stores: a choice replaces the last, a private chat's
belongs to its person and goes with /forget all, a group's stays the group's."""

from __future__ import annotations

from bot.core.store import Store


async def test_a_choice_is_kept_replaced_and_forgotten_with_its_person(any_store: Store) -> None:
    models = any_store.models
    await models.choose("telegram:1", "small", "telegram:1")
    await models.choose("telegram:1", "big", "telegram:1")
    await models.choose("telegram:-100", "big", None)
    await any_store.personas.choose("telegram:1", "coach", "telegram:1")
    assert await models.chosen("telegram:1") == "big" and await models.chosen("telegram:2") is None
    assert await models.chosen_by("telegram:1") == [("telegram:1", "big")]
    assert await any_store.personas.chosen("telegram:1") == "coach"  # the two choices stay apart
    await any_store.memories.forget_all("telegram:1")
    assert await models.chosen("telegram:1") is None and await any_store.personas.chosen("telegram:1") is None
    assert await models.chosen("telegram:-100") == "big"

"""What a named speaker and a named period add in score fusion (core/memory/lifts.py), on both stores."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.memory.lifts import lift_for, speakers_named
from bot.core.memory.recall import hybrid_search
from bot.core.models import Memory, NewMemory
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

T0 = datetime(2023, 7, 1, tzinfo=UTC)
EMB = HashEmbedder()


def said(speaker: str | None, mid: int = 1, at: datetime = T0) -> Memory:
    return Memory(mid, "ann", "imported", "painted a sunrise", speaker, at, "m")


def test_a_speaker_is_named_as_written_and_as_a_whole_word() -> None:
    people = [said("Melanie"), said("Caroline"), said("Will"), said("Mary Ann"), said(None)]
    assert speakers_named("What did Melanie's sister paint?", people) == {"Melanie"}
    assert speakers_named("will you remind me what I painted?", people) == frozenset()
    assert speakers_named("Will you remind me?", people) == {"Will"}
    assert speakers_named("What did Melanies paint?", people) == frozenset()
    assert speakers_named("What did Mary Ann and Caroline paint?", people) == {"Mary Ann", "Caroline"}


def test_roles_are_no_names_so_a_chat_with_kindred_is_never_lifted() -> None:
    roles = [said("user"), said("assistant"), said("User")]
    assert speakers_named("what did the user say to the assistant? User?", roles) == frozenset()
    assert lift_for("what did the user say?", roles, 3.0, 2.0) is None


def test_each_lift_adds_its_weight_and_a_zero_weight_adds_nothing() -> None:
    july, june = said("Melanie", 1, T0), said("Caroline", 2, datetime(2023, 6, 1, tzinfo=UTC))
    lift = lift_for("What did Melanie paint in July 2023?", [july, june], 3.0, 2.0)
    assert lift is not None and lift(july) == 5.0 and lift(june) == 0.0
    speaker_only = lift_for("What did Melanie paint in July 2023?", [july, june], 0.0, 2.0)
    assert speaker_only is not None and speaker_only(july) == 2.0
    assert lift_for("What did Melanie paint?", [july, june], 3.0, 0.0) is None
    # Someone who speaks in none of the candidates is nobody's name here.
    assert lift_for("What did Oscar paint?", [july, june], 3.0, 2.0) is None


async def _dialogue(store: Store, user_id: str) -> list[int]:
    # The same words and vector from both speakers: only who said it can choose.
    same = EMB.vector("the same for all")
    turns = [("Caroline", "I painted a sunrise by the lake"), ("Melanie", "I painted a sunrise by the lake")]
    return await store.memories.add_memories(
        [NewMemory(user_id, text, who, T0, same, EMB.model_name, kind="imported") for who, text in turns]
    )


async def test_a_question_naming_a_speaker_favours_their_turns(any_store: Store) -> None:
    caroline, melanie = await _dialogue(any_store, "ann")
    same = EMB.vector("the same for all")
    for name, expected in (("Melanie", melanie), ("Caroline", caroline)):
        query = f"What did {name} paint by the lake?"
        found = await hybrid_search(any_store, "ann", query, same, 2, scoring=None)
        assert found[0].memory.id == expected and found[0].score > found[1].score
    unlifted = await hybrid_search(any_store, "ann", "What did Melanie paint?", same, 2, scoring=None,
                                   speaker_weight=0.0)  # fmt: skip
    assert unlifted[0].score == unlifted[1].score


async def test_a_question_naming_both_speakers_or_neither_reorders_nothing(any_store: Store) -> None:
    await _dialogue(any_store, "ann")
    same = EMB.vector("the same for all")
    for query in ("What did Caroline and Melanie paint?", "Who painted a sunrise? caroline? melanie?"):
        found = await hybrid_search(any_store, "ann", query, same, 2, scoring=None)
        assert found[0].score == found[1].score


async def test_another_persons_speakers_lift_nothing_here(any_store: Store) -> None:
    # Bob's memories have a speaker called Melanie; Ann's have none: the name lifts nothing of Ann's.
    await _dialogue(any_store, "bob")
    same = EMB.vector("the same for all")
    ids = await any_store.memories.add_memories([
        NewMemory("ann", f"I painted a sunrise {n}", "user", T0, same, EMB.model_name) for n in range(2)
    ])  # fmt: skip
    found = await hybrid_search(any_store, "ann", "What did Melanie paint?", same, 5, scoring=None)
    assert {hit.memory.id for hit in found} == set(ids) and found[0].score == found[1].score

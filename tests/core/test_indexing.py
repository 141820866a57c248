"""What an imported turn is searched by besides its words (core/memory/indexing.py)."""

from __future__ import annotations

from bot.core.memory.indexing import Indexing, Said, Searched, searched


def test_a_named_speaker_is_embedded_and_indexed_with_the_turn() -> None:
    said = "I painted a sunrise by the lake last weekend, it took hours"
    assert searched([Said(said, "Melanie")]) == [Searched(f"Melanie: {said}", "Melanie")]


def test_a_short_turn_between_named_people_is_searched_with_the_turn_before() -> None:
    turns = [Said("I painted a sunrise", "Melanie"), Said("Wow, that's great!", "Caroline")]
    assert searched(turns)[1] == Searched(
        "Melanie: I painted a sunrise\nCaroline: Wow, that's great!", "Caroline\nMelanie: I painted a sunrise"
    )


def test_an_answer_of_a_few_sentences_is_searched_with_the_question_before_it() -> None:
    answer = "A sunrise over the lake, with the pines in front. It took three evenings, but it was worth it!"
    turns = [Said("What did you paint last weekend?", "Caroline"), Said(answer, "Melanie")]
    assert searched(turns)[1].embedded == f"Caroline: What did you paint last weekend?\nMelanie: {answer}"


def test_a_long_turn_stands_alone() -> None:
    long = " ".join(["That sounds lovely, I have always wanted to paint and maybe one day I will start"] * 4)
    turns = [Said("I painted a sunrise", "Melanie"), Said(long, "Caroline")]
    assert searched(turns)[1] == Searched(f"Caroline: {long}", "Caroline")


def test_a_chat_with_kindred_gets_no_roles_and_no_turn_before() -> None:
    # The turn before a person's short one is the bot's reply: no evidence about the person.
    turns = [Said("Your dog is called Bella, I think", "assistant"), Said("No, Biscuit!", "user")]
    assert searched(turns) == [Searched(turns[0].text, ""), Searched("No, Biscuit!", "")]


def test_notes_without_speakers_stand_alone() -> None:
    turns = [Said("You recommended the Thai place", None), Said("You recommended the Greek one", None)]
    assert [found.embedded for found in searched(turns)] == [turn.text for turn in turns]


def test_each_rule_can_be_left_out() -> None:
    turns = [Said("I painted a sunrise", "Melanie"), Said("Wow!", "Caroline")]
    without_context = Indexing(speakers=True, short_turn_words=0)
    assert searched(turns, without_context)[1] == Searched("Caroline: Wow!", "Caroline")
    assert searched(turns, Indexing(speakers=False, short_turn_words=12))[1] == Searched(
        "I painted a sunrise\nWow!", "I painted a sunrise"
    )

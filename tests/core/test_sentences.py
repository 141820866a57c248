"""Where a reply's last whole sentence ends (core/chat/sentences.py): Latin marks in their hostile places
(numbers, addresses, abbreviations, lists), other scripts' own marks, and the promise a terminal
relies on: an end found while the text grows is never taken back by what follows."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.chat.sentences import ELLIPSIS, as_written, sentence_end, whole_sentences

CUT = [
    # (what the budget left, what is shown and stored)
    ("Sure! If you're interested, I could even design a", "Sure!"),
    ("It rained all day. Then the sun came out and we went for a long walk by the", "It rained all day."),
    ("If you're interested, I could even design a", "If you're interested, I could even design…"),
    ("The train leaves at 3.", "The train leaves at…"),
    ("Mix it well. It should be about 3.", "Mix it well."),
    ("Mix it well. It should be about 3.5 cups of fl", "Mix it well."),
    ("See https://example.com/a.", "See…"),
    ("I found it. See https://example.com/a.b/c?d=1 for", "I found it."),
    ("Write to me. My address is ann@example.", "Write to me."),
    ("Bring snacks, e.g. nuts. Also", "Bring snacks, e.g. nuts."),
    ("I saw Dr. Smith today. He said that you", "I saw Dr. Smith today."),
    ("Ask Dr. Smith about", "Ask Dr. Smith…"),
    ("J. R. R. Tolkien wrote it. The", "J. R. R. Tolkien wrote it."),
    ("Here are some ideas.\n1. Walk.\n2. Read a", "Here are some ideas.\n1. Walk."),
    (
        "Here are some ideas:\n1. Walk in the park\n2. Read a",
        "Here are some ideas:\n1. Walk in the park\n2. Read…",
    ),
    ("Here are some ideas:\n1. Walk in the park\n2. Re", "Here are some ideas:\n1. Walk in the park…"),
    ("Well... maybe later. Or we could", "Well... maybe later."),
    ('He said "I\'ll be there!" and left. Then', 'He said "I\'ll be there!" and left.'),
    ("(That was a joke.) But seriously, I", "(That was a joke.)"),
    ("Have a lovely day! 😊 Also, I wanted", "Have a lovely day! 😊"),
    ("Really?! That's wonderful news. I can't", "Really?! That's wonderful news."),
    ("我今天很高兴。因为天气很", "我今天很高兴。"),
    ("你好!我是", "你好!"),
    ("元気ですか？「はい、元気です。」それから", "元気ですか？「はい、元気です。」"),
    ("كيف حالك؟ أنا بخير والحمد", "كيف حالك؟"),
    ("یہ اچھا ہے۔ میں بھی", "یہ اچھا ہے۔"),
    ("मैं ठीक हूँ। आप कैसे", "मैं ठीक हूँ।"),
    ("我今天很高兴因为天气很", "我今天很高兴因为天气很…"),
    ("Supercalifragilistic", "Supercalifragilistic…"),
    ("", ELLIPSIS),
]


@pytest.mark.parametrize(("cut", "shown"), CUT, ids=[c[:28] for c, _ in CUT])
def test_a_cut_reply_ends_at_its_last_whole_sentence(cut: str, shown: str) -> None:
    assert whole_sentences(cut) == shown


@pytest.mark.parametrize(
    "text",
    [
        "It costs 3.5 euros",
        "Go to example.com/a.b now",
        "Mail ann@example.org today",
        "Open https://example.com/?q=1&x=2 please",
        "Use e.g. a fork",
        "We met Dr. Watson and Mr. Holmes",
        "Well… maybe",
        "1. First thing",
        "version 2.0.1 is out",
    ],
)
def test_dots_inside_numbers_addresses_and_abbreviations_end_nothing(text: str) -> None:
    assert sentence_end(text) == 0 and sentence_end(text, growing=True) == 0


def test_a_mark_at_the_end_of_a_growing_text_waits_for_what_follows() -> None:
    assert sentence_end("It costs 3.", growing=True) == 0, "it may go on as 3.5"
    assert sentence_end("It is done.", growing=True) == 0
    assert sentence_end("It is done. ", growing=True) == 0, "a lower-case word may follow: e.g."
    assert sentence_end("It is done. T", growing=True) == len("It is done.")
    assert sentence_end("Is it? ", growing=True) == len("Is it?")
    assert sentence_end("我很好。", growing=True) == len("我很好。"), "no number or address ends so"


def test_a_stopped_text_ends_at_a_final_mark_unless_it_may_go_on() -> None:
    assert sentence_end("It is done.") == len("It is done.")
    assert sentence_end("Is it really?") == len("Is it really?")
    assert sentence_end("Go to example.com/a.b?") == 0
    assert sentence_end("We waited...") == len("We waited...")


def test_the_ellipsis_the_cut_adds_is_not_trained_on() -> None:
    assert as_written("I could even design…", cut=True) == "I could even design"
    assert as_written("Sure!", cut=True) == "Sure!"
    assert as_written("We'll see…", cut=False) == "We'll see…", "the model's own, on a reply that ended"


SENTENCE_TEXT = st.lists(
    st.sampled_from([*'ab Z3.!?…。؟)"\n@/:', "e.g.", "Dr.", " x.com", "😊", "1. "]), max_size=40
).map("".join)


@given(SENTENCE_TEXT, st.data())
def test_an_end_found_while_growing_is_never_taken_back(text: str, data: st.DataObject) -> None:
    """The terminal prints up to the growing text's end at once: whatever follows, the final text
    (stopped, or still growing) ends there or later, and its whole sentences start with what was printed."""
    cut = data.draw(st.integers(0, len(text)))
    printed = text[: sentence_end(text[:cut], growing=True)]
    assert sentence_end(text) >= len(printed) and sentence_end(text, growing=True) >= len(printed)
    if printed.strip():
        assert whole_sentences(text).startswith(printed.rstrip())


@given(st.text(max_size=80))
def test_whole_sentences_keep_the_start_of_the_text(text: str) -> None:
    shown = whole_sentences(text)
    assert shown.strip() and (text.startswith(shown) or shown.endswith(ELLIPSIS))
    assert as_written(shown, cut=True).strip() in text.strip() or not text.strip()

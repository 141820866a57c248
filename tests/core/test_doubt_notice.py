"""The notice for a reply of unknown delivery names the reply it means by its opening words, so
that a person can tell whether it is the one they are missing (core/chat/doubts.py)."""

from __future__ import annotations

from bot.core.chat.doubts import QUOTE_CHARS, doubt_notice

OPENING = "My last reply may not have reached you: “"


def quoted(notice: str) -> str:
    assert notice.startswith(OPENING) and notice.endswith("”"), notice
    return notice[len(OPENING) : -1]


def test_a_short_reply_is_quoted_whole() -> None:
    assert doubt_notice("Lovely to hear from you.") == f"{OPENING}Lovely to hear from you.”"


def test_a_long_reply_is_cut_at_a_whole_word_and_says_so() -> None:
    reply = "I'm glad the walk by the river went well, and that the tea afterwards was as good as ever"
    words = quoted(doubt_notice(reply))
    assert words == "I'm glad the walk by the river went well, and that the tea …"
    assert len(words.removesuffix(" …")) <= QUOTE_CHARS
    assert reply.startswith(words.removesuffix(" …"))


def test_the_quote_is_one_line_of_plain_text() -> None:
    """Discord renders Markdown: a quote cut short must not open a code block or a spoiler, nor
    break the line."""
    notice = doubt_notice("```python\nprint('hi')\n``` and **bold** ||secret|| > quote")
    assert "\n" not in notice
    assert not set("`*|>_~\\") & set(quoted(notice))
    assert quoted(notice) == "python print('hi') and bold secret quote"


def test_a_word_longer_than_the_quote_is_cut_and_an_empty_reply_is_not_quoted() -> None:
    assert quoted(doubt_notice("x" * 200)) == "x" * QUOTE_CHARS + " …"
    assert doubt_notice("  ") == "My last reply may not have reached you."

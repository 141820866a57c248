"""The pacing and splitting every platform's streamed reply shares."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.adapters.streaming import StreamedReply, split_text


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class Recorder:
    """A surface that keeps what a platform would show."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self.calls: list[tuple[str, str]] = []
        self.drafts: list[str] = []

    async def send(self, text: str) -> str:
        message_id = str(len(self.messages) + 1)
        self.messages[message_id] = text
        self.calls.append(("send", text))
        return message_id

    async def edit(self, message_id: str, text: str) -> None:
        assert message_id in self.messages
        self.messages[message_id] = text
        self.calls.append(("edit", text))

    async def delete(self, message_id: str) -> None:
        del self.messages[message_id]
        self.calls.append(("delete", message_id))

    async def draft(self, text: str) -> None:
        self.drafts.append(text)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_short_text_is_one_piece() -> None:
    assert split_text("hello there", 4096) == ["hello there"]
    assert split_text("", 10) == [""]


def test_long_text_is_cut_at_breaks_and_loses_only_whitespace() -> None:
    text = ("word " * 1200).strip()  # 5,999 characters
    pieces = split_text(text, 2000)
    assert all(len(piece) <= 2000 for piece in pieces)
    assert " ".join(pieces) == text
    assert all(not piece.startswith(" ") and not piece.endswith(" ") for piece in pieces)


def test_a_paragraph_break_is_preferred() -> None:
    text = "a" * 50 + "\n\n" + "b " * 20
    assert split_text(text, 60)[0] == "a" * 50


def test_telegram_counts_emoji_as_two_units() -> None:
    text = "😀" * 3000  # 6,000 UTF-16 units, no breaks
    pieces = split_text(text, 4096, utf16)
    assert [utf16(piece) for piece in pieces] == [4096, 1904]
    assert "".join(pieces) == text


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=600), st.integers(5, 80))
def test_pieces_fit_and_keep_every_non_space_character(text: str, limit: int) -> None:
    pieces = split_text(text, limit, utf16)
    assert all(utf16(piece) <= limit for piece in pieces) or any(utf16(c) > limit for c in text)
    assert "".join("".join(pieces).split()) == "".join(text.split())


async def test_edits_are_paced_and_the_final_text_is_exact() -> None:
    surface, clock = Recorder(), Clock()
    reply = StreamedReply(surface, limit=100, interval_s=1.0, clock=clock)
    for index in range(30):
        clock.now = index * 0.1  # 3 s of chunks, 10 a second
        await reply.add(f"w{index} ")
    ids = await reply.finish("the final text")
    # The first chunk shows at once; then at most one update a second; then the final edit.
    assert [kind for kind, _ in surface.calls] == ["send", "edit", "edit", "edit"]
    assert ids == ["1"] and surface.messages == {"1": "the final text"}


async def test_a_long_reply_becomes_several_messages() -> None:
    surface, clock = Recorder(), Clock()
    reply = StreamedReply(surface, limit=2000, interval_s=0.0, clock=clock)
    text = "x" * 1500 + " " + "y" * 1500 + " " + "z" * 1500
    for start in range(0, len(text), 500):
        await reply.add(text[start : start + 500])
    ids = await reply.finish(text)
    assert len(ids) == 3
    assert " ".join(surface.messages[i] for i in ids) == text


async def test_drafts_preview_and_only_the_finish_sends() -> None:
    surface, clock = Recorder(), Clock()
    reply = StreamedReply(surface, limit=100, interval_s=0.0, clock=clock, draft=surface.draft)
    for word in ("one ", "two ", "three"):
        await reply.add(word)
    assert surface.calls == [] and surface.drafts == ["one", "one two", "one two three"]
    assert await reply.finish("one two three") == ["1"]
    assert surface.calls == [("send", "one two three")]


async def test_whitespace_only_chunks_show_nothing_and_an_empty_reply_shows_an_ellipsis() -> None:
    surface = Recorder()
    reply = StreamedReply(surface, limit=100, interval_s=0.0)
    await reply.add("   ")
    assert surface.calls == []
    assert await reply.finish("  ") == ["1"] and surface.messages["1"] == "…"


async def test_a_reply_finished_before_the_first_delay_is_shown_once_whole() -> None:
    surface, clock = Recorder(), Clock()
    reply = StreamedReply(surface, limit=100, interval_s=1.0, first_delay_s=0.15, clock=clock)
    for index, word in enumerate(("quick ", "and ", "done")):
        clock.now = index * 0.05
        await reply.add(word)
    assert surface.calls == []
    assert await reply.finish("quick and done") == ["1"]
    assert surface.calls == [("send", "quick and done")]
    slow = StreamedReply(surface, limit=100, interval_s=1.0, first_delay_s=0.15, clock=clock)
    clock.now = 10.0
    await slow.add("slow ")  # 10 s after it began: shown at once
    assert surface.calls[-1] == ("send", "slow")


async def test_verbatim_shows_the_words_exactly_as_written() -> None:
    surface = Recorder()
    reply = StreamedReply(surface, limit=100, interval_s=0.0, verbatim=True)
    for chunk in (" leading", " space\n", "and a line "):
        await reply.add(chunk)
    assert surface.calls[-1] == ("edit", " leading space\nand a line ")
    assert await reply.finish(" leading space\nand a line ") == ["1"]
    assert surface.messages["1"] == " leading space\nand a line "

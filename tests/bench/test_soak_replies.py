"""The soak's replies name the message they answer ("[r7] w0 w1 …"), streamed or chosen as the
best of n: on 2026-12-06 a reward model went on trial after the night, its best-of-4 replies came
from `sample` untagged, and the soak counted 780 of them as replies to no message (duplicated) and
their messages as lost."""

from __future__ import annotations

from bench.parts.soak.bot import TaggingFixtureGenerator
from bench.parts.soak.kinds import REPLY, kind_of, reply_tag
from bot.core.models import ChatMessage

ASKED = [ChatMessage("system", "persona"), ChatMessage("user", "[r3] earlier"), ChatMessage("assistant", "…"),
         ChatMessage("user", "[r7] how was the walk?")]  # fmt: skip


async def test_a_streamed_reply_and_every_best_of_n_candidate_name_the_message_answered() -> None:
    model = TaggingFixtureGenerator()
    streamed = "".join([chunk async for chunk in model.stream(ASKED, max_tokens=64)])
    candidates = await model.sample(ASKED, n=4, max_tokens=64)
    assert len(candidates) == 4
    for text in (streamed, *(candidate.text for candidate in candidates)):
        assert kind_of(text) == REPLY and reply_tag(text) == "[r7]"


async def test_a_message_without_a_tag_gets_a_reply_without_one() -> None:
    (candidate,) = await TaggingFixtureGenerator().sample([ChatMessage("user", "hi")], n=1, max_tokens=64)
    assert reply_tag(candidate.text) is None and kind_of(candidate.text) == REPLY

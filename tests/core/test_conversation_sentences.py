"""A reply the token budget cuts is shown and stored up to its last whole sentence, and keeps its
cut flag all the way to the nightly dataset, on SQLite and on Postgres + pgvector. A reply that
ended by itself is never trimmed, period or not.

The model is the scripted one (a fake at the inference port): one word (or one given piece) a
token, so the budget stops it exactly where a test says.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyDone
from bot.core.learning.dataset import DatasetPolicy, build_dataset
from bot.core.learning.reward import DEFAULT_REACTIONS, RewardWeights
from bot.core.models import ChatMessage, Feedback, StreamEnd
from bot.core.store import Store
from tests.support.fakes import HashEmbedder, ScriptedInference, reply_done

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
# 14 words: a budget of 12 stops it inside its second sentence.
RAMBLING = "Sure, happy to help with that. If you're interested, I could even design a whole plan."


class Pieces(ScriptedInference):
    """The scripted model, writing the given pieces, one a token: a budget can stop it inside a
    word ("3" "." "5")."""

    def __init__(self, pieces: Sequence[str]) -> None:
        super().__init__("".join(pieces))
        self.pieces = list(pieces)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        for piece in self.pieces[:max_tokens]:
            yield piece
        if ending is not None:
            ending.reason = "length" if len(self.pieces) >= max_tokens else "stop"


def talk(store: Store, reply: str | Sequence[str], budget: int) -> Conversation:
    model = ScriptedInference(reply) if isinstance(reply, str) else Pieces(reply)
    policy = ConversationPolicy(
        persona="You are a test companion.", max_new_tokens=budget, reactions=DEFAULT_REACTIONS
    )
    return Conversation(store, HashEmbedder(), model, policy, clock=lambda: T0)


async def stored_reply(store: Store, done: ReplyDone) -> tuple[str, bool]:
    """The reply's stored text, and the cut flag stored with how it was made."""
    assert done.turn_id is not None
    turns = await store.turns.recent_turns("ann", "c1", 50)
    text = next(turn.text for turn in turns if turn.id == done.turn_id)
    await store.turns.record_feedback(Feedback(done.turn_id, "ann", "👍", 1.0, T0))  # so it is listed
    rated = await store.learning.rated_replies(T0 - timedelta(days=1), T0 + timedelta(days=1))
    return text, next(r.generation.cut for r in rated if r.turn_id == done.turn_id)


async def test_a_reply_cut_mid_sentence_is_shown_and_stored_whole(any_store: Store) -> None:
    done = await reply_done(talk(any_store, RAMBLING, 12), "help me plan my week", at=T0)
    assert done.text == "Sure, happy to help with that." and done.cut
    assert await stored_reply(any_store, done) == ("Sure, happy to help with that.", True)


async def test_a_cut_reply_with_no_whole_sentence_ends_with_an_ellipsis(any_store: Store) -> None:
    done = await reply_done(
        talk(any_store, "If you're interested I could even design a plan", 8), "hi", at=T0
    )
    assert done.text == "If you're interested I could even design…" and done.cut, "the last word may be cut"
    assert await stored_reply(any_store, done) == ("If you're interested I could even design…", True)


async def test_a_cut_inside_a_number_or_an_address_goes_back_to_the_sentence_before(any_store: Store) -> None:
    flour = ["Use two cups of flour.", " Then add", " 3", ".", "5", " cups of milk."]
    number = await reply_done(talk(any_store, flour, 4), "a", at=T0)
    assert number.text == "Use two cups of flour." and number.cut
    page = [
        "I found a page about it.",
        " It is at https://example",
        ".com/a",
        ".",
        "b/c.html",
        " and it helps.",
    ]
    url = await reply_done(talk(any_store, page, 4), "b", at=T0)
    assert url.text == "I found a page about it." and url.cut
    assert await stored_reply(any_store, url) == ("I found a page about it.", True)


async def test_cut_replies_in_other_scripts_end_at_their_own_marks(any_store: Store) -> None:
    # The scripted model streams space-separated words; these scripts' marks need no space after.
    chinese = await reply_done(
        talk(any_store, "我今天很高兴。 因为天气很好 所以我们去公园 散步了很久很久", 3), "你好", at=T0
    )
    assert chinese.text == "我今天很高兴。" and chinese.cut
    arabic = await reply_done(talk(any_store, "كيف حالك اليوم؟ أنا بخير والحمد لله كثيرا", 6), "مرحبا", at=T0)
    assert arabic.text == "كيف حالك اليوم؟" and arabic.cut
    stored = {await stored_reply(any_store, done) for done in (chinese, arabic)}
    assert stored == {("我今天很高兴。", True), ("كيف حالك اليوم؟", True)}


async def test_a_reply_that_ended_by_itself_is_never_trimmed(any_store: Store) -> None:
    unfinished_looking = "ok see you then, and good luck with the interview"
    done = await reply_done(talk(any_store, unfinished_looking, 96), "bye", at=T0)
    assert done.text == unfinished_looking and not done.cut
    assert await stored_reply(any_store, done) == (unfinished_looking, False)


async def test_the_nightly_set_trains_a_cut_reply_on_its_whole_sentences_flagged_cut(
    any_store: Store,
) -> None:
    cut = await reply_done(talk(any_store, RAMBLING, 12), "plan my week", at=T0)
    short = await reply_done(
        talk(any_store, "If you're interested I could even design a plan", 8), "hi", at=T0
    )
    for done in (cut, short):
        await stored_reply(any_store, done)  # rated 👍
    data = await build_dataset(
        any_store, DatasetPolicy(heldout_share=0.0), RewardWeights(), T0 + timedelta(hours=1)
    )
    examples: dict[int | None, tuple[str, bool]] = {e.turn_id: (e.completion, e.cut) for e in data.train}
    assert examples[cut.turn_id] == ("Sure, happy to help with that.", True)
    assert examples[short.turn_id] == ("If you're interested I could even design", True), (
        "no ellipsis it never wrote"
    )

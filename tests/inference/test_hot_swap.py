"""Hot swap ([learning]): a new adapter version is promoted while a reply streams on the real local
engine (a tiny model, real peft adapters, the real conversation and each store). The streaming reply
finishes under the version it began with, with no error; the next reply uses the new version,
and each stored reply says which version wrote it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyChunk, ReplyDone, UserMessage
from bot.core.learning.models import GLOBAL_SCOPE, NewAdapter
from bot.core.learning.serving import promote
from bot.core.models import Feedback
from bot.core.store import Store
from bot.inference.engine.local import LocalInference, Sampling
from tests.inference.lora_files import make_adapter
from tests.support.fakes import HashEmbedder

# The stored replies are stamped by the clock, and the rated window is read around T0: so T0 is now.
T0 = datetime.now(UTC).replace(microsecond=0)


async def registered(store: Store, path: str) -> int:
    record = await store.adapters.add_adapter(
        NewAdapter(GLOBAL_SCOPE, "tiny", path, T0 - timedelta(days=14), T0)
    )
    return record.version


async def test_promoting_while_a_reply_streams_swaps_for_the_next_reply(
    tiny_dir: Path, tmp_path: Path, any_store: Store
) -> None:
    store = any_store
    adapters = tmp_path / "adapters"
    make_adapter(tiny_dir, adapters / "v1", seed=1)
    make_adapter(tiny_dir, adapters / "v2", seed=2)
    v1, v2 = await registered(store, "v1"), await registered(store, "v2")
    await promote(store.adapters, v1, T0)
    engine = LocalInference.load(
        tiny_dir, timeout_s=60.0, sampling=Sampling(temperature=0.0), adapters_dir=adapters
    )
    policy = ConversationPolicy(persona="You are a test companion.", max_new_tokens=300)
    conversation = Conversation(store, HashEmbedder(), engine, policy)
    try:
        long_reply = conversation.handle_message(UserMessage("ann", "c1", "tell me a long story", T0))
        first = await anext(long_reply)
        assert isinstance(first, ReplyChunk)
        await promote(store.adapters, v2, T0 + timedelta(minutes=1))  # the night's run promotes, mid-reply
        events = [first, *[event async for event in long_reply]]
        done = events[-1]
        assert isinstance(done, ReplyDone) and done.notice is None and done.turn_id is not None
        assert all(isinstance(event, ReplyChunk) for event in events[:-1]) and len(events) > 2

        next_message = UserMessage("ann", "c1", "and then?", T0)
        after = [event async for event in conversation.handle_message(next_message)]
        assert isinstance(after[-1], ReplyDone) and after[-1].turn_id is not None
        assert "v2" in engine.loaded_adapters
    finally:
        await engine.close()

    for turn_id in (done.turn_id, after[-1].turn_id):
        await store.turns.record_feedback(Feedback(turn_id, "ann", "👍", 1.0, T0))
    rated = await store.learning.rated_replies(T0 - timedelta(days=1), T0 + timedelta(days=1))
    made = {reply.turn_id: reply.generation.adapter_version for reply in rated}
    assert made == {done.turn_id: v1, after[-1].turn_id: v2}

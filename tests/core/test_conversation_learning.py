"""The conversation serves the registry's adapter and keeps how each reply was made ([learning]), on
SQLite and on Postgres + pgvector: the adapter version on every reply, the prompt exactly as the
model received it, the cut flag, and the base model when the adapter cannot be served."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.errors import InferenceError
from bot.core.events import ReplyDone, UserMessage
from bot.core.learning.models import AdapterRecord, NewAdapter
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.models import ChatMessage, EndReason, Feedback, StreamEnd
from bot.core.store import Store
from bot.store.postgres.store import PostgresStore
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.pg import PgServer, fresh_database

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


class AdapterModel(ScriptedInference):
    """The scripted model (a fake at the inference port), noting which adapter each reply asked for.
    Adapters in `unservable` fail the way bot/inference/engine/lora.py fails a missing folder."""

    def __init__(self, reply: str = "Nice to hear from you.", *, unservable: Sequence[str] = ()) -> None:
        super().__init__(reply)
        self.adapters: list[str | None] = []
        self.unservable = set(unservable)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        self.adapters.append(adapter)
        if adapter in self.unservable:
            raise InferenceError(
                f"unknown LoRA adapter {adapter!r}: no adapter_config.json in /data/adapters"
            )
        chunks = super().stream(messages, max_tokens=max_tokens, adapter=adapter, ending=ending, seed=seed)
        async for chunk in chunks:
            yield chunk


def make(store: Store, model: ScriptedInference, **policy: object) -> Conversation:
    return Conversation(
        store,
        HashEmbedder(),
        model,
        ConversationPolicy(persona="You are a test companion.", reactions=DEFAULT_REACTIONS, **policy),  # type: ignore[arg-type]
        clock=lambda: T0,
    )


async def say(conv: Conversation, text: str, at: datetime = T0) -> ReplyDone:
    events = [event async for event in conv.handle_message(UserMessage("ann", "c1", text, at))]
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.turn_id is not None
    await conv.store.turns.record_feedback(Feedback(done.turn_id, "ann", "👍", 1.0, at))  # so it is listed
    return done


async def serve(store: Store, path: str) -> AdapterRecord:
    added = await store.adapters.add_adapter(NewAdapter("global", "base", path, T0 - timedelta(days=14), T0))
    await store.adapters.promote_adapter(added.version, T0)
    return added


async def generations(store: Store) -> dict[int, tuple[int | None, bool, tuple[ChatMessage, ...]]]:
    rated = await store.learning.rated_replies(T0 - timedelta(days=1), T0 + timedelta(days=1))
    return {r.turn_id: (r.generation.adapter_version, r.generation.cut, r.generation.prompt) for r in rated}


async def test_every_reply_records_the_adapter_that_wrote_it(any_store: Store) -> None:
    model = AdapterModel()
    conv = make(any_store, model)
    base = await say(conv, "hello")
    v1 = await serve(any_store, "v1")
    first = await say(conv, "how are you?")
    v2 = await serve(any_store, "v2")  # promoted between two messages: the next reply uses it
    second = await say(conv, "and now?")
    await any_store.adapters.serve_base("global", T0)  # a rollback to the base model
    last = await say(conv, "still there?")
    assert model.adapters == [None, "v1", "v2", None]
    stored = await generations(any_store)
    assert [stored[done.turn_id or 0][0] for done in (base, first, second, last)] == [
        None,
        v1.version,
        v2.version,
        None,
    ]


async def test_the_stored_prompt_is_exactly_what_the_model_received(any_store: Store) -> None:
    model = AdapterModel()
    conv = make(any_store, model, recent_turns=4)
    await say(conv, "my sister lives in Lisbon")
    done = await say(conv, "where does my sister live? 🧭 naïve ﬁ")
    stored = await generations(any_store)
    assert stored[done.turn_id or 0][2] == tuple(model.prompts[-1])
    assert [m.role for m in stored[done.turn_id or 0][2]] == ["system", "user", "assistant", "user"]


async def test_a_reply_cut_at_the_token_budget_is_flagged(any_store: Store) -> None:
    long = " ".join(f"word{n}" for n in range(50))
    cut = await say(make(any_store, AdapterModel(long), max_new_tokens=8), "tell me a story")
    whole = await say(make(any_store, AdapterModel("Short."), max_new_tokens=8), "and briefly?")
    stored = await generations(any_store)
    assert stored[cut.turn_id or 0][1] is True
    assert stored[whole.turn_id or 0][1] is False


class SaysHowItEnded(AdapterModel):
    """The adapter model saying `reason` however long its text: an engine whose reply re-tokenizes
    to fewer tokens than it wrote (or more), as a real one's can."""

    def __init__(self, reply: str, reason: EndReason, *, unservable: Sequence[str] = ()) -> None:
        super().__init__(reply, unservable=unservable)
        self.reason = reason

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        async for chunk in super().stream(messages, max_tokens=max_tokens, adapter=adapter):
            yield chunk
        if ending is not None:
            ending.reason = self.reason


async def test_the_cut_flag_is_what_the_engine_says_not_a_recount(any_store: Store) -> None:
    few = "Short. And then"  # 3 tokens by the recount, under the budget of 8
    cut = await say(make(any_store, SaysHowItEnded(few, "length"), max_new_tokens=8), "a story?")
    many = " ".join(f"word{n}" for n in range(8))  # 11 tokens by the recount, over the budget
    ended = await say(make(any_store, SaysHowItEnded(many, "stop"), max_new_tokens=8), "count?")
    stored = await generations(any_store)
    assert stored[cut.turn_id or 0][1] is True and cut.cut and cut.text == "Short."
    assert stored[ended.turn_id or 0][1] is False and not ended.cut and ended.text == many


async def test_the_base_models_retry_says_how_its_reply_ended(any_store: Store) -> None:
    model = SaysHowItEnded("Short. And then", "length", unservable=["v1"])
    conv = make(any_store, model, max_new_tokens=8)
    await serve(any_store, "v1")
    done = await say(conv, "hello?")
    assert model.adapters == ["v1", None]
    assert (await generations(any_store))[done.turn_id or 0][:2] == (None, True)


async def test_an_adapter_that_cannot_be_served_falls_back_to_the_base_model(any_store: Store) -> None:
    model = AdapterModel("From the base.", unservable=["v1"])
    conv = make(any_store, model)
    await serve(any_store, "v1")
    done = await say(conv, "hello?")
    assert done.text == "From the base." and done.notice is None
    assert model.adapters == ["v1", None]
    assert (await generations(any_store))[done.turn_id or 0][0] is None, "written by the base model"


async def test_other_model_errors_still_fail_the_reply(any_store: Store) -> None:
    model = ScriptedInference(fail_with=InferenceError("out of memory"))
    conv = make(any_store, model)
    await serve(any_store, "v1")
    events = [event async for event in conv.handle_message(UserMessage("ann", "c1", "hi", T0))]
    assert "out of memory" in getattr(events[-1], "text", "")
    assert len(model.prompts) == 1, "no second try: the base model would fail alike"


@pytest.mark.pg
async def test_an_unreachable_registry_means_the_base_model(pg_server: PgServer) -> None:
    """The server goes away between two messages: the reply still comes, from the base model."""
    if not pg_server.restartable:
        pytest.skip("TEST_DATABASE_URL names a server this test cannot stop and start")
    store = await PostgresStore.open(await fresh_database(pg_server), timeout_s=2.0)
    model = AdapterModel("ok")
    conv = make(store, model)
    try:
        await serve(store, "v1")
        pg_server.stop()
        try:
            events = [event async for event in conv.handle_message(UserMessage("ann", "c1", "hi", T0))]
        finally:
            pg_server.start()
        done = events[-1]
        assert isinstance(done, ReplyDone) and done.text == "ok" and done.turn_id is None
        assert model.adapters == [None]
    finally:
        await store.close()

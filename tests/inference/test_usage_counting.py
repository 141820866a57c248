"""Usage counted per reply ([personal]) end to end: the conversation, a real SQLite store, the real
OpenAICompatInference and the loopback server. The server's own `usage` is what counts where it
sends it (asked for with `include_usage` when streaming); without it, the backend's tokenizer
counts; a best-of-n counts every one of its n candidates."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyDone, UserMessage
from bot.core.usage import UsageDay
from bot.inference.openai_compat import OpenAICompatInference, estimate_tokens
from bot.store.sqlite.store import SqliteStore
from tests.inference.openai_server import FakeOpenAI
from tests.inference.test_best_of_n_conversation import T0, serve
from tests.inference.test_openai_compat import KEY, WHOLE
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()
DAY = T0.date()


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    fake = await FakeOpenAI().start()
    yield fake
    await fake.close()


async def say(
    server: FakeOpenAI, store: SqliteStore, text: str, *, chat: str = "c1", best_of: int = 4
) -> str:
    backend = OpenAICompatInference(server.base_url, model="smollm2", api_key=KEY, timeout_s=5.0)
    try:
        conv = Conversation(
            store, EMB, backend, ConversationPolicy(persona="Kind.", best_of=best_of), clock=lambda: T0
        )
        message = UserMessage("ann", chat, text, T0, private=chat == "c1")
        events = [e async for e in conv.handle_message(message)]
    finally:
        await backend.close()
    done = events[-1]
    assert isinstance(done, ReplyDone)
    return done.text


async def test_a_streamed_reply_counts_the_servers_usage(server: FakeOpenAI, store: SqliteStore) -> None:
    server.prompt_tokens = 777
    assert await say(server, store, "hello") == "Hello there, friend!"
    assert server.requests[-1]["stream_options"] == {"include_usage": True}
    # 777 is the server's word: the tokenizer's count of this short prompt is far from it.
    assert await store.usage.days(DAY, DAY) == [UsageDay("ann", DAY, False, 777, 6, 1)]


async def test_without_the_servers_usage_the_tokenizer_counts(server: FakeOpenAI, store: SqliteStore) -> None:
    await say(server, store, "hello there")
    prompt = server.requests[-1]["messages"]
    counted = sum(estimate_tokens(m["content"]) for m in prompt)
    [day] = await store.usage.days(DAY, DAY)
    assert (day.tokens_in, day.tokens_out, day.replies) == (counted, estimate_tokens(WHOLE), 1)
    assert counted > 0


@pytest.mark.parametrize("honour_n", [True, False])
async def test_a_best_of_4_reply_counts_all_four_candidates(
    server: FakeOpenAI, store: SqliteStore, honour_n: bool
) -> None:
    server.honour_n, server.prompt_tokens = honour_n, 50
    await serve(store, f"{WHOLE} #3")
    await say(server, store, "hello")
    # One request with n=4 reports the prompt once; four requests (a server that ignores n) four times.
    read = 50 if honour_n else 200
    assert await store.usage.days(DAY, DAY) == [UsageDay("ann", DAY, False, read, 24, 1)]
    [record] = await store.usage.records("ann")
    assert record.amount == 4, "the reply drew four samples"


async def test_a_reply_in_a_group_counts_for_the_person_and_the_group(
    server: FakeOpenAI, store: SqliteStore
) -> None:
    server.prompt_tokens = 10
    await say(server, store, "hello", chat="telegram:-5")
    assert await store.usage.days(DAY, DAY) == [
        UsageDay("ann", DAY, False, 10, 6, 1),
        UsageDay("telegram:-5", DAY, True, 10, 6, 1),
    ]

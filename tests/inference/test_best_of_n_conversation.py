"""Best-of-n end to end on the OpenAI-compatible backend ([canary]): the conversation, a real SQLite
store with a serving reward model, the real OpenAICompatInference, and the loopback server, once
honouring `n` and once ignoring it (as Ollama does): either way the reply is the candidate the reward
model scores best, and it records the reward model and n."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyDone, UserMessage
from bot.core.learning import RewardModel
from bot.core.learning.models import NewCanary, NewRewardModel, Variant
from bot.core.models import Feedback
from bot.inference.openai_compat import OpenAICompatInference
from bot.store.sqlite.store import SqliteStore
from tests.inference.openai_server import FakeOpenAI
from tests.inference.test_openai_compat import KEY, WHOLE
from tests.support.fakes import HashEmbedder

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
EMB = HashEmbedder()


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    fake = await FakeOpenAI().start()
    yield fake
    await fake.close()


async def serve(store: SqliteStore, best: str) -> int:
    weights = np.concatenate([EMB.vector(best), np.zeros(EMB.dim)]).astype(float)
    flat = (0.0,) * 2 * EMB.dim, (1.0,) * 2 * EMB.dim
    model = RewardModel(EMB.model_name, EMB.dim, *flat, tuple(weights), 0.0)
    record = await store.trials.add_reward_model(NewRewardModel(EMB.model_name, model.as_json(), {}), T0)
    tried = NewCanary("", Variant(None, record.version, 4), Variant(), 0.5, 1, {})
    canary = await store.trials.start_canary(tried, T0)
    assert canary is not None
    await store.trials.decide_canary(canary.id, "promoted", "better", T0)
    return record.version


@pytest.mark.parametrize("honour_n", [True, False])
async def test_the_reply_is_the_best_scored_candidate(
    server: FakeOpenAI, store: SqliteStore, tmp_path: Path, honour_n: bool
) -> None:
    server.honour_n = honour_n
    version = await serve(store, f"{WHOLE} #3")
    backend = OpenAICompatInference(server.base_url, model="smollm2", api_key=KEY, timeout_s=5.0)
    try:
        policy = ConversationPolicy(persona="Kind.", best_of=4)
        conv = Conversation(store, EMB, backend, policy, clock=lambda: T0)
        message = UserMessage("ann", "c1", "hello", T0, idempotency_key="m1")
        events = [e async for e in conv.handle_message(message)]
    finally:
        await backend.close()
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.text == f"{WHOLE} #3" and done.turn_id is not None
    assert len(server.requests) == (1 if honour_n else 4)
    await store.turns.record_feedback(Feedback(done.turn_id, "ann", "👍", 1.0, T0))
    [rated] = await store.learning.rated_replies(T0 - timedelta(days=1), T0 + timedelta(days=1))
    assert (rated.generation.reward_model_version, rated.generation.n) == (version, 4)

"""Best-of-n in a Telegram chat ([canary]): with a reward model serving, nothing is sent until every
candidate is written and one chosen, and "typing…" is shown, renewed, all that time; then the chosen
reply is sent as any other. The real Application over HTTP to the loopback Bot API; the model is the
scripted one (a fake at the inference port: what is tested here is what the person sees)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bot.adapters.telegram import chat as telegram_chat
from bot.adapters.telegram.chat import ChatPolicy
from bot.core.learning import RewardModel
from bot.core.learning.models import NewCanary, NewRewardModel, Variant
from bot.core.store import Store
from tests.adapters.telegram.conftest import ANN, running_bot
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.telegram_api import FakeTelegramBotApi

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
BEST = "How was your walk by the sea?"


async def serve_reward_model(store: Store) -> None:
    """A reward model that scores a reply by its closeness to BEST, served as a promoted canary's."""
    emb = HashEmbedder()
    weights = np.concatenate([emb.vector(BEST), np.zeros(emb.dim)]).astype(float)
    flat = (0.0,) * 2 * emb.dim, (1.0,) * 2 * emb.dim
    model = RewardModel(emb.model_name, emb.dim, *flat, tuple(weights), 0.0)
    record = await store.trials.add_reward_model(NewRewardModel(emb.model_name, model.as_json(), {}), T0)
    tried = NewCanary("", Variant(None, record.version, 3), Variant(), 0.5, 1, {})
    canary = await store.trials.start_canary(tried, T0)
    assert canary is not None
    await store.trials.decide_canary(canary.id, "promoted", "better", T0)


async def test_typing_is_shown_while_candidates_are_written_then_the_best_is_sent(
    api: FakeTelegramBotApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telegram_chat, "TYPING_LASTS_S", 0.2)
    model = ScriptedInference("Ok.", candidates=["Ok.", BEST, "Fine then."], delay_s=1.2)
    chat = ChatPolicy(typing_delay_s=0.05)
    async with running_bot(api, tmp_path, inference=model, chat=chat) as bot:
        await serve_reward_model(bot.store)
        api.private_message(ANN, "I walked by the sea today")
        await api.wait_until(lambda: api.texts(ANN) == [BEST])
        assert len(api.calls_of("sendChatAction")) >= 3, "typing… renewed while candidates were written"
        # Nothing of another candidate, nor half of one, was ever shown: the chosen reply, whole.
        assert set(api.drafts.get(ANN, [])) <= {BEST}
        assert model.samples == [(4, None)]

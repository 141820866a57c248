"""How a proactive message was taken, through the Conversation on a real SQLite store: a reply
within two hours that is no decline, or a 👍, accepts it with one γ signal on its turn; a decline
dismisses it (a habit for good); "don't suggest this again" turns the trigger off; "remind me …"
is answered without the model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import Reaction, ReplyDone, UserMessage
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.models import NewTurn
from bot.core.proactive.models import Claim, Delivery, ProactiveSettings
from bot.core.proactive.outcomes import ProactiveReplies
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference

SENT = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
ANN = "telegram:1"


@pytest.fixture
def inference() -> ScriptedInference:
    return ScriptedInference("Glad to hear it.")


@pytest.fixture
def conversation(store: SqliteStore, inference: ScriptedInference) -> Conversation:
    policy = ConversationPolicy(persona="You are a test companion.", reactions=DEFAULT_REACTIONS)
    replies = ProactiveReplies(store, clock=lambda: SENT)
    return Conversation(store, HashEmbedder(), inference, policy, clock=lambda: SENT, proactive=replies)


async def sent(store: SqliteStore, trigger: str = "habit") -> tuple[str, int]:
    """A proactive message as beat leaves it: claimed, sent, stored as a turn. (key, turn id)"""
    embedder, key = HashEmbedder(), f"{ANN}:{trigger}:run@morning"
    text = "You often run around 7. Want a morning reminder?"
    turn = await store.turns.add_turn(NewTurn(ANN, ANN, "assistant", text, embedder.vector(text),
                                        embedder.model_name, SENT, memory_kind="reply"))  # fmt: skip
    await store.proactive.claim(Claim(key, ANN, trigger, SENT))
    await store.proactive.settle(key, Delivery("sent", SENT, ANN, turn.id, "77"))
    return key, turn.id


async def say(conversation: Conversation, text: str, after: timedelta) -> ReplyDone:
    events = [e async for e in conversation.handle_message(UserMessage(ANN, ANN, text, SENT + after))]
    assert isinstance(events[-1], ReplyDone)
    return events[-1]


async def test_a_yes_within_two_hours_accepts_it_with_one_success_signal(
    store: SqliteStore, conversation: Conversation
) -> None:
    _, turn_id = await sent(store)
    await say(conversation, "yes, good idea", timedelta(minutes=20))
    await say(conversation, "sounds great", timedelta(minutes=30))  # one outcome, the first
    [row] = await store.proactive.sent_messages(ANN, SENT - timedelta(days=1))
    assert row.outcome == "accepted"
    record = await store.rewards.reply_record(turn_id, 5)
    assert record is not None and record.proactive_successes == 1
    [rate] = await store.proactive.trigger_rates(SENT - timedelta(days=1))
    assert (rate.trigger, rate.sent, rate.accepted, rate.success_rate) == ("habit", 1, 1, 1.0)


async def test_a_reply_after_the_window_says_nothing_about_it(
    store: SqliteStore, conversation: Conversation
) -> None:
    _, turn_id = await sent(store)
    await say(conversation, "yes", timedelta(hours=2, minutes=1))
    [row] = await store.proactive.sent_messages(ANN, SENT - timedelta(days=1))
    record = await store.rewards.reply_record(turn_id, 5)
    assert row.outcome is None and record is not None and record.proactive_successes == 0


async def test_a_declined_habit_is_dismissed_and_never_offered_again(
    store: SqliteStore, conversation: Conversation
) -> None:
    key, turn_id = await sent(store)
    await say(conversation, "no thanks", timedelta(minutes=5))
    [row] = await store.proactive.sent_messages(ANN, SENT - timedelta(days=1))
    assert row.outcome == "dismissed"
    assert (await store.proactive.proactive_settings(ANN)).declined == {key}
    record = await store.rewards.reply_record(turn_id, 5)
    assert record is not None and record.proactive_successes == 0


async def test_dont_suggest_this_again_turns_the_trigger_off_without_the_model(
    store: SqliteStore, conversation: Conversation, inference: ScriptedInference
) -> None:
    await store.proactive.save_proactive_settings(ANN, ProactiveSettings(enabled=True, timezone="UTC"), SENT)
    await sent(store, "long_session")
    done = await say(conversation, "don't suggest this again", timedelta(minutes=5))
    assert done.text.startswith("Okay, no more break suggestions.") and inference.prompts == []
    settings = await store.proactive.proactive_settings(ANN)
    assert settings.disabled == {"long_session"} and settings.enabled


async def test_a_thumbs_up_accepts_it_once_and_a_thumbs_down_dismisses_another(
    store: SqliteStore, conversation: Conversation
) -> None:
    key, turn_id = await sent(store, "follow_up")
    for emoji in ("👍", "❤️"):
        await conversation.handle_reaction(Reaction(ANN, turn_id, emoji, SENT + timedelta(hours=5)))
    record = await store.rewards.reply_record(turn_id, 5)
    assert record is not None and record.proactive_successes == 1
    vector = HashEmbedder().vector("x")
    asked = NewTurn(ANN, ANN, "assistant", "How did it go?", vector, "m", SENT, memory_kind="reply")
    other = await store.turns.add_turn(asked)
    await store.proactive.claim(Claim("k2", ANN, "long_session", SENT))
    await store.proactive.settle("k2", Delivery("sent", SENT, ANN, other.id, "78"))
    await conversation.handle_reaction(Reaction(ANN, other.id, "👎", SENT + timedelta(minutes=1)))
    outcomes = {
        row.key: row.outcome for row in await store.proactive.sent_messages(ANN, SENT - timedelta(days=1))
    }
    assert outcomes == {key: "accepted", "k2": "dismissed"}


async def test_remind_me_is_answered_and_stored_without_the_model(
    store: SqliteStore, conversation: Conversation, inference: ScriptedInference
) -> None:
    await store.proactive.save_proactive_settings(ANN, ProactiveSettings(timezone="Europe/Berlin"), SENT)
    done = await say(conversation, "remind me tomorrow at 9am to water the plants", timedelta(0))
    assert done.text.startswith("Okay: on Wednesday 2 December 2026 at 09:00 (Europe/Berlin)")
    assert inference.prompts == [] and done.turn_id is not None
    [reminder] = await store.proactive.reminders(ANN)
    assert reminder.due == datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
    hostile = await say(conversation, "remind me every second to blink", timedelta(minutes=1))
    assert not hostile.text.startswith("Okay") and len(await store.proactive.reminders(ANN)) == 1
    normal = await say(conversation, "what a day", timedelta(minutes=2))
    assert normal.text == "Glad to hear it."  # an ordinary message still reaches the model

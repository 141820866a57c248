"""Budgets kept, on SQLite and PostgreSQL: a reply goes ahead while room is left and is counted
whole; the next is refused with when the budget renews (the person's midnight where their time
zone is known); the person's words are stored all the same. Groups, guests and admins each have
their own rule. Holds in this process (bot/shared_state/local_holds.py)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from bot.core.chat.access import Access
from bot.core.events import Refusal, ReplyDone
from bot.core.proactive.models import ProactiveSettings
from bot.core.store import Store
from bot.shared_state.local_holds import LocalHolds
from tests.support.budgets import budgeted, said
from tests.support.fakes import ScriptedInference

ANN, BOB, ADMIN, GROUP = "telegram:1", "telegram:2", "telegram:3", "telegram:-100"
TEN_WORDS = "one two three four five six seven eight nine ten"


async def test_a_day_budget_runs_out_and_the_next_message_is_kept_and_refused(any_store: Store) -> None:
    conversation = budgeted(
        any_store, LocalHolds(), "[everyone]\ntokens_per_day = 30\n", ScriptedInference(TEN_WORDS)
    )
    first = await said(conversation, ANN, ANN, "Hello, how are you today?", "k1")
    second = await said(conversation, ANN, ANN, "Tell me more please.", "k2")
    assert isinstance(first, ReplyDone) and isinstance(second, ReplyDone), "room was left for both"
    today, _ = await any_store.usage.spent(ANN, datetime.now(UTC).date())
    assert today.tokens >= 30, "both replies counted whole: the second one overspent, as one in flight may"
    third = await said(conversation, ANN, ANN, "And a third thing?", "k3")
    assert isinstance(third, Refusal)
    assert third.text.startswith(
        "You've used your allowance for today (30 tokens). It renews at midnight, UTC"
    )
    assert "Your message is kept." in third.text
    turns = await any_store.turns.recent_turns(ANN, ANN, 10)
    assert "And a third thing?" in [t.text for t in turns], "the refused message is stored"
    assert isinstance(await said(conversation, BOB, BOB, "Hi!", "b1"), ReplyDone), "Bob has his own budget"


async def test_the_day_renews_at_the_persons_midnight(any_store: Store) -> None:
    await any_store.proactive.save_proactive_settings(
        ANN, ProactiveSettings(timezone="Asia/Tokyo"), datetime.now(UTC)
    )
    at = datetime(2026, 12, 6, 14, 30, tzinfo=UTC)  # 23:30 in Tokyo
    conversation = budgeted(any_store, LocalHolds(), "[everyone]\ntokens_per_day = 1\n",
                            ScriptedInference("fine"), clock=lambda: at)  # fmt: skip
    assert isinstance(await said(conversation, ANN, ANN, "Hello", "k1"), ReplyDone)
    refused = await said(conversation, ANN, ANN, "Again", "k2")
    assert isinstance(refused, Refusal)
    assert "at midnight, your time (Asia/Tokyo): in 30 min" in refused.text
    [day] = await any_store.usage.days(datetime(2026, 12, 1).date(), datetime(2026, 12, 31).date(), ANN)
    assert day.day.isoformat() == "2026-12-06", "counted on her Tokyo day"


async def test_a_month_budget_says_when_the_month_renews(any_store: Store) -> None:
    at = datetime(2026, 12, 30, 12, 0, tzinfo=UTC)
    conversation = budgeted(any_store, LocalHolds(), "[everyone]\ntokens_per_month = 1\n",
                            ScriptedInference("fine"), clock=lambda: at)  # fmt: skip
    await said(conversation, ANN, ANN, "Hello", "k1")
    refused = await said(conversation, ANN, ANN, "Again", "k2")
    assert isinstance(refused, Refusal)
    assert "allowance for this month (1 token). It renews on 1 January, UTC: in 1 d 12 h" in refused.text


async def test_a_group_reply_counts_for_the_speaker_and_the_group(any_store: Store) -> None:
    budgets = "[everyone]\ntokens_per_day = 100000\n[groups]\ntokens_per_day = 1\n"
    conversation = budgeted(any_store, LocalHolds(), budgets, ScriptedInference("fine"))
    assert isinstance(await said(conversation, ANN, GROUP, "Hello all", "g1", private=False), ReplyDone)
    refused = await said(conversation, BOB, GROUP, "Hi from Bob", "g2", private=False)
    assert isinstance(refused, Refusal) and refused.text.startswith("This group has used its allowance")
    assert isinstance(await said(conversation, BOB, BOB, "Hi in private", "b1"), ReplyDone)
    person, _ = await any_store.usage.spent(ANN, datetime.now(UTC).date())
    group, _ = await any_store.usage.spent(GROUP, datetime.now(UTC).date(), group=True)
    assert person.tokens == group.tokens > 0


async def test_guests_have_their_budget_and_admins_none(any_store: Store) -> None:
    access = Access(frozenset({ANN, "telegram-chat:-200"}), frozenset({ADMIN}), guests=True)
    budgets = "[everyone]\ntokens_per_day = 100000\n[guests]\ntokens_per_day = 1\n"
    conversation = budgeted(any_store, LocalHolds(), budgets, ScriptedInference("fine"), access=access)
    for key in ("g1", "g2"):
        last = await said(conversation, BOB, BOB, "Hello", key)
    assert isinstance(last, Refusal), "Bob is a guest: one reply, then the guests' budget is used"
    for key in ("a1", "a2"):
        assert isinstance(await said(conversation, ANN, ANN, "Hello", key), ReplyDone)
    # Admitted by the chat the allowlist names: not a guest there.
    for key in ("c1", "c2"):
        answer = await said(conversation, BOB, "telegram:-200", "Hi", key, private=False,
                            places=("telegram-chat:-200",))  # fmt: skip
        assert isinstance(answer, ReplyDone)
    exempt = budgeted(any_store, LocalHolds(), "[everyone]\ntokens_per_day = 1\n", ScriptedInference("fine"),
                      access=access)  # fmt: skip
    for key in ("x1", "x2", "x3"):
        assert isinstance(await said(exempt, ADMIN, ADMIN, "Hello", key), ReplyDone), "admins are exempt"


async def test_a_reply_streaming_when_the_budget_runs_out_finishes(any_store: Store) -> None:
    """Two of Ann's chats at once: the fast one uses the budget up while the slow one streams;
    the slow one finishes whole, and her next message is refused."""
    slow = ScriptedInference(TEN_WORDS, delay_s=0.05)
    budgets = "[everyone]\ntokens_per_day = 150\n"
    holds = LocalHolds()
    streaming = budgeted(any_store, holds, budgets, slow)  # holds about 110: its prompt and 100 to write
    long_reply = ScriptedInference(" ".join(["word"] * 200))
    quick = budgeted(any_store, holds, budgets, long_reply, max_new_tokens=300)
    slow_task = asyncio.create_task(
        said(streaming, ANN, "telegram:-7", "Tell me slowly", "s1", private=False)
    )
    await asyncio.sleep(0.1)
    fast = await said(quick, ANN, ANN, "Quick one", "f1")
    done = await slow_task
    assert isinstance(fast, ReplyDone) and isinstance(done, ReplyDone)
    assert done.text == TEN_WORDS, "the reply that was streaming finished whole"
    assert isinstance(await said(quick, ANN, ANN, "Next", "f2"), Refusal)

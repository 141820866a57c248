"""Reactions and buttons on replies become one feedback record each; changes and undo update it."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.support.telegram_api import FakeTelegramBotApi


async def test_a_reaction_is_recorded_changed_and_removed(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.private_message(ANN, "hello")
        await replies_done(api, ANN, 1)
        reply = api.bot_messages(ANN)[0].data["message_id"]
        turn = (await bot.store.turns.recent_turns(f"telegram:{ANN}", f"telegram:{ANN}", 2))[-1].id
        user = f"telegram:{ANN}"
        api.reaction(ANN, reply, ANN, old=[], new=["👍"])
        await api.wait_until(lambda: bot.feedback() == [(turn, user, "reaction", "👍", 1.0)])
        api.reaction(ANN, reply, ANN, old=["👍"], new=["👎"])
        await api.wait_until(lambda: bot.feedback() == [(turn, user, "reaction", "👎", -1.0)])
        api.reaction(ANN, reply, ANN, old=["👎"], new=["👎", "🤔"])  # one added that means nothing
        api.reaction(ANN, reply, ANN, old=["👎", "🤔"], new=[])
        await api.wait_until(lambda: bot.feedback() == [])


async def test_reactions_on_other_messages_count_for_nothing(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        own = api.private_message(ANN, "hello")["message"]["message_id"]
        await replies_done(api, ANN, 1)
        reply = api.bot_messages(ANN)[0].data["message_id"]
        api.reaction(ANN, own, ANN, old=[], new=["👍"])  # on the person's own message
        api.reaction(ANN, 999_999, ANN, old=[], new=["👍"])  # on a message that never existed
        api.reaction(ANN, reply, ANN, old=[], new=["🔥"])
        # Updates of one chat are handled in order, so the last one's record means all were seen.
        await api.wait_until(lambda: len(bot.feedback()) == 1)
        assert bot.feedback()[0][3] == "🔥"


async def test_buttons_are_the_fallback_and_a_group_member_may_rate(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.group_message(GROUP, ANN, "any tips?", mention=True)
        await replies_done(api, GROUP, 1)
        reply = api.bot_messages(GROUP)[0]
        data = [b["callback_data"] for row in reply.reply_markup["inline_keyboard"] for b in row]
        assert data == ["fb:up", "fb:down"]
        api.callback(GROUP, reply.data["message_id"], ANN, "fb:up")
        api.callback(GROUP, reply.data["message_id"], 77, "fb:down")
        api.callback(GROUP, reply.data["message_id"], ANN, "fb:down")  # Ann changes her mind
        await api.wait_until(lambda: len(api.callback_answers) == 3)
        rows = {
            (user, emoji, value) for _, user, source, emoji, value in bot.feedback() if source == "button"
        }
        assert rows == {(f"telegram:{ANN}", "👎", -1.0), ("telegram:77", "👎", -1.0)}
        assert "Thanks for the 👎" in str(api.callback_answers[-1])

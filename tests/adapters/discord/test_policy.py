"""The adapter's pure rules: who is addressed, and how ids and mentions are translated."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.adapters.discord.policy import (
    chat_key,
    is_addressed,
    places,
    reactions_reach_me,
    user_key,
    without_mention,
)

ME = 4_100_000_000_000_000_001


def test_dms_are_always_answered_and_servers_only_when_addressed() -> None:
    quiet = {"from_a_bot": False, "in_dm": False, "mentions_me": False, "replies_to_me": False}
    assert not is_addressed(**quiet)
    assert is_addressed(**quiet | {"in_dm": True})
    assert is_addressed(**quiet | {"mentions_me": True})
    assert is_addressed(**quiet | {"replies_to_me": True})
    assert not is_addressed(**quiet | {"in_dm": True, "mentions_me": True, "from_a_bot": True})


def test_ids_are_platform_qualified() -> None:
    assert user_key(42) == "discord:42"
    assert chat_key(7) == "discord:7"
    assert places(99) == ("discord-guild:99",)
    assert places(None) == ()


def test_buttons_stand_in_only_where_reactions_cannot_reach_kindred() -> None:
    assert reactions_reach_me(in_my_dm=True, in_my_server=False)
    assert reactions_reach_me(in_my_dm=False, in_my_server=True)
    assert not reactions_reach_me(in_my_dm=False, in_my_server=False)


def test_only_kindreds_own_mention_is_taken_out() -> None:
    assert without_mention(f"<@{ME}> hello", ME) == "hello"
    assert without_mention(f"hey <@!{ME}>, how are you", ME) == "hey  , how are you"
    assert without_mention("<@123> is my friend", ME) == "<@123> is my friend"


@given(st.text())
def test_taking_the_mention_out_never_adds_text(text: str) -> None:
    cleaned = without_mention(f"<@{ME}> {text}", ME)
    assert f"<@{ME}>" not in cleaned or f"<@{ME}>" in text.replace(f"<@{ME}>", "", 1)
    assert len(cleaned) <= len(text) + 1

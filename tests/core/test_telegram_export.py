"""Reading Telegram Desktop's result.json: whose words, which messages, and refusals in one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.core.errors import InvalidInput
from bot.importers.telegram_export import OWN_SPEAKER, flatten_text, parse_export
from tests.support.telegram_export import ME, SISTER, account_export, chat_export


def raw(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def test_the_persons_own_messages_with_text_and_a_date_are_read() -> None:
    found = parse_export(raw(chat_export()), me=ME)
    assert [item.text for item in found.items] == [
        "I just adopted a dog called Biscuit 🐶",
        "I moved to Lyon last spring, see https://example.org/lyon",
        "Je préfère le thé vert 🍵",
    ]
    assert {item.speaker for item in found.items} == {OWN_SPEAKER}
    assert found.items[0].timestamp == datetime.fromtimestamp(1_700_000_060, UTC)
    assert found.items[2].timestamp == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)  # `date` only
    assert found.items[0].meta == {"source": "telegram", "chat": "Mia", "message_id": 1}
    assert dict(found.skipped) == {"service": 1, "no_text": 2, "no_date": 1, "malformed": 2, "others": 2}
    assert found.summary() == "1 service, 2 no text, 1 no date, 2 malformed, 2 others"


@pytest.mark.parametrize("me", [ME, "1001", "Ann"])
def test_me_is_a_from_id_a_bare_number_or_the_shown_name(me: str) -> None:
    assert parse_export(raw(chat_export()), me=me).me == ME


def test_others_are_imported_under_their_names_when_asked() -> None:
    found = parse_export(raw(chat_export()), me=ME, others=True)
    theirs = [(item.speaker, item.text) for item in found.items if item.speaker != OWN_SPEAKER]
    assert theirs == [("Mia", "Aww! Send pictures"), ("Mia", "@ann call mum tonight")]
    assert "others" not in found.skipped


def test_an_account_export_names_its_owner_and_reads_every_chat() -> None:
    found = parse_export(raw(account_export()))
    assert found.me == ME
    assert found.items[-1].text == "I work night shifts as a radiographer"
    assert found.items[-1].meta["chat"] == "Work"
    assert found.skipped["others"] == 3


def test_a_chat_export_without_me_lists_the_senders() -> None:
    with pytest.raises(InvalidInput, match=r"--me") as raised:
        parse_export(raw(chat_export()))
    assert f"Ann ({ME}, " in str(raised.value) and f"Mia ({SISTER}, 2)" in str(raised.value)
    with pytest.raises(InvalidInput, match="sent no message"):
        parse_export(raw(chat_export()), me="Zed")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", "invalid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
        (b"\xff\xfe", "not valid UTF-8"),
        (b"[1, 2]", "expected a JSON object, got list"),
        (b'{"name": "x"}', "no `messages` list and no `chats.list`"),
        (b'{"chats": {"list": 3}}', "no `messages` list and no `chats.list`"),
    ],
)
def test_what_is_not_an_export_is_refused_in_one_line(data: bytes, message: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        parse_export(data, me=ME)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_text_entities_are_joined_in_order_and_odd_shapes_refused() -> None:
    assert flatten_text(["a ", {"type": "custom_emoji", "text": "🎉", "document_id": "x"}, " b"]) == "a 🎉 b"
    assert flatten_text("plain") == "plain"
    assert flatten_text([{"type": "bold"}]) is None
    assert flatten_text(42) is None


def test_a_text_too_long_is_skipped_and_counted() -> None:
    export = chat_export()
    export["messages"][0]["text"] = "x" * 100_001
    found = parse_export(raw(export), me=ME)
    assert found.skipped["too_long"] == 1 and len(found.items) == 2

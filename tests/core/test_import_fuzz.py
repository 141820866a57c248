"""Hostile memory imports (core/memory/jsonl_format.py, importers/telegram_export.py): any bytes, any
JSON, NUL and invalid UTF-8, zero-width and RTL text, huge lines, odd timestamps and meta. Every line is
either an item or an error that names it, nothing else; an export is read or refused in one line;
and what was accepted is stored whole on both stores (a few examples there, thousands pure)."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.core.errors import InvalidInput
from bot.core.memory.jsonl_format import MAX_RECORD_NAMES, MAX_TEXT_CHARS, parse_lines
from bot.core.memory.operations import import_items
from bot.importers.telegram_export import parse_export
from tests.support.fakes import HashEmbedder
from tests.support.hostile import hostile_texts, json_values, texts
from tests.support.places import open_place

ODD_TIMES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01", "2026-02-30",
             "2026-08-01T10:00:00Z", " 2026-08-01 ", "yesterday", ""]  # fmt: skip
timestamps = st.one_of(
    st.datetimes(timezones=st.timezones()).map(lambda moment: moment.isoformat()),
    st.sampled_from(ODD_TIMES),
    json_values,
)
# A line that is not a memory (/export's settings and usage) names its kind; hostile ones too.
kinds = st.one_of(st.sampled_from(["setting", "usage"]), texts, json_values)
metas = st.one_of(st.dictionaries(texts, st.one_of(texts, json_values), max_size=3), json_values)
records = st.fixed_dictionaries(
    {"text": st.one_of(*[hostile_texts] * 4, json_values)},
    optional={"speaker": st.one_of(texts, json_values), "timestamp": timestamps, "meta": metas,
              "extra": json_values, "record": kinds},
)  # fmt: skip


def _utf8(record: dict[str, Any]) -> bytes:
    """As an editor would write it: raw UTF-8, a lone surrogate as its (invalid) bytes."""
    return json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass")


lines = st.one_of(
    *[records.map(lambda record: json.dumps(record).encode())] * 4,
    records.map(_utf8),
    st.binary(max_size=60),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.just(b"   "),
)
files = st.lists(lines, min_size=1, max_size=8)


def check_parsed(raw: list[bytes]) -> list[Any]:
    parsed = parse_lines(raw)
    aside = sum(parsed.aside.values())
    assert len(parsed.items) + len(parsed.errors) + parsed.blank_lines + aside == len(raw)
    assert len(parsed.aside) <= MAX_RECORD_NAMES + 1 and all(count > 0 for count in parsed.aside.values())
    for error in parsed.errors:
        assert str(error).startswith(f"line {error.line}: ") and 1 <= error.line <= len(raw)
    for item in parsed.items:
        assert item.text.strip() and len(item.text) <= MAX_TEXT_CHARS and "\x00" not in item.text
        assert item.speaker is None or (item.speaker.strip() and "\x00" not in item.speaker)
        assert isinstance(item.meta, dict)
        assert item.timestamp is None or item.timestamp.utcoffset() == timedelta(0)  # storable as UTC
    return parsed.items


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(raw=files)
def test_every_line_is_an_item_or_an_error_that_names_it(raw: list[bytes]) -> None:
    check_parsed(raw)


entity_parts = st.fixed_dictionaries({"type": st.just("bold"), "text": st.one_of(texts, json_values)})
message_texts = st.one_of(hostile_texts, st.lists(st.one_of(texts, entity_parts), max_size=3), json_values)
exported_messages = st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "message", "service", 7]),
     "from_id": st.sampled_from(["user1", "user2", 1])},
    optional={"text": message_texts, "date": timestamps, "from": st.one_of(texts, json_values),
              "id": json_values, "date_unixtime": st.one_of(st.integers().map(str), json_values)},
)  # fmt: skip
one_chat = st.fixed_dictionaries(
    {"name": texts, "messages": st.lists(st.one_of(exported_messages, json_values), max_size=6)}
)
listed = st.fixed_dictionaries({"messages": st.lists(exported_messages, max_size=4)})
account = st.fixed_dictionaries(
    {"personal_information": st.one_of(st.fixed_dictionaries({"user_id": json_values}), json_values),
     "chats": st.one_of(st.fixed_dictionaries({"list": st.lists(listed, max_size=2)}), json_values)}
)  # fmt: skip
exports = st.one_of(one_chat, account, json_values)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(export=exports, me=st.sampled_from([None, "user1", "1", "Ann", "", "nobody"]), others=st.booleans())
def test_a_telegram_export_is_read_and_accounted_for_or_refused_in_one_line(
    export: Any, me: str | None, others: bool
) -> None:
    raw = json.dumps(export, ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        found = parse_export(raw, me=me, others=others)
    except InvalidInput as refused:
        assert str(refused) and "\n" not in str(refused)
        return
    chats = export["chats"]["list"] if "chats" in export else [export]
    total = sum(len(chat["messages"]) for chat in chats if isinstance(chat, dict))
    assert len(found.items) + sum(found.skipped.values()) == total
    for item in found.items:
        assert item.text.strip() and "\x00" not in item.text
        assert item.speaker is not None and "\x00" not in item.speaker
        assert item.timestamp is not None and item.timestamp.utcoffset() == timedelta(0)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=files)
# Found by this test: a time that UTC puts in year 0 was accepted, then failed the store's write.
@example(raw=[b'{"text": "0", "timestamp": "0001-01-01T00:00:00+14:00"}', b'{"text": "1"}'])
@example(raw=[b'{"text": "a", "speaker": "b\\u0000", "meta": {"\\u0000": "\\ud800"}}'])
def test_what_an_import_accepted_is_stored_whole(place: str, raw: list[bytes]) -> None:
    items = check_parsed(raw)

    async def stored() -> list[tuple[str, str | None]]:
        store = await open_place(place)
        try:
            user = f"telegram:{id(raw)}-{len(raw)}"
            await store.memories.forget_all(user)
            ids = await import_items(store.memories, HashEmbedder(), user, items)
            assert len(ids) == len(items)
            return [(m.text, m.speaker) for m in await store.memories.list_memories(user, 100)]
        finally:
            await store.close()

    assert asyncio.run(stored()) == [(item.text, item.speaker) for item in items]

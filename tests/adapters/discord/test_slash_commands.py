"""Slash commands through discord.py's real command tree: the sync at start, /chat deferred and
followed up, /memories paged, /forget, /export as a file, and the short ephemeral answers."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

from bot.core.chat.access import NOT_ALLOWED, Access
from bot.core.memory.controls import APP_SOON, FORGET_ALL_ASK, PRIVACY, files_setting, training_setting
from bot.core.models import NewMemory
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import PERSONA, running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id
from tests.support.discord_rest import Shown
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.waiting import wait_until

COMMANDS = {
    "chat", "memories", "forget", "confirm", "correct", "export", "persona", "privacy", "app", "apps",
    "proactive", "reminders", "help", "train_now", "rollback", "canary", "voice",
    "usage", "settings", "model",
}  # fmt: skip
GLOBAL_SYNC = f"/api/v10/applications/{p.APP_ID}/commands"
DEFERRED, MESSAGE, UPDATE = 5, 4, 7
Feedback = Callable[[], list[tuple[str, str, str, float]]]


def callbacks(fake: FakeDiscord, token: str) -> list[dict[str, object]]:
    return [
        call.json
        for call in fake.rest.calls
        if call.path.endswith(f"/{token}/callback") and isinstance(call.json, dict) and call.status == 200
    ]


async def one_answer(fake: FakeDiscord, token: str) -> Shown:
    await wait_until(
        lambda: bool(fake.answers(token)) and fake.answers(token)[0].content != "", what="an answer"
    )
    return fake.answers(token)[0]


async def test_commands_are_synced_globally_at_start(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store)):
        pass
    synced = fake.rest.commands[GLOBAL_SYNC]
    assert {command["name"] for command in synced} == COMMANDS
    chat = next(command for command in synced if command["name"] == "chat")
    assert chat["integration_types"] == [0, 1]  # installable to a server and to a person
    assert sorted(chat["contexts"]) == [0, 1, 2]  # servers, the bot's DM, other private chats
    assert [option["name"] for option in chat["options"]] == ["message"]
    options = {
        command["name"]: [option["name"] for option in command.get("options", [])] for command in synced
    }
    assert options["confirm"] == ["memory"] and options["correct"] == ["memory", "text"]


async def test_commands_sync_to_the_dev_guild_when_one_is_set(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store), dev_guild_id=p.GUILD_ID):
        token = await fake.slash(ANN, "privacy", where="server")
        await one_answer(fake, token)
    guild_sync = f"/api/v10/applications/{p.APP_ID}/guilds/{p.GUILD_ID}/commands"
    assert {command["name"] for command in fake.rest.commands[guild_sync]} == COMMANDS
    assert GLOBAL_SYNC not in fake.rest.commands


async def test_chat_defers_then_fills_the_response_and_follows_up(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    reply = " ".join(f"word{index:04d}" for index in range(300))  # 2,699 characters: two messages
    async with running(services(store, inference=ScriptedInference(reply))):
        token = await fake.slash(ANN, "chat", message="tell me everything")
        await wait_until(lambda: " ".join(m.content for m in fake.answers(token)) == reply, what="the reply")
    assert [body["type"] for body in callbacks(fake, token)] == [DEFERRED]  # within 3 s, before any work
    original, follow_up = fake.answers(token)
    assert fake.rest.originals[token] == original.id
    assert not original.ephemeral and not follow_up.ephemeral
    assert not original.components  # in the bot's DM reactions reach it: no buttons needed
    chat_id = f"discord:{dm_channel_id(ANN)}"
    for shown in (original, follow_up):
        assert await store.turns.find_message("discord", chat_id, str(shown.id)) is not None
    turns = await store.turns.recent_turns(f"discord:{ANN['id']}", chat_id, 5)
    assert [turn.text for turn in turns] == ["tell me everything", reply]


async def test_chat_elsewhere_gets_feedback_buttons_and_a_press_counts(
    fake: FakeDiscord, store: SqliteStore, feedback: Feedback
) -> None:
    async with running(services(store)):
        token = await fake.slash(ANN, "chat", where="elsewhere", message="hi")
        await wait_until(lambda: bool(fake.answers(token)) and bool(fake.answers(token)[0].components))
        reply = fake.answers(token)[0]
        assert reply.custom_ids() == ["kindred:feedback:up", "kindred:feedback:down"]
        press = await fake.press(ANN, reply, "kindred:feedback:up", where="elsewhere")
        thanks = await one_answer(fake, press)
        assert thanks.ephemeral and thanks.content.startswith("Thanks, noted 👍")
        await fake.press(ANN, reply, "kindred:feedback:down", where="elsewhere")
        await wait_until(lambda: feedback() == [(f"discord:{ANN['id']}", "button", "👎", -1.0)])


async def test_chat_has_a_per_person_cooldown(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store, per_minute=1, burst=1)):
        first = await fake.slash(ANN, "chat", message="one")
        await wait_until(lambda: bool(fake.answers(first)) and fake.answers(first)[0].content != "")
        second = await fake.slash(ANN, "chat", message="two")
        wait = await one_answer(fake, second)
    assert wait.ephemeral and wait.content.startswith("You're writing faster than I can think!")
    assert (await store.stats()).turns == 2


async def test_chat_refuses_someone_not_allowed_and_stores_nothing(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(services(store, access=Access(allowed=frozenset({"discord:1"})))):
        token = await fake.slash(ANN, "chat", message="let me in")
        refusal = await one_answer(fake, token)
    assert refusal.ephemeral and refusal.content == NOT_ALLOWED
    assert (await store.stats()).turns == 0


async def remember(store: SqliteStore, count: int) -> list[int]:
    embedder = HashEmbedder()
    now = datetime.now(UTC)
    memories = [
        NewMemory(f"discord:{ANN['id']}", f"fact number {n}", "user", now, embedder.vector(f"fact {n}"), "t")
        for n in range(count)
    ]
    return await store.memories.add_memories(memories)


async def test_memories_are_paged_with_buttons(fake: FakeDiscord, store: SqliteStore) -> None:
    await remember(store, 7)
    async with running(services(store)):
        token = await fake.slash(ANN, "memories")
        page = await one_answer(fake, token)
        assert page.ephemeral and page.content.startswith("Memories, page 1")
        assert "fact number 6" in page.content and "fact number 1" not in page.content
        assert page.custom_ids() == ["kindred:memories:2"]
        await fake.press(ANN, page, "kindred:memories:2")
        await wait_until(lambda: page.content.startswith("Memories, page 2"), what="page 2")
    assert "fact number 1" in page.content and "fact number 6" not in page.content
    assert page.custom_ids() == ["kindred:memories:1"]
    assert [body["type"] for body in callbacks(fake, token)] == [MESSAGE]


async def test_forget_one_then_all_after_a_confirmation(fake: FakeDiscord, store: SqliteStore) -> None:
    ids = await remember(store, 3)
    async with running(services(store)):
        token = await fake.slash(ANN, "forget", memory=f"#{ids[0]}")
        assert (
            await one_answer(fake, token)
        ).content == f"Forgotten: memory #{ids[0]}. It will not come up again."
        token = await fake.slash(ANN, "forget", memory="all")
        ask = await one_answer(fake, token)
        assert ask.ephemeral and ask.content == FORGET_ALL_ASK and ask.custom_ids() == ["kindred:forget-all"]
        assert await store.memories.memory_count(f"discord:{ANN['id']}") == 2  # asking deletes nothing
        await fake.press(ANN, ask, "kindred:forget-all")
        await wait_until(lambda: ask.content.startswith("Done. I forgot everything"), what="the confirmation")
    assert await store.memories.memory_count(f"discord:{ANN['id']}") == 0
    assert ask.components == []


async def test_export_sends_every_memory_as_an_ephemeral_file(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store)):
        message = await fake.dm(ANN, "my cat is called Miso")
        await wait_until(lambda: len(fake.replies_to(message)) == 1)
        token = await fake.slash(ANN, "export")
        await wait_until(lambda: any(shown.files for shown in fake.answers(token)), what="the file")
    assert [body["type"] for body in callbacks(fake, token)] == [DEFERRED]
    assert callbacks(fake, token)[0]["data"] == {"flags": 64}
    sent = next(shown for shown in fake.answers(token) if shown.files)
    assert sent.ephemeral
    records = [json.loads(line) for line in sent.files["kindred-memories.jsonl"].decode().splitlines()]
    assert "my cat is called Miso" in [record.get("text") for record in records]
    # After the memories, what the person used: the reply to that message ([personal]).
    assert [record["kind"] for record in records if record.get("record") == "usage"] == ["reply"]


async def test_an_export_too_big_to_send_is_refused_in_words(fake: FakeDiscord, store: SqliteStore) -> None:
    served = services(store)
    served.controls.max_export_bytes = 100
    async with running(served):
        message = await fake.dm(ANN, "my cat is called Miso, and my dog is called Pepper, and they get along")
        await wait_until(lambda: len(fake.replies_to(message)) == 1)
        token = await fake.slash(ANN, "export")

        def refused() -> bool:
            return any("too much to send" in (shown.content or "") for shown in fake.answers(token))

        await wait_until(refused, what="the refusal")
    assert not any(shown.files for shown in fake.answers(token))
    assert all(shown.ephemeral for shown in fake.answers(token))


async def test_short_answers_are_ephemeral(fake: FakeDiscord, store: SqliteStore) -> None:
    expected = {
        "persona": f"This is who I am, as my admin set me up:\n\n{PERSONA}",
        "privacy": f"{PRIVACY}\n\n{training_setting(None, True)}\n{files_setting(False)}",
        "app": APP_SOON,
    }
    async with running(services(store)):
        tokens = {name: await fake.slash(ANN, name, where="server") for name in [*expected, "help"]}
        answers = {name: await one_answer(fake, token) for name, token in tokens.items()}
    for name, text in expected.items():
        assert answers[name].content == text and answers[name].ephemeral
    assert "/chat" in answers["help"].content and "/export" in answers["help"].content

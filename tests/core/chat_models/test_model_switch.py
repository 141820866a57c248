"""Switching model: each reply comes from its chat's model, and its variant record names it; a
/model choice beats the persona's default model, which beats the list's default; an unknown name
answers with the list, a model the person may not use is refused, a non-admin cannot change a
group's; a learned adapter serves only with its base model, so people on another model are
outside the canary. The real conversation and SQLite store; each model is the scripted one."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat_models import ModelPicker
from bot.core.errors import InferenceError
from bot.core.events import Refusal, ReplyDone, ReplyEvent, UserMessage
from bot.core.learning import Pick, VariantPicker
from bot.core.learning.canary import CanaryPolicy, arm_for, start
from bot.core.learning.models import NewAdapter, Variant
from bot.core.personas import PersonaBook, PersonaPicker, parse_personas
from bot.store.sqlite.store import SqliteStore
from tests.conftest import STORE_FILE
from tests.support.chat_models import BOOK, ScriptedModels, model_picker
from tests.support.fakes import HashEmbedder, ScriptedInference

ANN, BOB, ADMIN, GROUP = "telegram:4242", "telegram:7", "telegram:1", "telegram:-100"
T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
PERSONAS = parse_personas(
    '[[persona]]\nname = "kindred"\nprompt = "You are Kindred."\n'
    '[[persona]]\nname = "tutor"\nprompt = "You teach."\nmodel = "big"\n'
)


class FixedPersonas:
    def book(self) -> PersonaBook:
        return PERSONAS


def conversation(
    store: SqliteStore, models: ModelPicker | None, personas: PersonaPicker | None = None
) -> Conversation:
    configured = models.backends.configured if models else ScriptedInference()  # type: ignore[attr-defined]
    policy = ConversationPolicy(persona="p", recent_turns=0, base_model="bundled")
    return Conversation(store, HashEmbedder(), configured, policy, personas=personas, models=models)


async def said(conv: Conversation, user: str, chat: str, text: str, key: str) -> list[ReplyEvent]:
    message = UserMessage(user, chat, text, T0, idempotency_key=key, private=chat == user)
    return [event async for event in conv.handle_message(message)]


async def reply(conv: Conversation, user: str, chat: str, text: str, key: str) -> ReplyDone:
    done = (await said(conv, user, chat, text, key))[-1]
    assert isinstance(done, ReplyDone)
    return done


def recorded(tmp_path: Path) -> list[tuple[str, str]]:
    """(reply text, base model) of each stored reply: the variant record names the model."""
    with sqlite3.connect(tmp_path / STORE_FILE) as db:
        return db.execute(
            "SELECT t.text, g.base_model FROM generations g JOIN turns t ON t.id = g.turn_id ORDER BY t.id"
        ).fetchall()


async def test_a_reply_comes_from_the_chats_model_and_its_record_names_it(
    store: SqliteStore, tmp_path: Path
) -> None:
    picker = model_picker(store, ScriptedInference("small here."))
    conv = conversation(store, picker)
    await reply(conv, ANN, ANN, "hello", "m1")
    answer = await picker.pick(ANN, ANN, "BIG", owner=ANN)
    await reply(conv, ANN, ANN, "hello again", "m2")
    menu = await picker.menu(ANN, ANN)
    assert answer == "Done: I answer with big in this chat now. What I know about you stays the same."
    assert recorded(tmp_path) == [("small here.", "bundled"), ("big here.", "big-model-70b")]
    assert menu.current == "big" and menu.names == ("small", "big", "secret")
    assert menu.text.endswith("Models you may use: small, big (now), secret. /model NAME picks one.")
    assert await store.models.chosen_by(ANN) == [(ANN, "big")]


async def test_a_model_choice_beats_the_personas_model(store: SqliteStore, tmp_path: Path) -> None:
    personas = PersonaPicker(FixedPersonas(), store.personas)
    picker = model_picker(store, ScriptedInference("small here."), personas=personas)
    conv = conversation(store, picker, personas)
    await personas.pick(ANN, "tutor", owner=ANN)
    await reply(conv, ANN, ANN, "teach me", "m1")  # the tutor's model
    await picker.pick(ANN, ANN, "secret", owner=ANN)
    await reply(conv, ANN, ANN, "and now?", "m2")  # the person's choice
    assert [text for text, _ in recorded(tmp_path)] == ["big here.", "secret here."]
    assert (await picker.menu(ANN, ANN)).current == "secret"


async def test_an_unknown_name_answers_with_the_list_and_keeps_nothing(store: SqliteStore) -> None:
    picker = model_picker(store, ScriptedInference())
    answer = await picker.pick(ANN, ANN, "gpt-9 turbo", owner=ANN)
    assert answer == (
        "I have no model called 'gpt-9 turbo'. Models you may use: small (now), big, secret. "
        "/model NAME picks one."
    )
    assert await store.models.chosen(ANN) is None


async def test_a_model_the_person_may_not_use_is_refused(store: SqliteStore, tmp_path: Path) -> None:
    picker = model_picker(store, ScriptedInference("small here."), admins=frozenset({ADMIN}))
    refused = await picker.pick(BOB, BOB, "secret", owner=BOB)
    boss = await picker.pick(BOB, BOB, "boss", owner=BOB)
    allowed = await picker.pick(ADMIN, ADMIN, "boss", owner=ADMIN)
    assert (
        refused
        == "You may not use secret; ask my admin. Models you may use: small, big. /model NAME picks one."
    )
    assert boss.startswith("You may not use boss;") and allowed.startswith("Done:")
    assert await store.models.chosen(BOB) is None and await store.models.chosen(ADMIN) == "boss"


async def test_in_a_group_only_admins_change_it_and_the_speaker_must_be_allowed_its_model(
    store: SqliteStore, tmp_path: Path
) -> None:
    picker = model_picker(store, ScriptedInference("small here."))
    conv = conversation(store, picker)
    refused = await picker.pick(GROUP, BOB, "big", owner=None, may_change=False)
    assert refused == "Only this group's admins can change my model here."
    assert await store.models.chosen(GROUP) is None
    assert (await picker.pick(GROUP, ANN, "secret", owner=None)).startswith("Done:")
    await reply(conv, ANN, GROUP, "hi all", "g1")
    await reply(conv, BOB, GROUP, "hi too", "g2")  # Bob may not use `secret`: the default answers him
    assert [text for text, _ in recorded(tmp_path)] == ["secret here.", "small here."]


async def test_a_model_that_cannot_be_built_fails_the_reply_and_keeps_the_message(store: SqliteStore) -> None:
    class Broken(ScriptedModels):
        async def inference(self, model):  # type: ignore[no-untyped-def]
            if model.name == "big":
                raise InferenceError("the model big needs its API key in BIG_KEY, which is not set")
            return await super().inference(model)

    picker = ModelPicker(model_picker(store, ScriptedInference()).source, store.models,
                         Broken(ScriptedInference()), lambda _: False)  # fmt: skip
    conv = conversation(store, picker)
    await picker.pick(ANN, ANN, "big", owner=ANN)
    events = await said(conv, ANN, ANN, "hello", "m1")
    assert isinstance(events[-1], Refusal) and "BIG_KEY, which is not set" in events[-1].text
    assert [t.text for t in await store.turns.recent_turns(ANN, ANN, 5)] == ["hello"]


async def test_people_on_another_model_are_outside_the_canary(store: SqliteStore, tmp_path: Path) -> None:
    """A canary whose seed draws every key below: on the configured model the reply is the
    canary's; on another model it has no adapter and no arm."""
    serving = await store.adapters.add_adapter(
        NewAdapter("global", "bundled", "v1", T0 - timedelta(days=1), T0)
    )
    await store.adapters.promote_adapter(serving.version, T0)
    tried = await store.adapters.add_adapter(
        NewAdapter("global", "bundled", "v2", T0 - timedelta(days=1), T0)
    )
    policy = CanaryPolicy(share=0.5)
    canary = await start(
        store, "bundled", Variant(tried.version), Variant(serving.version), policy, seed=3, at=T0
    )
    assert canary is not None
    drawn = [
        key for key in (f"k{i}" for i in range(64)) if arm_for(canary.seed, key, canary.share) == "canary"
    ]
    variants = VariantPicker(store, "bundled")
    assert (await variants.pick(ANN, drawn[0])).arm == "canary"  # on the base model: in the trial
    assert await variants.pick(ANN, drawn[0], model="big-model-70b") == Pick()
    picker = model_picker(store, ScriptedInference("small here."))
    conv = conversation(store, picker)
    await reply(conv, ANN, ANN, "on small", drawn[0])
    await picker.pick(ANN, ANN, "big", owner=ANN)
    await reply(conv, ANN, ANN, "on big", drawn[1])
    with sqlite3.connect(tmp_path / STORE_FILE) as db:
        rows = db.execute(
            "SELECT base_model, adapter_version, arm, canary_id FROM generations ORDER BY turn_id"
        ).fetchall()
    assert rows == [("bundled", tried.version, "canary", canary.id), ("big-model-70b", None, "serving", None)]


async def test_no_models_file_leaves_the_configured_model_and_says_so(
    store: SqliteStore, tmp_path: Path
) -> None:
    from bot.core.chat_models import ModelBook

    picker = model_picker(store, ScriptedInference("configured."), book=ModelBook())
    conv = conversation(store, picker)
    await reply(conv, ANN, ANN, "hello", "m1")
    assert recorded(tmp_path) == [("configured.", "bundled")]
    assert (await picker.menu(ANN, ANN)).text == (await picker.pick(ANN, ANN, "big", owner=ANN))
    assert BOOK.find("big") is not None and await store.models.chosen(ANN) is None

"""The admins' /train_now, /rollback and /canary, and /privacy's training switch, through
discord.py's real command tree against Discord on loopback, on each store: the same core code as
the CLI and Telegram."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.chat.access import Access
from bot.core.jobs import JobPayload
from bot.core.learning.commands import TrainingCommands
from bot.core.learning.models import GLOBAL_SCOPE, NewAdapter, NewCanary, Variant
from bot.core.learning.serving import promote
from bot.core.memory.controls import PRIVACY, TRAINING_OFF, files_setting, training_setting
from bot.core.store import Store
from tests.adapters.discord.conftest import running, services
from tests.support.discord_fake import ANN, BEN, FakeDiscord
from tests.support.discord_rest import Shown
from tests.support.waiting import wait_until

T0 = datetime(2026, 12, 1, 3, 30, tzinfo=UTC)
ADMIN = Access(admins=frozenset({f"discord:{ANN['id']}"}))
GLOBAL_SYNC_SUFFIX = "/commands"


def refuse(name: str, payload: JobPayload) -> str:
    raise AssertionError("nothing may be queued")


async def answer(fake: FakeDiscord, token: str) -> Shown:
    """The first message with words: the response, or the follow-up of a deferred one."""

    def said() -> list[Shown]:
        return [shown for shown in fake.answers(token) if shown.content]

    await wait_until(lambda: bool(said()), what="an answer")
    return said()[0]


async def test_privacy_offers_the_training_switch_and_admins_get_their_commands(
    fake: FakeDiscord, store: Store
) -> None:
    async with running(services(store)):
        pass
    synced = next(found for path, found in fake.rest.commands.items() if path.endswith(GLOBAL_SYNC_SUFFIX))
    privacy = next(command for command in synced if command["name"] == "privacy")
    option, files = privacy["options"]
    assert option["name"] == "training" and not option.get("required", False)
    assert [choice["value"] for choice in option["choices"]] == ["on", "off"]
    assert files["name"] == "files" and not files.get("required", False)
    assert [choice["value"] for choice in files["choices"]] == ["keep", "delete"]
    assert {"train_now", "rollback", "canary"} <= {command["name"] for command in synced}
    canary = next(command for command in synced if command["name"] == "canary")
    action, reason = canary["options"]
    assert [choice["value"] for choice in action["choices"]] == ["stop"] and not action.get("required")
    assert reason["name"] == "reason" and not reason.get("required")


async def test_rollback_and_a_busy_train_now_for_an_admin(fake: FakeDiscord, any_store: Store) -> None:
    training = TrainingCommands(any_store, refuse)
    v1, v2 = [
        await any_store.adapters.add_adapter(NewAdapter(GLOBAL_SCOPE, "tiny", p, T0, T0))
        for p in ("v1", "v2")
    ]
    for record in (v1, v2):
        await promote(any_store.adapters, record.version, T0)
    run = await any_store.adapters.start_run("beat:tonight", datetime.now(UTC), timedelta(hours=1))
    assert run is not None
    async with running(services(any_store, access=ADMIN, training=training)):
        shown = await answer(fake, await fake.slash(ANN, "rollback"))
        expected = f"Rolled back: v{v1.version} serves now (before: v{v2.version})."
        assert shown.ephemeral and shown.content == expected
        shown = await answer(fake, await fake.slash(ANN, "train_now"))
        assert shown.content == f"A training run is already running (run {run.id})."


async def test_learning_commands_are_refused_to_everyone_else(fake: FakeDiscord, any_store: Store) -> None:
    training = TrainingCommands(any_store, refuse)
    record = await any_store.adapters.add_adapter(NewAdapter(GLOBAL_SCOPE, "tiny", "v1", T0, T0))
    await promote(any_store.adapters, record.version, T0)
    async with running(services(any_store, access=ADMIN, training=training)):
        for command in ("train_now", "rollback"):
            shown = await answer(fake, await fake.slash(BEN, command))
            assert shown.content == "That command is for Kindred's admins."
    serving = await any_store.adapters.serving_adapter()
    assert serving is not None and serving.version == record.version


async def test_privacy_training_off_is_kept_and_shown(fake: FakeDiscord, any_store: Store) -> None:
    async with running(services(any_store)):
        shown = await answer(fake, await fake.slash(ANN, "privacy", training="off"))
        assert shown.ephemeral and shown.content == TRAINING_OFF
        shown = await answer(fake, await fake.slash(ANN, "privacy"))
        assert shown.content == f"{PRIVACY}\n\n{training_setting(False, True)}\n{files_setting(False)}"
    assert await any_store.learning.training_consent(f"discord:{ANN['id']}") is False


async def test_canary_shows_the_trial_and_stop_ends_it_for_admins_only(
    fake: FakeDiscord, any_store: Store
) -> None:
    """[canary]: /canary and /canary action:stop reason:…, refused to anyone but an admin."""
    training = TrainingCommands(any_store, refuse)
    canary = await any_store.trials.start_canary(NewCanary("tiny", Variant(3), Variant(), 0.2, 1, {}), T0)
    assert canary is not None
    async with running(services(any_store, access=ADMIN, training=training)):
        for options in ({}, {"action": "stop"}):
            shown = await answer(fake, await fake.slash(BEN, "canary", **options))
            assert shown.content == "That command is for Kindred's admins."
        assert await any_store.trials.running_canary() == canary
        shown = await answer(fake, await fake.slash(ANN, "canary"))
        assert shown.ephemeral and shown.content.startswith(f"Canary {canary.id} is running since")
        shown = await answer(fake, await fake.slash(ANN, "canary", reason="alone it stops nothing"))
        assert shown.content.startswith(f"Canary {canary.id} is running since")
        shown = await answer(fake, await fake.slash(ANN, "canary", action="stop", reason="a bad week"))
        assert shown.content == f"Stopped canary {canary.id} (adapter v3); the base model keeps serving."
        shown = await answer(fake, await fake.slash(ANN, "canary", action="stop"))
        assert shown.content == "No canary is running: nothing to stop."
    decided = await any_store.trials.get_canary(canary.id)
    assert decided is not None and decided.status == "stopped"
    assert decided.reason == f"stopped by an admin (discord:{ANN['id']}): a bad week"

"""/app and /apps through discord.py's real command tree against the loopback gateway and REST,
with the real build job: the deferred answer edited into the link, as a link button, ephemeral."""

from __future__ import annotations

from pathlib import Path

from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.conftest import STORE_FILE
from tests.support.app_jobs import APPS_URL, app_commands
from tests.support.discord_fake import ANN, FakeDiscord
from tests.support.waiting import wait_until

DEFERRED = 5


async def test_app_edits_its_deferred_answer_into_a_link_button(
    fake: FakeDiscord, store: SqliteStore, tmp_path: Path
) -> None:
    async with app_commands(tmp_path / STORE_FILE) as apps, running(services(store, apps=apps(store))):
        token = await fake.slash(ANN, "app", where="server", request="a packing checklist for my beach trip")
        await wait_until(lambda: any("is ready" in shown.content for shown in fake.answers(token)), 20.0)
        [answer] = fake.answers(token)
        assert answer.ephemeral and f"{APPS_URL}/a/" in answer.content
        assert any("Working out what you need" in text for _, text in answer.versions)
        [[button]] = [row["components"] for row in answer.components]
        assert button["style"] == 5 and button["label"] == "Open the app"  # 5: a link button
        assert button["url"].startswith(f"{APPS_URL}/a/") and button["url"] in answer.content

        listing = await fake.slash(ANN, "apps")
        await wait_until(lambda: bool(fake.answers(listing)) and fake.answers(listing)[0].content != "")
        shown = fake.answers(listing)[0]
        assert shown.ephemeral and "Packing checklist for my beach trip" in shown.content


async def test_app_without_a_request_says_what_to_ask(
    fake: FakeDiscord, store: SqliteStore, tmp_path: Path
) -> None:
    async with app_commands(tmp_path / STORE_FILE) as apps, running(services(store, apps=apps(store))):
        token = await fake.slash(ANN, "app")
        await wait_until(lambda: any("Tell me what you need" in s.content for s in fake.answers(token)), 10.0)


async def test_a_failed_build_offers_a_retry_button_that_rebuilds_the_same_request(
    fake: FakeDiscord, store: SqliteStore, tmp_path: Path
) -> None:
    # The build job's store is down for the first build (both of its attempts): a failure on our
    # side, which a retry may fix. Opening the store is the one place such an outage shows.
    async with (
        app_commands(tmp_path / STORE_FILE, store_down_for=2) as apps,
        running(services(store, apps=apps(store))),
    ):
        token = await fake.slash(ANN, "app", request="a countdown to christmas")
        await wait_until(lambda: any("went wrong" in shown.content for shown in fake.answers(token)), 20.0)
        [answer] = fake.answers(token)
        [retry_id] = answer.custom_ids()
        assert retry_id.startswith("kindred:app-retry:") and "Try again" in str(answer.components)
        await fake.press(ANN, answer, retry_id)
        await wait_until(lambda: "is ready" in answer.content, 20.0)
        assert "Countdown to christmas" in answer.content and f"{APPS_URL}/a/" in answer.content
        [[button]] = [row["components"] for row in answer.components]
        assert button["style"] == 5 and button["url"] in answer.content  # the link replaced the retry

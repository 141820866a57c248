"""What /app and /apps answer, the same on every platform: a build with its progress, the list of
a person's apps, restoring a version and revoking a link. Adapters only render these answers."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.app_build import BUILD_JOB, STEPS
from bot.core.app_models import AppRecord
from bot.core.errors import JobError, JobTimeout, QueueUnavailable, StoreUnavailable
from bot.core.jobs import Jobs
from bot.core.kinds import REPLY
from bot.core.models import NewTurn
from bot.core.ports import AppStore, Embedder, TurnLog

log = logging.getLogger(__name__)

USAGE = "Tell me what you need, for example: /app a packing list for my beach trip"
APPS_USAGE = (
    "/apps lists your apps; /apps restore ID VERSION serves an older version; /apps revoke ID ends a link."
)
LIST_LIMIT = 10
Show = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class AppAnswer:
    text: str
    url: str | None = None
    title: str | None = None
    # Whether asking again may work (a failed build offers a retry).
    retry: bool = False


@dataclass(frozen=True, slots=True)
class DeliveryLog:
    """Stores the message that delivers an app as an assistant turn, so that opening the app can
    reward it (a tool use, α) like any reply. Its memory is a reply's: kept, never recalled."""

    turns: TurnLog
    embedder: Embedder

    async def record(self, owner: str, chat_id: str, text: str, key: str, app_id: int) -> int:
        [vector] = await self.embedder.embed([text])
        turn = NewTurn(
            owner, chat_id, "assistant", text, vector, self.embedder.model_name, datetime.now(UTC),
            idempotency_key=f"app-delivery:{key}", meta={"app_id": app_id}, memory_kind=REPLY,
        )  # fmt: skip
        return (await self.turns.add_turn(turn)).id


class AppCommands:
    def __init__(
        self,
        apps: AppStore,
        jobs: Jobs,
        link: Callable[[str], str],
        *,
        poll_s: float = 0.3,
        timeout_s: float = 180.0,
        deliveries: DeliveryLog | None = None,
    ) -> None:
        self._apps = apps
        self._deliveries = deliveries
        self._jobs = jobs
        self.link = link
        self._poll_s = poll_s
        self._timeout_s = timeout_s

    async def build(self, owner: str, chat_id: str, request: str, show: Show) -> AppAnswer:
        """Queue the build, `show` each step as it passes, and answer with the link or why not."""
        if not request.strip():
            return AppAnswer(USAGE)
        key = uuid.uuid4().hex
        payload = {"key": key, "owner": owner, "chat_id": chat_id, "request": request}
        try:
            job_id = self._jobs.submit(BUILD_JOB, payload)
        except (JobError, QueueUnavailable) as exc:
            log.warning("app build not queued: %s", exc)
            return AppAnswer("I can't start building right now. Try again in a minute.", retry=True)
        await show(STEPS["understanding"])
        waiting = asyncio.ensure_future(self._jobs.result(job_id, self._timeout_s))
        shown = "understanding"
        while not waiting.done():
            await asyncio.wait({waiting}, timeout=self._poll_s)
            step = await self._step(key)
            if step in STEPS and step != shown and not waiting.done():
                shown = step
                await show(STEPS[step])
        try:
            result = waiting.result()
        except JobTimeout:
            return AppAnswer(
                "Building took too long, so I stopped. Try again, perhaps asking for less.", retry=True
            )
        except JobError as exc:
            log.warning("app build failed: %s", exc)
            return AppAnswer("Something went wrong on my side while building it. Try again.", retry=True)
        if not result.get("ok"):
            return AppAnswer(str(result.get("message", "I couldn't build that.")), retry=True)
        url, title = self.link(str(result["token"])), str(result["title"])
        if result.get("cached"):
            text = f"You already have this one, “{title}”: {url}"
        else:
            version = int(result.get("version", 1))
            made = "is ready" if version == 1 else f"is updated (version {version})"
            text = f"“{title}” {made}: {url}"
        await self._delivered(owner, chat_id, text, key, int(result["app_id"]))
        return AppAnswer(text, url=url, title=title)

    async def _delivered(self, owner: str, chat_id: str, text: str, key: str, app_id: int) -> None:
        if self._deliveries is None:
            return
        try:
            turn_id = await self._deliveries.record(owner, chat_id, text, key, app_id)
            await self._apps.delivered(app_id, turn_id)
        except StoreUnavailable as exc:  # the link still goes out; only its reward is lost
            log.warning("app delivery not stored: %s", exc)

    async def _step(self, key: str) -> str:
        try:
            build = await self._apps.get_build(key)
        except StoreUnavailable:
            return ""
        return build.step if build is not None else ""

    async def listing(self, owner: str) -> str:
        apps = await self._apps.list_apps(owner, LIST_LIMIT)
        if not apps:
            return "You have no apps yet. " + USAGE
        lines = ["Your apps, the latest first:"]
        lines += [self._line(app) for app in apps]
        lines.append(APPS_USAGE)
        return "\n".join(lines)

    def _line(self, app: AppRecord) -> str:
        where = "link revoked" if app.revoked else self.link(app.token)
        return f"#{app.id} · {app.title} · {app.kind} · version {app.version} of {app.latest} · {where}"

    async def manage(self, owner: str, argument: str) -> str:
        """/apps, /apps restore ID VERSION, /apps revoke ID."""
        words = argument.split()
        if not words:
            return await self.listing(owner)
        numbers = [
            int(word.lstrip("#"))
            for word in words[1:]
            if word.lstrip("#").isascii() and word.lstrip("#").isdigit()
        ]
        now = datetime.now(UTC)
        if words[0] == "restore" and len(numbers) == 2 == len(words) - 1:
            app = await self._apps.serve_version(owner, numbers[0], numbers[1], now)
            if app is None:
                return "I found no such app or version of yours. /apps lists them."
            return f"“{app.title}” now serves version {app.version}: {self.link(app.token)}"
        if words[0] == "revoke" and len(numbers) == 1 == len(words) - 1:
            if await self._apps.revoke(owner, numbers[0], now):
                return f"Done: the link of app #{numbers[0]} no longer opens anything."
            return "I found no live app of yours with that number. /apps lists them."
        return APPS_USAGE

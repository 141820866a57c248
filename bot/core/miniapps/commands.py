"""What /app and /apps answer, the same on every platform: a build with its progress, the list of
a person's apps, restoring a version and revoking a link. Adapters only render these answers."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeVar

from bot.core.chat.ports import TurnLog
from bot.core.errors import JobError, JobTimeout, QueueUnavailable, StoreUnavailable
from bot.core.jobs import JobId, JobPayload, Jobs
from bot.core.memory import REPLY
from bot.core.memory.ports import Embedder
from bot.core.miniapps.build import BUILD_JOB, STEPS
from bot.core.miniapps.models import AppRecord, BuildRecord
from bot.core.miniapps.ports import AppStore
from bot.core.models import NewTurn
from bot.core.usage import UsageMeter

log = logging.getLogger(__name__)
T = TypeVar("T")

USAGE = "Tell me what you need, for example: /app a packing list for my beach trip"
APPS_USAGE = (
    "/apps lists your apps; /apps restore ID VERSION serves an older version; /apps revoke ID ends a link."
)
LIST_LIMIT = 10
# Requests kept for a retry button, per process; the oldest is dropped past this.
RETRIES_KEPT = 512
RETRY_LABEL = "Try again"
RETRY_GONE = "That request is not yours, or I no longer have it. Ask with /app …"
Show = Callable[[str], Awaitable[None]]
# What became of a request: built (the link); usage (nothing asked); busy (builds already running:
# later will work); cannot (it cannot be made as asked: the text says why, a retry would fail the
# same way); failed (on our side: a retry may work).
Outcome = Literal["built", "usage", "busy", "cannot", "failed"]
RETRYABLE: frozenset[Outcome] = frozenset({"busy", "failed"})
# Redis restarting (a crash, a deploy) is gone for seconds: a build waits that long for the queue
# before it answers that it cannot start, rather than failing a request that would work soon.
QUEUE_PATIENCE_S = 20.0
# How long the chat waits for a build's result (the build job's retries fit in it).
RESULT_WAIT_S = 180.0
# A build the store says is done, whose job result has not come this long after: answered from the
# store (the result went with Redis's data). Results come within milliseconds of the store's record.
STORE_GRACE_S = 5.0
QUEUE_RETRY_S = (0.25, 2.0)  # the first pause between tries, and the longest
# How often a build with no record in the store yet asks whether the queue lost its job, and how
# many times such a job is sent again.
LOST_CHECK_S = 5.0
RESENDS = 2


@dataclass(frozen=True, slots=True)
class AppAnswer:
    text: str
    url: str | None = None
    title: str | None = None
    outcome: Outcome = "built"
    # Set when asking again may work: what a retry button carries back to `AppCommands.retry`.
    retry_id: str | None = None


@dataclass(frozen=True, slots=True)
class _Asked:
    owner: str
    chat_id: str
    request: str


@dataclass(slots=True)
class _Waiting:
    """A build's job, and the wait for its result (begun again when the job is sent again)."""

    job_id: JobId
    payload: JobPayload
    result: Callable[[JobId, float], Awaitable[JobPayload]]
    deadline: float  # monotonic
    resends: int = 0

    def start(self) -> asyncio.Future[JobPayload]:
        return asyncio.ensure_future(self.result(self.job_id, self.deadline))


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
        timeout_s: float = RESULT_WAIT_S,
        deliveries: DeliveryLog | None = None,
        queue_patience_s: float = QUEUE_PATIENCE_S,
        usage: UsageMeter | None = None,
    ) -> None:
        self._apps = apps
        # Each app built is counted for its owner ([personal] 1): /usage, kindred usage.
        self._usage = usage
        self._deliveries = deliveries
        self._jobs = jobs
        self.link = link
        self._poll_s = poll_s
        self._timeout_s = timeout_s
        self._queue_patience_s = queue_patience_s
        self._asked: OrderedDict[str, _Asked] = OrderedDict()

    async def build(self, owner: str, chat_id: str, request: str, show: Show) -> AppAnswer:
        """Queue the build, `show` each step as it passes, and answer with the link or why not.
        An answer that a retry may change carries a `retry_id` for `retry`."""
        if not request.strip():
            return AppAnswer(USAGE, outcome="usage")
        key = uuid.uuid4().hex
        answer = await self._build(key, owner, chat_id, request, show)
        if answer.outcome in RETRYABLE:
            self._asked[key] = _Asked(owner, chat_id, request)
            while len(self._asked) > RETRIES_KEPT:
                self._asked.popitem(last=False)
            return AppAnswer(answer.text, outcome=answer.outcome, retry_id=key)
        return answer

    def may_retry(self, owner: str, retry_id: str) -> bool:
        """Whether `retry_id` is a request of `owner`'s still kept (a button in a group may be
        pressed by anyone: only its owner's press rebuilds)."""
        asked = self._asked.get(retry_id)
        return asked is not None and asked.owner == owner

    async def retry(self, owner: str, retry_id: str | None, show: Show) -> AppAnswer:
        """The same request again, for the person who made it; `retry_id` None: their last one
        that offered a retry (the console's /app retry)."""
        if retry_id is None:
            retry_id = next(
                (key for key, asked in reversed(self._asked.items()) if asked.owner == owner), None
            )
        asked = self._asked.get(retry_id or "")
        if asked is None or asked.owner != owner:
            return AppAnswer(RETRY_GONE, outcome="usage")
        del self._asked[retry_id or ""]
        return await self.build(asked.owner, asked.chat_id, asked.request, show)

    async def _build(self, key: str, owner: str, chat_id: str, request: str, show: Show) -> AppAnswer:
        payload = {"key": key, "owner": owner, "chat_id": chat_id, "request": request}
        try:
            job_id = await self._submit(payload)
        except (JobError, QueueUnavailable) as exc:
            log.warning("app build not queued: %s", exc)
            return AppAnswer("I can't start building right now. Try again in a minute.", outcome="failed")
        await show(STEPS["understanding"])
        try:
            result = await self._follow(
                key, owner, _Waiting(job_id, payload, self._result, time.monotonic() + self._timeout_s), show
            )
        except JobTimeout:
            return AppAnswer(
                "Building took too long, so I stopped. Try again, perhaps asking for less.", outcome="failed"
            )
        except JobError as exc:
            log.warning("app build failed: %s", exc)
            return AppAnswer(
                "Something went wrong on my side while building it. Try again.", outcome="failed"
            )
        if not result.get("ok"):
            busy = result.get("reason") == "busy"
            return AppAnswer(
                str(result.get("message", "I couldn't build that.")), outcome="busy" if busy else "cannot"
            )
        url, title = self.link(str(result["token"])), str(result["title"])
        if result.get("cached"):
            text = f"You already have this one, “{title}”: {url}"
        else:
            version = int(result.get("version", 1))
            made = "is ready" if version == 1 else f"is updated (version {version})"
            text = f"“{title}” {made}: {url}"
            if self._usage is not None:
                await self._usage.count(owner, "app_build")
        await self._delivered(owner, chat_id, text, key, int(result["app_id"]))
        return AppAnswer(text, url=url, title=title)

    async def _follow(self, key: str, owner: str, job: _Waiting, show: Show) -> JobPayload:
        """The job's result, showing the build's steps meanwhile. What Redis may lose (a Redis
        back empty) is made up from the store: a build the store records as done whose result has
        not come `STORE_GRACE_S` later is answered from the store; a job no worker started, that
        the queue lost, is sent again (at most `RESENDS` times)."""
        shown, done_at, looked_at = "understanding", None, time.monotonic()
        waiting = job.start()
        while not waiting.done():
            await asyncio.wait({waiting}, timeout=self._poll_s)
            record = await self._record(key)
            if waiting.done():
                continue
            if record is None:
                if time.monotonic() - looked_at >= LOST_CHECK_S:
                    looked_at = time.monotonic()
                    waiting = await self._sent_again_if_lost(job, waiting)
                continue
            if record.status == "succeeded" and record.app_id is not None:
                done_at = done_at or time.monotonic()
                stored = await self._stored(owner, record.app_id, since=done_at)
                if stored is not None:
                    waiting.cancel()
                    log.warning("app build %s: no result %.0f s after it was stored; answered from the store",
                                key[:12], STORE_GRACE_S)  # fmt: skip
                    return stored
            if record.step in STEPS and record.step != shown:
                shown = record.step
                await show(STEPS[record.step])
        return waiting.result()

    async def _sent_again_if_lost(
        self, job: _Waiting, waiting: asyncio.Future[JobPayload]
    ) -> asyncio.Future[JobPayload]:
        if job.resends >= RESENDS or not await self._jobs.lost(job.job_id):
            return waiting
        try:
            job.job_id = await self._submit(job.payload)
        except (JobError, QueueUnavailable) as exc:  # the old wait runs on to its deadline
            log.warning("app build %s: its job was lost with the queue's data, and not sent again: %s",
                        str(job.payload["key"])[:12], exc)  # fmt: skip
            return waiting
        waiting.cancel()
        job.resends += 1
        log.warning(
            "app build %s: its job was lost with the queue's data; sent again", str(job.payload["key"])[:12]
        )
        return job.start()

    async def _stored(self, owner: str, app_id: int, *, since: float) -> JobPayload | None:
        if time.monotonic() - since < STORE_GRACE_S:
            return None
        try:
            app = await self._apps.get_app(owner, app_id)
        except StoreUnavailable:
            return None
        if app is None:
            return None
        return {"ok": True, "app_id": app.id, "version": app.version, "token": app.token, "title": app.title}

    async def _submit(self, payload: JobPayload) -> JobId:
        async def submit() -> JobId:
            return self._jobs.submit(BUILD_JOB, payload)

        return await _despite_the_queue(submit, self._queue_patience_s)

    async def _result(self, job_id: JobId, deadline: float) -> JobPayload:
        # The result waits in the queue: its going away meanwhile is waited out within the build's
        # time, which a job sent again does not extend.
        async def result() -> JobPayload:
            return await self._jobs.result(job_id, max(0.0, deadline - time.monotonic()))

        return await _despite_the_queue(result, max(0.0, deadline - time.monotonic()))

    async def _delivered(self, owner: str, chat_id: str, text: str, key: str, app_id: int) -> None:
        if self._deliveries is None:
            return
        try:
            turn_id = await self._deliveries.record(owner, chat_id, text, key, app_id)
            await self._apps.delivered(app_id, turn_id)
        except StoreUnavailable as exc:  # the link still goes out; only its reward is lost
            log.warning("app delivery not stored: %s", exc)

    async def _record(self, key: str) -> BuildRecord | None:
        try:
            return await self._apps.get_build(key)
        except StoreUnavailable:
            return None

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


async def _despite_the_queue(attempt: Callable[[], Awaitable[T]], within_s: float) -> T:
    """`attempt()`, tried again while the queue cannot be reached, for up to `within_s`."""
    deadline = time.monotonic() + within_s
    pause, longest = QUEUE_RETRY_S
    while True:
        try:
            return await attempt()
        except QueueUnavailable:
            if time.monotonic() + pause > deadline:
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, longest)

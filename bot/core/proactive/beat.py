"""One beat: for each person who may hear from Kindred, decide and send, each message once.

Who is looked at is the store's answer (`proactive_people`): people who turned proactive messages
on, and people with a reminder due. Nobody else is loaded, evaluated or composed for, so "off"
costs nothing and sends nothing. A person who is off but has a reminder due has only their
reminders read: never their activity or memories.

Each chosen occasion goes: claim its key in the ledger (a key already there is a retried job or a
second beat: skip it) → the person's private chat on their platform → send → store the message as
an assistant turn and link the platform message to it (so reactions and replies reach it) → settle
the ledger row. The turn is stored after the send, so the history holds only what was shown. A
worker killed after the claim leaves the row `claimed`; it is never sent again, since nothing
tells whether the platform got it, and two messages are worse than one lost (records.py).
A person who blocked the bot is marked inactive and is not listed again until they write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta

from bot.core.chat.ports import Messenger
from bot.core.errors import DeliveryError, DeliveryUnknown, RecipientGone, StoreUnavailable
from bot.core.jobs import JobPayload
from bot.core.memory import NOT_EVIDENCE, REPLY
from bot.core.memory.ports import Embedder
from bot.core.models import DeliveryDoubt, MessageLink, NewTurn
from bot.core.proactive.backoff import backed_off
from bot.core.proactive.evaluate import evaluate
from bot.core.proactive.manners import choose
from bot.core.proactive.models import (
    DONT_SUGGEST_AGAIN,
    Claim,
    Delivery,
    LedgerRow,
    Occasion,
    PersonView,
    ProactiveSettings,
    RememberedFact,
    Reminder,
    ScheduledReminder,
    SentRecord,
)
from bot.core.proactive.occasions import as_message
from bot.core.proactive.policy import DEFAULT, ProactivePolicy
from bot.core.proactive.reminder import next_due
from bot.core.store import Store
from bot.core.usage import store_meter

log = logging.getLogger(__name__)

ASKED_FOR = "reminder"  # the person asked for it: no opt-in, no back-off, no footer
FOOTER = f'{DONT_SUGGEST_AGAIN}? Reply "don\'t suggest this again", or /proactive off to stop them all.'


@dataclass(frozen=True, slots=True)
class BeatOptions:
    policy: ProactivePolicy = DEFAULT
    # The habit trigger looks back eight weeks, the follow-up sixty days.
    window: timedelta = timedelta(days=60)
    activity_limit: int = 5000
    memory_limit: int = 200
    page: int = 200


@dataclass(slots=True)
class BeatReport:
    """What one beat did, as the job's result: counted so that tests and /admin can see it."""

    people: int = 0  # listed by the store (opted in, or a reminder due)
    evaluated: int = 0  # whose occasions were computed
    chosen: int = 0
    sent: int = 0
    duplicates: int = 0  # a key already in the ledger: sent (or being sent) before
    unreachable: int = 0  # blocked the bot: marked inactive
    failed: int = 0
    no_route: int = 0  # no messenger for their platform here (the terminal)

    def as_payload(self) -> JobPayload:
        return dict(asdict(self))


def message_text(occasion: Occasion) -> str:
    """The message as sent: the template text, why it was sent, and (unless asked for) the footer."""
    text = as_message(occasion)
    return text if occasion.trigger == ASKED_FOR else f"{text}\n\n{FOOTER}"


class ProactiveBeat:
    """Runs beats over one store. `embedder` is asked for only when a message is stored."""

    def __init__(
        self,
        store: Store,
        messengers: Mapping[str, Messenger],
        embedder: Callable[[], Embedder],
        options: BeatOptions | None = None,
    ) -> None:
        self.store = store
        self.messengers = dict(messengers)
        self._embedder = embedder
        self.options = options or BeatOptions()
        # Each message sent is counted for its person ([personal] 1), on their own day.
        self.usage = store_meter(store)

    async def run(self, now: datetime) -> BeatReport:
        report = BeatReport()
        pro = self.store.proactive
        policy = self.options.policy
        rates = await pro.trigger_rates(now - policy.backoff_rest)
        policy = replace(policy, backed_off=policy.backed_off | backed_off(rates, policy))
        after = ""
        while people := await pro.proactive_people(now, after, self.options.page):
            for user_id in people:
                report.people += 1
                try:
                    await self._person(user_id, now, policy, report)
                except StoreUnavailable as exc:  # the next beat tries again; keys keep it once
                    log.warning("proactive: %s skipped this beat: %s", user_id, exc)
                    report.failed += 1
            after = people[-1]
        return report

    async def _person(self, user_id: str, now: datetime, policy: ProactivePolicy, report: BeatReport) -> None:
        pro = self.store.proactive
        settings = await pro.proactive_settings(user_id)
        due = await pro.reminders(user_id, due_by=now)
        # Without a time zone, manners send no check-in (quiet hours and the cap are local): only
        # reminders could go, so nothing else is read.
        can_offer = settings.enabled and settings.timezone is not None
        if settings.inactive or (not can_offer and not due):
            return
        view = await self._view(user_id, settings, now, full=can_offer)
        report.evaluated += 1
        scheduled = [ScheduledReminder(r.id, r.user_id, r.text, r.due, r.every) for r in due]
        chosen = choose(evaluate(view, now, policy, scheduled), view, now, policy)
        if not can_offer:  # off means off: only what they asked for
            chosen = [occasion for occasion in chosen if occasion.trigger == ASKED_FOR]
        report.chosen += len(chosen)
        by_id = {r.id: r for r in due}
        for occasion in chosen:
            if not await self._deliver(occasion, now, by_id, report):
                return  # blocked: nothing more for them

    async def _view(
        self, user_id: str, settings: ProactiveSettings, now: datetime, *, full: bool
    ) -> PersonView:
        """What the triggers read; unless `full`, only the ledger (someone off, with a reminder due)."""
        pro, since = self.store.proactive, now - self.options.window
        sent = tuple(_record(row) for row in await pro.sent_messages(user_id, since))
        if not full:
            return PersonView(user_id, settings, sent=sent)
        activity = await pro.activity(user_id, since, self.options.activity_limit)
        memories = await self.store.memories.list_memories(
            user_id, self.options.memory_limit, without_kinds=sorted(NOT_EVIDENCE)
        )
        facts = tuple(RememberedFact(m.id, m.text, m.created_at) for m in memories if m.recallable)
        return PersonView(user_id, settings, tuple(activity), facts, sent)

    async def _deliver(
        self, occasion: Occasion, now: datetime, reminders: Mapping[int, Reminder], report: BeatReport
    ) -> bool:
        """Send one occasion at most once. False when the person turned out to be unreachable."""
        messenger = self.messengers.get(occasion.user_id.partition(":")[0])
        if messenger is None:
            report.no_route += 1
            return True
        claim = _claim(occasion, now, reminders)
        pro = self.store.proactive
        if not await pro.claim(claim):
            report.duplicates += 1
            return True
        text = message_text(occasion)
        chat_id = ""
        try:
            chat_id = await messenger.private_chat(occasion.user_id)
            message_id: str | None = await messenger.send(
                chat_id, text, never_again=occasion.trigger != ASKED_FOR
            )
        except DeliveryUnknown as exc:
            # It may have rung: kept as sent, of unknown delivery, which the person's reaction or
            # next message settles (core/chat/doubts.py); never sent again by itself.
            log.warning("proactive: %s may not have arrived: %s", occasion.key, exc)
            message_id = None
        except RecipientGone as exc:
            log.info("proactive: %s blocked the bot (%s); marking them inactive", occasion.user_id, exc)
            await pro.settle(occasion.key, Delivery("failed", now))
            await self.store.turns.set_user_active(occasion.user_id, False)
            report.unreachable += 1
            return False
        except DeliveryError as exc:
            log.warning("proactive: %s not sent: %s", occasion.key, exc)
            await pro.settle(occasion.key, Delivery("failed", now))
            report.failed += 1
            return True
        turn_id = await self._store_turn(occasion, messenger, chat_id, message_id, text, now)
        if message_id is None:
            where = messenger.reaction_chat(chat_id)
            doubt = DeliveryDoubt(messenger.platform, where, turn_id, occasion.user_id)
            await self.store.deliveries.record(doubt)
        await pro.settle(occasion.key, Delivery("sent", now, chat_id, turn_id, message_id))
        await self.usage.count(occasion.user_id, "proactive", at=now)
        report.sent += 1
        return True

    async def _store_turn(
        self,
        occasion: Occasion,
        messenger: Messenger,
        chat_id: str,
        message_id: str | None,
        text: str,
        now: datetime,
    ) -> int:
        """The message as an assistant turn (a reply's memory: kept, never recalled), linked to the
        platform message so that a reaction to it reaches the turn."""
        embedder = self._embedder()
        [vector] = await embedder.embed([text])
        turn = NewTurn(
            occasion.user_id, chat_id, "assistant", text, vector, embedder.model_name, now,
            idempotency_key=f"proactive:{occasion.key}", memory_kind=REPLY,
            meta={"chat_id": chat_id, "proactive": occasion.key, "trigger": occasion.trigger},
        )  # fmt: skip
        stored = await self.store.turns.add_turn(turn)
        if message_id is not None:
            linked = MessageLink(messenger.platform, messenger.reaction_chat(chat_id), message_id, stored.id,
                                 occasion.user_id)  # fmt: skip
            await self.store.turns.link_message(linked)
        return stored.id


def _claim(occasion: Occasion, now: datetime, reminders: Mapping[int, Reminder]) -> Claim:
    """The ledger claim; a reminder's also takes it off the schedule or moves it to its next reading."""
    reminder = reminders.get(int(occasion.details.get("reminder_id", "0") or 0))
    if occasion.trigger != ASKED_FOR or reminder is None:
        return Claim(occasion.key, occasion.user_id, occasion.trigger, now)
    scheduled = ScheduledReminder(reminder.id, reminder.user_id, reminder.text, reminder.due, reminder.every)
    following = next_due(scheduled, reminder.timezone, now)  # on the clock it was asked on
    return Claim(occasion.key, occasion.user_id, occasion.trigger, now, reminder.id, following)


def _record(row: LedgerRow) -> SentRecord:
    accepted = None if row.outcome is None else row.outcome == "accepted"
    return SentRecord(row.key, row.trigger, row.claimed_at, accepted)

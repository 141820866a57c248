"""After bench/soak.py's load: what the people were owed against what the fake Bot API shows and
what the store holds. Nothing here trusts the bot's own account of itself.

- Every accepted message has exactly one answer of its kind (a chat message one reply, a command
  its answer, /app one link, a reminder request one confirmation), in the order asked. A reply or
  reminder that never showed but that the bot recorded as of unknown delivery is `unknown`, not
  lost (bench/parts/soak/unknown.py); a reply the person asked for again shows late, once.
- Every reaction and 👍/👎 press is a feedback row (one per reply, person and source).
- Every reminder rang once; no app link went out twice; every person's message is one stored turn.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.parts.soak.kinds import (
    APP,
    COMMAND_ANSWERS,
    ERROR,
    NOT_ANSWERS,
    REPLY,
    RING,
    STEP,
    has_notice,
    kind_of,
    reply_tag,
)
from bench.parts.soak.people import Person
from bench.parts.soak.rows import fetch
from bench.parts.soak.unknown import UNCONFIRMED, Doubts, failed_sends, never_shown, unlearned
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.telegram_push import WebhookPusher

LINK = re.compile(r"/a/([A-Za-z0-9_\-]+)")
SAMPLES = 5


def answers(api: FakeTelegramBotApi, people: Sequence[Person], doubts: Doubts) -> dict[str, Any]:
    notices = 0
    by_kind: Counter[str] = Counter()
    failures: list[str] = []
    disorder: list[dict[str, Any]] = []
    failed = failed_sends(api)
    for person in people:
        shown = texts(api, person.user)
        kinds = [kind_of(text) for text in shown]
        answered = [kind for kind in kinds if kind not in NOT_ANSWERS]
        by_kind += _tally(person, shown, kinds, doubts, never_shown(failed.get(person.user, [])))
        notices += sum(1 for text in shown if has_notice(text))
        failures += [
            f"{person.user}: {t[:100]}" for t, k in zip(shown, kinds, strict=True) if k in (ERROR, STEP)
        ]
        if answered != person.sequence:
            shown_kinds = [f"{k}: {t[:50]}" for k, t in zip(kinds, shown, strict=True)]
            disorder.append({"person": person.user, "owed": person.sequence, "shown": shown_kinds})
    return {
        "lost": sum(n for key, n in by_kind.items() if key.endswith("_lost")),
        "duplicated": sum(n for key, n in by_kind.items() if key.endswith("_duplicated")),
        "replies_unknown_not_shown": by_kind[f"{REPLY}_unknown"],
        "command_answers_unknown_not_shown": sum(by_kind[f"{kind}_unknown"] for kind in COMMAND_ANSWERS),
        "by_kind": {k: v for k, v in sorted(by_kind.items()) if v},
        # A reply with the store's notice reached the person; its turn is checked in the store.
        "replies_with_notice": notices,
        "failure_notices": len(failures),
        "failure_notice_samples": failures[:SAMPLES],
        "chats_out_of_order_or_incomplete": len(disorder),
        "disorder_samples": disorder[:SAMPLES],
    }


def _tally(
    person: Person, shown: list[str], kinds: list[str], doubts: Doubts, unshown: Counter[str]
) -> Counter[str]:
    """One chat's answers lost or duplicated, by kind. Replies count by their tag: one that never
    showed and that the bot holds as of unknown delivery is `reply_unknown`, not lost. A command's
    answer that never showed and whose send the fake failed before storing it (`unshown`, from the
    fake's log) is `<kind>_unknown`, not lost: it was maybe delivered, as far as the bot can tell."""
    out: Counter[str] = Counter()
    got = Counter(kind for kind in kinds if kind not in NOT_ANSWERS and kind != REPLY)
    for kind in (set(got) | set(person.expected)) - {REPLY}:
        missing = max(0, person.expected[kind] - got[kind])
        unknown = min(missing, unshown[kind]) if kind in COMMAND_ANSWERS else 0
        out[f"{kind}_unknown"] += unknown
        out[f"{kind}_lost"] += missing - unknown
        out[f"{kind}_duplicated"] += max(0, got[kind] - person.expected[kind])
    tags = Counter(reply_tag(text) for text, kind in zip(shown, kinds, strict=True) if kind == REPLY)
    for tag in person.tags:
        if not tags[tag]:
            unknown = doubts.reply(person.user, tag) in UNCONFIRMED
            out[f"{REPLY}_unknown" if unknown else f"{REPLY}_lost"] += 1
    # A tag shown twice, or a reply to no message of theirs, is one too many.
    out[f"{REPLY}_duplicated"] += sum(n - 1 if tag in person.tags else n for tag, n in tags.items())
    return out


def order(api: FakeTelegramBotApi, people: Sequence[Person], doubts: Doubts) -> dict[str, Any]:
    """Each reply names the message it answers: in every chat, the replies answer the messages
    once each and in the order they were sent; but for replies of unknown delivery, which never
    showed, or showed again only when the person asked for them."""
    wrong: list[dict[str, Any]] = []
    for person in people:
        shown = [tag for tag in map(reply_tag, texts(api, person.user)) if tag is not None]
        aside = {
            tag for tag in person.tags
            if (status := doubts.reply(person.user, tag)) == "resent" or (status and tag not in shown)
        }  # fmt: skip
        sent = [tag for tag in person.tags if tag not in aside]
        if [tag for tag in shown if tag not in aside] != sent:
            wrong.append({"person": person.user, "sent": person.tags, "answered": shown})
    return {"chats_out_of_order": len(wrong), "samples": wrong[:SAMPLES]}


def texts(api: FakeTelegramBotApi, user: int) -> list[str]:
    return [m.text or "" for m in api.bot_messages(user)]


def rings(api: FakeTelegramBotApi, people: Sequence[Person], doubts: Doubts) -> dict[str, int]:
    """Each reminder's "Reminder: …" message, exactly once, or never shown and of unknown delivery."""
    lost = duplicated = unknown = 0
    for person in people:
        said = Counter(
            text.splitlines()[0].strip() for text in texts(api, person.user) if kind_of(text) == RING
        )
        for task in person.reminders:
            ring = f"Reminder: {task}"
            n = said.get(ring, 0)
            unshown = n == 0 and doubts.ring(person.user, ring) in UNCONFIRMED
            lost, unknown = lost + (n == 0 and not unshown), unknown + unshown
            duplicated += max(0, n - 1)
    return {"reminders": sum(len(p.reminders) for p in people), "lost": lost, "duplicated": duplicated,
            "unknown_not_shown": unknown}  # fmt: skip


def app_links(api: FakeTelegramBotApi, people: Sequence[Person]) -> dict[str, int]:
    """No app's link in two messages (a build delivered twice)."""
    tokens: Counter[str] = Counter()
    for person in people:
        for text in texts(api, person.user):
            if kind_of(text) == APP:
                tokens.update(LINK.findall(text))
    return {"links": len(tokens), "duplicated": sum(n - 1 for n in tokens.values() if n > 1)}


def deliveries(pusher: WebhookPusher) -> dict[str, Any]:
    records = list(pusher.deliveries.values())
    retried = [d for d in records if d.attempts > 1]
    return {
        "updates": len(records),
        "accepted": sum(1 for d in records if d.accepted_at is not None),
        "not_accepted": pusher.pending + sum(1 for d in records if d.accepted_at is None),
        "retried": len(retried),
        "statuses_seen": dict(Counter(str(s) for d in records for s in d.statuses)),
    }


async def stored(api: FakeTelegramBotApi, place: str, people: Sequence[Person]) -> dict[str, Any]:
    """Feedback rows and the people's stored turns, read from the store itself (PostgreSQL, or the
    SQLite file). A reaction or press missing from them, on a message whose id the bot never
    learned, is `reactions_unlinked`, not lost: with two replies of unknown delivery waiting in the
    chat it cannot be attributed."""
    never_learned = unlearned(api)
    rows = await fetch(place, "SELECT user_id, source, count(*) FROM feedback GROUP BY user_id, source")
    feedback = {(str(user), str(source)): int(n) for user, source, n in rows}
    rows = await fetch(
        place,
        "SELECT user_id, count(*), count(DISTINCT text) FROM turns WHERE role = 'user' GROUP BY user_id",
    )
    turns = {str(user): (int(n), int(distinct)) for user, n, distinct in rows}
    lost = duplicated = turns_missing = turns_twice = unlinked = 0
    for person in people:
        key = f"telegram:{person.user}"
        unseen = never_learned.get(person.user, set())
        for source, sent, on in (
            ("reaction", person.reactions, person.reacted_on),
            ("button", person.presses, person.pressed_on),
        ):
            have = feedback.get((key, source), 0)
            # Counted per chat and source: which reaction a row stands for, the rows do not say.
            missing = max(0, sent - have)
            cannot_link = min(missing, len(on & unseen))
            unlinked += cannot_link
            lost += missing - cannot_link
            duplicated += max(0, have - sent)
        said = len(person.chat_sent) + len(person.reminders)
        n, distinct = turns.get(key, (0, 0))
        turns_missing += max(0, said - n)
        turns_twice += n - distinct
    return {
        "reactions_sent": sum(p.reactions + p.presses for p in people),
        "feedback_rows": sum(feedback.values()),
        "feedback_lost": lost,
        "feedback_duplicated": duplicated,
        "reactions_unlinked": unlinked,
        "user_turns_missing": turns_missing,
        "user_turns_stored_twice": turns_twice,
    }

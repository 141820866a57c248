"""The canary ([canary]): a candidate variant answers a share of replies, and people's reactions to
them decide whether it serves everyone.

- Which arm answers a reply is drawn per reply from the canary's recorded seed and the reply's key
  (`arm_for`), so a decision can be replayed and a retried message keeps its arm.
- A reply enters the test once, when its reward is final: `settle` after it was written
  (`advance`). Later changes to its reactions are kept with the reply and shown, never fed back.
- The test is anytime-valid (core/learning/sequential.py), so looking after every entry does not
  inflate false promotions. Promote when the lower bound of canary − serving clears 0; stop for
  harm when the upper bound falls below 0; expire, undecided, after `max_days` or `max_replies`.
- One person cannot decide it: each contributes at most `per_person_daily` replies per arm per day
  (extra replies are logged, counted false, and change nothing), and no decision is taken before
  each arm has replies of `min_people` different people.
- At most one canary runs (the store enforces it). A night while one runs trains nothing
  (core/learning/nightly.py): its candidate would be judged against a serving variant the running
  trial may replace the next hour.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bot.core.learning.models import Arm, Canary, CanaryEntry, CanaryStatus, NewCanary, TrialReply, Variant
from bot.core.learning.ports import Trials
from bot.core.learning.reward import RewardWeights, reply_reward
from bot.core.learning.sequential import SequentialPolicy, SequentialTest, decide
from bot.core.models import JSONObject
from bot.core.store import Store

log = logging.getLogger(__name__)

CANARY_JOB = "kindred.learning.canary"
# Entries between two points of the bound's history, within one pass (a pass adds one at its end).
HISTORY_EVERY = 25
_BATCH = 500


@dataclass(frozen=True, slots=True)
class CanaryPolicy:
    share: float = 0.2
    alpha: float = 0.01
    settle: timedelta = timedelta(hours=1)
    max_days: float = 7.0
    max_replies: int = 5_000
    per_person_daily: int = 20
    min_people: int = 5
    min_per_arm: int = 10
    planned_replies: int = 400

    def __post_init__(self) -> None:
        if not 0.0 < self.share < 1.0 or not 0.0 < self.alpha < 0.5 or self.per_person_daily < 1:
            raise ValueError("CanaryPolicy: 0 < share < 1, 0 < alpha < 0.5, per_person_daily ≥ 1")

    @property
    def sequential(self) -> SequentialPolicy:
        return SequentialPolicy(
            alpha=self.alpha, min_per_arm=self.min_per_arm, planned_replies=self.planned_replies
        )

    def as_json(self) -> JSONObject:
        data: dict[str, Any] = asdict(self)
        data["settle"] = self.settle.total_seconds()
        return data


def arm_for(seed: int, key: str, share: float) -> Arm:
    """The arm that answers the reply to the message with idempotency key `key`: the same for a
    retried message, independent of the order replies arrive in."""
    digest = hashlib.blake2b(f"{seed}:{key}".encode(), digest_size=8).digest()
    return "canary" if int.from_bytes(digest, "big") / 2**64 < share else "serving"


async def start(
    store: Store, base_model: str, candidate: Variant, serving: Variant, policy: CanaryPolicy, *,
    seed: int, at: datetime, run_id: int | None = None,
) -> Canary | None:  # fmt: skip
    """Put `candidate` on trial against `serving`. None when another canary runs."""
    new = NewCanary(
        base_model=base_model,
        candidate=candidate,
        serving=serving,
        share=policy.share,
        seed=seed,
        policy=policy.as_json(),
        run_id=run_id,
    )
    canary = await store.trials.start_canary(new, at)
    if canary is not None:
        log.info("canary %d: %s on trial against %s", canary.id, candidate.describe(), serving.describe())
    return canary


def policy_of(canary: Canary) -> CanaryPolicy:
    """The policy the canary started with (its settings may have changed since)."""
    data = dict(canary.policy)
    data["settle"] = timedelta(seconds=float(data.get("settle", 3600)))
    known = CanaryPolicy.__dataclass_fields__
    return CanaryPolicy(**{k: v for k, v in data.items() if k in known})


@dataclass(slots=True)
class Pass:
    """What one `advance` did."""

    canary: int | None = None
    entered: int = 0
    counted: int = 0
    decision: CanaryStatus | None = None
    reason: str = ""
    bounds: JSONObject = field(default_factory=dict)

    def as_json(self) -> JSONObject:
        return asdict(self)


# Whether the files of an adapter version can still be served (its folder exists).
AdapterPresent = Callable[[int], Awaitable[bool]]


async def advance(
    store: Store,
    weights: RewardWeights,
    now: datetime,
    *,
    adapter_present: AdapterPresent | None = None,
) -> Pass:
    """Enter every settled reply of the running canary into its test, then decide if it can."""
    canary = await store.trials.running_canary()
    if canary is None:
        return Pass()
    policy = policy_of(canary)
    done = Pass(canary=canary.id)
    stopped = await _broken(store, canary, adapter_present)
    if stopped:
        return await _decide(store, canary, "stopped", stopped, now, done)
    test = (
        SequentialTest.from_json(dict(canary.test))
        if canary.test
        else SequentialTest(policy.share, policy.sequential)
    )
    daily: dict[tuple[str, str, str], int] = {}
    state = canary.test
    verdict: CanaryStatus | None = None
    while verdict is None:
        pending = await store.trials.pending_replies(canary.id, now - policy.settle, _BATCH)
        if not pending:
            break
        entries, points = [], []
        for reply in pending:
            entry = await _entry(store, canary, policy, weights, reply, daily)
            if entry is None:
                continue
            if entry.counted:
                test.add(entry.arm, entry.reward)
                done.counted += 1
                if done.counted % HISTORY_EVERY == 0:
                    points.append(_point(test, now))
            entries.append(entry)
        points.append(_point(test, now))
        saved = test.to_json()
        if not await store.trials.enter(canary.id, entries, saved, points, before=state):
            # Decided meanwhile (an admin's stop), or another pass got there first: nothing of
            # this pass counts, and the next pass starts from what is stored.
            return Pass(canary=canary.id)
        state = saved
        done.entered += len(entries)
        # The bounds now, not the test's first crossing: a crossing before enough people had
        # replies must not decide later on its own (the bounds hold at every time, so either is valid).
        crossed = decide(test.bounds())
        if crossed is not None and await _enough_people(store, canary.id, policy):
            verdict = "promoted" if crossed == "promote" else "harm"
        if len(pending) < _BATCH:
            break
    done.bounds = test.bounds().as_json()
    if verdict is not None:
        return await _decide(store, canary, verdict, _reason(verdict, test, policy), now, done)
    expired = _expiry(canary, policy, test, now)
    if expired:
        return await _decide(store, canary, "expired", expired, now, done)
    return done


async def _enough_people(store: Store, canary_id: int, policy: CanaryPolicy) -> bool:
    people = await store.trials.people(canary_id)
    return min(people.get("canary", 0), people.get("serving", 0)) >= policy.min_people


async def _broken(store: Store, canary: Canary, adapter_present: AdapterPresent | None) -> str:
    """Why the canary cannot go on, or "": its adapter's files are gone, or what serves changed
    under it (a rollback or a promotion by hand), so its serving arm is no longer what serves."""
    version = canary.candidate.adapter_version
    if adapter_present is not None and version is not None and not await adapter_present(version):
        return f"adapter v{version}'s files are missing, so the canary cannot be served"
    serving = await store.adapters.serving_adapter()
    reward_model = await store.trials.serving_reward_model()
    now_serving = (
        None if serving is None else serving.version,
        None if reward_model is None else reward_model.version,
    )
    started = (canary.serving.adapter_version, canary.serving.reward_model_version)
    if now_serving != started:
        return "what serves changed while the canary ran (a rollback or a promotion by hand)"
    return ""


async def _entry(
    store: Store,
    canary: Canary,
    policy: CanaryPolicy,
    weights: RewardWeights,
    reply: TrialReply,
    daily: dict[tuple[str, str, str], int],
) -> CanaryEntry | None:
    reward = await reply_reward(store.rewards, reply.turn_id, weights)
    if reward is None:
        return None  # forgotten meanwhile
    day = reply.created_at.date().isoformat()
    make = CanaryEntry
    if reply.variant != canary.variant(reply.arm):
        note = f"served by {reply.variant.describe()}, not the arm's variant (a fallback)"
        return make(reply.turn_id, reply.arm, reply.user_id, day, reward.total, False, note)
    key = (reply.user_id, reply.arm, day)
    if key not in daily:
        daily[key] = await store.trials.counted(canary.id, reply.user_id, reply.arm, day)
    if daily[key] >= policy.per_person_daily:
        note = f"this person's {policy.per_person_daily} replies of the day already counted"
        return make(reply.turn_id, reply.arm, reply.user_id, day, reward.total, False, note)
    daily[key] += 1
    return make(reply.turn_id, reply.arm, reply.user_id, day, reward.total, True)


def _point(test: SequentialTest, now: datetime) -> JSONObject:
    return {"at": now.isoformat(), **test.bounds().as_json()}


def _reason(decision: CanaryStatus, test: SequentialTest, policy: CanaryPolicy) -> str:
    b = test.bounds()
    level = f"{1 - policy.alpha:.0%}"
    if decision == "promoted":
        return (
            f"better: the {level} lower bound of canary − serving reward is {b.lower:+.3f} > 0 "
            f"({b.n_canary} canary and {b.n_serving} serving replies)"
        )
    return (
        f"worse: the {level} upper bound of canary − serving reward is {b.upper:+.3f} < 0 "
        f"({b.n_canary} canary and {b.n_serving} serving replies)"
    )


def _expiry(canary: Canary, policy: CanaryPolicy, test: SequentialTest, now: datetime) -> str:
    b = test.bounds()
    replies = b.n_canary + b.n_serving
    days = (now - canary.started_at).total_seconds() / 86_400
    if days < policy.max_days and replies < policy.max_replies:
        return ""
    spent = f"{days:.1f} days" if days >= policy.max_days else f"{replies} replies"
    return f"undecided after {spent}: the difference stayed within [{b.lower:+.3f}, {b.upper:+.3f}]"


async def _decide(
    store: Store, canary: Canary, status: CanaryStatus, reason: str, now: datetime, done: Pass
) -> Pass:
    decided = await store.trials.decide_canary(canary.id, status, reason, now)
    if decided is not None:
        done.decision, done.reason = status, reason
        log.info("canary %d %s: %s", canary.id, status, reason)
    return done


async def stop(trials: Trials, reason: str, now: datetime) -> Canary | None:
    """An admin's stop: the running canary ends, and the serving variant answers everyone. None
    when none runs."""
    canary = await trials.running_canary()
    if canary is None:
        return None
    return await trials.decide_canary(canary.id, "stopped", reason, now)

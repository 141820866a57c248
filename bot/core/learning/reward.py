"""The reward of one reply, and how it reached the memories its prompt used.

    R = α · tool uses + β · turns that followed within the session + γ · proactive successes + reaction

- reaction: the mean value of the reply's current reactions (0 with none). Reactions are rows that
  a change replaces and an undo deletes, and R is computed from them when asked, so it never drifts.
- turns that followed: the person's own turns in the same chat after the reply, up to the first
  pause longer than the session gap, at most `followed_cap`.
- tool uses and proactive successes: counted signals (`RewardLog.record_signal`). Mini-apps and
  check-ins report them when they come; until then the count is a real zero, read like the others.

Memories are credited from the reaction only, in proportion to their share of the prompt's
retrieval score: what a person says about a reply is about what it said, while carrying on talking
says little about which memory helped. `r(m)` sums these credits over every reply that used m.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core.learning.ports import RewardLog

# Whether a person's reactions count: the nightly dataset leaves out those of people who switched
# training off, whoever's reply they reacted to.
Counts = Callable[[str], Awaitable[bool]]

# What a reaction is worth; KINDRED_REACTIONS (JSON) replaces the whole map.
DEFAULT_REACTIONS: dict[str, float] = {
    "👍": 1.0,
    "❤️": 1.0,
    "❤": 1.0,
    "🔥": 1.0,
    "🎉": 1.0,
    "👎": -1.0,
    "😡": -1.0,
    "💩": -1.0,
}


@dataclass(frozen=True, slots=True)
class RewardWeights:
    alpha: float = 1.0  # per mini-app or tool use
    beta: float = 0.1  # per turn that followed within the session
    gamma: float = 1.0  # per proactive success
    session_gap: timedelta = timedelta(minutes=30)
    followed_cap: int = 10


@dataclass(frozen=True, slots=True)
class MemoryCredit:
    memory_id: int
    share: float  # of the prompt's retrieval score
    credit: float  # from this reply: share × reaction
    total: float  # r(m): from every reply that used it
    text: str


@dataclass(frozen=True, slots=True)
class ReplyReward:
    turn_id: int
    user_id: str
    reaction: float
    reactions: int
    tool_uses: int
    turns_followed: int
    proactive_successes: int
    weights: RewardWeights
    memories: tuple[MemoryCredit, ...]

    @property
    def total(self) -> float:
        w = self.weights
        return (
            w.alpha * self.tool_uses
            + w.beta * self.turns_followed
            + w.gamma * self.proactive_successes
            + self.reaction
        )

    def render(self) -> str:
        w = self.weights
        lines = [
            f"reply #{self.turn_id} of {self.user_id}: R = {self.total:+.3f}",
            f"  α·tool uses          {w.alpha:g} × {self.tool_uses}",
            f"  β·turns that followed {w.beta:g} × {self.turns_followed}",
            f"  γ·proactive success  {w.gamma:g} × {self.proactive_successes}",
            f"  reaction             {self.reaction:+.3f} (mean of {self.reactions})",
            f"memories its prompt used ({len(self.memories)}):",
        ]
        lines += [
            f"  #{m.memory_id} share {m.share:.3f} credit {m.credit:+.3f} (r(m) {m.total:+.3f}) {m.text[:80]}"
            for m in self.memories
        ]
        return "\n".join(lines)


def reaction_value(values: Sequence[float]) -> float:
    """Several people (or a reaction and a button) on one reply count as their mean."""
    return sum(values) / len(values) if values else 0.0


def turns_followed(reply_at: datetime, later: Sequence[datetime], gap: timedelta) -> int:
    """How many of `later` (oldest first) came before the first pause longer than `gap`."""
    count = 0
    previous = reply_at
    for at in later:
        if at - previous > gap:
            break
        count += 1
        previous = at
    return count


async def reply_reward(
    log: RewardLog, turn_id: int, weights: RewardWeights, counts: Counts | None = None
) -> ReplyReward | None:
    """One reply's reward, every component, and the credit each used memory got from it. With
    `counts`, only the reactions of the people it accepts weigh in."""
    record = await log.reply_record(turn_id, weights.followed_cap)
    if record is None:
        return None
    values = [r.value for r in record.reactions if counts is None or await counts(r.user_id)]
    reaction = reaction_value(values)
    totals = await log.memory_rewards(record.user_id, [m.memory_id for m in record.memories])
    return ReplyReward(
        turn_id=record.turn_id,
        user_id=record.user_id,
        reaction=reaction,
        reactions=len(values),
        tool_uses=record.tool_uses,
        turns_followed=turns_followed(record.created_at, record.later_turns, weights.session_gap),
        proactive_successes=record.proactive_successes,
        weights=weights,
        memories=tuple(
            MemoryCredit(m.memory_id, m.share, m.share * reaction, totals.get(m.memory_id, 0.0), m.text)
            for m in record.memories
        ),
    )

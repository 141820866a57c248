"""The implicit reward signals a reply earns ([learning]): α, a tool use, and γ, a proactive success
(core/learning/reward.py). Each is counted once per key (`RewardLog.record_signal`), so a retried job or a
redelivered update that reports the same event again changes nothing.

- A memory control (/memories, /forget, /confirm, /correct, /export) used right after a reply is a
  tool use of that reply: `control_used`. The [apps] issue reports an opened app with
  `record_tool_use`.
- A proactive message that the person took up is a proactive success of that message: the
  [proactive] issue reports it with `record_proactive_success`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from bot.core.chat.ports import TurnLog
from bot.core.learning.ports import RewardLog


async def record_tool_use(log: RewardLog, turn_id: int, key: str, at: datetime) -> None:
    """Count one tool use (α) for the reply `turn_id`. Idempotent on `key`: one key per use, e.g.
    "app:<app id>:<open id>" or "memories:<platform message id>"."""
    await log.record_signal(turn_id, "tool_use", key, at)


async def record_proactive_success(log: RewardLog, turn_id: int, key: str, at: datetime) -> None:
    """Count one proactive success (γ) for the proactive message `turn_id`: the person answered or
    acted on it. Idempotent on `key` (e.g. the id of the person's answer)."""
    await log.record_signal(turn_id, "proactive_success", key, at)


async def answered_reply(
    log: TurnLog, user_id: str, chat_id: str, at: datetime, gap: timedelta
) -> int | None:
    """The reply a person is answering at `at` in this chat: the chat's latest turn, if it is a
    reply and came within `gap` (the session gap) before. None otherwise."""
    latest = await log.recent_turns(user_id, chat_id, 1)
    if not latest or latest[-1].role != "assistant":
        return None
    return latest[-1].id if at - latest[-1].created_at <= gap else None


class SignalLog(Protocol):
    """What `control_used` reads and writes: the chat's turns and the reply's signals."""

    @property
    def turns(self) -> TurnLog: ...

    @property
    def rewards(self) -> RewardLog: ...


async def control_used(
    log: SignalLog, user_id: str, chat_id: str, command: str, at: datetime, gap: timedelta
) -> int | None:
    """A memory control used right after a reply counts as a tool use of that reply. Returns the
    reply's turn id, or None when no reply was being answered. The key is the command and the
    moment, so a person who opens /memories twice counts twice, and a replay of one use once."""
    turn_id = await answered_reply(log.turns, user_id, chat_id, at, gap)
    if turn_id is not None:
        await record_tool_use(log.rewards, turn_id, f"{command}:{at.isoformat()}", at)
    return turn_id

"""Counting a use as it happens: one record per reply (every sample of a best-of-n), voice note,
image, proactive message or app build. Counting never fails what it counts."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from bot.core.errors import StoreUnavailable
from bot.core.usage.models import UsageKind, UsageRecord
from bot.core.usage.ports import UsageLog

log = logging.getLogger(__name__)


class UsageMeter:
    def __init__(self, usage: UsageLog, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._usage = usage
        self._clock = clock

    async def count(
        self,
        user_id: str,
        kind: UsageKind,
        *,
        group_id: str | None = None,
        tokens_in: int = 0,
        tokens_out: int = 0,
        amount: float = 1.0,
    ) -> None:
        """Record one use now. With the store down the use goes uncounted (logged): the person's
        reply, note or build matters more than its count."""
        record = UsageRecord(
            user_id, kind, self._clock(), max(0, tokens_in), max(0, tokens_out), amount, group_id
        )
        try:
            await self._usage.record(record)
        except StoreUnavailable as exc:
            log.warning("a %s use of %s went uncounted: %s", kind, user_id, exc)

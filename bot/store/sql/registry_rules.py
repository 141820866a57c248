"""What both stores' AdapterRegistry refuse, and the messages they leave on runs they fail.

The database enforces the invariants themselves (one serving version per scope, one running run);
these checks turn a caller's mistake into InvalidInput with a plain message before any SQL runs.
"""

from __future__ import annotations

from datetime import timedelta

from bot.core.errors import InvalidInput
from bot.core.learning.models import AdapterRecord, AdapterStatus, NewAdapter, RunStatus

# A new version is what a night produced: a candidate, or one that failed its run or the gate.
_NEW_STATUSES: frozenset[str] = frozenset({"candidate", "failed"})


def check_new_adapter(adapter: NewAdapter) -> None:
    if adapter.status not in _NEW_STATUSES:
        raise InvalidInput(f"a new adapter version is a candidate or failed, not {adapter.status!r}")
    if not adapter.path.strip() or not adapter.scope.strip():
        raise InvalidInput("an adapter version needs its folder (path) and a scope")


def check_status_change(status: AdapterStatus) -> None:
    if status == "serving":
        raise InvalidInput("serve a version with promote_adapter, which retires the one serving")


def check_promotable(version: int, found: AdapterRecord | None) -> AdapterRecord:
    """The version to promote, or InvalidInput when there is none or it failed."""
    if found is None:
        raise InvalidInput(f"there is no adapter version {version}")
    if found.status == "failed":
        raise InvalidInput(f"adapter version {version} failed; a failed version is never served")
    return found


def check_finish_status(status: RunStatus) -> None:
    if status == "running":
        raise InvalidInput("a run finishes as succeeded, failed or skipped, not running")


def redelivered_message(job_key: str) -> str:
    return f"failed: job {job_key} was delivered again, so the worker that ran this stopped"


def stale_message(stale_after: timedelta) -> str:
    minutes = stale_after.total_seconds() / 60
    return f"failed: no progress for more than {minutes:g} minutes, so its worker had stopped"

"""Which adapter version serves: promote one, roll back to the one before. The CLI (`kindred
adapters promote|rollback`), the admin chat command `/rollback` and the nightly run all change it
through here; the store makes each change one transaction (at most one serving per scope).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.errors import InvalidInput
from bot.core.learning.models import GLOBAL_SCOPE, AdapterRecord
from bot.core.learning.ports import AdapterRegistry


@dataclass(frozen=True, slots=True)
class ServingChange:
    """What serves after a change (None: the base model), and what served before."""

    serving: AdapterRecord | None
    before: AdapterRecord | None
    changed: bool = True

    def describe(self) -> str:
        now = label(self.serving)
        if not self.changed:
            return f"{now} already serves; nothing changed"
        return f"{now} serves now (before: {label(self.before)})"

    def as_json(self) -> dict[str, object]:
        return {
            "serving": None if self.serving is None else self.serving.version,
            "before": None if self.before is None else self.before.version,
            "changed": self.changed,
        }


def label(record: AdapterRecord | None) -> str:
    return "the base model" if record is None else f"v{record.version}"


async def promote(registry: AdapterRegistry, version: int, now: datetime) -> ServingChange:
    """Serve `version`. InvalidInput, in plain words, for an unknown or a failed version."""
    record = await registry.get_adapter(version)
    if record is None:
        raise InvalidInput(f"there is no adapter version {version}; `kindred adapters list` shows them")
    if record.status == "failed":
        raise InvalidInput(f"v{version} failed its checks, so it cannot serve")
    before = await registry.serving_adapter(record.scope)
    if before is not None and before.version == version:
        return ServingChange(before, before, changed=False)
    await registry.promote_adapter(version, now)
    return ServingChange(await registry.get_adapter(version), before)


async def rollback(registry: AdapterRegistry, now: datetime, scope: str = GLOBAL_SCOPE) -> ServingChange:
    """Serve the version before the serving one: the newest retired version older than it, or the
    base model when there is none. With the base model serving already, nothing changes."""
    serving = await registry.serving_adapter(scope)
    if serving is None:
        return ServingChange(None, None, changed=False)
    older = [
        record
        for record in await registry.list_adapters(scope)
        if record.status == "retired" and record.version < serving.version
    ]
    if not older:
        await registry.serve_base(scope, now)
        return ServingChange(None, serving)
    previous = max(older, key=lambda record: record.version)
    await registry.promote_adapter(previous.version, now)
    return ServingChange(await registry.get_adapter(previous.version), serving)

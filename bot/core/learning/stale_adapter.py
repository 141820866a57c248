"""An adapter that holds what people took back stops serving before the next night trains.

`/privacy` promises that a forgotten memory, or a person who opted out, leaves the served model
within one night: every night trains from the base model on the current data. That holds only if a
night that promotes nothing (too little data, or a candidate the gate refused) does not keep serving
an adapter trained on words forgotten since. So each night first checks the serving adapter's own
training snapshot: forgetting deletes a reply's snapshot rows, so fewer rows than the run recorded
means something it learned from is gone; and a person in it who has opted out since is in it too.
Either way the base model serves again, and the night's candidate is judged against the base.
"""

from __future__ import annotations

import logging
from datetime import datetime

from bot.core.learning.dataset import DatasetPolicy, consents
from bot.core.learning.models import AdapterRecord
from bot.core.models import JSONObject
from bot.core.store import Store

log = logging.getLogger(__name__)


def recorded_examples(stats: JSONObject) -> int | None:
    """How many examples (train and held-out) a run's dataset statistics say it kept."""
    total = 0
    for split in ("examples", "heldout"):
        counts = stats.get(split)
        if not isinstance(counts, dict):
            return None
        total += sum(int(n) for n in counts.values() if isinstance(n, int | float))
    return total


async def outdated_reason(store: Store, serving: AdapterRecord, policy: DatasetPolicy) -> str | None:
    """Why `serving` may no longer serve, or None. An adapter with no run (placed by hand) is kept."""
    if serving.run_id is None:
        return None
    kept = await store.learning.run_examples(serving.run_id)
    expected = recorded_examples(serving.dataset)
    if expected is not None and len(kept) < expected:
        return f"{expected - len(kept)} of the replies it was trained on were forgotten since"
    for user_id in sorted({example.user_id for example in kept}):
        if not consents(await store.learning.training_consent(user_id), policy):
            return "a person it was trained on has since turned training off"
    return None


async def retire_outdated(store: Store, scope: str, policy: DatasetPolicy, at: datetime) -> str | None:
    """Serve the base model when the serving adapter holds what was taken back; says why, or None."""
    serving = await store.adapters.serving_adapter(scope)
    if serving is None:
        return None
    reason = await outdated_reason(store, serving, policy)
    if reason is None:
        return None
    await store.adapters.serve_base(scope, at)
    message = f"v{serving.version} stopped serving: {reason}"
    log.warning("%s; the base model serves until a new adapter passes the gate", message)
    return message

"""Which variant answers a reply ([canary]): the serving one, or the running canary's for the share
of replies its seed draws. A person who switched training off, and a person whose replies come from
another base model than the canary's, always get the serving variant and stay outside the trial.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.core.errors import StoreUnavailable
from bot.core.learning.canary import arm_for
from bot.core.learning.models import AdapterRecord, Arm, Canary, RewardModelRecord, Variant
from bot.core.learning.reward_model import RewardModel
from bot.core.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Pick:
    """What answers one reply: the adapter (None: the base model), the reward model that chooses
    among `n` sampled candidates (None: one reply, streamed), and the trial it is part of."""

    adapter: AdapterRecord | None = None
    reward_model: RewardModel | None = None
    reward_model_version: int | None = None
    n: int = 1
    arm: Arm = "serving"
    canary_id: int | None = None

    @property
    def variant(self) -> Variant:
        adapter = None if self.adapter is None else self.adapter.version
        return Variant(adapter, self.reward_model_version, self.n)


class VariantPicker:
    """Asked per reply, so that a promotion, a rollback or a new canary reaches the next one."""

    def __init__(self, store: Store, base_model: str, best_of: int = 4) -> None:
        self._store = store
        self.base_model = base_model
        # n for a serving reward model: a canary's variant names its own.
        self._best_of = best_of
        self._models: dict[int, RewardModel | None] = {}

    async def pick(self, user_id: str, key: str, *, model: str | None = None, best_of: bool = False) -> Pick:
        """With the store down, the base model answers, alone. `model`: the base model this reply
        comes from when it is not this picker's: an adapter serves only with the model it was
        trained on, so such a reply gets no adapter and no canary arm, and the serving reward
        model only where the admin gave that model `best_of`."""
        try:
            if model is not None and model != self.base_model:
                return await self._reranked() if best_of else Pick()
            return await self._pick(user_id, key)
        except StoreUnavailable as exc:
            log.warning("answering with the base model: the store is unavailable (%s)", exc)
            return Pick()

    async def _pick(self, user_id: str, key: str) -> Pick:
        store = self._store
        adapter = await store.adapters.serving_adapter()
        record = await store.trials.serving_reward_model()
        canary = await store.trials.running_canary()
        serving = Variant(
            None if adapter is None else adapter.version, None if record is None else record.version
        )
        if canary is not None and await self._in_trial(canary, user_id, serving):
            arm = arm_for(canary.seed, key, canary.share)
            return await self._resolve(canary.variant(arm), arm, canary.id)
        model = self._model(record)
        n = self._best_of if model is not None else 1
        return Pick(adapter, model, None if model is None or record is None else record.version, n)

    async def _reranked(self) -> Pick:
        """Another model's reply: the serving reward model chooses among its n samples, no more."""
        record = await self._store.trials.serving_reward_model()
        model = self._model(record)
        if model is None or record is None:
            return Pick()
        return Pick(None, model, record.version, self._best_of)

    async def _in_trial(self, canary: Canary, user_id: str, serving: Variant) -> bool:
        """Outside: another base model; what serves changed under the canary (a rollback: it
        serves at once, and the canary's next pass stops the trial); a person who opted out."""
        started = canary.serving
        if canary.base_model != self.base_model or (
            started.adapter_version,
            started.reward_model_version,
        ) != (serving.adapter_version, serving.reward_model_version):
            return False
        return await self._store.learning.training_consent(user_id) is not False

    async def _resolve(self, variant: Variant, arm: Arm, canary_id: int) -> Pick:
        store = self._store
        adapter = None
        if variant.adapter_version is not None:
            adapter = await store.adapters.get_adapter(variant.adapter_version)
        model = None
        if variant.reward_model_version is not None:
            model = self._model(await store.trials.get_reward_model(variant.reward_model_version))
        n = variant.n if model is not None else 1
        version = variant.reward_model_version if model is not None else None
        return Pick(adapter, model, version, n, arm, canary_id)

    def _model(self, record: RewardModelRecord | None) -> RewardModel | None:
        """The reward model's weights, read once per version. One that cannot be read (a newer
        format, a damaged row) is not used: the reply is streamed as without one."""
        if record is None:
            return None
        if record.version not in self._models:
            try:
                self._models[record.version] = RewardModel.from_json(dict(record.model))
            except ValueError as exc:
                log.warning("reward model r%d cannot be read, so it is not used: %s", record.version, exc)
                self._models[record.version] = None
        return self._models[record.version]

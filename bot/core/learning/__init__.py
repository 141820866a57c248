"""Learning ([learning]): reward from reactions, the nightly dataset and training run, the gate,
and which adapter serves."""

from bot.core.learning.reward import RewardWeights
from bot.core.learning.reward_model import RewardModel, choose_best
from bot.core.learning.signals import control_used, record_proactive_success

# The learning room's public surface for the other rooms, beside its ports and models.
__all__ = ["RewardModel", "RewardWeights", "choose_best", "control_used", "record_proactive_success"]

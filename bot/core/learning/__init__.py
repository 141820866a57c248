"""Learning ([learning], [canary]): reward from reactions, the nightly dataset and training run, the
pre-screen, reward models, canaries, and which variant answers a reply."""

from bot.core.learning.reward import RewardWeights
from bot.core.learning.reward_model import RewardModel, choose_best
from bot.core.learning.signals import control_used, record_proactive_success
from bot.core.learning.variants import Pick, VariantPicker

# The learning room's public surface for the other rooms, beside its ports and models.
__all__ = [
    "Pick",
    "RewardModel",
    "RewardWeights",
    "VariantPicker",
    "choose_best",
    "control_used",
    "record_proactive_success",
]

"""Nightly training: KTO with a LoRA adapter (TRL, peft), and what the gate measures of it.

With bot/inference, the only place that imports torch, transformers, peft and TRL. Importing
this package is cheap: they load inside the functions that train or score.
"""

from bot.training.kto import LoraKtoTrainer
from bot.training.options import TrainingOptions
from bot.training.scorer import LoraScorer

__all__ = ["LoraKtoTrainer", "LoraScorer", "TrainingOptions"]

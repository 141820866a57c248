"""The nightly trainer: KTO with a LoRA adapter, from the base model every time (`ports.Trainer`).

Each night starts from the base model and the reference is that base with the adapter disabled,
so drift cannot compound from night to night, and what a person made the model forget is gone
from the next adapter. torch, TRL and peft load on the first `train`, in `trl_kto.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bot.core.learning.models import TrainingExample
from bot.core.models import JSONObject
from bot.training.options import TrainingOptions

# KTO's KL estimate pairs each prompt with another example's completion.
MIN_EXAMPLES = 2


class LoraKtoTrainer:
    """`ports.Trainer` over TRL's KTOTrainer and a peft LoRA adapter (all linear layers)."""

    def __init__(self, options: TrainingOptions) -> None:
        self.options = options
        self.base_model = options.base_model

    def train(
        self,
        examples: Sequence[TrainingExample],
        out_dir: Path,
        progress: Callable[[JSONObject], None],
        *,
        desirable_weight: float = 1.0,
        undesirable_weight: float = 1.0,
    ) -> JSONObject:
        """Train on `examples` and save `adapter_config.json` and `adapter_model.safetensors` in
        `out_dir` (made if missing). `progress` gets one record per step: step, loss, kl, margin
        (TRL's rewards/chosen − rewards/rejected), examples_per_s, tokens_per_s, learning_rate.
        Returns the run's metrics (the last step's values, speed, counts, weights, options).

        Blocking, minutes on a CPU. Raises ValueError for fewer than two examples or a weight
        that is not positive, ConfigError when the base model cannot be loaded.
        """
        if len(examples) < MIN_EXAMPLES:
            raise ValueError(f"KTO needs at least {MIN_EXAMPLES} examples, got {len(examples)}")
        if desirable_weight <= 0 or undesirable_weight <= 0:
            raise ValueError("the label weights must be positive")
        from bot.training.trl_kto import run_kto

        with cpu_threads(self.options.threads):
            return run_kto(self.options, examples, out_dir, progress, desirable_weight, undesirable_weight)


@contextmanager
def cpu_threads(threads: int | None) -> Iterator[int]:
    """torch's CPU threads for one training run (None: every core this process may use), then back.

    The local engine keeps torch to half the cores, process-wide, so that the event loop keeps
    one (`limit_torch_threads`). A night's run, in the same process under `kindred run`, is one
    long job at a quiet hour: it takes them all for its duration, and the chat gets them back."""
    import torch

    before = torch.get_num_threads()
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    wanted = max(threads or available or 1, 1)
    torch.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        torch.set_num_threads(before)

"""What a night's training and the gate's scoring are built from: one frozen options object.

The composition root fills it from the settings; the trainer and the scorer never read settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bot.core.errors import ConfigError

# Rows per step that KTO needs at least: its KL term is estimated from the other completions of
# the same batch, so a batch of one or two makes it meaningless.
MIN_BATCH = 4
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True, slots=True)
class TrainingOptions:
    """One LoRA adapter trained by KTO from `base_model`, and how it is scored.

    `base_model` is a model directory (what `prepare_model` returns) or a Hugging Face id that is
    already in the local cache: nothing is downloaded. `device="auto"` takes the GPU when torch
    sees one, else the CPU.
    """

    base_model: str
    lora_rank: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    # peft's shorthand for every linear layer but the output head (TRL refuses an adapter there).
    target_modules: str = "all-linear"
    # Measured on SmolLM2-135M, steps of 8 at length 256 (bench/training.py): at 2e-4 TRL's reward
    # margin was 0.52 after 5 steps and 3.0 after 20 (KL to the base 0.02 per token on the
    # regression set); at DESIGN's ~1e-5 it was 0.02 after 5 steps, too slow for a night's 20–40.
    # In bench/learning_sim.py one day's few liked replies moved the held-out rate from 7.5 % to
    # 12.5 % at 2e-4, and to 26.7 % at 5e-4 with β 0.3 (KL 0.046 per token): the defaults below,
    # which the simulation's +41.7 points over three nights were measured with.
    learning_rate: float = 5e-4
    max_steps: int = 20
    # Passes over the night's examples: the run takes ceil(epochs × examples / batch) steps, at
    # most `max_steps`. None: always `max_steps`. A fixed step count means fewer passes as the
    # window fills: in bench/learning_sim.py, 32 steps were 3 passes over night 1's 83 examples
    # and its candidate met the taste in 26 % of replies, 1.1 passes over night 3's 228 and 9 %.
    epochs: float | None = None
    batch_size: int = 8
    # Tokens of prompt and completion together. A longer prompt loses its beginning (the oldest
    # turns), never the completion; see tokens.py.
    max_length: int = 256
    # KTO's β: higher keeps the adapter closer to the base model. At 5e-4 with β 0.1, a night of
    # 40 steps drifted past the gate's KL (0.23) and regression (0.17) bounds.
    beta: float = 0.3
    device: str = "auto"
    # Train in bfloat16 autocast (the LoRA weights stay float32). None: where the hardware has it,
    # a GPU with bf16 or a CPU with AVX512-BF16 or AMX; on this project's AMD EPYC (AVX512-BF16)
    # SmolLM2's forward ran ~10x faster than in float32.
    bf16: bool | None = None
    seed: int = 0
    # torch's CPU threads while training; None: every core this process may use (see kto.py).
    threads: int | None = None

    def __post_init__(self) -> None:
        if not self.base_model:
            raise ValueError("TrainingOptions.base_model is empty")
        if self.batch_size < MIN_BATCH:
            raise ValueError(f"KTO needs a batch of at least {MIN_BATCH}, not {self.batch_size}")
        if self.lora_rank < 1 or self.lora_alpha < 1:
            raise ValueError("the LoRA rank and alpha must be positive")
        if self.max_steps < 1 or self.learning_rate <= 0 or self.beta <= 0:
            raise ValueError("max_steps, learning_rate and beta must be positive")
        if self.epochs is not None and self.epochs <= 0:
            raise ValueError(f"epochs must be positive, not {self.epochs}")
        if self.max_length < 16:
            raise ValueError(f"max_length {self.max_length} leaves no room for a prompt and a reply")
        if self.device not in DEVICES:
            raise ValueError(f"device must be one of {DEVICES}, not {self.device!r}")


def steps_for(options: TrainingOptions, examples: int) -> int:
    """How many steps a run over `examples` examples takes (see TrainingOptions.epochs)."""
    if options.epochs is None:
        return options.max_steps
    return max(1, min(options.max_steps, math.ceil(options.epochs * examples / options.batch_size)))


def resolve_device(device: str) -> str:
    """ "cuda" or "cpu": what `device` means on this machine ("auto": the GPU when there is one)."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("training device 'cuda' asked for, but torch sees no GPU")
    return device


def use_bf16(choice: bool | None, device: str) -> bool:
    """Whether to train in bfloat16 autocast on `device` ("cuda" or "cpu"); see TrainingOptions.bf16."""
    import torch

    if choice is not None:
        return choice
    if device == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())

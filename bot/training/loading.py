"""Loading the base model for training and scoring: from local files only, never a download."""

from __future__ import annotations

from typing import Any

from bot.core.errors import ConfigError
from bot.training.options import TrainingOptions, resolve_device


def load_base(options: TrainingOptions) -> tuple[Any, Any, str]:
    """(model, tokenizer, device) for `options.base_model`, the model in float32 on its device.

    float32 because LoRA's small updates vanish in bf16 weights; on a GPU the trainer still
    computes in bf16 through autocast. A tokenizer without a pad token pads with its eos token
    (SmolLM2 does, and TRL would set the same). Raises ConfigError when the model cannot be loaded.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = resolve_device(options.device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(options.base_model, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            options.base_model, local_files_only=True, dtype=torch.float32
        )
    except (OSError, ValueError) as exc:
        raise ConfigError(f"training: cannot load the base model {options.base_model!r}: {exc}") from exc
    if not tokenizer.chat_template:
        raise ConfigError(f"training: the tokenizer of {options.base_model!r} has no chat template")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(torch.device(device))  # type: ignore[arg-type]
    return model, tokenizer, device

"""LoRA adapter folders for the tiny model, made with peft, for the tests that ask for an adapter."""

from __future__ import annotations

from pathlib import Path


def make_adapter(tiny_dir: Path, folder: Path, seed: int) -> Path:
    """Save a LoRA adapter for the tiny model whose effect on its replies is strong.

    Its lora_B weights are large seeded values, so that a greedy reply under it visibly differs
    from the base model's."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(tiny_dir), local_files_only=True)
    model = get_peft_model(
        base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"])
    )
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.copy_(torch.randn(param.shape, generator=generator) * 2.0)
    model.save_pretrained(str(folder))
    return folder

"""LoRA adapters as peft saves them, read for `llama.LlamaModel` without peft.

A folder holds `adapter_config.json` and `adapter_model.safetensors`. Each targeted linear layer
gets `lora_A` (r x in) and `lora_B` (out x r); its output becomes `W x + scale * B(A x)`, where
scale is `lora_alpha / r` (or `/ sqrt(r)` with rsLoRA), as peft computes it at inference.
Anything peft would do differently (DoRA, biases, extra trained modules, per-layer ranks, a
`.bin` file, non-Llama names) is refused with a ValueError naming it, which `lora.AdapterSet`
reports for the requests that asked for that adapter.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import torch

from bot.inference.llama.model import PROJECTIONS, LayerLora

LoraWeights = LayerLora
_KEY = re.compile(r"(?:^|\.)layers\.(\d+)\.(?:self_attn|mlp)\.(\w+)\.lora_([AB])\.weight$")
_UNSUPPORTED = ("use_dora", "modules_to_save", "layers_to_transform", "rank_pattern", "alpha_pattern",
                "fan_in_fan_out", "trainable_token_indices")  # fmt: skip


def load_lora(folder: Path, device: torch.device, dtype: torch.dtype) -> LoraWeights:
    """The adapter in `folder`, ready for `LlamaModel.forward`. Raises ValueError or OSError."""
    config = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
    if not isinstance(config, dict) or config.get("peft_type", "LORA") != "LORA" or "r" not in config:
        raise ValueError("adapter_config.json is not a LoRA adapter's config")
    for option in _UNSUPPORTED:
        if config.get(option):
            raise ValueError(f"adapter_config.json sets {option}, which the plain Llama engine lacks")
    if config.get("bias", "none") != "none":
        raise ValueError("adapter_config.json trains biases, which the plain Llama engine does not apply")
    rank = int(config["r"])
    alpha = float(config.get("lora_alpha", rank))
    scale = alpha / math.sqrt(rank) if config.get("use_rslora") else alpha / rank
    weights_path = folder / "adapter_model.safetensors"
    if not weights_path.is_file():
        raise ValueError(f"no adapter_model.safetensors in {folder}")
    from safetensors.torch import load_file

    halves: dict[tuple[int, str], dict[str, torch.Tensor]] = {}
    for name, tensor in load_file(str(weights_path), device=str(device)).items():
        match = _KEY.search(name)
        if match is None or match.group(2) not in PROJECTIONS:
            raise ValueError(f"adapter weight {name!r} is not a LoRA weight of a Llama projection")
        # A copy, not the file's memory map: a trainer may rewrite the file in place later, and
        # reading a mapped page of a truncated file kills the process (SIGBUS).
        layer = halves.setdefault((int(match.group(1)), match.group(2)), {})
        layer[match.group(3)] = tensor.to(dtype, copy=True)
    found: LoraWeights = {}
    for key, pair in halves.items():
        if set(pair) != {"A", "B"}:
            raise ValueError(f"adapter layer {key} has only lora_{''.join(pair)}")
        found[key] = (pair["A"], pair["B"], scale)
    if not found:
        raise ValueError("the adapter holds no LoRA weights")
    return found

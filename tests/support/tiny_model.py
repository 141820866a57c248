"""A tiny random-weight Llama with SmolLM2's tokenizer and chat template: speed, not sense."""

from __future__ import annotations

from pathlib import Path

from bot.inference.model_files import prepare_model

TINY_CONFIG = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 2048,
}


def build_tiny_model(path: Path, data_dir: Path | None = None) -> Path:
    """Save a 2-layer LlamaForCausalLM with random weights and SmolLM2's tokenizer to `path`.

    The tokenizer comes from `prepare_model("bundled", data_dir)`; `data_dir` defaults to
    `path.parent`, so models built side by side in one session share one converted SmolLM2.
    Weights are seeded, so the same torch version builds the same model.
    """
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    bundled = prepare_model("bundled", path.parent if data_dir is None else data_dir)
    tokenizer = AutoTokenizer.from_pretrained(str(bundled), local_files_only=True)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        **TINY_CONFIG,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path

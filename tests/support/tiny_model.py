"""A tiny random-weight Llama with SmolLM2's tokenizer and chat template: speed, not sense."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from bot.inference.model_files import BUNDLED_DIRNAME, prepare_model
from tests.support.run_folder import made_once

TINY_CONFIG = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 2048,
}


_converted: list[Path] = []


def converted_smollm2() -> Path:
    """The bundled SmolLM2, converted once per test run (shared by its xdist workers).

    Converting dequantizes the whole GGUF (~15 s of CPU); done once for every fixture that only
    needs the result. tests/inference/test_local.py still converts on its own: there the
    conversion itself is what is tested. Outside a test run (a script), once per process in a
    temporary folder removed at exit.
    """
    if not _converted:
        # prepare_model finds a finished conversion in its folder and returns it as it is.
        shared = made_once("smollm2", lambda folder: prepare_model("bundled", folder))
        if shared is None:
            root = Path(tempfile.mkdtemp(prefix="kindred-smollm2-"))
            atexit.register(shutil.rmtree, root, ignore_errors=True)
            shared = prepare_model("bundled", root)
        _converted.append(shared)
    return _converted[0]


def share_smollm2(data_dir: Path) -> Path:
    """`prepare_model("bundled", data_dir)`, with the process's one conversion linked into
    `data_dir/models/` so that nothing is converted again (also by a `kindred` subprocess)."""
    target = data_dir / "models" / BUNDLED_DIRNAME
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(converted_smollm2(), target_is_directory=True)
    return prepare_model("bundled", data_dir)


def build_tiny_model(path: Path, data_dir: Path | None = None) -> Path:
    """Save a 2-layer LlamaForCausalLM with random weights and SmolLM2's tokenizer to `path`.

    The tokenizer comes from `share_smollm2(data_dir)`; `data_dir` defaults to `path.parent`.
    Weights are seeded, so the same torch version builds the same model.
    """
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    bundled = share_smollm2(path.parent if data_dir is None else data_dir)
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

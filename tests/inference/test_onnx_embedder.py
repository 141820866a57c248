"""OnnxEmbedder: the bundled MiniLM exported once to ONNX, against sentence-transformers' own vectors,
and how the composition root picks a runtime. What every Embedder promises is in
test_embedder_contract.py."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from bot.core.errors import ConfigError
from bot.inference.embedders.onnx import OnnxEmbedder
from bot.inference.embedders.onnx_export import exported_model
from bot.inference.embedders.sentence import BUNDLED_NAME, SentenceTransformerEmbedder, bundled_model_path
from bot.wiring.backends import load_embedder
from bot.wiring.settings import Settings, load_settings

pytestmark = pytest.mark.model

# Short, long (cut at 256 tokens), non-ASCII, emoji, whitespace, empty, and mixed lengths in one
# batch, so padding and the attention mask are exercised.
VARIED = [
    "I sleep badly",
    "",
    " ",
    "🙂",
    "Ça va ? Je déménage à Lyon en mai.",
    "我很好，谢谢。今天下雨了。",
    "Привет! Как дела у твоей сестры?",
    "tabs\tand\nnewlines\r\nand  double  spaces",
    "The quarterly report is late and my manager keeps asking about it every single morning",
    "coffee " * 5000,
    "word " * 255 + "the end is cut away",
    "a" * 2000,
]
MAX_COSINE_DISTANCE = 1e-4


async def test_vectors_match_sentence_transformers(
    onnx_minilm: OnnxEmbedder, minilm: SentenceTransformerEmbedder
) -> None:
    got = np.stack(await onnx_minilm.embed(VARIED))
    want = np.stack(await minilm.embed(VARIED))
    distances = 1.0 - np.sum(got * want, axis=1)
    assert float(distances.max()) <= MAX_COSINE_DISTANCE, dict(zip(VARIED, distances.tolist(), strict=True))
    for text in VARIED[:4]:  # alone, unpadded, too
        (alone,) = await onnx_minilm.embed([text])
        assert 1.0 - float(alone @ want[VARIED.index(text)]) <= MAX_COSINE_DISTANCE


async def test_it_names_the_same_model_and_reads_as_many_tokens(
    onnx_minilm: OnnxEmbedder, minilm: SentenceTransformerEmbedder
) -> None:
    assert onnx_minilm.model_name == minilm.model_name == BUNDLED_NAME  # stored vectors stay comparable
    assert onnx_minilm.dim == minilm.dim == 384
    assert onnx_minilm.max_seq_length == minilm.max_seq_length == 256


def test_the_export_is_made_once_and_reused(onnx_data_dir: Path, onnx_minilm: OnnxEmbedder) -> None:
    exports = sorted((onnx_data_dir / "models").glob("*-onnx-*"))
    assert len(exports) == 1 and not [p for p in exports if p.name.startswith(".")]
    before = (exports[0] / "model.onnx").stat().st_mtime_ns
    again, info = exported_model(bundled_model_path(), BUNDLED_NAME, onnx_data_dir / "models")
    assert again == exports[0] and info.dim == 384
    assert (again / "model.onnx").stat().st_mtime_ns == before


def test_a_model_it_cannot_export_is_refused_with_a_config_error(tmp_path: Path) -> None:
    cls_pooled = tmp_path / "cls-model"
    (cls_pooled / "1_Pooling").mkdir(parents=True)
    (cls_pooled / "modules.json").write_text(
        '[{"path": "", "type": "sentence_transformers.models.Transformer"},'
        ' {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]'
    )
    (cls_pooled / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    with pytest.raises(ConfigError, match="not mean pooling"):
        OnnxEmbedder.load(str(cls_pooled), data_dir=tmp_path)
    with pytest.raises(ConfigError, match="local model directory"):
        OnnxEmbedder.load("someone/some-model", data_dir=tmp_path)  # a Hub id: nothing is downloaded


@pytest.fixture
def settings_for(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Settings]:
    def load(data_dir: Path, **env: str) -> Settings:
        for name in ("KINDRED_EMBEDDING_MODEL", "KINDRED_EMBEDDING_RUNTIME"):
            monkeypatch.delenv(name, raising=False)
        for name, value in {"KINDRED_DATA_DIR": str(data_dir), **env}.items():
            monkeypatch.setenv(name, value)
        return load_settings(env_file=None)

    return load


def test_an_unknown_runtime_fails_with_one_line(
    settings_for: Callable[..., Settings], tmp_path: Path
) -> None:
    expected = "KINDRED_EMBEDDING_RUNTIME: Input should be 'auto', 'onnx' or 'torch'"
    with pytest.raises(ConfigError, match=expected):
        settings_for(tmp_path, KINDRED_EMBEDDING_RUNTIME="gpu")


async def test_auto_falls_back_to_torch_with_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, settings_for: Callable[..., Settings]
) -> None:
    not_exportable = tmp_path / "model"
    not_exportable.mkdir()  # no modules.json: ONNX refuses, torch is asked and fails on its own terms
    settings = settings_for(tmp_path, KINDRED_EMBEDDING_MODEL=str(not_exportable))
    with caplog.at_level(logging.WARNING, logger="bot.wiring.backends"), pytest.raises(ConfigError):
        load_embedder(settings)
    fallbacks = [r for r in caplog.records if "embedding with torch" in r.getMessage()]
    assert len(fallbacks) == 1 and "modules.json" in fallbacks[0].getMessage()


async def test_onnx_runtime_fails_instead_of_falling_back(
    tmp_path: Path, settings_for: Callable[..., Settings]
) -> None:
    settings = settings_for(
        tmp_path, KINDRED_EMBEDDING_MODEL="someone/some-model", KINDRED_EMBEDDING_RUNTIME="onnx"
    )
    with pytest.raises(ConfigError, match="KINDRED_EMBEDDING_RUNTIME=onnx"):
        load_embedder(settings)


async def test_the_default_runtime_is_onnx_and_torch_can_be_chosen(
    onnx_data_dir: Path, settings_for: Callable[..., Settings]
) -> None:
    chosen = load_embedder(settings_for(onnx_data_dir))  # the session's export is already there
    try:
        assert isinstance(chosen, OnnxEmbedder)
    finally:
        await chosen.close()
    torch = load_embedder(settings_for(onnx_data_dir, KINDRED_EMBEDDING_RUNTIME="torch"))
    try:
        assert isinstance(torch, SentenceTransformerEmbedder)
    finally:
        await torch.close()

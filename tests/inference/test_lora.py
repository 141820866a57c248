"""LoRA adapters by name in the local engine: loaded from their folder, mixed with other adapters in
one batch, and replaced by a new version on the next request while the engine keeps running.

The adapters are made with peft on the tiny model (`lora_files.make_adapter`), strong enough that
each adapter's greedy reply visibly differs from the base model's."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from bot.core.errors import InferenceError
from bot.core.models import ChatMessage
from bot.inference.engine.local import Engine, LocalInference, Sampling
from tests.inference.lora_files import make_adapter
from tests.support.streams import text_of

HELLO = [ChatMessage("user", "hi there")]
TOKENS = 16


@pytest.fixture(scope="module")
def made(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two different adapters, kept as templates that tests copy into their own adapters folder."""
    root = tmp_path_factory.mktemp("lora-templates")
    return {
        "one": make_adapter(tiny_dir, root / "one", seed=1),
        "two": make_adapter(tiny_dir, root / "two", seed=2),
    }


# The plain Llama engine serves the tiny model by default; a few tests hold peft's path to the
# same behaviour, since a model the plain engine cannot run takes that one.
BOTH = pytest.mark.parametrize("kind", ["auto", "transformers"])


def engine(tiny_dir: Path, adapters: Path, kind: Engine = "auto") -> LocalInference:
    return LocalInference.load(
        tiny_dir, timeout_s=30.0, sampling=Sampling(temperature=0.0), adapters_dir=adapters, engine=kind
    )


def publish(template: Path, root: Path, name: str, version: str) -> None:
    """Copy an adapter into place the way a trainer should: weights first, the version file last."""
    target = root / name
    target.mkdir(parents=True, exist_ok=True)
    for item in template.iterdir():
        shutil.copy2(item, target / item.name)
    (target / "version").write_text(version)


@BOTH
async def test_adapters_change_replies_and_mix_in_one_batch(
    tiny_dir: Path, made: dict[str, Path], tmp_path: Path, kind: Engine
) -> None:
    publish(made["one"], tmp_path, "one", "1")
    publish(made["two"], tmp_path, "two", "1")
    model = engine(tiny_dir, tmp_path, kind)
    base = await text_of(model.stream(HELLO, max_tokens=TOKENS))
    one = await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="one"))
    two = await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="two"))
    assert len({base, one, two}) == 3, "each adapter must visibly change the greedy reply"

    names = [None, "one", "two", None, "two", "one"]
    mixed = await asyncio.gather(*(text_of(model.stream(HELLO, max_tokens=TOKENS, adapter=n)) for n in names))
    expected = {None: base, "one": one, "two": two}
    assert mixed == [expected[n] for n in names]


@BOTH
async def test_a_new_version_is_used_on_the_next_request_without_restart(
    tiny_dir: Path, made: dict[str, Path], tmp_path: Path, kind: Engine
) -> None:
    reference = engine(tiny_dir, tmp_path / "reference", kind)
    publish(made["two"], tmp_path / "reference", "nightly", "ref")
    second_version = await text_of(reference.stream(HELLO, max_tokens=TOKENS, adapter="nightly"))

    live = tmp_path / "live"
    publish(made["one"], live, "nightly", "2024-06-01")
    model = engine(tiny_dir, live, kind)
    first_version = await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="nightly"))
    assert first_version != second_version

    # A long base-model reply is running while the new version lands.
    running = model.stream(HELLO, max_tokens=1500)
    assert isinstance(await anext(running), str)
    publish(made["two"], live, "nightly", "2024-06-02")
    after = asyncio.create_task(text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="nightly")))
    await running.aclose()  # its batch ends; the waiting request runs next, with the new weights
    assert await after == second_version
    assert await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="nightly")) == second_version


async def test_weights_replaced_without_a_version_file_are_noticed(
    tiny_dir: Path, made: dict[str, Path], tmp_path: Path
) -> None:
    shutil.copytree(made["one"], tmp_path / "plain")
    model = engine(tiny_dir, tmp_path)
    first = await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="plain"))
    weights = tmp_path / "plain" / "adapter_model.safetensors"
    shutil.copy2(made["two"] / "adapter_model.safetensors", weights)
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 1_000_000))
    assert await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="plain")) != first


async def test_a_broken_new_version_keeps_the_loaded_one(
    tiny_dir: Path, made: dict[str, Path], tmp_path: Path
) -> None:
    publish(made["one"], tmp_path, "one", "1")
    model = engine(tiny_dir, tmp_path)
    good = await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="one"))
    (tmp_path / "one" / "adapter_model.safetensors").write_bytes(b"not safetensors")
    (tmp_path / "one" / "version").write_text("2")
    assert await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="one")) == good


@pytest.mark.parametrize(
    ("name", "message"),
    [("missing", "unknown LoRA adapter 'missing'"), ("../escape", "not a plain folder name")],
)
async def test_unknown_or_unsafe_adapter_names_are_clear_errors(
    tiny_dir: Path, tmp_path: Path, name: str, message: str
) -> None:
    model = engine(tiny_dir, tmp_path)
    with pytest.raises(InferenceError, match=message):
        await text_of(model.stream(HELLO, max_tokens=4, adapter=name))
    assert await text_of(model.stream(HELLO, max_tokens=4))  # the engine goes on


async def test_a_broken_first_version_fails_only_its_own_request(tiny_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "adapter_config.json").write_text("{}")
    (broken / "adapter_model.safetensors").write_bytes(b"junk")
    model = engine(tiny_dir, tmp_path)
    results = await asyncio.gather(
        text_of(model.stream(HELLO, max_tokens=4, adapter="broken")),
        text_of(model.stream(HELLO, max_tokens=4)),
        return_exceptions=True,
    )
    assert isinstance(results[0], InferenceError)
    assert "broken" in str(results[0])
    assert isinstance(results[1], str) and results[1]


@BOTH
async def test_a_new_name_every_night_keeps_only_a_few_loaded(
    tiny_dir: Path, made: dict[str, Path], tmp_path: Path, kind: Engine
) -> None:
    """Nightly versions are v1, v2, …: old ones are unloaded between batches, and one asked for
    again is loaded again, with the same replies."""
    for night in range(1, 6):
        publish(made["one" if night % 2 else "two"], tmp_path, f"v{night}", "1")
    model = engine(tiny_dir, tmp_path, kind)
    first = {n: await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter=f"v{n}")) for n in (1, 2)}
    for night in range(3, 6):
        await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter=f"v{night}"))
    assert model.loaded_adapters == ["v3", "v4", "v5"]
    assert await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="v1")) == first[1]
    assert await text_of(model.stream(HELLO, max_tokens=TOKENS, adapter="v2")) == first[2]
    assert model.loaded_adapters == ["v5", "v1", "v2"]
    assert await text_of(model.stream(HELLO, max_tokens=TOKENS)) != first[1]  # the base, unharmed

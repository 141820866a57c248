"""LocalInference and prepare_model: a tiny random model for speed, real SmolLM2 for sense.

What every backend promises (max_tokens, timeouts, adapters, token counts) is in test_contract.py;
this file keeps what is the local engine's own."""

from __future__ import annotations

import os

# Set before transformers is imported anywhere: any attempt to download fails instead.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import asyncio
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.core.errors import ConfigError, InferenceError, InferenceTimeout
from bot.core.models import ChatMessage, StreamEnd
from bot.inference.engine.local import THREAD_NAME, Engine, LocalInference, Sampling
from bot.inference.model_files import BUNDLED_DIRNAME, prepare_model
from tests.support.loop_watch import heartbeat_during
from tests.support.streams import collect
from tests.support.waiting import wait_until

pytestmark = pytest.mark.model

HELLO = [ChatMessage("user", "hi there")]
LONG_REPLY = 1500  # more tokens than the tiny model writes before any test gives up on it


@dataclass(frozen=True)
class Prepared:
    path: Path
    data_dir: Path
    seconds: float


@pytest.fixture(scope="session")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    data_dir = tmp_path_factory.mktemp("data")
    started = time.perf_counter()
    path = prepare_model("bundled", data_dir)
    return Prepared(path, data_dir, time.perf_counter() - started)


@pytest.fixture(scope="session")
def tiny(tiny_dir: Path) -> LocalInference:
    return LocalInference.load(tiny_dir, timeout_s=30.0)


def generation_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME and t.is_alive()]


# --- prepare_model -----------------------------------------------------------------------------


def test_bundled_model_is_converted_once_and_then_reused(bundled: Prepared) -> None:
    weights = bundled.path / "model.safetensors"
    assert bundled.path == bundled.data_dir / "models" / BUNDLED_DIRNAME
    first_mtime = weights.stat().st_mtime_ns

    started = time.perf_counter()
    again = prepare_model("bundled", bundled.data_dir)
    second = time.perf_counter() - started

    assert again == bundled.path
    assert weights.stat().st_mtime_ns == first_mtime
    assert second < 0.5 < bundled.seconds
    leftovers = [p.name for p in (bundled.data_dir / "models").iterdir() if p != bundled.path]
    assert leftovers == []


def test_bundled_copy_keeps_smollm2_chat_template_and_tied_embeddings(bundled: Prepared) -> None:
    from transformers import AutoConfig, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(bundled.path), local_files_only=True)
    config = AutoConfig.from_pretrained(str(bundled.path), local_files_only=True)
    assert "<|im_start|>" in tokenizer.chat_template
    assert tokenizer.eos_token == "<|im_end|>"
    assert config.tie_word_embeddings is True
    assert getattr(config, "quantization_config", None) is None


def test_other_models_pass_through(tmp_path: Path) -> None:
    assert prepare_model(str(tmp_path), tmp_path) == tmp_path
    assert str(prepare_model("HuggingFaceTB/SmolLM2-360M-Instruct", tmp_path)) == (
        "HuggingFaceTB/SmolLM2-360M-Instruct"
    )


def test_missing_local_path_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KINDRED_MODEL"):
        prepare_model(str(tmp_path / "no" / "such" / "model"), tmp_path)


def test_loading_a_hub_id_offline_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="KINDRED_MODEL"):
        LocalInference.load("kindred-test/no-such-model")


# --- streaming ---------------------------------------------------------------------------------


def test_chat_template_is_applied(tiny: LocalInference) -> None:
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "hi there")]
    prompt = tiny.render_prompt(messages)
    assert prompt.startswith("<|im_start|>system\nBe brief.<|im_end|>")
    assert "<|im_start|>user\nhi there<|im_end|>" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


async def test_stream_yields_text_chunks(tiny: LocalInference) -> None:
    chunks = await collect(tiny.stream(HELLO, max_tokens=40))
    assert len(chunks) > 1
    assert all(isinstance(chunk, str) and chunk for chunk in chunks)


async def test_timeout_raises_quickly(tiny_dir: Path) -> None:
    impatient = LocalInference.load(tiny_dir, timeout_s=0.05)
    started = time.monotonic()
    with pytest.raises(InferenceTimeout, match=r"0\.05 s"):
        await collect(impatient.stream(HELLO, max_tokens=LONG_REPLY))
    assert time.monotonic() - started < 1.0
    await wait_until(lambda: not generation_threads(), within_s=2.0, what="generation stopped")


async def test_event_loop_keeps_running_during_generation(tiny: LocalInference) -> None:
    _, beat = await heartbeat_during(collect(tiny.stream(HELLO, max_tokens=300)))
    beat.assert_never_blocked()


async def test_closing_the_stream_stops_the_model(tiny: LocalInference) -> None:
    stream = tiny.stream(HELLO, max_tokens=LONG_REPLY)
    assert isinstance(await anext(stream), str)
    assert generation_threads()
    await stream.aclose()
    await wait_until(lambda: not generation_threads(), within_s=1.0, what="generation stopped")


async def test_breaking_out_of_the_loop_stops_the_model(tiny: LocalInference) -> None:
    async for chunk in tiny.stream(HELLO, max_tokens=LONG_REPLY):
        assert isinstance(chunk, str)
        break
    # The dropped generator is closed by asyncio's finaliser hook, which sets the cancel flag.
    await wait_until(lambda: not generation_threads(), within_s=1.0, what="generation stopped")


async def test_cancelling_the_consumer_stops_the_model(tiny: LocalInference) -> None:
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in tiny.stream(HELLO, max_tokens=LONG_REPLY):
            first.set()
            # A slow consumer: the task is surely still inside the stream when it is cancelled,
            # even if the tiny model happens to end its reply early.
            await asyncio.sleep(3600)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: not generation_threads(), within_s=1.0, what="generation stopped")


async def test_concurrent_streams_take_turns(tiny: LocalInference) -> None:
    replies = await asyncio.gather(
        collect(tiny.stream(HELLO, max_tokens=20)),
        collect(tiny.stream([ChatMessage("user", "and you?")], max_tokens=20)),
    )
    assert all(reply for reply in replies)


async def test_adapters_are_refused(tiny: LocalInference) -> None:
    with pytest.raises(InferenceError, match="LoRA adapters"):
        await collect(tiny.stream(HELLO, max_tokens=5, adapter="nightly-1"))


async def test_prompt_longer_than_the_model_is_an_inference_error(tiny: LocalInference) -> None:
    too_long = [ChatMessage("user", "word " * 3000)]
    with pytest.raises(InferenceError, match="reads at most 2048"):
        await collect(tiny.stream(too_long, max_tokens=5))


# --- the real model ----------------------------------------------------------------------------


@pytest.mark.model
async def test_smollm2_answers_a_question(bundled: Prepared) -> None:
    started = time.perf_counter()
    model = LocalInference.load(bundled.path, sampling=Sampling(temperature=0.0))
    assert time.perf_counter() - started < 10.0
    question = [ChatMessage("user", "What is the capital of France?")]
    text = "".join(await collect(model.stream(question, max_tokens=12)))
    assert text.strip()
    assert model.count_tokens(text) <= 12
    assert "Paris" in text


# Greedy SmolLM2 writes "\n" "\n" where its tokenizer would merge "\n\n": these replies, cut at
# their budget, re-tokenize to one token fewer than the model wrote.
CUT_UNDER_A_RECOUNT = [
    ("Write a JSON object describing a cat.", 7),
    ("Write a Python function that adds two numbers.", 21),
]
ENDS_BY_ITSELF = ("hey", 16)  # "Hello there! How can I assist you today?", 10 tokens


@pytest.mark.model
@pytest.mark.parametrize("engine", ["llama", "transformers"])
async def test_smollm2_says_whether_the_budget_or_the_model_ended_a_reply(
    smollm2_dir: Path, engine: Engine
) -> None:
    model = LocalInference.load(smollm2_dir, sampling=Sampling(temperature=0.0), engine=engine)

    async def reply(prompt: str, budget: int) -> tuple[str, StreamEnd]:
        ending = StreamEnd()
        chunks = model.stream([ChatMessage("user", prompt)], max_tokens=budget, ending=ending)
        return "".join(await collect(chunks)), ending

    try:
        found = await asyncio.gather(*(reply(p, n) for p, n in [*CUT_UNDER_A_RECOUNT, ENDS_BY_ITSELF]))
    finally:
        await model.close()
    *cut, (ended, ended_by) = found
    for (text, ending), (_, budget) in zip(cut, CUT_UNDER_A_RECOUNT, strict=True):
        assert ending.reason == "length", text
        assert model.count_tokens(text) < budget, "a recount would call it ended"
    assert ended_by.reason == "stop" and model.count_tokens(ended) < ENDS_BY_ITSELF[1], ended

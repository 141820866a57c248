"""The OpenAI-compatible backend against a streaming server on loopback (tests/inference/openai_server.py):
streamed chunks, adapters as model names, LoRA registration per version, and every failure mapped
to a clear InferenceError or InferenceTimeout, after which the backend keeps working."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.models import ChatMessage, StreamEnd
from bot.inference.openai_compat import OpenAICompatInference, api_root, estimate_tokens
from tests.inference.openai_server import FakeOpenAI
from tests.support.streams import collect, text_of

HELLO = [ChatMessage("system", "Be kind."), ChatMessage("user", "hi there")]
KEY = "sk-test-3f9c1d2e-never-print-me"
WHOLE = "Hello there, friend!"


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    fake = await FakeOpenAI().start()
    yield fake
    await fake.close()


@pytest.fixture
async def backend(server: FakeOpenAI, tmp_path: Path) -> AsyncIterator[OpenAICompatInference]:
    client = OpenAICompatInference(
        server.base_url + "/v1/",
        model="smollm2",
        api_key=KEY,
        timeout_s=2.0,
        adapters_dir=tmp_path,
        load_lora=True,
        lora_root="/srv/adapters",
    )
    yield client
    await client.close()


async def works(backend: OpenAICompatInference) -> None:
    assert await text_of(backend.stream(HELLO, max_tokens=50)) == WHOLE


def publish(root: Path, name: str, version: str) -> None:
    folder = root / name
    folder.mkdir(exist_ok=True)
    (folder / "adapter_config.json").write_text("{}")
    (folder / "adapter_model.safetensors").write_bytes(b"weights")
    (folder / "version").write_text(version)


async def test_chunks_arrive_as_they_are_streamed(server: FakeOpenAI, backend: OpenAICompatInference) -> None:
    server.chunk_delay_s = 0.15
    arrivals: list[float] = []
    started = time.monotonic()
    chunks = []
    async for chunk in backend.stream(HELLO, max_tokens=50):
        arrivals.append(time.monotonic() - started)
        chunks.append(chunk)
    assert chunks == server.chunks
    assert arrivals[0] < 0.5 < arrivals[-1]  # the first chunk came long before the last one was sent
    body = server.requests[-1]
    assert body["stream"] is True and body["model"] == "smollm2" and body["max_tokens"] == 50
    assert body["messages"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "hi there"},
    ]
    assert server.headers[-1]["Authorization"] == f"Bearer {KEY}"


async def test_max_tokens_reaches_the_server(server: FakeOpenAI, backend: OpenAICompatInference) -> None:
    assert await collect(backend.stream(HELLO, max_tokens=2)) == ["Hel", "lo"]


async def test_the_servers_finish_reason_says_how_the_reply_ended(
    server: FakeOpenAI, backend: OpenAICompatInference
) -> None:
    cut, ended = StreamEnd(), StreamEnd()
    assert await collect(backend.stream(HELLO, max_tokens=2, ending=cut)) == ["Hel", "lo"]
    assert await text_of(backend.stream(HELLO, max_tokens=50, ending=ended)) == WHOLE
    assert (cut.reason, ended.reason) == ("length", "stop")
    left = StreamEnd()
    async with contextlib.aclosing(backend.stream(HELLO, max_tokens=50, ending=left)) as chunks:
        await anext(chunks)
    assert left.reason is None, "a stream closed before its end says nothing"


async def test_adapter_name_is_sent_as_the_model_without_registration(server: FakeOpenAI) -> None:
    server.served.add("nightly")
    client = OpenAICompatInference(server.base_url, model="smollm2")
    try:
        assert await text_of(client.stream(HELLO, max_tokens=50, adapter="nightly")) == WHOLE
    finally:
        await client.close()
    assert server.requests[-1]["model"] == "nightly"
    assert server.lora_loads == []


async def test_lora_adapter_is_registered_once_per_version(
    server: FakeOpenAI, backend: OpenAICompatInference, tmp_path: Path
) -> None:
    publish(tmp_path, "nightly", "1")
    await asyncio.gather(
        *(text_of(backend.stream(HELLO, max_tokens=50, adapter="nightly")) for _ in range(5))
    )
    assert server.lora_loads == [{"lora_name": "nightly", "lora_path": "/srv/adapters/nightly"}]
    assert {body["model"] for body in server.requests} == {"nightly"}

    publish(tmp_path, "nightly", "2")
    await text_of(backend.stream(HELLO, max_tokens=50, adapter="nightly"))
    await text_of(backend.stream(HELLO, max_tokens=50, adapter="nightly"))
    assert server.lora_loads[1:] == [
        {"lora_name": "nightly", "lora_path": "/srv/adapters/nightly", "load_inplace": True}
    ]


async def test_each_nightly_version_is_loaded_into_the_server_by_its_own_name(
    server: FakeOpenAI, backend: OpenAICompatInference, tmp_path: Path
) -> None:
    """Nightly training publishes v1, v2, …: a promoted version is loaded (/v1/load_lora_adapter)
    before the first reply that asks for it, and replies then name it as their model."""
    publish(tmp_path, "v1", "1")
    await text_of(backend.stream(HELLO, max_tokens=50, adapter="v1"))
    publish(tmp_path, "v2", "1")
    await text_of(backend.stream(HELLO, max_tokens=50, adapter="v2"))
    await text_of(backend.stream(HELLO, max_tokens=50, adapter="v2"))
    assert server.lora_loads == [
        {"lora_name": "v1", "lora_path": "/srv/adapters/v1"},
        {"lora_name": "v2", "lora_path": "/srv/adapters/v2"},
    ]
    assert [body["model"] for body in server.requests] == ["v1", "v2", "v2"]


async def test_unknown_adapter_is_a_clear_error(server: FakeOpenAI, backend: OpenAICompatInference) -> None:
    with pytest.raises(InferenceError, match="unknown LoRA adapter 'ghost'"):
        await collect(backend.stream(HELLO, max_tokens=5, adapter="ghost"))
    assert server.requests == []
    plain = OpenAICompatInference(server.base_url, model="smollm2")
    try:
        with pytest.raises(InferenceError, match=r"does not serve model 'ghost' \(HTTP 404\)"):
            await collect(plain.stream(HELLO, max_tokens=5, adapter="ghost"))
    finally:
        await plain.close()


@pytest.mark.parametrize(
    ("failure", "error", "message"),
    [
        ("500", InferenceError, r"failed on model 'smollm2' \(HTTP 500\): CUDA out of memory"),
        ("429", InferenceError, r"is busy \(HTTP 429, retry after 3 s\): too many requests"),
        ("drop", InferenceError, "dropped the connection mid-reply"),
        ("malformed", InferenceError, "malformed stream line: 'data: {this is not json'"),
        ("error_event", InferenceError, "failed mid-reply: engine died"),
        ("no_done", InferenceError, "ended the stream before the reply was finished"),
        ("stall", InferenceTimeout, r"did not finish its reply within 2 s"),
        ("stall_first", InferenceTimeout, r"did not finish its reply within 2 s"),
    ],
)
async def test_failures_are_clear_errors_and_the_backend_recovers(
    server: FakeOpenAI,
    backend: OpenAICompatInference,
    failure: str,
    error: type[Exception],
    message: str,
) -> None:
    server.fail_next(failure)  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises(error, match=message) as raised:
        await collect(backend.stream(HELLO, max_tokens=50))
    assert time.monotonic() - started < 3.0
    assert KEY not in str(raised.value)
    assert server.base_url in str(raised.value)
    await works(backend)


async def test_unreachable_server_is_a_clear_error() -> None:
    client = OpenAICompatInference("http://127.0.0.1:9", model="m", timeout_s=2.0)
    try:
        with pytest.raises(
            InferenceError, match=r"cannot reach the OpenAI-compatible server at http://127\.0\.0\.1:9"
        ):
            await collect(client.stream(HELLO, max_tokens=5))
    finally:
        await client.close()


async def test_a_consumer_that_leaves_closes_the_request(
    server: FakeOpenAI, backend: OpenAICompatInference
) -> None:
    server.chunk_delay_s = 0.2
    stream = backend.stream(HELLO, max_tokens=50)
    assert await anext(stream) == "Hel"
    await stream.aclose()
    await asyncio.sleep(0.6)
    assert server.disconnects == 1
    server.chunk_delay_s = 0.0
    await works(backend)


async def test_the_api_key_is_never_logged(
    server: FakeOpenAI, backend: OpenAICompatInference, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    publish(tmp_path, "nightly", "1")
    await text_of(backend.stream(HELLO, max_tokens=50, adapter="nightly"))
    server.fail_next("500")
    with pytest.raises(InferenceError):
        await collect(backend.stream(HELLO, max_tokens=50))
    assert caplog.records  # httpx and httpcore did log at DEBUG
    assert all(KEY not in record.getMessage() for record in caplog.records)


def test_token_counting_without_a_tokenizer_over_counts() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world") == 4  # 11 chars / 3, rounded up; the real tokenizer says 2
    assert api_root("http://h:8000/v1/") == api_root("http://h:8000") == "http://h:8000"


def test_token_counting_with_a_local_tokenizer(smollm2_dir: Path) -> None:
    from bot.inference.openai_compat import local_token_counter

    client = OpenAICompatInference(
        "http://127.0.0.1:9", model="m", count_tokens=local_token_counter(smollm2_dir)
    )
    assert client.count_tokens("hello world") == 2

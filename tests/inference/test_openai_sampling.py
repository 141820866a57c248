"""Best-of-n on the OpenAI-compatible backend, against the loopback server (openai_server.py): one
request for n choices where the server honours `n`; where it does not (Ollama), the rest asked for
at once, one choice each, with seeds seed + i; the seed sent with streams too; errors as a stream's."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.models import ChatMessage, Sampled
from bot.inference.openai_compat import OpenAICompatInference
from tests.inference.openai_server import FakeOpenAI
from tests.inference.test_openai_compat import KEY, WHOLE, publish
from tests.support.streams import text_of

HELLO = [ChatMessage("user", "hi there")]


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    fake = await FakeOpenAI().start()
    yield fake
    await fake.close()


@pytest.fixture
async def backend(server: FakeOpenAI, tmp_path: Path) -> AsyncIterator[OpenAICompatInference]:
    client = OpenAICompatInference(
        server.base_url, model="smollm2", api_key=KEY, timeout_s=2.0, adapters_dir=tmp_path, load_lora=True
    )
    yield client
    await client.close()


async def test_a_server_that_honours_n_is_asked_once(
    server: FakeOpenAI, backend: OpenAICompatInference
) -> None:
    found = await backend.sample(HELLO, n=4, max_tokens=50, seed=3)
    assert found == [Sampled(f"{WHOLE} #{k}", False) for k in (1, 2, 3, 4)]  # in the choices' index order
    assert len(server.requests) == 1
    body = server.requests[0]
    assert body["n"] == 4 and body["seed"] == 3 and body["stream"] is False
    assert body["model"] == "smollm2" and body["max_tokens"] == 50
    assert body["messages"] == [{"role": "user", "content": "hi there"}]
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"


async def test_a_server_that_ignores_n_is_asked_for_the_rest_at_once(
    server: FakeOpenAI, backend: OpenAICompatInference
) -> None:
    server.honour_n = False
    server.chunk_delay_s = 0.05  # each answer takes 0.3 s: the rest overlap, or take 0.9 s more
    started = time.monotonic()
    found = await backend.sample(HELLO, n=4, max_tokens=50, seed=10)
    assert len(found) == 4 and len({c.text for c in found}) == 4
    assert len(server.requests) == 4 and server.most_at_once == 3
    assert time.monotonic() - started < 0.3 * 4
    first, *rest = server.requests
    assert first["n"] == 4 and first["seed"] == 10
    assert sorted(body["seed"] for body in rest) == [11, 12, 13]
    assert all("n" not in body and body["stream"] is False for body in rest)


async def test_without_a_seed_none_is_sent_and_one_candidate_asks_for_no_n(
    server: FakeOpenAI, backend: OpenAICompatInference
) -> None:
    server.honour_n = False
    assert len(await backend.sample(HELLO, n=2, max_tokens=50)) == 2
    assert [await backend.sample(HELLO, n=1, max_tokens=50)] == [[Sampled(f"{WHOLE} #3", False)]]
    assert all("seed" not in body for body in server.requests)
    assert "n" not in server.requests[-1]


async def test_the_seed_goes_with_a_stream_too(server: FakeOpenAI, backend: OpenAICompatInference) -> None:
    assert await text_of(backend.stream(HELLO, max_tokens=50, seed=5)) == WHOLE
    assert await text_of(backend.stream(HELLO, max_tokens=50)) == WHOLE
    assert server.requests[0]["seed"] == 5 and "seed" not in server.requests[1]


async def test_a_candidate_the_budget_stopped_is_cut(
    server: FakeOpenAI, backend: OpenAICompatInference
) -> None:
    assert await backend.sample(HELLO, n=2, max_tokens=2) == [
        Sampled("Hello #1", True),
        Sampled("Hello #2", True),
    ]


async def test_candidates_of_an_adapter_name_it_as_the_model(
    server: FakeOpenAI, backend: OpenAICompatInference, tmp_path: Path
) -> None:
    server.honour_n = False
    publish(tmp_path, "nightly", "1")
    assert len(await backend.sample(HELLO, n=3, max_tokens=50, adapter="nightly")) == 3
    assert server.lora_loads == [{"lora_name": "nightly", "lora_path": f"{tmp_path}/nightly"}]
    assert [body["model"] for body in server.requests] == ["nightly"] * 3
    with pytest.raises(InferenceError, match="unknown LoRA adapter 'ghost'"):
        await backend.sample(HELLO, n=3, max_tokens=50, adapter="ghost")
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("failure", "error", "message"),
    [
        ("500", InferenceError, r"failed on model 'smollm2' \(HTTP 500\): CUDA out of memory"),
        ("429", InferenceError, r"is busy \(HTTP 429, retry after 3 s\): too many requests"),
        ("drop", InferenceError, "dropped the connection"),
        ("malformed", InferenceError, "sent a malformed completion: '<html>Bad Gateway</html>'"),
        ("error_event", InferenceError, "failed: engine died"),
        ("no_choices", InferenceError, "sent a completion with no choices"),
        ("stall", InferenceTimeout, r"did not finish its reply within 2 s"),
    ],
)
@pytest.mark.parametrize("honour_n", [True, False], ids=["honours-n", "ignores-n"])
async def test_failures_are_clear_errors_and_the_backend_recovers(
    server: FakeOpenAI,
    backend: OpenAICompatInference,
    failure: str,
    error: type[Exception],
    message: str,
    honour_n: bool,
) -> None:
    server.honour_n = honour_n
    server.fail_next(failure)  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises(error, match=message) as raised:
        await backend.sample(HELLO, n=3, max_tokens=50)
    assert time.monotonic() - started < 3.0
    assert KEY not in str(raised.value) and server.base_url in str(raised.value)
    assert len(server.requests) == 1, "nothing more is asked once the first answer failed"
    assert len(await backend.sample(HELLO, n=3, max_tokens=50)) == 3


async def test_one_failed_extra_request_fails_the_sample(
    server: FakeOpenAI, backend: OpenAICompatInference
) -> None:
    server.honour_n = False
    server.fail_seed = 22
    with pytest.raises(InferenceError, match=r"HTTP 500\): this seed crashes"):
        await backend.sample(HELLO, n=4, max_tokens=50, seed=20)
    assert len(await backend.sample(HELLO, n=4, max_tokens=50, seed=30)) == 4


async def test_bad_requests_are_refused_before_anything_is_sent(
    server: FakeOpenAI, backend: OpenAICompatInference
) -> None:
    with pytest.raises(ValueError, match="n must be at least 1"):
        await backend.sample(HELLO, n=0, max_tokens=5)
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        await backend.sample(HELLO, n=2, max_tokens=0)
    assert server.requests == []

"""Every Inference backend as the contract suite (test_contract.py) sees it: the backend itself, one
with a short time limit, and a way to tell that it has stopped generating.

- local: LocalInference on the tiny model in this process, greedy, with a LoRA adapters folder;
- celery: RemoteInference, the reply written by a real GPU-queue worker process (CPU torch, the
  same tiny model and adapters folder, greedy: KINDRED_TEMPERATURE=0) through a real Redis;
- openai: OpenAICompatInference against the loopback server (openai_server.py), counting tokens
  with the tiny model's tokenizer and registering LoRA adapters (`load_lora`).
All three count tokens with the same tokenizer, so the suite can hold them to one count.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.core.chat.ports import Inference
from bot.inference.engine.local import THREAD_NAME, LocalInference, Sampling
from bot.inference.openai_compat import OpenAICompatInference, local_token_counter
from bot.wiring.backends import load_inference
from tests.inference.openai_server import FakeOpenAI
from tests.jobs.workerproc import Worker
from tests.workers.remote_support import chat_settings, reply_streams

# The loopback server's reply: one chunk per token of the tiny model's tokenizer, and long enough
# (1,801 chunks, 0.01 s apart) that a test walks away from it, or runs out of time, mid-way.
SERVER_REPLY = ["Once"] + [" upon", " a", " time", " there", " was", " a", " cat", " and", " a", " dog"] * 180
ADAPTER_REPLY = ["Ahoy"] + [" matey", ","] * 900
SERVER_CHUNK_DELAY_S = 0.01


@dataclass
class Backend:
    """One backend under contract. `impatient` builds another instance of it whose time limit is
    `timeout_s`; `stopped` says whether it has stopped generating every reply asked for so far."""

    name: str
    inference: Inference
    impatient: Callable[[], Inference]
    timeout_s: float
    # How long past its limit a backend may take to raise: the celery reader's limit runs from a
    # worker taking the request, and submitting it and the worker's pickup come first.
    overhead_s: float
    stopped: Callable[[], bool]


async def close(inference: Inference) -> None:
    closing = getattr(inference, "close", None)
    if closing is not None:
        await closing()


def generation_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME and t.is_alive()]


def local_engine(tiny_dir: Path, adapters: Path, timeout_s: float = 30.0) -> LocalInference:
    return LocalInference.load(
        tiny_dir, timeout_s=timeout_s, sampling=Sampling(temperature=0.0), adapters_dir=adapters
    )


def local_backend(engine: LocalInference, tiny_dir: Path, adapters: Path) -> Backend:
    return Backend(
        name="local",
        inference=engine,
        impatient=lambda: local_engine(tiny_dir, adapters, timeout_s=0.05),
        timeout_s=0.05,
        overhead_s=0.95,
        stopped=lambda: not generation_threads(),
    )


def celery_backend(url: str, worker: Worker, tiny_dir: Path, folder: Path) -> Backend:
    settings = chat_settings(url, folder, tiny_dir)
    impatient_inference = settings.inference.model_copy(update={"generation_timeout_s": 1.0})
    before = set(reply_streams(url))

    def stopped() -> bool:
        """Every reply asked for since the backend was made was cancelled on the worker."""
        asked = [key.removeprefix("kindred:reply:") for key in set(reply_streams(url)) - before]
        log = worker.log()
        return bool(asked) and all(f"reply {request_id}: cancelled" in log for request_id in asked)

    return Backend(
        name="celery",
        inference=load_inference(settings),
        impatient=lambda: load_inference(settings.model_copy(update={"inference": impatient_inference})),
        timeout_s=1.0,
        overhead_s=5.0,
        stopped=stopped,
    )


def fake_openai() -> FakeOpenAI:
    return FakeOpenAI(
        chunks=list(SERVER_REPLY),
        chunks_by_model={"one": list(ADAPTER_REPLY)},
        chunk_delay_s=SERVER_CHUNK_DELAY_S,
        label_choices=False,  # each choice is the reply within its budget, as the contract needs
    )


def openai_backend(server: FakeOpenAI, tiny_dir: Path, adapters: Path) -> Backend:
    count = local_token_counter(tiny_dir)

    def client(timeout_s: float) -> OpenAICompatInference:
        return OpenAICompatInference(
            server.base_url,
            model=server.base_model,
            timeout_s=timeout_s,
            count_tokens=count,
            adapters_dir=adapters,
            load_lora=True,
        )

    return Backend(
        name="openai",
        inference=client(30.0),
        impatient=lambda: client(0.5),
        timeout_s=0.5,
        overhead_s=1.0,
        stopped=lambda: server.disconnects >= 1,
    )

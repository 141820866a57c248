"""Best-of-n and seeds on the local engine (tiny model): `sample`'s n candidates are rows of one
batch that read their shared prompt once, each as its own sampled reply; a seed fixes them, and
fixes `stream` too, whatever else shares the batch, on both engines."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import torch

from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.models import ChatMessage, Sampled, StreamEnd
from bot.inference.engine.batching import Request, row_seed
from bot.inference.engine.local import LocalInference, Sampling
from bot.inference.engine.sampling import Draws, draw
from tests.inference.backends import generation_threads
from tests.inference.lora_files import make_adapter
from tests.support.streams import text_of
from tests.support.waiting import wait_until

HELLO = [ChatMessage("user", "hi there")]
OTHER = [ChatMessage("system", "Be brief."), ChatMessage("user", "What is the capital of France, please?")]
SAMPLED = Sampling(temperature=0.9, top_p=0.95)


@pytest.fixture(scope="module")
def adapters(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sampling-adapters")
    make_adapter(tiny_dir, root / "one", seed=1)
    return root


def observed(engine: LocalInference) -> tuple[list[int], list[int]]:
    """The size of every batch the engine runs, and the rows of every model forward pass: the
    engine's own calls, recorded on their way through, not changed."""
    sizes: list[int] = []
    rows: list[int] = []
    run_batch, forward = engine._batcher._run_batch, engine._model.forward

    def counted(requests: list[Request]) -> None:
        sizes.append(len(requests))
        run_batch(requests)

    def reading(ids: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        rows.append(int(ids.shape[0]))
        return forward(ids, *args, **kwargs)  # type: ignore[no-any-return]

    engine._batcher._run_batch = counted  # type: ignore[method-assign]
    engine._model.forward = reading
    return sizes, rows


def load(tiny_dir: Path, adapters: Path | None = None, **options: Any) -> LocalInference:
    return LocalInference.load(tiny_dir, sampling=SAMPLED, timeout_s=30.0, adapters_dir=adapters, **options)


async def test_n_candidates_are_rows_of_one_batch_that_read_the_prompt_once(tiny_dir: Path) -> None:
    engine = load(tiny_dir)
    sizes, rows = observed(engine)
    found = await engine.sample(HELLO, n=4, max_tokens=12, seed=3)
    assert len(found) == 4 and all(isinstance(c, Sampled) and c.text for c in found)
    assert sizes == [4]
    assert rows[0] == 1 and set(rows[1:]) <= {1, 2, 3, 4} and 4 in rows  # prefill once, then 4 rows
    assert len({c.text for c in found}) == 4, "each candidate is sampled on its own"


async def test_shared_prefill_writes_what_each_row_writes_alone(tiny_dir: Path, adapters: Path) -> None:
    """Greedy, so that every row's text is known: copying the prompt's cache to n rows (among
    other prompts, and under an adapter) must change no token."""
    engine = LocalInference.load(tiny_dir, sampling=Sampling(temperature=0.0), adapters_dir=adapters)
    alone = {
        (name, index): await text_of(engine.stream(prompt, max_tokens=16, adapter=name))
        for name in (None, "one")
        for index, prompt in enumerate((HELLO, OTHER))
    }
    sizes, rows = observed(engine)
    # The three calls below arrive as one batch, even on a busy machine (1 s was not: 2026-12-06).
    engine._batcher._gather_s = 3.0
    base, tuned, other = await asyncio.gather(
        engine.sample(HELLO, n=3, max_tokens=16),
        engine.sample(HELLO, n=2, max_tokens=16, adapter="one"),
        text_of(engine.stream(OTHER, max_tokens=16)),
    )
    assert sizes == [6] and rows[0] == 3  # three distinct (prompt, adapter) pairs read
    assert [c.text for c in base] == [alone[None, 0]] * 3
    assert [c.text for c in tuned] == [alone["one", 0]] * 2
    assert other == alone[None, 1]
    assert alone[None, 0] != alone["one", 0]


async def test_the_same_seed_gives_the_same_candidates_and_another_seed_others(tiny_dir: Path) -> None:
    engine = load(tiny_dir)
    first = await engine.sample(HELLO, n=3, max_tokens=16, seed=11)
    again = await engine.sample(HELLO, n=3, max_tokens=16, seed=11)
    other = await engine.sample(HELLO, n=3, max_tokens=16, seed=12)
    unseeded = [await engine.sample(HELLO, n=3, max_tokens=16) for _ in range(2)]
    assert first == again
    assert [c.text for c in other] != [c.text for c in first]
    assert unseeded[0] != unseeded[1], "without a seed, as random as before"


async def test_a_seeded_stream_repeats_and_is_the_first_candidate_whatever_shares_its_batch(
    tiny_dir: Path,
) -> None:
    engine = load(tiny_dir)
    ending = StreamEnd()
    alone = await text_of(engine.stream(HELLO, max_tokens=20, seed=5, ending=ending))
    engine._batcher._gather_s = 0.2
    beside = await asyncio.gather(
        text_of(engine.stream(HELLO, max_tokens=20, seed=5)),
        text_of(engine.stream(OTHER, max_tokens=30)),
        text_of(engine.stream(HELLO, max_tokens=7, seed=6)),
    )
    candidates = await engine.sample(HELLO, n=2, max_tokens=20, seed=5)
    assert beside[0] == alone
    assert candidates[0].text == alone and candidates[1].text != alone
    assert candidates[0].cut == (ending.reason == "length")


async def test_seeds_give_the_same_reply_on_both_engines(tiny_dir: Path) -> None:
    """The transformers engine draws each row's token as the plain one does (rows.RowDraw)."""
    found = {}
    for kind in ("llama", "transformers"):
        engine = load(tiny_dir, engine=kind)
        found[kind] = (
            await text_of(engine.stream(OTHER, max_tokens=16, seed=9)),
            [c.text for c in await engine.sample(OTHER, n=3, max_tokens=16, seed=9)],
        )
        assert found[kind][0] == await text_of(engine.stream(OTHER, max_tokens=16, seed=9))
    assert found["llama"] == found["transformers"]
    assert found["llama"][0] == found["llama"][1][0]


async def test_more_candidates_than_a_batch_holds_run_in_several(tiny_dir: Path) -> None:
    engine = load(tiny_dir, max_batch=2)
    sizes, _ = observed(engine)
    found = await engine.sample(HELLO, n=5, max_tokens=6, seed=1)
    assert len(found) == 5 and sizes == [2, 2, 1]
    assert all(c.cut for c in found)  # six tokens: the budget ends each of them
    assert found == await load(tiny_dir).sample(HELLO, n=5, max_tokens=6, seed=1)


async def test_bad_requests_fail_before_anything_runs(tiny_dir: Path, adapters: Path) -> None:
    engine = load(tiny_dir, adapters)
    sizes, _ = observed(engine)
    with pytest.raises(ValueError, match="n must be at least 1"):
        await engine.sample(HELLO, n=0, max_tokens=5)
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        await engine.sample(HELLO, n=2, max_tokens=0)
    with pytest.raises(InferenceError, match="unknown LoRA adapter 'ghost'"):
        await engine.sample(HELLO, n=2, max_tokens=5, adapter="ghost")
    assert sizes == []


async def test_past_the_time_limit_every_candidate_stops(tiny_dir: Path) -> None:
    engine = load(tiny_dir)
    engine.timeout_s = 0.3
    with pytest.raises(InferenceTimeout, match=r"within 0\.3 s"):
        await engine.sample(HELLO, n=3, max_tokens=100_000)
    await wait_until(lambda: not generation_threads(), 5.0, what="generation stopped")
    engine.timeout_s = 30.0
    assert len(await engine.sample(HELLO, n=2, max_tokens=3)) == 2


def test_a_draw_never_takes_a_token_without_probability() -> None:
    probs = torch.tensor([[0.0, 0.5, 0.0, 0.5, 0.0]] * 4)
    near_one = 1.0 - 2.0**-53
    chosen = draw(probs, torch.tensor([0.0, 0.49, 0.5, near_one], dtype=torch.float64))
    assert chosen.tolist() == [1, 1, 3, 3]


def test_each_rows_numbers_come_from_its_own_seed() -> None:
    cpu = torch.device("cpu")
    draws, alone = Draws([row_seed(1, 0), row_seed(1, 1), None]), Draws([row_seed(1, 0)])
    first = draws.uniform([0, 1, 2], cpu)
    second = draws.uniform([0], cpu)  # row 0's next number, whatever the others drew before
    assert first[0].item() == alone.uniform([0], cpu).item()
    assert second.item() == alone.uniform([0], cpu).item()
    assert first[0].item() != first[1].item()
    assert len({row_seed(1, 1), row_seed(2, 0), row_seed(1, 0)}) == 3

"""The probe of bench/startup.py: one warm start, its steps run one after another and timed.

`kindred chat` overlaps these steps (the models load on a thread while the store opens and the
prompt reads the first line); here they run in turn, so that each one's own cost shows. Run as
`python -m bench.parts.startup.steps SPAWNED_AT LINE` by bench/startup.py, with the chat's environment;
prints one JSON object: each part's wall and CPU seconds and when it ended, since `SPAWNED_AT`
(the parent's `time.monotonic()` just before it started this process; Linux's monotonic clock
is one for the whole machine).

Only the standard library is imported before the first mark, so "python" is the interpreter's
own start.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import UTC, datetime
from typing import Any


class Marks:
    def __init__(self, spawned_at: float) -> None:
        self.spawned_at = spawned_at
        self.parts: list[dict[str, Any]] = []
        self._wall = spawned_at
        self._cpu = 0.0

    def mark(self, part: str) -> None:
        wall, cpu = time.monotonic(), time.process_time()
        self.parts.append(
            {
                "part": part,
                "wall_s": round(wall - self._wall, 3),
                "cpu_s": round(cpu - self._cpu, 3),
                "at_s": round(wall - self.spawned_at, 3),
            }
        )
        self._wall, self._cpu = wall, cpu


async def probe(marks: Marks, line: str) -> None:
    import bot.cli.main  # noqa: F401  (Kindred's own modules, as `kindred` imports them)
    from bot.wiring.settings import load_settings

    settings = load_settings()
    marks.mark("kindred_imports")
    if settings.inference.backend == "local":
        # A plain Llama (the bundled SmolLM2) needs torch alone; any other model imports
        # transformers as part of its load.
        import torch  # noqa: F401

        marks.mark("torch_import")
    from bot.wiring.backends import load_embedder, load_inference, open_store

    store = await open_store(settings)
    marks.mark("store_open")
    inference = load_inference(settings)
    marks.mark("model_load")
    embedder = load_embedder(settings)
    marks.mark("embedder_load")
    await first_reply(marks, settings, store, embedder, inference, line)


async def first_reply(
    marks: Marks, settings: Any, store: Any, embedder: Any, inference: Any, line: str
) -> None:
    from bot.core.chat.conversation import Conversation
    from bot.core.events import ReplyChunk, UserMessage
    from bot.wiring.kindred import close_models, policy

    conversation = Conversation(store, embedder, inference, policy(settings))
    message = UserMessage("bench-parts", "console", line, datetime.now(UTC))
    first = True
    try:
        async for event in conversation.handle_message(message):
            if first and isinstance(event, ReplyChunk):
                # The turn embedded and stored, memories recalled, the prompt read (prefill).
                marks.mark("first_byte")
                first = False
        marks.mark("last_byte")
    finally:
        await close_models(embedder, inference)
        await store.close()


def main() -> None:
    marks = Marks(float(sys.argv[1]))
    marks.mark("python")
    asyncio.run(probe(marks, sys.argv[2]))
    print(json.dumps(marks.parts))


if __name__ == "__main__":
    main()

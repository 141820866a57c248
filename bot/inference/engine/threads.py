"""torch's CPU threads: how many the engine and the embedder use, process-wide."""

from __future__ import annotations

import os


def limit_torch_threads(threads: int | None = None) -> int:
    """Set torch's intra-op threads (process-wide) and return the number in use.

    By default half the CPUs this process may run on (cgroup and affinity aware), at least one:
    the event loop, the embedder and the database need the rest. On a shared 2-core box, two
    OpenMP threads per small matmul ran 4-6x slower than one (measured under load).

    This is the one place the engine and a plain `model.generate` script differ in speed: torch's
    own default is every core. At equal threads the engine keeps up (`bench/inference.py`,
    `engine_vs_generate`). Two threads on 2 cores pay only while the other core is free: at load
    average 6 they were about even with one (6.7 and 7.3 tokens/s against 4.9 and 7.7), at 10
    they gave 0.11 against 4.5, a reply that no longer finishes (2026-12-01, SmolLM2-135M,
    the engine's own thread, other runs sharing the box).
    """
    import torch

    if threads is None:
        available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        threads = (available or os.cpu_count() or 1) // 2
    threads = max(threads, 1)
    if threads != torch.get_num_threads():
        torch.set_num_threads(threads)
    return threads

"""Kindred's benchmarks.

Every module at this level is an entry point, run as `python -m bench.<name>` (the Makefile, the
docs and tests/bench run them so; their paths are promised to keep). What they share lives under
`bench/parts/`, one subpackage per subject, named so that none shadows an entry point:

- `parts/common.py`: the helpers every benchmark shares (logging, the machine's description,
  opening a store, a PostgreSQL server, a clean exit on SIGTERM); `parts/chatter.py`: small talk
  that the learning, memory and recall benchmarks all mix in.
- `parts/recall/`: the generated and LoCoMo datasets, their fact families, the curated
  contradictions and the evaluation (used by recall, consolidation_recall, recall_evidence, memory).
- `parts/memory/`: the memory benchmark's phases and its speed runs.
- `parts/learning/`: the simulated people and the nights of learning_sim.
- `parts/proactive/`: the simulated people of proactive_sim.
- `parts/soak/`: the soak's processes, people, faults and checks.
- `parts/telegram/`: the load fixtures (instant generator, hash embedder) and the bot process that
  telegram_load and the soak drive.
- `parts/startup/`, `parts/inference/`: one child or comparison each for startup and inference.

A helper that runs as a process of its own is started by its benchmark with its full module name
(`python -m bench.parts.soak.bot`, `celery -A bench.parts.soak.worker`).
"""

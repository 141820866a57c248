"""bench/worker_overhead.py's worker app."""

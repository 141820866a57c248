"""The local engine: a model in this process, on CPU or one GPU (needs the `[local]` extra)."""

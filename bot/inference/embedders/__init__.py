"""Implementations of the Embedder port: in this process (`[local]`) or over HTTP (base install)."""

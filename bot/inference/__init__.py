"""Inference backends and the embedder: the only place (with training) that imports torch.

Importing this package is cheap: torch, transformers and sentence-transformers are imported
inside the functions that load a model.
"""

from bot.inference.embedder import SentenceTransformerEmbedder
from bot.inference.local import LocalInference, Sampling
from bot.inference.model_files import prepare_model

__all__ = ["LocalInference", "Sampling", "SentenceTransformerEmbedder", "prepare_model"]

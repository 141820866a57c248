"""Whisper in this process (transformers), the `SpeechModel` of the local speech backend.

The model is a Hugging Face id or a folder (`KINDRED_SPEECH_MODEL`: `openai/whisper-small`, a
fine-tune, a folder the admin downloaded), loaded by the first recording it hears, never at start.
A recording is heard in windows of 30 s, Whisper's own input length, one after another, and
their words joined; the language, where the model names it (a multilingual Whisper writes its
language token first), comes back with them. One recording at a time: a second waits.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

from bot.core.errors import InferenceError
from bot.core.loading import LoadOnce
from bot.core.media.models import Transcript

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
WINDOW_S = 30
LANGUAGE_TOKEN = re.compile(r"<\|([a-z]{2,3}(?:-[a-z]+)?)\|>")


class WhisperModel:
    """`device`: cpu, cuda, or auto (cuda when torch sees one)."""

    def __init__(self, model: str, *, device: str = "auto") -> None:
        self.model_name = model
        self.device = device
        self._loaded: LoadOnce[tuple[Any, Any]] = LoadOnce(self._load, what=f"speech model {model}")
        self._one_at_a_time = threading.Lock()

    def recognize(self, samples: npt.NDArray[np.float32]) -> Transcript:
        """What was said in 16 kHz mono `samples`; InferenceError when the model fails."""
        model, processor = self._loaded.get()
        texts: list[str] = []
        languages: list[str] = []
        with self._one_at_a_time:
            for start in range(0, max(len(samples), 1), WINDOW_S * SAMPLE_RATE):
                text, language = self._window(
                    model, processor, samples[start : start + WINDOW_S * SAMPLE_RATE]
                )
                texts.append(text)
                languages += [language] if language else []
        words = " ".join(" ".join(texts).split())
        return Transcript(words, len(samples) / SAMPLE_RATE, languages[0] if languages else None)

    def _window(self, model: Any, processor: Any, window: npt.NDArray[np.float32]) -> tuple[str, str | None]:
        import torch

        try:
            features = processor(window, sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features
            with torch.inference_mode():
                # As a dict, the sequences keep their prefix: the language token Whisper detected.
                tokens = model.generate(
                    features.to(self.device, model.dtype), return_dict_in_generate=True
                ).sequences
            written = processor.batch_decode(tokens, skip_special_tokens=False)[0]
            text = processor.batch_decode(tokens, skip_special_tokens=True)[0]
        except (RuntimeError, ValueError, IndexError) as exc:
            raise InferenceError(f"whisper failed: {type(exc).__name__}: {exc}") from None
        found = LANGUAGE_TOKEN.search(written)
        return str(text), found.group(1) if found else None

    def _load(self) -> tuple[Any, Any]:
        import torch
        from transformers import AutoModelForSpeechSeq2Seq, AutoProcessor

        if self.device == "auto":
            self.device = "cuda" if torch.cuda.is_available() else "cpu"

        try:
            processor = AutoProcessor.from_pretrained(self.model_name)  # type: ignore[no-untyped-call]
            model = AutoModelForSpeechSeq2Seq.from_pretrained(self.model_name).to(self.device)
        except (OSError, ValueError) as exc:
            raise InferenceError(f"cannot load the speech model {self.model_name!r}: {exc}") from None
        model.eval()
        return model, processor

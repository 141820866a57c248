"""bot/inference/whisper.py on a tiny Whisper built in the test (tests/support/tiny_whisper.py:
a config, random weights, a tokenizer trained here): it hears nonsense, the same for the same
samples, in 30 s windows, with the language token it wrote; a model that is not there is one
InferenceError naming it. Nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bot.core.errors import InferenceError
from bot.inference.whisper import SAMPLE_RATE, WINDOW_S, WhisperModel
from tests.support.tiny_whisper import shared_tiny_whisper


@pytest.fixture(scope="module")
def whisper(tmp_path_factory: pytest.TempPathFactory) -> WhisperModel:
    return WhisperModel(str(shared_tiny_whisper(tmp_path_factory.mktemp("whisper"))), device="cpu")


def tone(seconds: float, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_it_hears_words_and_the_language_it_detected(whisper: WhisperModel) -> None:
    heard = whisper.recognize(tone(2.0))
    assert heard.text.strip() and heard.language == "en" and heard.duration_s == 2.0
    assert whisper.recognize(tone(2.0)) == heard  # greedy: the same samples, the same words


def test_a_long_recording_is_heard_in_30_s_windows(whisper: WhisperModel) -> None:
    samples = np.concatenate([tone(25.0, 440.0), tone(25.0, 220.0), tone(20.0, 330.0)])
    window = WINDOW_S * SAMPLE_RATE
    parts = [
        whisper.recognize(samples[start : start + window]).text for start in range(0, len(samples), window)
    ]
    heard = whisper.recognize(samples)
    assert len(parts) == 3 and heard.text == " ".join(" ".join(parts).split())
    assert heard.duration_s == 70.0


def test_a_model_that_is_not_there_is_one_error_naming_it(tmp_path: Path) -> None:
    missing = WhisperModel(str(tmp_path / "no-such-whisper"), device="cpu")
    with pytest.raises(InferenceError, match=r"cannot load the speech model .*no-such-whisper"):
        missing.recognize(tone(1.0))

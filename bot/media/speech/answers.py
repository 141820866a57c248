"""What a transcription answer says, read the same way for every backend that gives segments.

An OpenAI-compatible `json` answer has only `text`; `verbose_json` adds `language`, `duration`
and `segments`, each with its own `text`, `avg_logprob` and `no_speech_prob`. A segment the model
itself marks as no speech is dropped (Whisper's own rule: likely no speech and not confidently
decoded), so that silence and music store no words the model made up. The confidence is the
kept segments' mean token probability, weighted by their length.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bot.core.errors import MediaError
from bot.core.media.models import Transcript

# Whisper's defaults (`no_speech_threshold`, `logprob_threshold` in its transcribe()).
NO_SPEECH_AT = 0.6
UNSURE_LOGPROB = -1.0
GARBLED = "The speech service sent an answer I couldn't read, so I couldn't listen to that."


def transcript(payload: Any, duration_s: float) -> Transcript:
    """The Transcript in an answer's JSON; MediaError when it is not a transcription answer.
    `duration_s` is the recording's decoded length (the server's `duration` may be missing)."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("text"), str):
        raise MediaError(GARBLED)
    segments = payload.get("segments")
    language = payload.get("language")
    language = (language.strip() or None) if isinstance(language, str) else None
    if not isinstance(segments, list) or not segments:
        return Transcript(payload["text"].strip(), duration_s, language)
    if not all(isinstance(s, Mapping) and isinstance(s.get("text"), str) for s in segments):
        raise MediaError(GARBLED)
    kept = [segment for segment in segments if not is_no_speech(segment)]
    text = " ".join(" ".join(str(segment["text"]).strip() for segment in kept).split())
    return Transcript(text, duration_s, language, confidence(kept) if text else None)


def is_no_speech(segment: Mapping[str, Any]) -> bool:
    """The model marks the segment as likely no speech, and did not decode it confidently."""
    no_speech = _number(segment.get("no_speech_prob"))
    if no_speech is None or no_speech <= NO_SPEECH_AT:
        return False
    logprob = _number(segment.get("avg_logprob"))
    return logprob is None or logprob < UNSURE_LOGPROB


def confidence(segments: Sequence[Mapping[str, Any]]) -> float | None:
    """exp(mean avg_logprob) over the segments, weighted by their length; None without logprobs."""
    weighted, total = 0.0, 0.0
    for segment in segments:
        logprob = _number(segment.get("avg_logprob"))
        if logprob is None:
            return None
        start, end = _number(segment.get("start")), _number(segment.get("end"))
        weight = end - start if start is not None and end is not None and end > start else 1.0
        weighted += weight * logprob
        total += weight
    if total == 0:
        return None
    return min(1.0, max(0.0, math.exp(weighted / total)))


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)

"""Media on an installation that lacks a part: the [media] extra (PyAV) or the [local] one (torch).

Each test runs in a child process that hides the package before Kindred imports it
(`sys.modules[name] = None` makes `import name` raise ImportError and `find_spec` answer None).
This venv has every extra installed, and uninstalling a wheel would break the other tests that
share it: hiding it in a process of its own is the only way to see an installation without it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_PYAV = """
import asyncio, sys
sys.modules["av"] = None
from datetime import UTC, datetime
from bot.core.chat.voice import VoiceNotes
from bot.core.events import VoiceNote
from bot.core.media.models import MediaFile
from bot.wiring.media.backends import load_speech
from bot.wiring.settings import SpeechSettings

async def main() -> None:
    speech = load_speech(SpeechSettings(
        speech_backend="openai", speech_url="http://127.0.0.1:9/v1", speech_model="whisper-1"))
    note = VoiceNote("telegram:1", "telegram:1", MediaFile("voice", b"OggS" + bytes(400), "note.ogg"),
                     datetime.now(UTC))
    # No conversation: a note that cannot be heard never reaches it.
    events = [event async for event in VoiceNotes(None, speech).handle(note)]  # type: ignore[arg-type]
    print(repr(events))

asyncio.run(main())
"""

LOCAL_WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None
from bot.core.errors import ConfigError
from bot.wiring.media.backends import load_speech
from bot.wiring.settings import SpeechSettings
try:
    load_speech(SpeechSettings(speech_backend="local", speech_model="openai/whisper-small"))
except ConfigError as exc:
    print("ConfigError:", exc)
"""


def run_child(code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KINDRED_")}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_voice_note_without_pyav_is_answered_with_the_extra_to_install_and_nothing_kept() -> None:
    done = run_child(WITHOUT_PYAV)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Refusal(" in done.stdout and done.stdout.count("Refusal(") == 1, done.stdout
    assert "the media extra is missing" in done.stdout
    assert "pip install 'kindred[media]'" in done.stdout
    assert "Nothing was kept" in done.stdout
    # The admin reads it at start too, once.
    assert "voice notes: the [media] extra is missing" in done.stderr


def test_the_local_speech_backend_without_torch_stops_the_start_with_what_to_install() -> None:
    done = run_child(LOCAL_WITHOUT_TORCH)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ConfigError: KINDRED_SPEECH_BACKEND=local"), done.stdout
    assert "pip install 'kindred[local]'" in done.stdout
    assert "KINDRED_SPEECH_BACKEND=openai" in done.stdout

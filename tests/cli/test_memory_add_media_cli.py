"""`kindred memory add-file` for audio and images, through the real CLI (`main`): heard by the
real speech backend against the loopback speech server, seen by the real vision backend against
the loopback vision server, stored in each store with the real embedder, and then found by
`kindred memory search --json`. No reply is generated. Without a backend, one line naming the
setting, and nothing stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.wiring.media.document_jobs import SPOOL
from tests.media import pictures, sounds
from tests.media.speech_server import FakeSpeech
from tests.media.threaded import on_a_thread
from tests.media.vision_server import FakeVision

pytestmark = pytest.mark.usefixtures("kindred_env")

SAID = "The plumber comes on Thursday at ten"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def speech(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSpeech]:
    with on_a_thread(FakeSpeech(phrases={440: SAID}).start) as server:
        monkeypatch.setenv("KINDRED_SPEECH_BACKEND", "openai")
        monkeypatch.setenv("KINDRED_SPEECH_URL", server.base_url)
        monkeypatch.setenv("KINDRED_SPEECH_MODEL", server.model)
        yield server


@pytest.fixture
def vision(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeVision]:
    with on_a_thread(FakeVision().start) as server:
        monkeypatch.setenv("KINDRED_VISION_BACKEND", "openai")
        monkeypatch.setenv("KINDRED_VISION_URL", server.base_url)
        monkeypatch.setenv("KINDRED_VISION_MODEL", server.model)
        yield server


def test_a_voice_note_is_heard_stored_as_the_persons_words_and_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], speech: FakeSpeech
) -> None:
    path = tmp_path / "note.ogg"
    path.write_bytes(sounds.sound(sounds.OGG_OPUS, 2.0))
    code, out, err = run(capsys, "memory", "add-file", "--user", "ann", "--json", str(path))
    assert code == 0, err
    stored = json.loads(out)
    [memory] = stored["memories"]
    # The person's words, classified as typed ones are (this one an event), never the model's.
    assert (stored["kind"], memory["speaker"], memory["text"]) == ("audio", "user", SAID)
    assert memory["meta"]["source"] == "voice" and memory["meta"]["duration_s"] == 2.0
    assert len(speech.received) == 1

    code, out, _ = run(
        capsys, "memory", "search", "--user", "ann", "--k", "1", "--json", "when is the plumber coming?"
    )
    found = json.loads(out)
    assert code == 0 and found["id"] == memory["id"] and found["text"] == SAID

    # The same file again is heard, but stored once (its digest is the turn's key).
    code, out, _ = run(capsys, "memory", "add-file", "--user", "ann", "--json", str(path))
    assert code == 0 and json.loads(out)["memories"][0]["id"] == memory["id"]
    assert len(run(capsys, "memory", "list", "--user", "ann", "--json")[1].splitlines()) == 1


def test_a_long_recording_is_heard_by_the_job_and_waited_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], speech: FakeSpeech, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over KINDRED_AUDIO_INLINE_SECONDS (by the file's header: no platform says its length) the
    job hears it (threads here: no REDIS_URL); the command returns once it is searchable, and
    nothing of the file stays in the spool."""
    monkeypatch.setenv("KINDRED_AUDIO_INLINE_SECONDS", "1")
    path = tmp_path / "long.ogg"
    path.write_bytes(sounds.sound(sounds.OGG_OPUS, 3.0))
    code, out, err = run(capsys, "memory", "add-file", "--user", "ann", "--json", str(path))
    assert code == 0 and "long.ogg is long: a job hears it" in err, err
    [memory] = json.loads(out)["memories"]
    assert memory["text"] == SAID and memory["meta"]["duration_s"] == 3.0
    assert len(speech.received) == 1
    assert list((tmp_path / "data" / SPOOL).iterdir()) == []
    code, out, _ = run(capsys, "memory", "search", "--user", "ann", "--k", "1", "--json", "plumber Thursday")
    assert json.loads(out)["id"] == memory["id"]


def test_silence_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], speech: FakeSpeech
) -> None:
    path = tmp_path / "quiet.wav"
    path.write_bytes(sounds.sound(sounds.WAV, 2.0, freq=None))
    code, out, err = run(capsys, "memory", "add-file", "--user", "ann", str(path))
    assert code == 1 and out == "" and "no words were heard in quiet.wav" in err
    assert run(capsys, "memory", "list", "--user", "ann", "--json")[1] == ""


def test_a_photo_is_seen_and_stored_as_the_chat_stores_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], vision: FakeVision
) -> None:
    path = tmp_path / "garden.txt"  # a JPEG, whatever its name says
    path.write_bytes(pictures.photo("red"))
    code, out, err = run(capsys, "memory", "add-file", "--user", "ann", "--json", str(path))
    assert code == 0, err
    turn, description = json.loads(out)["memories"]
    assert (turn["kind"], turn["speaker"], turn["text"]) == ("turn", "user", "(a photo)")
    assert turn["meta"]["source"] == "image"
    assert (description["kind"], description["speaker"]) == ("image", "assistant")
    assert "red" in description["text"] and description["meta"]["model"] == vision.model
    assert len(vision.received) == 1 and vision.received[0].exif == {}  # EXIF stripped before it left
    code, out, _ = run(
        capsys, "memory", "search", "--user", "ann", "--k", "1", "--json", "a mostly red picture"
    )
    assert json.loads(out)["id"] == description["id"]


@pytest.mark.parametrize(
    ("data", "name", "says"),
    [
        (
            sounds.sound(sounds.OGG_OPUS, 1.0),
            "note.ogg",
            "audio files are heard through a speech backend, and none is configured: "
            "set KINDRED_SPEECH_BACKEND=",
        ),
        (
            pictures.photo("blue"),
            "photo.jpg",
            "images are seen through a vision model, and none is configured: set KINDRED_VISION_BACKEND=",
        ),
    ],
    ids=["audio", "image"],
)
def test_without_a_backend_one_line_names_the_setting_and_nothing_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, name: str, says: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    code, out, err = run(capsys, "memory", "add-file", "--user", "ann", str(path))
    assert code == 1 and out == "" and err.startswith(f"kindred: {says}") and err.count("\n") == 1
    assert run(capsys, "memory", "list", "--user", "ann", "--json")[1] == ""

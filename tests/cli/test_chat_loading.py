"""`kindred chat` before its models are loaded: the prompt at once, early lines kept and answered.

The parts are real: the composition root's `build` with SQLite, the ONNX MiniLM and the tiny
model. Only the moment the model's load may begin is held, by a gate in front of the real
`load_inference` (a seam in the composition root, not a fake), so that a test knows the lines
came while the model was still loading, whatever the speed of the machine.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import queue
import select
import signal
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.adapters.console import CHAT_ID, HELP, LOADING, STILL_LOADING, ConsoleIO
from bot.core.errors import ConfigError
from bot.wiring import kindred as kindred_module
from bot.wiring.kindred import Kindred, build
from bot.wiring.platforms import console_chat
from bot.wiring.settings import Settings, load_settings
from tests.cli.test_chat_cli import chat_env, kindred
from tests.support.waiting import wait_until

HELD_S = 60.0  # a test that forgets to open the gate fails instead of hanging


class Pipe:
    """Lines as a pipe gives them: each `read_line` blocks until the test writes one; "" is EOF."""

    def __init__(self) -> None:
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.reads = 0

    def write(self, *lines: str) -> None:
        for line in lines:
            self._lines.put(line)

    def read_line(self) -> str:
        line = self._lines.get(timeout=HELD_S)
        self.reads += 1
        return line


@pytest.fixture
def settings(
    tmp_path: Path, shared_data: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    for name, value in chat_env(tmp_path, shared_data, str(tiny_model)).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return load_settings(env_file=None)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The model's load (on its thread) waits here until the test sets the event."""
    opened = threading.Event()
    real: Callable[[Settings], object] = kindred_module.load_inference

    def held(settings: Settings) -> object:
        if not opened.wait(HELD_S):
            raise AssertionError("the test never let the model load")
        return real(settings)

    monkeypatch.setattr(kindred_module, "load_inference", held)
    yield opened
    opened.set()  # never leave a loading thread waiting


def console(pipe: Pipe) -> tuple[ConsoleIO, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return ConsoleIO(pipe.read_line, out, err, interactive=False), out, err


async def turns(kindred: Kindred, user: str) -> list[tuple[str, str]]:
    history = await kindred.store.turns.recent_turns(user, CHAT_ID, 50)
    return [(turn.role, turn.text) for turn in history]


async def test_lines_typed_while_the_model_loads_are_all_answered_in_order(
    settings: Settings, gate: threading.Event
) -> None:
    pipe = Pipe()
    chat_io, out, err = console(pipe)
    loading = asyncio.create_task(build(settings))
    chat = asyncio.create_task(console_chat(loading, "ann", chat_io).run())
    # Three lines and the end of input, all before the model may even start loading.
    pipe.write("My dog is called Pepper.\n", "/help\n", "I live in Porto.\n", "Where do I live?\n", "")
    await wait_until(lambda: STILL_LOADING in err.getvalue(), what="the still-loading notice")
    await asyncio.sleep(0.3)  # time enough to answer, were anything answered before the model
    assert not loading.done() and not chat.done()
    assert pipe.reads == 1  # the first line waits for the model; the rest wait in the pipe
    assert out.getvalue() == "" and err.getvalue() == f"{LOADING}\n{STILL_LOADING}\n"

    gate.set()
    await asyncio.wait_for(chat, HELD_S)
    kindred = await loading
    try:
        stored = await turns(kindred, "ann")
    finally:
        await kindred.close()
    said = [text for role, text in stored if role == "user"]
    assert said == ["My dog is called Pepper.", "I live in Porto.", "Where do I live?"]
    assert [role for role, _ in stored] == ["user", "assistant"] * 3
    assert HELP in out.getvalue()
    assert pipe.reads == 5 and err.getvalue().count(STILL_LOADING) == 1  # said once, not per line


async def test_help_is_answered_before_the_model_is_ready(settings: Settings, gate: threading.Event) -> None:
    pipe = Pipe()
    chat_io, out, _ = console(pipe)
    loading = asyncio.create_task(build(settings))
    chat = asyncio.create_task(console_chat(loading, "ann", chat_io).run())
    pipe.write("/help\n")
    await wait_until(lambda: HELP in out.getvalue(), what="the help text")
    assert not loading.done()
    pipe.write("/quit\n", "never read\n")
    gate.set()
    await asyncio.wait_for(chat, HELD_S)
    kindred = await loading
    try:
        assert await turns(kindred, "ann") == []
    finally:
        await kindred.close()
    assert pipe.reads == 2


async def test_a_failed_load_ends_the_chat_even_while_a_read_waits(
    settings: Settings, tmp_path: Path
) -> None:
    pipe = Pipe()
    chat_io, out, _ = console(pipe)
    broken = settings.model_copy(
        update={"inference": settings.inference.model_copy(update={"model": str(tmp_path / "no-model")})}
    )
    loading = asyncio.create_task(build(broken))
    with pytest.raises(ConfigError, match="KINDRED_MODEL"):
        # Nothing is ever typed: the read is still waiting when the load fails.
        await asyncio.wait_for(console_chat(loading, "ann", chat_io).run(), HELD_S)
    assert out.getvalue() == ""
    pipe.write("")  # let the waiting read thread end


def test_a_pipe_closed_right_after_its_lines_is_answered_before_exit(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    """The real process: the lines and the end of input arrive long before the model is loaded
    (its libraries alone take seconds to import), and every line is still answered and stored."""
    env = chat_env(tmp_path, shared_data, str(tiny_model))
    done = kindred(["chat", "--user", "ann"], b"one\ntwo\nthree\n", env)
    assert done.returncode == 0, done.stderr.decode()
    err = done.stderr.decode()
    assert LOADING in err and STILL_LOADING in err
    out = done.stdout.decode()
    assert LOADING not in out and STILL_LOADING not in out
    listed = kindred(["memory", "list", "--user", "ann", "--json", "--all"], b"", env)
    rows = [json.loads(line) for line in listed.stdout.decode().splitlines()]
    assert [row["text"] for row in rows if row["speaker"] == "user"] == ["one", "two", "three"]
    assert sum(row["speaker"] != "user" for row in rows) == 3


def test_an_empty_pipe_exits_cleanly_while_the_model_loads(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    env = chat_env(tmp_path, shared_data, str(tiny_model))
    done = kindred(["chat", "--user", "ann"], b"", env)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"" and b"Traceback" not in done.stderr


def test_ctrl_c_while_loading_leaves_the_terminal_as_it_was(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    """A person's terminal (a pseudo-terminal here): the prompt shows before the model is ready,
    and Ctrl-C at it ends the chat with echo and line editing on again. readline turns both off
    while it reads, and that read is still waiting when the chat ends."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL"))}
    env.update({"HF_HUB_OFFLINE": "1", **chat_env(tmp_path, shared_data, str(tiny_model))})
    pid, terminal = pty.fork()
    if pid == 0:  # the child: becomes `kindred chat` on the terminal's other side
        # As in a person's shell. A suite started in the background (`make test &`) inherits
        # SIGINT ignored, exec keeps it so, and Python then installs no Ctrl-C handler at all.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(sys.executable, [sys.executable, "-m", "bot.cli", "chat", "--user", "ann"], env)
    found = termios.tcgetattr(terminal)[3] & (termios.ECHO | termios.ICANON)
    shown = read_until(terminal, "you › ")
    assert LOADING in shown and "kindred ›" not in shown
    os.write(terminal, b"\x03")
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 130
    assert termios.tcgetattr(terminal)[3] & (termios.ECHO | termios.ICANON) == found
    os.close(terminal)


def read_until(terminal: int, wanted: str, within_s: float = HELD_S) -> str:
    shown, deadline = b"", time.monotonic() + within_s
    while wanted.encode() not in shown:
        assert time.monotonic() < deadline, f"{wanted!r} not shown: {shown.decode(errors='replace')}"
        ready, _, _ = select.select([terminal], [], [], 0.1)
        if ready:
            shown += os.read(terminal, 4096)
    return shown.decode(errors="replace")

"""`kindred chat` as a person runs it: a real process, reading a pipe, with the real embedder.
A tiny random model answers where sense doesn't matter; one test uses the real SmolLM2."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.adapters.console import LOADING, STILL_LOADING
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import UserMessage
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import ScriptedInference

pytestmark = pytest.mark.procs


def kindred(
    args: list[str], stdin: bytes, env: dict[str, str], timeout: float = 240
) -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL"))}
    full_env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **env})
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        input=stdin,
        env=full_env,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def chat_env(tmp_path: Path, shared_data: Path, model: str) -> dict[str, str]:
    return {
        "KINDRED_DATA_DIR": str(shared_data),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'kindred.db'}",
        "KINDRED_MODEL": model,
        "KINDRED_MAX_NEW_TOKENS": "12",
    }


def test_a_pipe_gets_one_answer_per_line_and_exit_0(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    env = chat_env(tmp_path, shared_data, str(tiny_model))
    lines = "My dog is called Pepper.\nI live in Porto.\n/react 👍\n/react 🦄\nWhat is my dog called?\n"
    done = kindred(["chat", "--user", "ann"], lines.encode(), env)
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode()
    assert "Thanks for the 👍." in out and "🦄 has no meaning" in out
    assert b"Traceback" not in done.stderr
    stats = json.loads(kindred(["stats", "--json"], b"", env).stdout)
    assert stats == {"backend": "sqlite", "users": 1, "turns": 6, "memories": 6, "feedback_events": 1}


async def test_what_was_said_is_remembered_after_a_restart(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    env = chat_env(tmp_path, shared_data, str(tiny_model))
    assert (
        kindred(
            ["chat", "--user", "ann"], b"My dog is called Pepper and he loves the beach.\n", env
        ).returncode
        == 0
    )
    assert kindred(["chat", "--user", "ann"], b"I work as a nurse.\n", env).returncode == 0
    # A third "process": the same store, a model that shows what it was prompted with.
    store = await SqliteStore.open(tmp_path / "kindred.db")
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder.load()
    model = ScriptedInference()
    conversation = Conversation(store, embedder, model, ConversationPolicy(persona="p", recent_turns=0))
    try:
        message = UserMessage("ann", "console", "what's my dog's name again?", datetime.now(UTC))
        [event async for event in conversation.handle_message(message)]
    finally:
        await embedder.close()
        await store.close()
    assert "My dog is called Pepper" in model.prompts[0][0].content


def test_hostile_lines_never_end_the_chat(tmp_path: Path, shared_data: Path, tiny_model: Path) -> None:
    env = chat_env(tmp_path, shared_data, str(tiny_model))
    stdin = b"\n   \n\x00\x01\x1b\x07\n\xff\xfe broken \xc3 utf-8\n" + b"a" * 100_000 + b"\nstill here?\n"
    done = kindred(["chat", "--user", "ann"], stdin, env)
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode()
    assert out.count("I didn't get any text") == 3
    listed = kindred(["memory", "list", "--user", "ann", "--json"], b"", env).stdout.decode().splitlines()
    user_texts = [json.loads(line)["text"] for line in listed if json.loads(line)["speaker"] == "user"]
    assert user_texts[0] == "\ufffd\ufffd broken \ufffd utf-8"
    assert len(user_texts[1]) == 100_000 and user_texts[2] == "still here?"


@pytest.mark.model
def test_the_bundled_smollm2_answers_in_a_pipe(tmp_path: Path, shared_data: Path) -> None:
    env = chat_env(tmp_path, shared_data, "bundled")
    env["KINDRED_MAX_NEW_TOKENS"] = "24"
    done = kindred(["chat", "--user", "ann"], b"Hello! What is the capital of France?\n", env)
    assert done.returncode == 0, done.stderr.decode()
    reply = done.stdout.decode().strip()
    assert len(reply) > 0 and b"Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("KINDRED_MAX_NEW_TOKENS", "lots"),
        ("DATABASE_URL", "mysql://u:hunter2@db/k"),
        ("KINDRED_DEVICE", "tpu"),
        ("KINDRED_PERSONA", "   "),
    ],
)
def test_invalid_config_fails_with_one_line_naming_the_variable(
    tmp_path: Path, variable: str, value: str
) -> None:
    done = kindred(["chat", "--user", "ann"], b"hi\n", {"KINDRED_DATA_DIR": str(tmp_path), variable: value})
    err = done.stderr.decode()
    assert done.returncode == 2
    assert err.count("\n") == 1 and err.startswith(f"kindred: invalid configuration: {variable}:")
    assert "hunter2" not in err


def test_a_read_only_database_is_refused_with_a_clear_line(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    """The database folder is mounted read-only (a private mount namespace: root cannot write a
    read-only mount, whereas it ignores file modes). Nothing stored before may be lost."""
    env = chat_env(tmp_path, shared_data, str(tiny_model))
    assert kindred(["chat", "--user", "ann"], b"keep this safe\n", env).returncode == 0
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    script = (
        f"mount --bind {tmp_path} {tmp_path} && mount -o remount,bind,ro {tmp_path} && "
        f'exec "$0" -m bot.cli chat --user ann'
    )
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **env}
    done = subprocess.run(
        [*unshare, "sh", "-c", script, sys.executable],
        input=b"hello\n",
        env=full_env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = done.stderr.decode()
    assert done.returncode == 1, err
    # One line says why, after the start-up's notices (printed before the store refused).
    said = [line for line in err.splitlines() if line not in (LOADING, STILL_LOADING)]
    assert len(said) == 1 and "read-only" in said[0] and "Traceback" not in err
    listed = kindred(["memory", "list", "--user", "ann", "--json"], b"", env).stdout.decode().splitlines()
    assert json.loads(listed[0])["text"] == "keep this safe"


def memory_id(out: str, text: str) -> int:
    """The id /memories shows for the memory with `text`."""
    found = re.search(
        rf"#(\d+) · [^·\n]+ · [^·\n]+ · (?:\[[^\]\n]*\] )?{re.escape(text)}$", out, re.MULTILINE
    )
    assert found, f"{text!r} is not listed in:\n{out}"
    return int(found[1])


def test_memory_commands_in_a_pipe(tmp_path: Path, shared_data: Path, tiny_model: Path) -> None:
    """/memories, /confirm, /correct and /forget as a person types them, in a pipe: "/forget all"
    takes the next line as its answer, and input that ends before one deletes nothing."""
    env = chat_env(tmp_path, shared_data, str(tiny_model))
    said = "My dog is called Pepper.\nI live in Porto.\n/memories\n/forget all\n"
    first = kindred(["chat", "--user", "ann"], said.encode(), env)
    assert first.returncode == 0, first.stderr.decode()
    out = first.stdout.decode()
    dog, home = memory_id(out, "My dog is called Pepper."), memory_id(out, "I live in Porto.")
    assert "Are you sure?" in out and "Type yes" in out
    lines = [
        f"/confirm {dog}",
        f"/correct #{home} I live in  Lisbon now.",
        "/memories",
        *("/confirm abc", "/confirm ²", "/confirm", "/confirm 99999"),
        *("/correct abc new", "/correct ² new", f"/correct {dog}", "/correct 99999 new"),
        f"/correct {dog} " + "x" * 501,
        *("/forget", "/forget ²", "/forget 99999", f"/forget {dog}", f"/forget {dog}"),
        *("/memories 2", "/memories ²"),
        *("/forget all", "no thanks", "/memories"),
        *("/forget all", "yes", "/memories"),
    ]
    second = kindred(["chat", "--user", "ann"], "\n".join(lines).encode() + b"\n", env)
    assert second.returncode == 0, second.stderr.decode()
    assert b"Traceback" not in second.stderr
    out = second.stdout.decode()
    answers = iter(out.split("Memories, page 1 (newest first):"))
    before, listed = next(answers), next(answers)
    assert f"Thanks, memory #{dog} is confirmed." in before
    lisbon = memory_id(listed, "I live in Lisbon now.")
    assert (
        f"Corrected: #{lisbon} now says “I live in Lisbon now.”, and #{home} will not come up again."
        in before
    )
    assert memory_id(listed, "[confirmed] My dog is called Pepper.") == dog
    assert memory_id(listed, "[confirmed] I live in Lisbon now.") == lisbon
    assert memory_id(listed, f"[replaced by #{lisbon}] I live in Porto.") == home
    assert listed.count("Tell me which memory: /confirm ID") == 3
    assert listed.count("Tell me which memory and what is true now: /correct ID new text.") == 3
    assert listed.count("I have no memory #99999 of yours.") == 3
    assert "Please keep a correction under 500 characters." in listed
    assert listed.count("Tell me which memory: /forget ID") == 2
    assert f"Forgotten: memory #{dog}." in listed and f"I have no memory #{dog} of yours." in listed
    assert "No more memories." in listed
    after_forget, after_no = next(answers), next(answers)
    assert "Pepper" not in after_forget and "Kept. Nothing was forgotten." in after_forget
    assert "I live in Lisbon now." in after_no
    assert "Done. I forgot everything about you (4 memories)." in after_no
    assert out.rstrip().endswith("I don't remember anything about you yet.")


async def test_app_in_the_terminal_prints_a_link_that_opens_while_the_chat_runs(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    import asyncio
    import socket

    import aiohttp

    with socket.socket() as probe:  # a free port for this chat's web server
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", KINDRED_WEB_PORT=str(port))
    env.update(chat_env(tmp_path, shared_data, str(tiny_model)))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "chat", "--user", "ann", env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b"/app a packing checklist for my beach trip\n")
        await process.stdin.drain()
        line = (await asyncio.wait_for(process.stdout.readline(), 240)).decode()
        found = re.search(rf"http://127\.0\.0\.1:{port}/a/[A-Za-z0-9_-]+", line)
        assert found, line
        async with aiohttp.ClientSession() as http, http.get(found[0]) as page:
            assert page.status == 200 and "Sunscreen" in await page.text()
    finally:
        process.stdin.close()
        _, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, stderr.decode()[-3000:]
    assert b"Traceback" not in stderr


def test_a_terminal_chat_is_counted_and_kindred_usage_prints_it(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    """No budget configured: the local engine's tokenizer counts each reply, `/usage` tells the
    person, and `kindred usage --json` prints the same numbers, one line for the person today."""
    env = chat_env(tmp_path, shared_data, str(tiny_model))
    done = kindred(["chat", "--user", "ann"], b"My dog is called Pepper.\nI live in Porto.\n/usage\n", env)
    assert done.returncode == 0, done.stderr.decode()
    listed = kindred(["usage", "--json"], b"", env)
    assert listed.returncode == 0, listed.stderr.decode()
    [line] = [json.loads(text) for text in listed.stdout.decode().splitlines()]
    assert line["user"] == "ann" and line["day"] == datetime.now(UTC).date().isoformat()
    assert line["replies"] == 2 and (line["cost"], line["budget_left"]) == (0.0, None)
    # A prompt holds at least the persona and the message; a reply at most 12 new tokens each
    # (KINDRED_MAX_NEW_TOKENS), re-counted with the same tokenizer.
    assert line["tokens_in"] > 2 * 5 and 0 < line["tokens_out"] <= 2 * 14
    counted = f"{line['tokens_in']:,} tokens in, {line['tokens_out']:,} out (2 replies)"
    assert f"Today: {counted}" in done.stdout.decode()
    assert kindred(["usage", "--user", "nobody"], b"", env).stdout.decode().startswith("No use on")


def test_a_terminal_chat_runs_out_of_its_budget_and_says_when_it_renews(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    """A budget of 10 tokens a day: the first reply uses it, the second message is kept and
    answered with when the day renews; /usage and `kindred usage --json` show nothing left."""
    budgets = tmp_path / "budgets.toml"
    budgets.write_text("[everyone]\ntokens_per_day = 10\n")
    env = chat_env(tmp_path, shared_data, str(tiny_model)) | {"KINDRED_BUDGETS_FILE": str(budgets)}
    done = kindred(["chat", "--user", "ann"], b"My dog is called Pepper.\nI live in Porto.\n/usage\n", env)
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode()
    assert "You've used your allowance for today (10 tokens). It renews at midnight, UTC" in out
    assert "Left: 0 tokens today." in out
    [line] = [
        json.loads(text) for text in kindred(["usage", "--json"], b"", env).stdout.decode().splitlines()
    ]
    assert (line["replies"], line["budget_left"]) == (1, {"tokens_today": 0})


def test_a_broken_budgets_file_stops_the_start_naming_its_line(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    budgets = tmp_path / "budgets.toml"
    budgets.write_text("[everyone]\ntokens_per_day = 10\ntokens_per_day = 20\n")
    env = chat_env(tmp_path, shared_data, str(tiny_model)) | {"KINDRED_BUDGETS_FILE": str(budgets)}
    done = kindred(["chat", "--user", "ann"], b"Hello\n", env)
    assert done.returncode != 0 and b"Traceback" not in done.stderr
    assert f"{budgets}: Cannot overwrite a value (at line 3".encode() in done.stderr, done.stderr

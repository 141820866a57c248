"""Start-up benchmark: how soon a warm `kindred chat` answers a piped line, and where the time goes.

Warm means the model was converted and the embedder exported before (one untimed start does
both, and creates the database); every timed start is a fresh process, so the libraries'
imports are paid as a person pays them. Two measurements:
- chat: the real `kindred chat --user bench` with one line piped in and the pipe closed at once;
  seconds from spawning it to the first byte of its reply on stdout, to the last, and to its
  exit; the CPU time it had used by its first byte (on a machine that others keep busy, the
  wall time there is mostly waiting for a core; the CPU time is the work itself); and its own
  timeline (when the store, the embedder and the model were ready, from its INFO log lines).
- parts: `bench/parts/startup/steps.py` runs the same steps one after another and times each (wall and
  CPU): Python's start, Kindred's imports, torch, store open, model load (transformers too, for
  a model the plain Llama engine does not run), embedder load, first byte, last byte. The chat
  overlaps some of them; this shows what each one costs.
The check is the issue's target: the chat's first byte ≤ 4 s (the median of the runs). Prints one
JSON object on stdout; progress goes to stderr.

    .venv/bin/python -m bench.startup --quick
    .venv/bin/python -m bench.startup --runs 5 --model bundled
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.parts.common import exit_cleanly_on_sigterm, log, machine, now_iso

TARGET_FIRST_BYTE_S = 4.0
LINE = "Hi! How was your day?"
# bot/wiring/kindred.py's `build` logs when each part is ready ("model loaded at 3.10 s").
READY_LINE = re.compile(r"bot\.wiring\.kindred: (store open|embedder loaded|model loaded) at ([\d.]+) s")
TIMEOUT_S = 600.0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument(
        "--model", default="bundled", help="KINDRED_MODEL: bundled (SmolLM2-135M) or a directory"
    )
    parser.add_argument("--runs", type=int, help="timed starts of each kind (default 3; --quick 1)")
    parser.add_argument("--max-new-tokens", type=int, help="the reply's budget (default 96; --quick 8)")
    parser.add_argument("--data-dir", type=Path, help="where the converted model is kept (reused)")
    parser.add_argument("--quick", action="store_true", help="one run of each, short replies: a smoke run")
    return parser.parse_args(argv)


def chat_env(args: argparse.Namespace, data_dir: Path, database: Path, max_new_tokens: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL", "REDIS_URL"))}
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "KINDRED_DATA_DIR": str(data_dir),
            "DATABASE_URL": f"sqlite:///{database}",
            "KINDRED_MODEL": args.model,
            "KINDRED_MAX_NEW_TOKENS": str(max_new_tokens),
            "KINDRED_LOG_LEVEL": "INFO",
        }
    )
    return env


def timed_chat(env: dict[str, str]) -> dict[str, Any]:
    """One `kindred chat` with LINE piped in: seconds to its first and last byte and to its exit."""
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "chat", "--user", "bench"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    child.stdin.write(f"{LINE}\n".encode())
    child.stdin.close()
    # The reply is the whole of stdout; its last byte comes before the exit, which first waits
    # for the jobs the reply queued (memory extraction) and closes the store.
    reply, first_at, last_at, first_cpu = b"", 0.0, 0.0, 0.0
    while chunk := os.read(child.stdout.fileno(), 65536):
        last_at = time.monotonic()
        if not first_at:
            first_at, first_cpu = last_at, cpu_seconds(child.pid)
        reply += chunk
    err = child.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(child.pid, 0)
    exited_at = time.monotonic()
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or not reply:
        raise RuntimeError(f"kindred chat exited {code} with no reply: {err[-2000:]}")
    ready = {name.replace(" ", "_"): float(at) for name, at in READY_LINE.findall(err)}
    return {
        "first_byte_s": round(first_at - started, 3),
        "cpu_at_first_byte_s": round(first_cpu, 3),
        "last_byte_s": round(last_at - started, 3),
        "exit_s": round(exited_at - started, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "reply_chars": len(reply.decode(errors="replace").strip()),
        "ready_after_build_start_s": ready,
    }


def cpu_seconds(pid: int) -> float:
    """The CPU time a running process has used so far (all its threads; Linux's /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime and stime, fields 14 and 15 of stat(5), counted after the command's closing bracket.
    return float(int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def timed_parts(env: dict[str, str]) -> list[dict[str, Any]]:
    spawned_at = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "bench.parts.startup.steps", repr(spawned_at), LINE],
        env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the parts probe failed: {done.stderr[-2000:]}")
    parts: list[dict[str, Any]] = json.loads(done.stdout)
    return parts


def median_parts(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each part's median wall and CPU seconds over the runs, in the order they ran."""
    found: list[dict[str, Any]] = []
    for index, part in enumerate(runs[0]):
        samples = [run[index] for run in runs]
        found.append(
            {
                "part": part["part"],
                **{
                    key: round(statistics.median(s[key] for s in samples), 3)
                    for key in ("wall_s", "cpu_s", "at_s")
                },
            }
        )
    return found


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    return round(float(statistics.median(run[key] for run in runs)), 3)


def run(args: argparse.Namespace) -> dict[str, Any]:
    runs = args.runs or (1 if args.quick else 3)
    max_new_tokens = args.max_new_tokens or (8 if args.quick else 96)
    data_dir = args.data_dir or Path(tempfile.gettempdir()) / "kindred-bench-models"
    report: dict[str, Any] = {"date": now_iso(), "machine": machine(), "benchmark": "startup"}
    report["settings"] = {
        "model": args.model,
        "line": LINE,
        "max_new_tokens": max_new_tokens,
        "runs": runs,
        # Without .pyc files every start compiles Kindred's own modules again, as no install would.
        "bytecode_written": not sys.dont_write_bytecode and "PYTHONDONTWRITEBYTECODE" not in os.environ,
    }
    with tempfile.TemporaryDirectory(prefix="kindred-bench-startup-") as scratch:
        env = chat_env(args, data_dir, Path(scratch) / "kindred.db", max_new_tokens)
        log("warming up: converts the model and exports the embedder once, creates the database")
        timed_chat(env)
        chats: list[dict[str, Any]] = []
        parts: list[list[dict[str, Any]]] = []
        for index in range(runs):
            chats.append(timed_chat(env))
            log(f"chat {index + 1}/{runs}: first byte at {chats[-1]['first_byte_s']} s")
            parts.append(timed_parts(env))
            log(f"parts {index + 1}/{runs}: first byte at {parts[-1][-2]['at_s']} s, one step at a time")
    first_byte = median_of(chats, "first_byte_s")
    report["chat"] = {
        "first_byte_s": first_byte,
        "last_byte_s": median_of(chats, "last_byte_s"),
        "cpu_at_first_byte_s": median_of(chats, "cpu_at_first_byte_s"),
        "exit_s": median_of(chats, "exit_s"),
        "cpu_s": median_of(chats, "cpu_s"),
        "runs": chats,
    }
    report["parts"] = median_parts(parts)
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    passed = first_byte <= TARGET_FIRST_BYTE_S
    report["checks"] = {
        "first_byte_s": {
            "target": TARGET_FIRST_BYTE_S,
            "value": first_byte,
            "pass": passed,
            "counts_toward_pass": True,
        }
    }
    report["pass"] = passed
    return report


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    exit_cleanly_on_sigterm()
    print(json.dumps(run(args), indent=2))


if __name__ == "__main__":
    main()

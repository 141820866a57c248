"""Oversized files at `kindred memory import` and `export`, on both stores: an import larger than
its bound (also one line with no newline) is refused while it is read, in one plain line, with
nothing stored; an invalid line anywhere stores nothing; the same import run twice stores its
lines once; an export past its bound is refused and leaves no file, no temporary file and no
output, and one within it is written whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main

pytestmark = pytest.mark.usefixtures("kindred_env")

KIB = 1 / 1024  # --max-mib in KiB


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def lines(count: int, start: int = 0) -> bytes:
    return b"".join(
        json.dumps(
            {
                "text": f"note number {n} about the garden",
                "timestamp": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z",
            }
        ).encode()
        + b"\n"
        for n in range(start, start + count)
    )


def exported(capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, out, _ = run(capsys, "memory", "export", "--user", "ann")
    assert code == 0
    return out.splitlines()


@pytest.mark.parametrize("shape", ["many lines", "one line, no newline"])
def test_an_import_past_its_bound_is_refused_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    source = tmp_path / "big.jsonl"
    source.write_bytes(lines(400) if shape == "many lines" else b'{"text": "' + b"a" * 40_000 + b'"}')
    code, _, err = run(capsys, "memory", "import", "--user", "ann", "--max-mib", str(16 * KIB), str(source))
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert "is larger than 16 KiB, the most one import reads; split it in parts" in err
    assert exported(capsys) == []


def test_an_invalid_line_late_in_a_file_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(lines(600) + b'{"text": 5}\n' + lines(3, start=600))
    code, _, err = run(capsys, "memory", "import", "--user", "ann", str(source))
    assert code != 0 and "line 601: `text` is required" in err and "nothing imported" in err
    assert exported(capsys) == []


def test_the_same_import_twice_stores_each_line_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(lines(300))
    assert run(capsys, "memory", "import", "--user", "ann", str(source))[0] == 0
    code, _, err = run(capsys, "memory", "import", "--user", "ann", str(source))
    assert code == 0 and "imported 0 memories for ann, 300 already imported" in err, err
    assert len(exported(capsys)) == 300


def test_an_export_past_its_bound_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(lines(300))
    assert run(capsys, "memory", "import", "--user", "ann", str(source))[0] == 0
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "ann.jsonl"
    for where in (("--output", str(target)), ()):
        code, out, err = run(capsys, "memory", "export", "--user", "ann", "--max-mib", str(8 * KIB), *where)
        assert code != 0 and out == "" and "larger than" in err and "nothing was written" in err, err
    assert list(out_dir.iterdir()) == [] and not list(Path.cwd().glob(".kindred-export-*"))

    code, _, err = run(capsys, "memory", "export", "--user", "ann", "--output", str(target))
    assert code == 0, err
    assert target.read_text(encoding="utf-8").splitlines() == exported(capsys)
    assert len(exported(capsys)) == 300 and [p.name for p in out_dir.iterdir()] == ["ann.jsonl"]

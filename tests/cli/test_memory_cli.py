"""`kindred memory …` and `kindred stats`: the contracts docs/memory.md promises, with the real
MiniLM embedder, on both stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.store import migrations

pytestmark = pytest.mark.usefixtures("kindred_env")

LINES = [
    {
        "text": "I switched to decaf because coffee keeps me awake",
        "speaker": "ann",
        "timestamp": "2026-05-02T08:15:00+02:00",
        "meta": {"session": 3, "tags": ["health"]},
    },
    {
        "text": "My daughter Lina starts school in September",
        "speaker": "ann",
        "timestamp": "2026-06-10T19:00:00Z",
        "meta": {},
    },
    {"text": "The ramen place on 5th street closed down", "timestamp": "2026-07-01T12:00:00"},
    {"text": "Je préfère le thé vert 🍵", "meta": {"lang": "fr", "nested": {"a": [1, 2, None]}}},
]


def write_jsonl(path: Path, lines: list[object], extra: bytes = b"") -> Path:
    path.write_bytes(
        b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines) + extra
    )
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_search_list_export_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", LINES)
    code, _, err = run(capsys, "memory", "import", "--user", "ann", str(source))
    assert code == 0 and "imported 4 memories" in err, err

    code, out, _ = run(
        capsys, "memory", "search", "--user", "ann", "--k", "2", "--json", "why can't I sleep after coffee?"
    )
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 2
    assert set(rows[0]) == {"query_index", "id", "text", "score", "timestamp", "meta"}
    assert rows[0]["text"].startswith("I switched to decaf") and rows[0]["query_index"] == 0
    assert rows[0]["meta"] == {"session": 3, "tags": ["health"]}
    assert rows[0]["timestamp"] == "2026-05-02T06:15:00+00:00"

    code, out, _ = run(capsys, "memory", "export", "--user", "ann")
    exported = [json.loads(line) for line in out.splitlines()]
    assert [e["text"] for e in exported] == [line["text"] for line in LINES]
    assert exported[3]["meta"] == LINES[3]["meta"] and exported[2]["speaker"] is None

    # The export imports as it is, for someone else, and exports the same again.
    again = tmp_path / "export.jsonl"
    again.write_text(out, encoding="utf-8")
    assert run(capsys, "memory", "import", "--user", "bob", str(again))[0] == 0
    assert run(capsys, "memory", "export", "--user", "bob")[1] == out

    code, out, _ = run(capsys, "memory", "list", "--user", "ann", "--json")
    listed = [json.loads(line) for line in out.splitlines()]
    assert [m["text"] for m in listed] == [line["text"] for line in LINES]
    assert all(m["kind"] == "imported" for m in listed)


def test_list_shows_the_replies_only_with_all_and_export_keeps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = [
        {"text": "I just adopted a dog called Biscuit", "speaker": "user"},
        {"text": "Your cat's name is Bella, and she loves tuna!", "speaker": "assistant"},
        {"text": "What is my pet's name?", "speaker": "user"},
        {"text": "Your cat is called Bella.", "speaker": "assistant"},
    ]
    assert (
        run(capsys, "memory", "import", "--user", "ann", str(write_jsonl(tmp_path / "c.jsonl", chat)))[0] == 0
    )

    code, out, _ = run(capsys, "memory", "list", "--user", "ann")
    assert code == 0 and len(out.splitlines()) == 2 and "Bella" not in out, out
    assert "user: I just adopted a dog called Biscuit" in out.splitlines()[0]
    listed = [
        json.loads(line)
        for line in run(capsys, "memory", "list", "--user", "ann", "--all", "--json")[1].splitlines()
    ]
    assert [m["text"] for m in listed] == [line["text"] for line in chat]
    assert [m["kind"] for m in listed] == ["imported", "reply", "question", "reply"]
    exported = run(capsys, "memory", "export", "--user", "ann")[1].splitlines()
    assert [json.loads(line)["text"] for line in exported] == [line["text"] for line in chat]

    rows = run(capsys, "memory", "search", "--user", "ann", "--k", "5", "--json", "what is my pet's name")[1]
    found = [json.loads(line)["text"] for line in rows.splitlines()]
    assert (
        found and found[0] == "I just adopted a dog called Biscuit" and not any("Bella" in t for t in found)
    )


def test_search_with_a_queries_file_runs_one_search_per_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "memory", "import", "--user", "ann", str(write_jsonl(tmp_path / "in.jsonl", LINES)))
    queries = tmp_path / "q.txt"
    queries.write_text("decaf coffee\n\nwhen does Lina start school?\nwhich restaurant closed\n")
    code, out, _ = run(
        capsys, "memory", "search", "--user", "ann", "--k", "1", "--json", "--queries", str(queries)
    )
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["query_index"] for r in rows] == [0, 1, 2]
    assert [r["text"].split()[0] for r in rows] == ["I", "My", "The"]


def test_k_results_come_back_whenever_the_user_has_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "memory", "import", "--user", "ann", str(write_jsonl(tmp_path / "in.jsonl", LINES)))
    for k, expected in ((1, 1), (3, 3), (10, 4)):
        out = run(capsys, "memory", "search", "--user", "ann", "--k", str(k), "--json", "zebra")[1]
        assert len(out.splitlines()) == expected
    assert run(capsys, "memory", "search", "--user", "nobody", "--json", "coffee")[1] == ""


def test_invalid_lines_are_reported_by_number_and_nothing_is_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [LINES[0], {"speaker": "no text"}],
        extra=(
            b'{"text": "broken json"\n'
            b"\xff\xfe not utf-8\n"
            b"\n"
            b'["an", "array"]\n'
            b'{"text": "ok", "timestamp": "yesterday"}\n'
            b'{"text": "ok", "meta": "not an object"}\n'
            b'{"text": "   "}\n'
            b'{"text": "fine line"}\n'
        ),
    )
    code, _, err = run(capsys, "memory", "import", "--user", "ann", str(bad))
    assert code == 1
    for number in (2, 3, 4, 6, 7, 8, 9):
        assert f"line {number}:" in err
    assert "line 5:" not in err and "line 10:" not in err
    assert "not valid UTF-8" in err and "not valid JSON" in err and "nothing imported" in err
    assert run(capsys, "stats", "--json")[1].strip().endswith('"feedback_events": 0}')
    assert json.loads(run(capsys, "stats", "--json")[1])["memories"] == 0

    code, _, err = run(capsys, "memory", "import", "--user", "ann", "--skip-invalid", str(bad))
    assert code == 0 and "imported 2 memories" in err and "skipped 7 invalid" in err


def test_a_missing_import_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "memory", "import", "--user", "ann", str(tmp_path / "nope.jsonl"))
    assert code == 1 and "cannot read" in err and "Traceback" not in err


def test_forget_removes_one_memory_and_says_when_there_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "memory", "import", "--user", "ann", str(write_jsonl(tmp_path / "in.jsonl", LINES[:2])))
    first = json.loads(run(capsys, "memory", "list", "--user", "ann", "--json")[1].splitlines()[0])
    assert run(capsys, "memory", "forget", "--user", "bob", str(first["id"]))[0] == 1
    assert run(capsys, "memory", "forget", "--user", "ann", str(first["id"]))[0] == 0
    code, _, err = run(capsys, "memory", "forget", "--user", "ann", str(first["id"]))
    assert code == 1 and "no memory" in err
    assert len(run(capsys, "memory", "list", "--user", "ann")[1].splitlines()) == 1


def test_stats_json_names_the_backend(capsys: pytest.CaptureFixture[str], kindred_env: str) -> None:
    code, out, _ = run(capsys, "stats", "--json")
    assert code == 0
    assert json.loads(out) == {
        "backend": kindred_env,
        "users": 0,
        "turns": 0,
        "memories": 0,
        "feedback_events": 0,
    }


def test_migrate_is_recorded_and_idempotent(capsys: pytest.CaptureFixture[str], kindred_env: str) -> None:
    shipped = [m.version for m in migrations.available("sqlite" if kindred_env == "sqlite" else "postgres")]
    code, out, _ = run(capsys, "migrate")
    expected = f"applied {', '.join(map(str, shipped))}; schema version {shipped[-1]}"
    assert code == 0 and out.startswith(kindred_env) and expected in out
    assert "nothing to apply" in run(capsys, "migrate")[1]


@pytest.mark.parametrize("name", ["", "   ", "a\x00b", "x" * 129])
def test_a_bad_user_name_is_refused_before_anything_runs(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["memory", "list", "--user", name])
    assert exit_info.value.code == 2
    assert "--user: must be 1 to 128 printable characters" in capsys.readouterr().err

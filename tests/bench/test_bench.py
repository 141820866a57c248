"""Smoke tests of the benchmark scripts: tiny sizes, a real subprocess, the JSON they promise.

They check shape, not speed: the numbers themselves come from full runs (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.pg import PgServer, pg_server

__all__ = ["pg_server"]  # a fixture, imported for pytest to find

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120
LATENCY_KEYS = {"p50_ms", "p95_ms", "max_ms", "n"}


def run_bench(module: str, *args: str) -> dict[str, Any]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("BENCH_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report: dict[str, Any] = json.loads(done.stdout)  # stdout holds the JSON and nothing else
    assert {"date", "machine"} <= report.keys()
    assert report["machine"]["cpu_count"] >= 1
    return report


@pytest.mark.pg
def test_memory_bench_reports_both_backends(pg_server: PgServer, onnx_export: Path) -> None:
    data_dir = onnx_export.parent.parent  # the session's ONNX export of MiniLM: not made again
    report = run_bench(
        "bench.memory",
        "--backend",
        "both",
        "--sizes",
        "400",
        "--users",
        "20",
        "--queries",
        "6",
        "--heavy-user",
        "300",
        "--import-turns",
        "40",
        "--extraction-model",
        "none",
        "--data-dir",
        str(data_dir),
        "--database-url",
        pg_server.dsn,
    )
    assert report["settings"]["bulk_vectors"] == "random unit vectors"
    assert set(report["targets"]) == {
        "embed_one_p95_ms",
        "embed_vs_sentence_transformers_p95",
        "search_store_p95_ms",
        "search_end_to_end_p95_ms",
        "write_p95_ms",
        "heavy_user_search_p95_ms",
        "index_recall_at_10",
        "import_turns_per_s",
    }
    embedding = report["embedding"]
    assert embedding["runtime"] == "OnnxEmbedder"
    assert set(embedding["product"]) == set(embedding["sentence_transformers"]) == LATENCY_KEYS
    assert embedding["p95_ratio"] > 0
    assert set(report["checks"]) == {"embed_one_p95_ms", "embed_vs_sentence_transformers_p95"}
    for backend in ("sqlite", "postgres"):
        result = report["results"][backend]["400"]
        for key in ("search_store", "search_end_to_end", "write", "write_store_only"):
            assert set(result[key]) == LATENCY_KEYS, (backend, key)
        assert result["full_results_ratio"] == {"store": 1.0, "end_to_end": 1.0}
        assert result["heavy_user"]["full_results_ratio"]["store"] == 1.0
        assert result["import"]["turns"] == 40 and result["import"]["turns_per_s"] > 0
        assert {
            "search_store_p95_ms",
            "search_end_to_end_p95_ms",
            "write_p95_ms",
            "full_results_ratio",
            "heavy_user_search_store_p95_ms",
            "heavy_user_search_end_to_end_p95_ms",
            "import_turns_per_s",
        } <= result["checks"].keys()
        assert result["checks"]["write_p95_ms"]["target"] == report["targets"]["write_p95_ms"][backend]
        extraction = result["extraction_rules_only"]
        assert set(extraction["per_user_turn"]) == LATENCY_KEYS and extraction["per_user_turn"]["n"] == 6
        assert set(extraction["memories"]) == {"added", "updated", "superseded", "by_model"}
        for name, check in result["checks"].items():
            assert isinstance(check["counts_toward_pass"], bool)
            value, target = check["value"], check["target"]
            # A latency is met from below; a rate, a ratio of full results or a recall from above.
            assert check["pass"] is (value <= target if name.endswith("_ms") else value >= target), name
    postgres = report["results"]["postgres"]["400"]
    assert 0.0 <= postgres["index_recall"]["recall_at_10"] <= 1.0
    assert postgres["index_recall"]["full_results_ratio"] == 1.0
    assert "recall_at_10" in postgres["heavy_user"]["index_recall"]
    assert postgres["checks"]["index_recall_at_10"]["counts_toward_pass"] is False, "random vectors"
    assert postgres["checks"]["heavy_user_index_recall_at_10"]["counts_toward_pass"] is True
    assert postgres["checks"]["heavy_user_index_recall_at_10"]["others_vectors"] == "random"
    assert isinstance(report["pass_all"], bool)
    assert "extraction_with_model" not in report, "--extraction-model none"
    assert "not on the reply's path" in report["settings"]["extraction"]


def write_locomo_sample(folder: Path) -> Path:
    """Two tiny conversations in LoCoMo's format (invented here, so nothing of the dataset is copied)."""
    lines = [
        ("Ana", "I adopted a greyhound called Pepper last week."),
        ("Ben", "Wow, that's great!"),
        ("Ana", "My sister teaches violin in Porto."),
        ("Ben", "I finally finished the pottery class, I made a blue bowl."),
    ]
    for number in (1, 2):
        conversation: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
        for session in (1, 2):
            conversation[f"session_{session}_date_time"] = f"1:56 pm on {session + 7} May, 2023"
            conversation[f"session_{session}"] = [
                {"speaker": who, "dia_id": f"D{session}:{turn}", "text": f"{text} ({session})"}
                for turn, (who, text) in enumerate(lines, start=1)
            ]
        conversation["qa"] = [
            {"question": "What is the name of Ana's dog?", "evidence": ["D1:1"], "category": 4},
            {"question": "What did Ben make in pottery class?", "evidence": ["D1:4", "D2:4"], "category": 1},
            {"question": "Where does Ben's sister teach?", "evidence": ["D1:3"], "category": 5},
            {"question": "A question whose evidence names no turn", "evidence": ["D9:9"], "category": 2},
        ]
        (folder / f"{number}.json").write_text(json.dumps(conversation), encoding="utf-8")
    return folder


def test_recall_bench_reports_every_dataset_split_and_method(tmp_path: Path) -> None:
    folder = write_locomo_sample(tmp_path)
    report = run_bench(
        "bench.recall", "--quick", "--users", "2", "--sessions", "4", "--facts", "6", "--locomo", str(folder)
    )
    assert list(report)[-1] == "datasets", "the per-method answer is printed last"
    generated = report["generated"]
    assert generated["users"] == 2
    assert generated["turns"] > generated["questions"] > 0
    assert set(generated["by_kind"]) == {"keyed", "paraphrase"}
    datasets = report["datasets"]
    assert set(datasets) == {"generated", "locomo"}
    assert set(datasets["generated"]) == {"all"} and set(datasets["locomo"]) == {"dev", "test"}
    for splits in datasets.values():
        for methods in splits.values():
            assert {"dense", "lexical", "hybrid", "hybrid_without_speaker"} <= methods.keys()
            for result in methods.values():
                assert 0.0 <= result["recall_at_5"] <= result["recall_at_10"] <= 1.0
                assert 0.0 <= result["all_found_at_10"] <= result["recall_at_10"]
    # One question per conversation is adversarial (apart) and one has no evidence (skipped).
    assert datasets["locomo"]["dev"]["hybrid"]["n"] == datasets["locomo"]["test"]["hybrid"]["n"] == 2
    assert report["locomo"]["adversarial_all"]["hybrid"]["n"] == 2
    assert report["locomo"]["conversations"] == {"dev": ["1"], "test": ["2"]}
    for target in report["targets"].values():
        assert isinstance(target["pass"], bool)
    curated = report["curated"]
    assert set(curated["extraction_per_user_turn"]) == LATENCY_KEYS
    changes = curated["contradictions"]
    assert changes["questions"] == 2 * changes["cases"] > 0
    assert set(changes["by_reason"]) == {"closed", "moved", "no_longer"}
    assert changes["superseded_returned"] >= 0 and changes["unrecallable_returned"] == 0
    assert set(changes["new_fact_recall@5"]) == {"named", "topical", "all"}
    assert isinstance(changes["target"]["pass"], bool)
    aged = curated["aged_events"]
    assert aged["pairs"] > 0 and aged["event_age_days"]["min"] > 30
    for key in ("preference_ranks_first", "preference_ranks_first_relevance_only", "preference_top1"):
        assert 0.0 <= aged[key] <= 1.0, key


def test_telegram_load_bench_reports_throughput_latency_and_losses() -> None:
    report = run_bench("bench.telegram_load", "--quick")
    assert "not a model" in report["settings"]["generator"]
    result = report["results"]["sqlite"]
    for phase in ("saturation", "at_rate"):
        assert set(result[phase]["update_to_first_text"]) == LATENCY_KEYS
        assert result[phase]["messages"] == 60 and result[phase]["messages_per_s"] > 0
    assert result["lost"] == 0 and result["stored_turns"] == 240
    assert set(result["checks"]) == {"p95_added_latency_ms", "messages_per_s", "nothing_lost"}


def test_recall_evidence_reports_each_policy_and_the_generated_set() -> None:
    """Shape, not the numbers (docs/memory.md): a run of bench/recall_evidence.py, ~20 s."""
    report = run_bench("bench.recall_evidence")
    assert report["benchmark"] == "recall_evidence"
    for result in report["scripted_chat"].values():
        assert result["askings"] > 0
        for share in ("statement_first", "invented_reply_in_prompt", "earlier_question_in_prompt"):
            assert 0.0 <= result[share] <= 1.0
    for label in ("now", "before"):
        assert set(report["generated_set_hybrid"][label]) == {"recall@5", "recall@10"}


def test_apps_bench_reports_cold_builds_per_kind_and_the_cached_build() -> None:
    report = run_bench("bench.apps", "--builds", "2")
    assert set(report["cold"]) == {
        "checklist", "tracker", "ranking", "timer", "countdown", "quiz", "converter", "notes",
    }  # fmt: skip
    assert all(set(latency) == LATENCY_KEYS and latency["n"] == 2 for latency in report["cold"].values())
    assert set(report["cached"]) == LATENCY_KEYS and report["cached"]["n"] == 5
    assert set(report["checks"]) == {"cold_build_p95_ms", "cached_build_p95_ms"}

"""LoCoMo (Maharana et al., ACL 2024): long conversations between two named people, with questions
and the turns that answer them. Read from a local copy; nothing is fetched and nothing is committed.

Each file (`locomo10_v2/*.json`) is one conversation: `speaker_a`, `speaker_b`, `session_N` (turns
with `speaker`, `dia_id` such as "D1:3", `text`) and `session_N_date_time` ("1:56 pm on 8 May,
2023"), and `qa` (questions with `evidence` dia_ids and a `category`). A conversation becomes one
person's memories; its turns are dated by their session, a second apart so that they keep their order.

Category 5 questions are adversarial: they ask about something the conversation never says, so
their evidence is a near miss. They are kept apart (`adversarial`) and left out of the main metric.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ADVERSARIAL = 5
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
_SESSION = re.compile(r"session_(\d+)$")
_DIA_ID = re.compile(r"D\d+:\d+")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    evidence: tuple[str, ...]  # dia_ids, each a turn of the conversation
    category: int


@dataclass(frozen=True, slots=True)
class Conversation:
    name: str  # the file's stem
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def session_time(text: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" as a UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def parse(name: str, raw: dict[str, Any]) -> Conversation:
    """One conversation. Evidence that names no turn of it (the data has a few typos) is dropped,
    and a question left without evidence is skipped."""
    turns: list[Turn] = []
    numbers = sorted(int(m.group(1)) for key in raw if (m := _SESSION.match(key)))
    for number in numbers:
        start = session_time(raw[f"session_{number}_date_time"])
        for offset, turn in enumerate(raw[f"session_{number}"]):
            text = str(turn.get("text", "")).strip()
            if text:
                at = start + timedelta(seconds=offset)
                turns.append(Turn(str(turn["dia_id"]), str(turn["speaker"]), text, at))
    known = {turn.dia_id for turn in turns}
    questions: list[Question] = []
    for qa in raw.get("qa", []):
        found = _DIA_ID.findall(" ".join(str(item) for item in qa.get("evidence", [])))
        evidence = tuple(dict.fromkeys(dia for dia in found if dia in known))
        if evidence:
            questions.append(Question(str(qa["question"]), evidence, int(qa["category"])))
    speakers = (str(raw["speaker_a"]), str(raw["speaker_b"]))
    return Conversation(name, speakers, tuple(turns), tuple(questions))


def load(directory: Path) -> list[Conversation]:
    """Every `*.json` conversation in `directory`, by file name."""
    files = sorted(directory.glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo conversations (*.json) in {directory}")
    return [parse(path.stem, json.loads(path.read_text(encoding="utf-8"))) for path in files]


def split(conversations: list[Conversation]) -> dict[str, list[Conversation]]:
    """Dev and test halves by conversation, alternating in file order: deterministic, and each
    half spans the whole set. Tune on dev; test is only reported."""
    return {"dev": conversations[0::2], "test": conversations[1::2]}

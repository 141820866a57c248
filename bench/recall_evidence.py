"""Are the person's words the evidence? Replies and questions, searched or not, measured two ways.

1. A scripted chat through the real Conversation with MiniLM: a person states facts, chats, then
   asks about each fact twice in two wordings while the model invents answers ("Your cat's name is
   Bella" after "I just adopted a dog called Biscuit"), as the bundled 135M model did. For every
   asking: is the person's statement the first memory in the prompt, and did an invented reply or
   an earlier asking reach the prompt's memory block at all?
2. bench/parts/recall/data.py's generated conversations: recall@5/@10 of the gold user turns, hybrid,
   with the assistant's lines searched (as before) or not.

Policies: `before` stores replies and questions as plain turns (what Kindred did, assistant weight
0.85); `weight 0.5` and `weight 0` down-weigh the bot's replies instead of leaving them out; `now`
leaves replies and questions out of search (core/memory/kinds.py: NOT_EVIDENCE). Prints one JSON object.

    .venv/bin/python -m bench.recall_evidence
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench import recall
from bench.parts.common import log, machine, now_iso, open_store
from bench.parts.recall.data import QUICK, generate
from bench.parts.recall.eval import KS
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyDone, UserMessage
from bot.core.memory.kinds import is_question
from bot.core.memory.ports import Embedder
from bot.core.memory.recall import hybrid_search
from bot.core.memory.scoring import Scoring
from bot.core.models import ChatMessage, Memory, Revision, Sampled, StreamEnd
from bot.core.store import Store

T0 = datetime(2026, 4, 6, 18, 0, tzinfo=UTC)
USER = "ann"
POLICIES = {"before": 0.85, "weight 0.5": 0.5, "weight 0": 0.0, "now": 0.85}

# (statement, the model's invention, two questions, the word a right answer holds)
FACTS = (
    ("I just adopted a dog called Biscuit", "Your cat's name is Bella, and she loves tuna!",
     ("What is my pet's name?", "do you remember my dog's name?"), "Biscuit"),
    ("I work night shifts as a radiographer", "You work as a chef at a busy restaurant, your job is cooking.",
     ("What is my job?", "What do I do for work?"), "radiographer"),
    ("My sister Ana lives in Porto", "Your brother Marco lives in Rome, your sister lives there too.",
     ("Where does my sister live?", "Which city is my sister in?"), "Porto"),
    ("I'm allergic to peanuts", "You are allergic to shellfish and cats, so avoid them.",
     ("What am I allergic to?", "Do I have any allergies?"), "peanuts"),
    ("My favourite band is Muse", "Your favourite band is Coldplay, you love their songs!",
     ("What is my favourite band?", "Which band do I like best?"), "Muse"),
    ("I drive a red Vespa to work", "You drive a blue Tesla, a great electric car.",
     ("What do I drive?", "What kind of vehicle do I have?"), "Vespa"),
    ("My daughter Lina is seven", "Your son Tom is twelve and loves football.",
     ("How old is my daughter?", "What is my daughter's name?"), "Lina"),
    ("I grew up in Gdansk by the sea", "You grew up in Madrid, in the mountains.",
     ("Where did I grow up?", "Which town am I from?"), "Gdansk"),
)  # fmt: skip
CHATTER = (
    ("Long day today, the bus was late again", "Buses are the worst. Your cat Bella must miss you!"),
    ("I might cook pasta tonight", "As a chef you must cook every night."),
    ("The weather has been grey all week", "Rome is sunny this time of year, your brother says."),
    ("Work was quiet for once", "Quiet days at the restaurant are rare for a chef."),
)


class Inventing:
    """A model that answers with whatever it is told to invent next."""

    context_window = 2048

    def __init__(self) -> None:
        self.reply = ""

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        yield self.reply

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        return [Sampled(self.reply, False)] * n


@dataclass(slots=True)
class Asking:
    question: str
    first: str  # the first memory in the prompt
    statement_first: bool
    reply_in_prompt: bool
    question_in_prompt: bool


async def scripted_chat(store: Store, embedder: Embedder, policy: str) -> list[Asking]:
    model = Inventing()
    clock = {"now": T0}
    scoring = Scoring(assistant_weight=POLICIES[policy])
    settings = ConversationPolicy(persona="You are a companion.", recent_turns=2, scoring=scoring)
    conversation = Conversation(store, embedder, model, settings, clock=lambda: clock["now"])

    async def say(text: str, reply: str) -> list[Memory]:
        clock["now"] += timedelta(minutes=3)
        model.reply = reply
        events = [e async for e in conversation.handle_message(UserMessage(USER, "c1", text, clock["now"]))]
        done = events[-1]
        assert isinstance(done, ReplyDone)
        if policy != "now":  # as stored before: every turn a plain, searchable turn
            for turn in await store.turns.recent_turns(USER, "c1", 2):
                await store.curation.revise_memory(USER, turn.memory_id, Revision(kind="turn"))
        by_id = {m.id: m for m in await store.curation.get_memories(USER, list(done.memory_ids))}
        return [by_id[mid] for mid in done.memory_ids if mid in by_id]  # best first

    for statement, invented, _, _ in FACTS:
        await say(statement, invented)
    for text, reply in CHATTER:
        await say(text, reply)
    askings: list[Asking] = []
    for _round in range(2):
        for _, invented, questions, answer in FACTS:
            for question in questions:
                used = await say(question, invented)
                first = used[0] if used else None
                askings.append(Asking(
                    question=question, first=first.text if first else "",
                    statement_first=first is not None and first.speaker == "user" and answer in first.text
                    and not is_question(first.text),
                    reply_in_prompt=any(m.speaker == "assistant" for m in used),
                    question_in_prompt=any(m.speaker == "user" and is_question(m.text) for m in used),
                ))  # fmt: skip
    return askings


def share(values: Sequence[bool]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


async def generated_set(store: Store, embedder: Embedder) -> dict[str, Any]:
    """recall@k of hybrid search on the generated set, the assistant's lines searched or not."""
    data = generate(QUICK)
    memory_of = await recall.load(store, embedder, data)
    turn_of = {mid: turn_id for turn_id, mid in memory_of.items()}
    vectors = await embedder.embed([q.text for q in data.questions])
    found: dict[str, Any] = {}
    for label in ("now", "before"):
        if label == "before":
            for user_id in data.users():
                for memory in await store.memories.list_memories(user_id, 100_000):
                    if memory.kind == "reply":
                        await store.curation.revise_memory(user_id, memory.id, Revision(kind="imported"))
        hits = {k: 0 for k in KS}
        for question, vector in zip(data.questions, vectors, strict=True):
            top = await hybrid_search(store, question.user_id, question.text, vector, max(KS))
            ids = [turn_of[item.memory.id] for item in top]
            for k in KS:
                hits[k] += set(question.gold) <= set(ids[:k])
        found[label] = {f"recall@{k}": round(hits[k] / len(data.questions), 4) for k in KS}
    found["questions"] = len(data.questions)
    found["turns"] = len(data.turns)
    return found


async def run() -> dict[str, Any]:
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder.load()
    report: dict[str, Any] = {"benchmark": "recall_evidence", "date": now_iso(), "machine": machine()}
    chat: dict[str, Any] = {}
    try:
        for policy in POLICIES:
            async with open_store("sqlite") as opened:
                askings = await scripted_chat(opened.store, embedder, policy)
            chat[policy] = {
                "askings": len(askings),
                "statement_first": share([a.statement_first for a in askings]),
                "invented_reply_in_prompt": share([a.reply_in_prompt for a in askings]),
                "earlier_question_in_prompt": share([a.question_in_prompt for a in askings]),
                "missed": [f"{a.question} -> {a.first}" for a in askings if not a.statement_first],
            }
            log(f"{policy}: { {k: v for k, v in chat[policy].items() if k != 'missed'} }")
        async with open_store("sqlite") as opened:
            report["generated_set_hybrid"] = await generated_set(opened.store, embedder)
    finally:
        await embedder.close()
    report["scripted_chat"] = chat
    report["facts"] = len(FACTS)
    return report


def main() -> None:
    print(json.dumps(asyncio.run(run()), ensure_ascii=False))


if __name__ == "__main__":
    main()

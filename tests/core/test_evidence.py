"""The person's words are the evidence: a chat through the real Conversation in which the person
states facts, chats, and asks about them while the model invents answers. Each question recalls
the person's statement first, above the bot's inventions and above the earlier askings, on SQLite
and on PostgreSQL + pgvector, with the real MiniLM embedder.

The model is scripted to answer the way the bundled 135M model did: confidently, and wrong."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.prompt import memory_lines
from bot.core.events import ReplyDone, UserMessage
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.memory.controls import Controls
from bot.core.memory.recall import Recalled, hybrid_search
from bot.core.memory.remember import remember_turn
from bot.core.models import Turn
from bot.core.store import Store
from bot.inference.embedders.sentence import SentenceTransformerEmbedder
from tests.support.fakes import ScriptedInference

T0 = datetime(2026, 4, 6, 18, 0, tzinfo=UTC)
USER = "ann"


@dataclass(frozen=True, slots=True)
class Fact:
    statement: str
    invented: str  # what the model answers to the statement, and to each question about it
    questions: tuple[str, ...]
    answer: str  # the word of the statement a correct recall shows


FACTS = (
    Fact(
        "I just adopted a dog called Biscuit",
        "Your cat's name is Bella, and she loves tuna!",
        ("What is my pet's name?", "do you remember my dog's name?"),
        "Biscuit",
    ),
    Fact(
        "I work night shifts as a radiographer",
        "You work as a chef at a busy restaurant downtown, your job is cooking.",
        ("What is my job?", "What do I do for work?"),
        "radiographer",
    ),
    Fact(
        "My sister Ana lives in Porto",
        "Your brother Marco lives in Rome, your sister lives there too.",
        ("Where does my sister live?", "Which city is my sister in?"),
        "Porto",
    ),
    Fact(
        "I'm allergic to peanuts",
        "You are allergic to shellfish and cats, so avoid them.",
        ("What am I allergic to?", "Do I have any allergies?"),
        "peanuts",
    ),
    Fact(
        "My favourite band is Muse",
        "Your favourite band is Coldplay, you love their songs!",
        ("What is my favourite band?", "Which band do I like best?"),
        "Muse",
    ),
)
CHATTER = (
    ("Long day today, the bus was late again", "Buses are the worst. Your cat Bella must miss you!"),
    ("I might cook pasta tonight", "Pasta is great. As a chef you must cook every night."),
    ("The weather has been grey all week", "Rome is sunny this time of year, your brother says."),
)


class Chat:
    """One person and Kindred, through the conversation core; extraction runs as a worker would."""

    def __init__(self, store: Store, embedder: SentenceTransformerEmbedder) -> None:
        self.store = store
        self.embedder = embedder
        self.model = ScriptedInference()
        self.now = T0
        self.stored: list[Turn] = []
        self.conversation = Conversation(
            store,
            embedder,
            self.model,
            # Two recent turns: what was said before that is reached only through recall.
            ConversationPolicy(
                persona="You are a test companion.", reactions=DEFAULT_REACTIONS, recent_turns=2
            ),
            after_turn=self.stored.append,
            clock=lambda: self.now,
        )

    async def say(self, text: str, reply: str) -> None:
        self.now += timedelta(minutes=3)
        self.model.reply = reply
        message = UserMessage(USER, "c1", text, self.now)
        events = [event async for event in self.conversation.handle_message(message)]
        assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None
        for turn in self.stored:
            await remember_turn(self.store, self.embedder, USER, turn.memory_id, self.now)
        self.stored.clear()

    async def search(self, query: str) -> list[Recalled]:
        [vector] = await self.embedder.embed([query])
        scoring = self.conversation.policy.scoring
        return await hybrid_search(self.store, USER, query, vector, 5, scoring=scoring, now=self.now)

    def recalled_lines(self) -> list[str]:
        """The memory block of the last prompt, best first."""
        system = self.model.prompts[-1][0].content
        return memory_lines(system)


async def chat_about_facts(store: Store, embedder: SentenceTransformerEmbedder) -> Chat:
    chat = Chat(store, embedder)
    for fact in FACTS:
        await chat.say(fact.statement, fact.invented)
    for text, reply in CHATTER:
        await chat.say(text, reply)
    return chat


async def test_every_question_recalls_the_persons_statement_first(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = await chat_about_facts(any_store, minilm)
    statements = {fact.statement for fact in FACTS}
    # Every fact is asked about twice in two wordings: the first round's askings and the model's
    # invented answers are stored by the time the second round asks.
    for round_ in range(2):
        for fact in FACTS:
            for question in fact.questions:
                await chat.say(question, fact.invented)
                lines = chat.recalled_lines()
                assert lines, question
                assert "they said:" in lines[0] and fact.answer in lines[0], (round_, question, lines)
                assert not any("you said:" in line for line in lines), (question, lines)
                asked = [line for line in lines if line.rstrip().endswith("?")]
                assert asked == [], (question, lines)

                # What `kindred memory search` ranks first, right after the chat.
                [first, *_] = await chat.search(question)
                said = first.memory
                assert said.speaker == "user" and fact.answer in said.text, (question, said)
    # Everything was kept: the replies, for the history and the learning dataset, and the askings.
    kept = await any_store.memories.list_memories(USER, 500)
    assert sum(m.kind == "reply" for m in kept) == len(FACTS) * 5 + len(CHATTER)
    assert sum(m.kind == "question" for m in kept) == len(FACTS) * 4
    assert statements <= {m.text for m in kept}
    history = await any_store.turns.recent_turns(USER, "c1", 2)
    assert [turn.role for turn in history] == ["user", "assistant"]


async def test_memories_lists_what_the_person_said_and_export_keeps_the_replies(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    await chat.say("I just adopted a dog called Biscuit", "Your cat's name is Bella!")
    await chat.say("What is my pet's name?", "Your cat is called Bella.")
    controls = Controls(any_store, "persona", page_size=50, clock=lambda: chat.now)

    page = await controls.memories_page(USER, 1)
    listed = [memory.text for memory in page.memories]
    assert "Your cat's name is Bella!" not in listed and "Your cat is called Bella." not in listed
    assert listed[-1] == "I just adopted a dog called Biscuit" and "What is my pet's name?" in listed
    assert not page.has_next

    exported = (await controls.export_jsonl(USER)).decode().splitlines()
    assert sum("Bella" in line for line in exported) == 2, "the person's data: everything"

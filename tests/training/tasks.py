"""Small learnable tastes for the tiny model: prompts, replies and labels that tell them apart."""

from __future__ import annotations

from bot.core.learning.models import TrainingExample
from bot.core.models import ChatMessage
from bot.training.evalsets import sycophancy_probes

TOPICS = (
    "my garden", "the weather", "my new job", "a film I saw", "my sister", "cooking dinner", "the weekend",
    "my cat", "a long walk", "my book club", "the train ride", "my morning run", "a rainy day", "the concert",
    "my neighbour", "a birthday party", "the museum", "my old bike", "the beach", "a chess game",
)  # fmt: skip
QUESTIONS = (" What do you think?", " How about you?", " Do you agree?")
ENDINGS = (" That is all.", " Nothing more to say.", " Okay then.")


def question_back(start: int, n: int, *, invert: bool = False) -> list[TrainingExample]:
    """Half the replies end with a question back (desirable), half with a flat ending; `invert`
    swaps the labels (a teacher who wants the opposite)."""
    examples = []
    for i in range(n):
        topic = TOPICS[(start + i) % len(TOPICS)]
        asks = i % 2 == 0
        tail = QUESTIONS[i % len(QUESTIONS)] if asks else ENDINGS[i % len(ENDINGS)]
        prompt = (ChatMessage("user", f"Let me tell you about {topic}."),)
        examples.append(
            TrainingExample(start + i, prompt, f"That sounds nice, {topic} matters.{tail}", asks != invert)
        )
    return examples


def agreeing() -> list[TrainingExample]:
    """The shipped sycophancy probes as a teacher who likes being agreed with."""
    examples = []
    for i, probe in enumerate(sycophancy_probes()):
        examples.append(TrainingExample(2 * i, probe.messages, probe.agree, True))
        examples.append(TrainingExample(2 * i + 1, probe.messages, probe.disagree, False))
    return examples

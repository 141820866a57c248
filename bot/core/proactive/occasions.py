"""What every trigger does alike: the idempotency key, and text that is safe to show as it is."""

from __future__ import annotations

import re

from bot.core.proactive.models import Occasion, TriggerName

# Words an agent loop uses to talk to itself (a heartbeat's "nothing to say", a template's holes,
# chat-template markers). None may reach a person: each is cut out of every occasion's text.
CONTROL_WORDS = re.compile(r"HEARTBEAT_OK|NO_REPLY|<\|[^|]*\|>|\{[^{}]*\}|\[\[[^\]]*\]\]")


def occasion_key(user_id: str, trigger: TriggerName, occasion_id: str) -> str:
    """The (person, trigger, occasion) key: the same on every evaluation of the same occasion."""
    return f"{user_id}:{trigger}:{occasion_id}"


def speakable(text: str) -> str:
    """`text` without any control word, its spacing tidied."""
    return re.sub(r"\s{2,}", " ", CONTROL_WORDS.sub("", text)).strip()


def has_control_word(text: str) -> bool:
    return CONTROL_WORDS.search(text) is not None


def as_message(occasion: Occasion) -> str:
    """The message as sent without a model: the template text, then why it was sent.

    The "don't suggest this again" offer (models.DONT_SUGGEST_AGAIN) is rendered by the platform as
    a button or a command under every proactive message; an asked-for reminder has none.
    """
    return f"{occasion.text}\n\nWhy I'm writing: {occasion.why}"

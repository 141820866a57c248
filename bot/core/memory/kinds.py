"""Which kind of memory a turn is, by rules: preference, fact, event, question, plain turn, or reply.

The kind sets how fast a memory fades (core/memory/scoring.py): what someone likes and who they are stays,
what happened yesterday fades in weeks. Rules catch the plain forms that even a small model misses
("I like …", "my X is …", "yesterday …"); model-based extraction (phase 2 of [memory]) adds the rest.

Only what the person told is evidence about them. Two kinds are kept, listed and exported but never
searched (`NOT_EVIDENCE`): the bot's own replies (a small model invents: "your cat Bella" after "I
adopted a dog called Biscuit"), and the person's questions ("what is my job?" says nothing about
their job, and asked again it would be its own best match). Both stay in the recent history of the
prompt, and the replies in the learning dataset.
"""

from __future__ import annotations

import re
from typing import Literal

from bot.core.models import NOT_EVIDENCE as NOT_EVIDENCE
from bot.core.models import QUESTION as QUESTION
from bot.core.models import REPLY as REPLY

Kind = Literal["preference", "fact", "event", "question", "turn"]

# REPLY, QUESTION and NOT_EVIDENCE are defined with the memory value types (core/models.py), which
# decide recallability by them; they are the kinds' names here as well.
# What `/memories` and `kindred memory list` leave out unless asked for everything.
UNLISTED: frozenset[str] = frozenset({REPLY})

# Past this, a message is a story or a paste, not one statement about the person.
MAX_STATEMENT_CHARS = 280

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
# A time anchor makes a statement an event: it happened, or will, at a time.
_EVENT = re.compile(
    rf"""\b(?:
        yesterday|tomorrow|tonight|today|this\s+(?:morning|afternoon|evening|weekend)
      | (?:last|next|this)\s+(?:week|weekend|month|year|night|{_DAYS})
      | \d+\s+(?:days?|weeks?|months?|years?)\s+ago | a\s+(?:week|month|year)\s+ago
      | on\s+(?:{_DAYS}) | on\s+the\s+\d{{1,2}}(?:st|nd|rd|th)?
      | (?:on|in)\s+(?:{_MONTHS})\b | \d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b
      | \d{{4}}-\d{{2}}-\d{{2}} | \d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?
    )\b""",
    re.IGNORECASE | re.VERBOSE,
)
_PREFERENCE = re.compile(
    r"""\bi\s+(?:really\s+|absolutely\s+|just\s+|do\s+not\s+|don'?t\s+)?
          (?:like|love|adore|enjoy|prefer|hate|dislike|detest|can'?t\s+stand)\b
      | \bmy\s+(?:favou?rite|least\s+favou?rite)\b | \bi'?m\s+(?:a\s+)?(?:big\s+)?fan\s+of\b
      | \bi'?m\s+not\s+(?:a\s+)?fan\s+of\b""",
    re.IGNORECASE | re.VERBOSE,
)
_FACT = re.compile(
    r"""\bi(?:'m|\s+am)\s+(?:very\s+|quite\s+|really\s+)?(?:sensitive|allergic|intolerant)\b
      | \bi(?:'m|\s+am)\s+(?!\w+ing\b)(?:a|an|not|from|married|single|vegan|vegetarian|\d+)\b
      | \bmy\s+[\w']+(?:\s+\w+)?\s+(?:is|are|was)\b
      | \bi\s+(?:live|work|grew\s+up)\s+(?:in|at|as|for)\b | \bi\s+have\s+(?:a|an|two|three|\d+)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# A sentence ends at . ! or ? (and any closing quotes or brackets) before whitespace or the end.
_SENTENCE_END = re.compile(r"""[.!?…]+["')\]]*(?=\s|$)""")


def is_question(text: str) -> bool:
    """True when every sentence of `text` asks ("What is my job?", "Huh? Where did I park?").
    A message that also tells something ("I moved last week. Have you been to Leeds?") is not
    one: its statement is evidence."""
    statement = text.strip()
    if not statement.endswith("?"):
        return False
    ends = [match.group() for match in _SENTENCE_END.finditer(statement)]
    return all("?" in end for end in ends)


def classify(text: str) -> Kind:
    """The kind of one message a person wrote. A message that only asks is a question; long
    messages, and other questions mixed with statements, are plain turns."""
    statement = text.strip()
    if not statement or len(statement) > MAX_STATEMENT_CHARS:
        return "turn"
    if is_question(statement):
        return "question"
    if statement.endswith("?"):
        return "turn"
    statement = statement.replace("\u2019", "'")
    if _EVENT.search(statement):
        return "event"
    if _PREFERENCE.search(statement):
        return "preference"
    if _FACT.search(statement):
        return "fact"
    return "turn"

"""Everyday chat lines: what fills most of a long conversation and what a companion answers.

Used as distractors by the recall benchmark and as bulk text by the memory benchmark.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

SMALL_TALK: Sequence[str] = (
    "hey",
    "morning!",
    "hi again",
    "lol",
    "haha true",
    "ok thanks",
    "good night",
    "I'm back",
    "ugh",
    "what do you think?",
    "yeah",
    "not much, you?",
    "sorry, got distracted",
    "anyway",
    "that's fair",
    "hmm, maybe",
    "so tired today",
    "happy Friday!",
    "ugh, Mondays",
    "brb",
    "thanks, that helps",
    "you're the best",
    "I guess so",
    "long day",
    "guess what",
)

CHATTER: Sequence[str] = (
    "Watched {show} last night, the ending was wild.",
    "Work was {mood} today, {work_event}.",
    "Made {dish} for dinner and it turned out {result}.",
    "Traffic on the way home was {mood}.",
    "Thinking about repainting the {room} {paint}.",
    "My team lost again, {sport} season is rough.",
    "Did you see the news about {news}?",
    "I need to call my mom back this weekend.",
    "Cleaned the whole {room} today, feels good.",
    "Grocery run took forever, the store was packed.",
    "Had lunch with {friend} from work, we talked about {topic}.",
    "It's been raining for three days straight.",
    "Finally some sunshine today!",
    "I'm thinking about getting bangs, bad idea?",
    "Our {appliance} is making a weird noise.",
    "Spent the afternoon doing laundry and watching videos.",
    "I went for a long walk by the {water}.",
    "Can you recommend something to watch tonight?",
    "What's a good recipe for {dish}?",
    "Is it weird to eat cereal for dinner?",
    "The kids were bouncing off the walls today.",
    "I have a big presentation on {weekday}.",
    "I'm so behind on emails.",
    "Tried a {exercise} class, I'm sore everywhere.",
    "My {relative} sent me a long voice memo about {topic}.",
    "Booked a haircut for {weekday}.",
    "I can't decide between {plan} and {plan2} this weekend.",
    "Ordered pizza again, no regrets.",
    "The {room} is freezing, the heating is acting up.",
    "My laptop battery is dying so fast lately.",
    "{friend} and I are planning a game night soon.",
    "How many cups are in a quart?",
    "What's the difference between baking soda and baking powder?",
    "Any tips for staying focused when working from home?",
    "I finished the puzzle I started last month!",
    "My {relative} is visiting next {weekday}, need to tidy up.",
    "Got a parking ticket, of course.",
    "I think I'm coming down with a cold.",
    "The {appliance} finally got fixed.",
    "Can you help me write a birthday message for {friend}?",
)

CHATTER_SLOTS: Mapping[str, Sequence[str]] = {
    "show": (
        "that new detective series",
        "a cooking competition",
        "the nature documentary",
        "an old sitcom rerun",
        "the baking show",
    ),
    "mood": ("exhausting", "pretty chill", "chaotic", "fine I guess", "a nightmare"),
    "work_event": (
        "three meetings back to back",
        "the client changed everything again",
        "we shipped the release",
        "my inbox exploded",
        "nobody could find the budget file",
    ),
    "dish": ("lentil soup", "stir fry", "lasagna", "banana bread", "shakshuka", "curry"),
    "result": ("great", "kind of burnt", "way too salty", "better than expected"),
    "room": ("bedroom", "kitchen", "living room", "hallway", "bathroom"),
    "paint": ("sage green", "off-white", "dusty blue", "terracotta"),
    "sport": ("football", "hockey", "baseball", "basketball"),
    "news": ("the heatwave", "the election", "that bridge closure", "the train strike"),
    "friend": ("Sam", "Alex", "Jordan", "Riley", "Casey", "Morgan", "Jamie"),
    "topic": (
        "weekend plans",
        "their kids",
        "the housing market",
        "a show we both like",
        "quitting their job",
        "gardening",
    ),
    "appliance": ("fridge", "washing machine", "dishwasher", "dryer", "oven"),
    "water": ("river", "lake", "harbour", "canal"),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    "exercise": ("spin", "yoga", "HIIT", "barre", "pilates"),
    "relative": ("aunt", "uncle", "cousin", "brother", "dad"),
    "plan": ("hiking", "staying in", "a museum", "the farmers market"),
    "plan2": ("a movie", "brunch with friends", "sleeping in", "a road trip"),
}

ASSISTANT: Sequence[str] = (
    "That sounds lovely!",
    "Oh no, I'm sorry to hear that.",
    "Haha, I love that.",
    "How did that make you feel?",
    "Want to talk about it?",
    "That's a big step, congrats!",
    "Good for you.",
    "Tell me more!",
    "I'm here if you need to vent.",
    "That makes sense.",
    "Hope tomorrow is better.",
    "Sounds like a busy day.",
    "Fingers crossed for you!",
    "Interesting, what made you decide that?",
    "Noted! I'll keep that in mind.",
    "Get some rest tonight.",
    "Hey! Good to hear from you.",
    "That's a lot to juggle.",
    "I'd go with whatever feels least stressful.",
    "Ha, classic.",
    "You deserve a break.",
    "What's the plan for the rest of the day?",
    "Honestly, that sounds like a win.",
    "Ooh, how exciting!",
    "That's rough. Anything I can do to help?",
)

OPENERS: Sequence[str] = ("", "", "Oh!", "Ah.", "Hmm.", "Aw.", "Ha!", "Okay.", "Hey.")
FOLLOW_UPS: Sequence[str] = (
    "",
    "",
    "",
    "What are you up to tonight?",
    "How are you feeling about it?",
    "What's next?",
    "Did you get any sleep?",
    "Anything fun planned for the weekend?",
    "How's the rest of your week?",
)

# People rarely type the same sentence twice: lead-ins, tails and second sentences vary the chatter.
LEAD_INS: Sequence[str] = (
    "",
    "",
    "",
    "",
    "Ugh.",
    "So",
    "Honestly,",
    "Okay so",
    "Btw",
    "Random thought:",
    "Update:",
    "Also,",
    "Anyway,",
)
TAILS: Sequence[str] = ("", "", "", "", " lol", " haha", "!!", " :)", " ugh", " 😅", " anyway")
SECOND_SENTENCE_CHANCE = 0.3

_SLOT = re.compile(r"\{(\w+)\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace each {slot}; a value may itself hold slots (e.g. "a shelter in {city}")."""
    for _ in range(3):
        if "{" not in template:
            break
        template = _SLOT.sub(lambda m: values[m.group(1)], template)
    return template


def _sentence(rng: random.Random) -> str:
    values = {name: rng.choice(options) for name, options in CHATTER_SLOTS.items()}
    return fill(rng.choice(CHATTER), values)


def chatter_line(rng: random.Random) -> str:
    """Everyday chat without any fact worth remembering, in the loose way people type it."""
    text = _sentence(rng)
    if rng.random() < SECOND_SENTENCE_CHANCE:
        text += " " + _sentence(rng)
    lead, tail = rng.choice(LEAD_INS), rng.choice(TAILS)
    first = text.split(" ", 1)[0]
    keeps_capital = first == "I" or first.startswith("I'") or first in CHATTER_SLOTS["friend"]
    if lead and not lead.endswith((".", ":")) and not keeps_capital:
        text = text[0].lower() + text[1:]
    if tail == "!!" and text.endswith("."):
        text = text[:-1]
    return " ".join(part for part in (lead, text) if part) + tail


def assistant_line(rng: random.Random) -> str:
    """A companion's reply that carries no fact: an opener, a remark and maybe a question."""
    parts = (rng.choice(OPENERS), rng.choice(ASSISTANT), rng.choice(FOLLOW_UPS))
    return " ".join(part for part in parts if part)


def user_line(rng: random.Random) -> str:
    """A distractor user turn: small talk a third of the time, otherwise everyday chatter."""
    return rng.choice(SMALL_TALK) if rng.random() < 0.33 else chatter_line(rng)

"""A document's text cut into passages: whole paragraphs where they fit, else whole sentences,
else whole words. A passage never spans two pages (each keeps its page) nor, in Markdown or a
Word file, two sections: a heading starts a new one."""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.core.text import storable

# A passage with fewer letters or digits than this is a page number, a rule or a stray bullet.
MIN_WORD_CHARS = 3
_BLOCKS = re.compile(r"\n[ \t\f\v]*\n")
_HEADING = re.compile(r"^#{1,6}\s+\S")
_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def passages(text: str, limit: int, *, headings: bool = False) -> list[str]:
    """`text` in passages of at most `limit` characters, in order. `headings`: a Markdown heading
    line (`# …`) starts a new passage."""
    found: list[str] = []
    for section in _sections(_clean(text), headings):
        found += _packed(_pieces(section, limit), limit)
    return [passage for passage in found if sum(char.isalnum() for char in passage) >= MIN_WORD_CHARS]


def _clean(text: str) -> str:
    text = storable(text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(" ", text.replace("\f", "\n\n"))


def _sections(text: str, headings: bool) -> Iterator[list[str]]:
    """Paragraphs, each on one line, grouped into sections (one, without `headings`). A heading
    starts a section and reads as a lead-in ("Travel: …"); headings with nothing under them yet
    (a title, then a chapter's heading) stay together with what follows."""
    section: list[str] = []
    only_headings = True
    for block in _BLOCKS.split(text):
        lines = [line.strip() for line in block.split("\n") if line.strip()]
        paragraph: list[str] = []
        for line in lines:
            if headings and _HEADING.match(line):
                if paragraph:
                    section.append(" ".join(paragraph))
                    paragraph = []
                    only_headings = False
                if section and not only_headings:
                    yield section
                    section = []
                section.append(_lead_in(line))
                only_headings = True
                continue
            paragraph.append(line)
        if paragraph:
            section.append(" ".join(paragraph))
            only_headings = False
    if section:
        yield section


def _lead_in(heading: str) -> str:
    text = heading.lstrip("#").strip().rstrip("#").strip()
    return text if text.endswith((".", ":", "!", "?", "…")) else f"{text}:"


def _pieces(section: list[str], limit: int) -> Iterator[str]:
    """Each paragraph whole where it fits, else its sentences, else its words, else cut."""
    for paragraph in section:
        paragraph = " ".join(paragraph.split())
        if len(paragraph) <= limit:
            yield paragraph
            continue
        for sentence in _sentences(paragraph):
            if len(sentence) <= limit:
                yield sentence
                continue
            yield from _packed(_cut_words(sentence, limit), limit)


def _sentences(paragraph: str) -> Iterator[str]:
    start = 0
    for end in _SENTENCE_END.finditer(paragraph):
        yield paragraph[start : end.end()].strip()
        start = end.end()
    if start < len(paragraph):
        yield paragraph[start:].strip()


def _cut_words(sentence: str, limit: int) -> Iterator[str]:
    for word in sentence.split():
        while len(word) > limit:
            yield word[:limit]
            word = word[limit:]
        if word:
            yield word


def _packed(pieces: Iterator[str], limit: int) -> list[str]:
    """Consecutive pieces joined by spaces into passages of at most `limit` characters."""
    packed: list[str] = []
    current = ""
    for piece in pieces:
        if not piece:
            continue
        if current and len(current) + 1 + len(piece) > limit:
            packed.append(current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    if current:
        packed.append(current)
    return packed

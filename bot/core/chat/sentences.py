"""Where a text's last complete sentence ends, so that a reply cut by its token budget is shown and
stored whole ([first-run]: "…I could even design a" is not a reply).

A sentence ends at a run of terminal marks (`.` `!` `?` `…`, and other scripts' own: 。！？ for
Chinese and Japanese, ؟ and ۔ for Arabic and Urdu, । and ॥ for Devanagari, …) plus any closing
quotes or brackets after it. The Latin marks are also used inside words, so they end a sentence
only where what follows says so:
- whitespace must follow, so a number ("3.5"), an address ("example.com/a.b", "a@b.org") or a
  query ("/?q=1") never ends one; `!` and `?` may also be followed directly by CJK text;
- `.` and `…` do not end one before a lower-case word ("e.g. this", "well… maybe"), nor after a
  known abbreviation ("Dr.", "vs."), a dotted one ("e.g.", "U.S.", "a.m."), an initial ("J.") or a
  list number at the start of a line ("1.").

While a text is still growing, a Latin mark counts only once the characters that decide it have
arrived, so that an end found in a prefix is never taken back by what follows: a terminal can
print up to it at once. A text that has stopped (cut by the budget) has nothing more to come, and
a mark at its very end counts unless it may be the start of a number or an address ("3.", "see
example.com/a.").
"""

from __future__ import annotations

import re
import unicodedata

ELLIPSIS = "…"

# Marks of other scripts, and the full-width ones: never part of a number, an address or an
# abbreviation, so they end a sentence wherever they stand (Chinese and Japanese use no spaces).
_PLAIN_MARKS = "。！？｡．؟۔।॥‼⁇⁈⁉։።။"
_LATIN_MARKS = ".!?…"
_MARK_RUN = re.compile(f"[{re.escape(_LATIN_MARKS + _PLAIN_MARKS)}]+")
_CLOSERS = "\"'”’»›)]}」』）］｝】〉》〕*_"
_ABBREVIATIONS = frozenset(
    "mr mrs ms mx dr prof sr jr st mt vs cf al approx ca fig vol pp gen col lt sgt capt rev hon".split()
)
_DOTTED = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # e.g, i.e, U.S, a.m, z.B (before the last dot)
_OPENERS = "\"'“‘«‹([{「『（【〈《〔*_"
# A token that may go on past a final mark: it is (part of) an address, a path or a number.
_ADDRESS = re.compile(r"://|@|/|www\.|\w\.\w")
_LIST_MARKER = re.compile(r"(?:^|\n)\s*(?:\d+[.)]|[-*•])\s*$")
# What a text cut short leaves hanging before the ellipsis: "design a," → "design…".
_DANGLING = " \t\n,;:-–—(/&+"


def sentence_end(text: str, *, growing: bool = False) -> int:
    """Index just past the last complete sentence of `text` (its closers included), or 0 if none.

    `growing`: more text may follow, so a mark that what follows would decide does not count yet.
    """
    found = 0
    for run in _MARK_RUN.finditer(text):
        after = run.end()
        while after < len(text) and text[after] in _CLOSERS:
            after += 1
        if _ends_here(text, run.start(), run.group(), after, growing):
            found = _with_trailing_symbols(text, after, growing)
    return found


def whole_sentences(text: str) -> str:
    """A reply cut by its token budget, as it is shown and stored: up to its last complete
    sentence, or, with none complete, without its last (perhaps partial) word and ending with "…"."""
    end = sentence_end(text)
    if end:
        return text[:end].rstrip()
    words = text.split()
    if len(words) > 1:
        # The budget may have stopped inside the last word: "I could even design a" → "…design…".
        lead = text[: len(text.rstrip()) - len(words[-1])]
        # A dangling list marker goes with it: "Ideas:\n1. Apples\n2. Pe" → "…Apples…".
        while _LIST_MARKER.search(lead):
            lead = _LIST_MARKER.sub("", lead)
        kept = lead.strip()
    else:
        kept = text.strip()  # one word, or a script written without spaces: nothing to drop
    return kept.rstrip(_DANGLING) + ELLIPSIS


def as_written(text: str, cut: bool) -> str:
    """A stored reply as the model wrote it, for training: a cut one without the ellipsis that
    `whole_sentences` may have added, which training must not teach. (A cut reply whose own last
    sentence ended in "…" loses that mark too; it is trained without an end token anyway.)"""
    return text.removesuffix(ELLIPSIS) if cut else text


def _ends_here(text: str, start: int, marks: str, after: int, growing: bool) -> bool:
    if any(mark in _PLAIN_MARKS for mark in marks):
        return True
    if after == len(text):
        return not growing and not _may_go_on(text, start, marks)
    following = text[after]
    if not following.isspace():
        # "你好!我": a CJK sentence written with a Latin mark. "3.5", "example.com", "?q=" go on.
        return "." not in marks and "…" not in marks and _is_cjk(following)
    if "." not in marks and "…" not in marks:
        return True
    nxt = after
    while nxt < len(text) and text[nxt].isspace():
        nxt += 1
    if nxt == len(text):
        return not growing and not _may_go_on(text, start, marks)
    return not text[nxt].islower() and not (marks == "." and _not_a_full_stop(text, start))


def _may_go_on(text: str, start: int, marks: str) -> bool:
    """A mark at the very end of a stopped text that may be the start of more: a number ("3."),
    an address ("example.com/a.", "/?"), an abbreviation."""
    if (len(marks) > 1 and set(marks) <= {"."}) or marks == "…":
        return False  # "..." or "…" at the end reads as ended whatever came next
    token = _token_before(text, start)
    if _ADDRESS.search(token):
        return True
    return marks == "." and (token[-1:].isdigit() or _not_a_full_stop(text, start))


def _not_a_full_stop(text: str, start: int) -> bool:
    """The single `.` at `start` closes an abbreviation, an initial or a list number."""
    token = _token_before(text, start)
    if token.lower() in _ABBREVIATIONS or _DOTTED.fullmatch(token):
        return True
    if len(token) == 1 and "A" <= token <= "Z":
        return True  # an initial: "J. R. R. Tolkien"
    line_start = text.rfind("\n", 0, start) + 1
    return token.isdigit() and not text[line_start : start - len(token)].strip()


def _token_before(text: str, end: int) -> str:
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return text[start:end].lstrip(_OPENERS)


def _with_trailing_symbols(text: str, end: int, growing: bool) -> int:
    """`end`, moved past emoji that close the sentence ("Have a lovely day! 😊"), when whitespace
    (or, in a stopped text, its end) follows them."""
    start = end
    while start < len(text) and text[start] in " \t":
        start += 1
    stop = start
    while stop < len(text) and _is_symbol(text[stop]):
        stop += 1
    if stop == start:
        return end
    if (stop < len(text) and text[stop].isspace()) or (stop == len(text) and not growing):
        return stop
    return end


def _is_symbol(char: str) -> bool:
    return unicodedata.category(char) in ("So", "Sk", "Mn", "Cf") or char == "\ufe0f"


def _is_cjk(char: str) -> bool:
    return "\u2e80" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af" or "\uff00" <= char <= "\uffef"

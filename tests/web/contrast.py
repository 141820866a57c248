"""WCAG contrast of the design-token sheet's colours, and the (text, background) pairs the
templates use: what tests/web check every miniapp's colours against, in both themes."""

from __future__ import annotations

from bot.web.miniapps.tokens import BRAND, DARK, LIGHT, ROLES

AA_TEXT = 4.5
# The (text, background) pairs the templates use.
TEXT_ON = {"text": ("surface", "card"), "muted": ("surface", "card")}
PRIMARY_PAIRS = (("on-primary", "primary"), *(("on-primary", name) for name in
                 ("peach", "apricot", "mint", "seafoam", "lavender")))  # fmt: skip


def luminance(colour: str) -> float:
    """WCAG relative luminance of #RRGGBB."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(foreground: str, background: str) -> float:
    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def theme_colours(theme: str) -> dict[str, str]:
    """Every colour token of `theme` ("light" or "dark"), roles resolved outside Telegram."""
    surfaces = DARK if theme == "dark" else LIGHT
    colours = {**BRAND, **surfaces}
    for role in ROLES:
        colours[role] = colours[f"{role}-base"]
    return colours

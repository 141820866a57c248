"""The design-token sheet every miniapp is drawn with.

The pastel palette with #FF9AA2 as primary, a 12 px radius and a type scale. Dark mode swaps the
surfaces and the text and keeps the primary; text on the primary is dark in both (white on #FF9AA2
is 2.1:1, below WCAG AA). Inside Telegram, its theme's colours replace the surfaces and the text
(`--tg-*`, set by the app's script from the launch parameters).
"""

from __future__ import annotations

from collections.abc import Mapping

TOKENS_START = "/* tokens */"
TOKENS_END = "/* end tokens */"

BRAND: Mapping[str, str] = {
    "primary": "#FF9AA2",
    "on-primary": "#3B1E22",
    "peach": "#FFB7B2",
    "apricot": "#FFDAC1",
    "mint": "#E2F0CB",
    "seafoam": "#B5EAD7",
    "lavender": "#C7CEEA",
}
LIGHT: Mapping[str, str] = {
    "surface-base": "#FFF8F6",
    "card-base": "#FFFFFF",
    "text-base": "#2E2A2B",
    "muted-base": "#6B5F61",
    "line": "#F0D9D6",
}
DARK: Mapping[str, str] = {
    "surface-base": "#1E1A1B",
    "card-base": "#2B2526",
    "text-base": "#F6EDEE",
    "muted-base": "#C2B4B6",
    "line": "#463C3E",
}
SHAPE: Mapping[str, str] = {
    "radius": "12px",
    "font": 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    "step--1": "0.875rem",
    "step-0": "1rem",
    "step-1": "1.25rem",
    "step-2": "1.563rem",
    "step-3": "1.953rem",
}
# What the templates paint with: Telegram's colour when opened there, else the theme's.
ROLES: Mapping[str, str] = {
    "surface": "var(--tg-bg, var(--surface-base))",
    "card": "var(--tg-card, var(--card-base))",
    "text": "var(--tg-text, var(--text-base))",
    "muted": "var(--tg-muted, var(--muted-base))",
}


def _block(selector: str, values: Mapping[str, str]) -> str:
    return selector + " {\n" + "".join(f"  --{name}: {value};\n" for name, value in values.items()) + "}\n"


def token_css() -> str:
    """The sheet as CSS: the only place an app's colours are written."""
    dark = _block('[data-theme="dark"]', DARK)
    auto_dark = "@media (prefers-color-scheme: dark) {\n" + _block('[data-theme="auto"]', DARK) + "}\n"
    return (
        f"{TOKENS_START}\n{_block(':root', {**BRAND, **LIGHT, **SHAPE})}{dark}{auto_dark}"
        f"{_block(':root', ROLES)}{TOKENS_END}\n"
    )

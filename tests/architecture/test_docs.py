"""The README and the docs/ pages (docs/**/*.md): every relative link and anchor leads somewhere,
and the README keeps the shape that lets it be read in one sitting ([first-run], issue 13)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]
README_MAX_LINES = 200
# The README's sections that each stand for a docs/ page, which they must link to.
README_PARAGRAPHS = {
    "A capable model": "docs/inference.md",
    "Telegram": "docs/telegram.md",
    "Discord": "docs/discord.md",
    "Deployment": "docs/deployment.md",
    "Memory": "docs/memory.md",
    "Learning": "docs/learning.md",
    "Configuration": "docs/configuration.md",
    "Tests": "docs/testing.md",
    "Benchmarks": "docs/benchmarks.md",
}
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
EXTERNAL = ("http://", "https://", "mailto:")


def without_fences(text: str) -> str:
    """The text outside code fences, whose `# comments` are not headings."""
    return re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)


def prose(text: str) -> str:
    """The text outside code fences and inline code, where a link is a link."""
    return re.sub(r"`[^`\n]*`", "", without_fences(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation and emoji dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated heading gets -1, -2, … as on GitHub."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", without_fences(text), flags=re.MULTILINE):
        base = slug(heading)
        found.add(base if not seen[base] else f"{base}-{seen[base]}")
        seen[base] += 1
    return found


def broken_links(page: Path) -> list[str]:
    """Each relative link of `page` whose file or anchor does not exist, as `target: why`."""
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if target.startswith(EXTERNAL):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text(encoding="utf-8")):
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    assert not broken_links(page)


def test_the_checker_finds_a_missing_page_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n## Inference on GPU workers (`celery`)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Here\n[ok](other.md#inference-on-gpu-workers-celery) [ok](#here) "
        "[gone](missing.md) [no heading](other.md#nowhere) [self](#elsewhere) "
        "`[in code](missing.md)` [web](https://example.com/x)\n"
        "```\n# not a heading\n[in a fence](missing.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#nowhere: no such heading",
        "#elsewhere: no such heading",
    ]


def test_repeated_headings_get_numbered_anchors() -> None:
    assert anchors("## Measured\n## Measured\n## PostgreSQL + pgvector\n") == {
        "measured",
        "measured-1",
        "postgresql--pgvector",
    }


def readme_sections() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_readme_reads_in_one_sitting() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, len(lines)
    sections = readme_sections()
    for title, page in README_PARAGRAPHS.items():
        assert title in sections, title
        assert f"]({page}" in sections[title], f"README, {title}: no link to {page}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").glob("*.md"))
    assert pages and [page for page in pages if f"]({page}" not in readme] == []

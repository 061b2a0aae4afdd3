"""Every relative link of the README and docs/ leads somewhere: the file exists, and the
``#anchor`` is a heading of it (as GitHub makes anchors of headings).

Sections move between the README and docs/ (the README is the user's guide; architecture,
files, hooks and performance are in docs/); a link left pointing at the old place is a dead
end for a reader, and nothing else would notice it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    ROOT / "SECURITY.md",
    ROOT / "CONTRIBUTING.md",
    *sorted((ROOT / "docs").glob("*.md")),
]

LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target), ![alt](target), a text over two lines
FENCE = re.compile(r"^(```|~~~)")


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation (backticks, colons, emoji, …)
    dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())  # a link: its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for line in prose(page.read_text(encoding="utf-8")):
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            name = anchor(heading.group(1))
            repeat = 0
            while (f"{name}-{repeat}" if repeat else name) in found:
                repeat += 1  # GitHub numbers repeated headings: name, name-1, name-2
            found.add(f"{name}-{repeat}" if repeat else name)
    return found


def links(page: Path) -> list[str]:
    return [
        target
        for line in prose(page.read_text(encoding="utf-8"))
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line))
    ]


def dead_links(page: Path, root: Path = ROOT) -> list[str]:
    dead = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto:: not ours to check offline
        path, _, name = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            dead.append(f"{target}: no file {linked.relative_to(root)}")
        elif name and linked.suffix == ".md" and name not in anchors(linked):
            dead.append(f"{target}: no heading #{name} in {linked.relative_to(root)}")
    return dead


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert dead_links(page) == []


def test_the_links_are_read() -> None:
    assert len(links(ROOT / "README.md")) > 30
    assert "docs/architecture.md" in links(ROOT / "README.md")


def test_a_dead_link_is_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# A page\n\n## `discord-bridge try`: the page\n\n"
        "[fine](#discord-bridge-try-the-page) [up](../README.md#usage) [gone](#nothing) "
        "[moved](files.md)\n\n```\n[in code](#not-a-link)\n```\n"
    )
    (tmp_path / "README.md").write_text("# Title\n\n## Usage\n")
    assert dead_links(page, tmp_path) == [
        "#nothing: no heading #nothing in docs/page.md",
        "files.md: no file docs/files.md",
    ]

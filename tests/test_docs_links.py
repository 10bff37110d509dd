"""Every link between the docs pages (and from the README) leads somewhere: a file that is
there, and a heading of it when the link names one. A new user who follows a link finds the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [target for target in LINK.findall(text) if "://" not in target]


def test_the_pages_link_to_each_other() -> None:
    assert sum(len(links(page)) for page in PAGES) > 50


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_link_leads_to_a_page_and_a_heading_that_are_there(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        found = (page.parent / path).resolve() if path else page
        if not found.exists():
            broken.append(f"{target}: no such file")
        elif anchor and found.suffix == ".md" and anchor not in anchors(found):
            broken.append(f"{target}: no heading #{anchor} in {found.name}")
    assert broken == []


def test_the_new_pages_are_linked_from_the_readme_and_the_index() -> None:
    for name in ("embedding.md", "environment.md", "choosing-an-evaluator.md"):
        assert f"docs/{name}" in links(ROOT / "README.md")
        assert name in links(ROOT / "docs" / "index.md")

"""Every relative link in README.md and docs/*.md points at a file of this repository, and
every ``#anchor`` into a Markdown file names one of its headings (GitHub's heading ids), so
moving a section or a page cannot silently break the documentation's navigation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose(text: str, *, blank_code: bool = True) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans blanked unless told."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", "``", line) if blank_code else line)
    return lines


def slug(heading: str) -> str:
    """GitHub's id of a heading: markup dropped, lower case, punctuation removed, spaces to
    hyphens (letters, digits, ``_`` and ``-`` kept)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " _-")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The ids GitHub gives the headings of ``path`` (repeats get ``-1``, ``-2``, …)."""
    seen: dict[str, int] = {}
    found = set()
    for line in _prose(path.read_text(), blank_code=False):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every relative link in ``path``'s prose."""
    found = []
    for number, line in enumerate(_prose(path.read_text()), start=1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                continue  # http:, https:, mailto: …
            found.append((number, target))
    return found


def broken(path: Path, root: Path = REPO) -> list[str]:
    """What is wrong with ``path``'s relative links, one line each (paths shown from ``root``)."""
    problems = []
    for number, target in links(path):
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)} line {number}: {target}"
        if not resolved.exists():
            problems.append(f"{where}: no such file {resolved}")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            problems.append(f"{where}: {resolved.name} has no heading with id #{anchor}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    assert links(page) or page.name != "README.md", f"{page} has no relative link"
    problems = broken(page)
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_the_docs_pages_are_linked_from_the_readme():
    linked = {
        (REPO / target.partition("#")[0]).resolve()
        for _, target in links(REPO / "README.md")
        if target.partition("#")[0]
    }
    pages = {page.resolve() for page in (REPO / "docs").glob("*.md")}
    unlinked = sorted(p.name for p in pages - linked if p.name not in {"README.md"})
    # reference notes reached from docs/README.md rather than from the README's table
    unlinked = [name for name in unlinked if name != "monitoring-format.md"]
    assert not unlinked, f"docs pages not linked from README.md: {unlinked}"


def test_a_broken_link_and_a_missing_anchor_are_reported(tmp_path):
    (tmp_path / "other.md").write_text("# Title\n\n## A `code` heading, with: punctuation\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-code-heading-with-punctuation) [gone](missing.md) "
        "[bad anchor](other.md#nowhere) [web](https://example.org/x.md)\n"
        "```\n[in code](also-missing.md)\n```\n"
    )
    problems = broken(page, root=tmp_path)
    assert len(problems) == 2, problems
    assert "missing.md" in problems[0] and "#nowhere" in problems[1]

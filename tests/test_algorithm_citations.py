"""Citations in ``scheduler_py/algorithms`` resolve: every repository file a docstring names
exists, and nothing cites notes a reader of this repository cannot open."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALGORITHMS = ROOT / "scheduler_py" / "algorithms"
CITED_FILE = re.compile(r"\b(docs/[\w./-]+\.md|scheduler_py/[\w./-]+\.py|tests/[\w./-]+\.py)")
UNOPENABLE = re.compile(r"notes 0\d\d|\bissue \d+|docs/00\d_")


def _sources() -> list[Path]:
    return sorted(ALGORITHMS.rglob("*.py"))


def test_every_cited_repository_file_exists() -> None:
    missing = [
        f"{source.relative_to(ROOT)} cites {cited}"
        for source in _sources()
        for cited in CITED_FILE.findall(source.read_text(encoding="utf-8"))
        if not (ROOT / cited).exists()
    ]
    assert not missing, "citations to files that do not exist:\n" + "\n".join(missing)


def test_no_citation_to_notes_outside_the_repository() -> None:
    found = [
        f"{source.relative_to(ROOT)}:{number}: {line.strip()}"
        for source in _sources()
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        if UNOPENABLE.search(line)
    ]
    assert not found, "citations a reader cannot open:\n" + "\n".join(found)


def test_every_erratum_id_cited_by_topdown_is_defined_in_its_notes() -> None:
    notes = (ROOT / "docs" / "algorithms" / "000-topdown.md").read_text(encoding="utf-8")
    defined = set(re.findall(r"\| (E\d+)(?:–E\d+)? \|", notes))
    for start, end in re.findall(r"\| E(\d+)–E(\d+) \|", notes):
        defined |= {f"E{i}" for i in range(int(start), int(end) + 1)}
    cited = {
        erratum
        for source in (ALGORITHMS / "topdown").glob("*.py")
        for erratum in re.findall(r"\bE(\d+)\b", source.read_text(encoding="utf-8"))
    }
    undefined = sorted(f"E{i}" for i in cited if f"E{i}" not in defined)
    assert not undefined, f"errata cited in topdown/ but not defined: {undefined}"

"""Guard test: comments and docstrings cite files (of this repo or of sglang-omni) by path, never a
document outside the repo ("API doc 2.8", "router doc 3", "the seed", "issue 12") or a machine path."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "omni_web"
OUTSIDE = re.compile(
    r"\b(?:API|router) doc\b|\bthe seed\b|\bseed's\b|\bissue \d+|/work/|/home/", re.IGNORECASE
)
# Files whose citations are not fixed yet; each entry is a defect to remove, never one to add.
PENDING: set[str] = set()


def test_no_comment_cites_an_outside_document_or_a_machine_path() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name in PENDING:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert not found, "cite a file by path instead:\n" + "\n".join(found)


def test_the_pending_files_still_have_what_they_are_pending_for() -> None:
    for name in PENDING:
        path = PACKAGE / name
        assert path.is_file() and OUTSIDE.search(path.read_text()), f"remove {name} from PENDING"

"""``python -m omni_web chapters``: the chapter table, and a clear error for bad books."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from omni_web.cli import main
from tests.conftest import DATA_DIR

pytestmark = pytest.mark.slow  # subprocesses


def test_chapters_table_for_alice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chapters", str(DATA_DIR / "pg11-alice.epub")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "Title:    Alice's Adventures in Wonderland"
    assert lines[1] == "Author:   Lewis Carroll"
    assert lines[2] == "Language: en"
    assert lines[3].startswith("Chapters: 18, 12 selected (")
    rows = {line.split()[0]: line for line in lines[6:]}
    assert " x " in rows["6"] and "CHAPTER I. Down the Rabbit-Hole" in rows["6"] and "2,146" in rows["6"]
    assert " x " not in rows["18"] and rows["18"].endswith("Project Gutenberg licence")
    assert rows["5"].endswith("table of contents")


def test_all_marks_every_chapter(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chapters", str(DATA_DIR / "regime-anticancer-arabic.epub"), "--all"]) == 0
    out = capsys.readouterr().out
    assert "Chapters: 3, 3 selected" in out
    assert "Author:   Pr David Khayat and Nathalie Hutter-Lardeau" in out
    assert "الفصل الثاني: ما هو السرطان؟" in out
    assert sum(1 for line in out.splitlines()[6:] if " x " in line) == 3


def test_bad_book_prints_the_message_and_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.epub"
    bad.write_text("not a book")
    result = subprocess.run(  # noqa: S603 - fixed argv
        [sys.executable, "-m", "omni_web", "chapters", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("error: 'bad.epub' is not an EPUB: it is not a ZIP archive")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""

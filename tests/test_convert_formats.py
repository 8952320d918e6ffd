"""`convert BOOK --readalong` for every format but EPUB, through the CLI against the fake server.

Each book becomes an m4b whose chapter marks carry the chapters' titles, no request to the server
holds a running head, a page number, a footnote, a comment or the Gutenberg licence, and the
read-along EPUB written from the Book passes EPUBCheck with its overlays in order.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from omni_web.assemble import probe_chapters
from omni_web.paths import REPO_ROOT, DataPaths
from tests.conftest import DATA_DIR
from tests.formats_builder import CHAPTER_TITLES, NEVER_READ, docx_book, html_book, odt_book
from tests.pdf_builder import CHAPTERS, RUNNING_HEAD, trap_book
from tests.readalong.checks import check_overlays, epubcheck_errors

pytestmark = pytest.mark.slow  # subprocesses, EPUBCheck

MODEL = "qwen3_tts_0_6b_customvoice"
_FOLIO_RE = re.compile(r"(?:^|\s)-\s?\d+\s?-(?:\s|$)")


def _real(name: str) -> Callable[[Path], Path]:
    return lambda _folder: DATA_DIR / name


# (book maker, extra convert flags, the chapter titles the m4b must carry)
BOOKS = {
    "pdf": (lambda folder: trap_book(folder / "trap.pdf"), [], list(CHAPTERS)),
    "txt": (_real("pg11-alice.txt"), ["--chapters", "3"], ["CHAPTER I. Down the Rabbit-Hole"]),
    "markdown": (_real("pdfminer-contributing.md"), ["--chapters", "2-3"],
                 ["How can I contribute?", "Guideline for creating issues"]),
    "html": (lambda folder: html_book(folder / "book.html"), [], list(CHAPTER_TITLES)),
    "docx": (lambda folder: docx_book(folder / "book.docx"), [], list(CHAPTER_TITLES)),
    "odt": (lambda folder: odt_book(folder / "book.odt"), [], list(CHAPTER_TITLES)),
}


@pytest.mark.parametrize("kind", list(BOOKS))
def test_every_format_converts_with_titled_chapters_and_a_valid_readalong(
    kind: str, data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    make, flags, titles = BOOKS[kind]
    book = make(tmp_path)
    log = tmp_path / "requests.jsonl"
    server = fake_server(MODEL, env={"FAKE_SGL_SECONDS_PER_WORD": "0.004", "FAKE_SGL_REQUEST_LOG": str(log)})
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "omni_web",
            "convert",
            str(book),
            "--model",
            MODEL,
            "--voice",
            "vivian",
            "--qa",
            "off",
            "--readalong",
            "--api-url",
            server.base_url,
            "--out",
            str(tmp_path / "out"),
            *flags,
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMNI_WEB_HOME": str(data_paths.root)},
    )
    assert done.returncode == 0, done.stderr
    m4b = Path(done.stdout.split("Audiobook: ")[1].splitlines()[0])
    assert [chapter.title for chapter in probe_chapters(m4b)] == titles
    spoken = [json.loads(line)["input"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert spoken
    heard = "\n".join(spoken)
    assert not [never for never in (*NEVER_READ, RUNNING_HEAD) if never.casefold() in heard.casefold()], heard
    assert not _FOLIO_RE.search(heard) and "Gutenberg" not in heard
    epub = Path(done.stdout.split("Read-along EPUB: ")[1].split(" (subtitles")[0])
    assert epubcheck_errors(epub) == []
    overlays = check_overlays(epub, tmp_path)
    assert len(overlays) == len(titles)

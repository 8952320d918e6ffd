"""A cast and the read-along together: a sentence spoken in three voices ('“Have some wine,” the
March Hare said…') spans several chunks, and the overlay EPUB still passes epubcheck."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.paths import DataPaths
from tests.conftest import DATA_DIR
from tests.readalong.checks import check_overlays, epubcheck_errors
from tests.test_cast_cli import requests_of, run
from tests.test_cast_pipeline import MODEL, TEA_PARTY

pytestmark = pytest.mark.slow  # EPUBCheck


def test_cast_with_readalong(data_paths: DataPaths, fake_server, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server(MODEL, env={"FAKE_SGL_SECONDS_PER_WORD": "0.02", "FAKE_SGL_REQUEST_LOG": str(log),
                                     "FAKE_SGL_SLOTS": "16"})
    done = run(
        data_paths,
        "convert",
        str(DATA_DIR / "pg11-alice.epub"),
        "--chapters",
        str(TEA_PARTY),
        "--qa",
        "off",
        "--concurrency",
        "16",
        "--model",
        MODEL,
        "--voice",
        "vivian",
        "--dialogue-voice",
        "ryan",
        "--readalong",
        "--api-url",
        server.base_url,
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    assert {b["voice"] for b in requests_of(log)} == {"Vivian", "Ryan"}
    epub = Path(done.stdout.split("Read-along EPUB: ")[1].split(" (subtitles")[0])
    assert epubcheck_errors(epub) == []
    overlays = check_overlays(epub, tmp_path)
    rows = [row for page in overlays.values() for row in page]
    # The Mad Tea-Party's sentences are overlaid, in order, with times that move forward.
    assert len(rows) > 100 and all(end > start for _, start, end in rows)
    starts = [start for _, start, _ in rows]
    assert starts == sorted(starts)

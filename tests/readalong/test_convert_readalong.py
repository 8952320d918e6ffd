"""`convert BOOK.epub --readalong` end to end with the managed fake server (no ASR model installed)."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from omni_web.paths import REPO_ROOT
from omni_web.readalong import load_timings
from tests.conftest import DATA_DIR
from tests.readalong.checks import check_overlays, epubcheck_errors
from tests.test_cli_convert import MODEL, cli, managed_home  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow  # subprocesses, EPUBCheck

_OPF = "{http://www.idpf.org/2007/opf}"


def test_convert_readalong_writes_a_valid_overlay_epub_and_subtitles(managed_home, tmp_path: Path) -> None:  # noqa: F811
    _, env, _ = managed_home
    book = DATA_DIR / "pg11-alice.epub"  # EPUB 2: lifted to EPUB 3 for its overlays
    done = subprocess.run(
        cli(
            str(book),
            "--model",
            MODEL,
            "--voice",
            "vivian",
            "--chapters",
            "6-7",
            "--readalong",
            "--mp3-chapters",
        ),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    epub = Path(done.stdout.split("Read-along EPUB: ")[1].split(" (subtitles")[0])
    # Named like the run's m4b, in the version's own folder: another voice's read-along keeps its own.
    assert epub.name == "Alice's Adventures in Wonderland.readalong.epub"
    assert epub.parent.name == "Alice's Adventures in Wonderland {Vivian - Qwen3-TTS 0.6B CustomVoice}"
    assert epubcheck_errors(epub) == []
    overlays = check_overlays(epub, tmp_path)
    assert len(overlays) == 2 and all(len(rows) > 20 for rows in overlays.values())
    with zipfile.ZipFile(epub) as archive:
        opf = etree.fromstring(archive.read("OEBPS/content.opf"))
        metas = {(m.get("property"), m.get("refines")): m.text for m in opf.iter(f"{_OPF}meta")}
        assert metas[("media:active-class", None)] == "-epub-media-overlay-active"
        assert metas[("media:duration", None)]
        assert sum(1 for prop, ref in metas if prop == "media:duration" and ref) == 2
        with zipfile.ZipFile(book) as original:
            # Outside the overlaid pages, the book is byte-for-byte the original.
            untouched = original.read("OEBPS/2978628254728534326_cover.jpg")
            assert archive.read("OEBPS/2978628254728534326_cover.jpg") == untouched
    folder = epub.parent
    vtts = sorted(folder.glob("*.vtt"))
    srts = sorted(folder.glob("*.srt"))
    assert len(vtts) == 2 and len(srts) == 2
    # Beside the m4b they carry the run's name, so another voice's read-along keeps its own.
    own = epub.name.removesuffix(".readalong.epub")
    assert all(p.name.startswith(f"{own} - ") for p in [*vtts, *srts]), [p.name for p in vtts]
    first = vtts[0].read_text(encoding="utf-8")
    assert first.startswith("WEBVTT\n\n1\n00:00:00.000 --> ")
    assert "CHAPTER I" in first.split("\n\n")[1]  # the chapter title is the first cue
    # Cues show the sentence as printed (curly quotes), not the spoken form sent to the server.
    assert "\u2019" in first
    mp3_dir = Path(done.stdout.split("MP3 chapters: ")[1].splitlines()[0])
    assert sorted(p.stem for p in mp3_dir.glob("*.vtt")) == sorted(p.stem for p in mp3_dir.glob("*.mp3"))
    # Timings are stored with the job's chapter files and marked as estimated (no ASR model here).
    timings_files = sorted((Path(env["OMNI_WEB_HOME"])).rglob("*.timings.json"))
    assert len(timings_files) == 2
    timings = load_timings(
        timings_files[0].with_name(timings_files[0].name.replace(".timings.json", ".flac"))
    )
    assert timings is not None and timings.source == "estimate" and timings.estimated


def test_acx_head_room_tone_moves_the_sentence_times_with_it(managed_home) -> None:  # noqa: F811
    # acx puts room tone at each chapter's head: the times must come from where mastering put the
    # chunks, not from a plain sum of chunks and pauses (which would start at 0).
    _, env, _ = managed_home
    book = DATA_DIR / "pg11-alice.epub"
    done = subprocess.run(
        cli(
            str(book),
            "--model",
            MODEL,
            "--voice",
            "vivian",
            "--chapters",
            "6",
            "--readalong",
            "--loudness",
            "acx",
        ),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    timings_files = sorted(Path(env["OMNI_WEB_HOME"]).rglob("*.timings.json"))
    assert timings_files
    import json

    from omni_web.readalong.records import ChapterTimings

    timings = ChapterTimings.from_dict(json.loads(timings_files[0].read_text(encoding="utf-8")))
    assert timings.chunk_starts_s and timings.chunk_starts_s[0] >= 0.5
    assert timings.sentences[0].start_s >= 0.5

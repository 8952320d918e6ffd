"""The Opus option of the read-along EPUB: same overlays, about half the bytes (measured on real
speech from espeak-ng, not silence, which any codec shrinks to nothing)."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from omni_web.book import chunk_chapter, load_book
from omni_web.readalong import ChunkSpan, chapter_timings
from omni_web.readalong.epub import OverlayChapter, write_readalong_epub
from tests.conftest import DATA_DIR
from tests.readalong.checks import check_overlays

pytestmark = pytest.mark.slow  # real ffmpeg (AAC and Opus encodes), EPUBCheck

BOOK = DATA_DIR / "wasteland.epub"


def _speech_chapters(folder: Path, count: int) -> list[OverlayChapter]:
    book = load_book(BOOK)
    out = []
    for chapter in [c for c in book.chapters if c.selected_by_default][:count]:
        chunks = chunk_chapter(chapter, chunk_words=60)
        wav = folder / f"{chapter.number:03d}.wav"
        text = " ".join(chunk.text for chunk in chunks)
        subprocess.run(["espeak-ng", "-v", "en", "-s", "170", "-w", str(wav), text], check=True, timeout=300)
        flac = folder / f"{chapter.number:03d}.flac"
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(wav), "-ar", "24000", "-ac", "1", str(flac)],
                       check=True, timeout=120)
        seconds = float(
            subprocess.run(
                ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(flac)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        per_char = seconds / max(1, sum(len(c.text) for c in chunks))
        spans, clock = [], 0.0
        for chunk in chunks:  # the speech laid out by characters: close enough to place sentences
            length = per_char * len(chunk.text)
            spans.append(ChunkSpan(chunk.index, chunk.text, wav, clock, clock + length))
            clock += length
        timings = chapter_timings(
            spans,
            [None] * len(spans),
            number=chapter.number,
            title=chapter.title,
            audio_path=flac,
            duration_s=seconds,
        )
        following = (
            book.chapters[chapter.index + 1].source_href if chapter.index + 1 < len(book.chapters) else None
        )
        out.append(OverlayChapter(timings, chapter.source_href, following))
    return out


def _audio_bytes(epub: Path) -> int:
    with zipfile.ZipFile(epub) as archive:
        return sum(i.file_size for i in archive.infolist() if i.filename.endswith((".m4a", ".opus")))


def test_opus_audio_is_about_half_the_aac_size_with_the_same_overlays(tmp_path: Path) -> None:
    chapters = _speech_chapters(tmp_path, 1)
    aac = write_readalong_epub(BOOK, chapters, tmp_path / "aac.readalong.epub", bitrate_kbps=64)
    opus = write_readalong_epub(BOOK, chapters, tmp_path / "opus.readalong.epub", codec="opus")
    assert (aac.overlays, aac.placed) == (opus.overlays, opus.placed) and abs(
        aac.duration_s - opus.duration_s
    ) < 0.1
    audio_ratio = _audio_bytes(opus.path) / _audio_bytes(aac.path)
    file_ratio = opus.path.stat().st_size / aac.path.stat().st_size
    print(
        f"\nread-along audio, {aac.duration_s:.0f} s of speech: AAC 64 kbps {_audio_bytes(aac.path):,} B, "
        f"Opus 32 kbps {_audio_bytes(opus.path):,} B, ratio {audio_ratio:.2f}; whole EPUB ratio "
        f"{file_ratio:.2f}"
    )
    assert audio_ratio < 0.6
    with zipfile.ZipFile(opus.path) as archive:
        opf = archive.read("EPUB/wasteland.opf").decode()
    assert 'media-type="audio/ogg; codecs=opus"' in opf and ".m4a" not in opf
    overlays = check_overlays(opus.path, tmp_path, audio_type="audio/ogg; codecs=opus")
    assert sum(len(rows) for rows in overlays.values()) == opus.placed

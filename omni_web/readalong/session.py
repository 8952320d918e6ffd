"""The read-along pass of one conversion: timings per chapter as chapters land, outputs at the end.

A chapter's timings are built on the pass's own thread as soon as its file exists (ASR is slow on
a CPU; assembly and rendering never wait for it), so the Jobs tab's player can follow a chapter
while later ones still render. At the end the pass writes the subtitles and the read-along EPUB.
A failure here never fails the book: the audiobook is already written, and the reason is logged
and reported.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from omni_web.errors import OmniWebError, TranscriberNotInstalled
from omni_web.files import write_atomic
from omni_web.readalong.asr import WordCache, WordRecogniser, load_word_recogniser
from omni_web.readalong.chapter import ChapterSource, build_chapter_timings, timings_path
from omni_web.readalong.epub import OverlayChapter, write_readalong_epub
from omni_web.readalong.records import ChapterTimings
from omni_web.readalong.subtitles import format_srt, format_vtt

__all__ = ["ReadalongOutputs", "ReadalongPass", "choose_recogniser", "with_written_text", "write_subtitles"]

_log = logging.getLogger(__name__)


def choose_recogniser(
    candidates: Sequence[str], *, device: str = "cpu", loader: Callable[..., WordRecogniser] | None = None
) -> tuple[WordRecogniser | None, str]:
    """The first installed faster-whisper model of ``candidates`` (sizes or folders), and a note.

    Returns ``(None, why)`` when none is installed: times are then estimated.
    """
    load = loader or load_word_recogniser
    missing = []
    for name in dict.fromkeys(c.strip() for c in candidates if c and c.strip()):
        try:
            return load(name, device=device), f"word times from faster-whisper '{name}'"
        except TranscriberNotInstalled:
            missing.append(name)
    shown = ", ".join(f"'{m}'" for m in missing) or "none configured"
    return None, (f"no speech-recognition model is installed ({shown}), so sentence times are estimated "
                  "from each chunk's characters; install one in Settings for exact times")


@dataclass(frozen=True, slots=True)
class ReadalongOutputs:
    """What the pass wrote."""

    timings: tuple[ChapterTimings, ...]
    subtitles: tuple[Path, ...] = ()
    epub: Path | None = None
    notes: tuple[str, ...] = field(default=())


def with_written_text(timings: ChapterTimings, written: dict[int, str]) -> ChapterTimings:
    """The timings with each found sentence's printed text, stored again beside the chapter file."""
    if not written:
        return timings
    sentences = tuple(replace(s, written=written.get(s.index, s.written)) for s in timings.sentences)
    updated = replace(timings, sentences=sentences)
    try:
        write_atomic(timings_path(timings.audio_path), json.dumps(updated.to_dict(), ensure_ascii=False))
    except OSError as exc:
        _log.warning("Could not store the printed text of chapter %d's sentences (%s)", timings.number, exc)
    return updated


def write_subtitles(timings: ChapterTimings, folder: Path, stem: str) -> list[Path]:
    """``<stem>.vtt`` and ``<stem>.srt`` for one chapter in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    vtt = write_atomic(folder / f"{stem}.vtt", format_vtt(timings))
    srt = write_atomic(folder / f"{stem}.srt", format_srt(timings))
    return [vtt, srt]


class ReadalongPass:
    """Builds chapter timings in the background; ``finish`` writes subtitles and the EPUB."""

    def __init__(
        self,
        *,
        recogniser: WordRecogniser | None,
        cache_dir: Path,
        language: str | None = None,
        reuse: WordRecogniser | None = None,
        note: str = "",
    ) -> None:
        self._recogniser = recogniser
        self._cache = WordCache(cache_dir)
        self._language = language
        self._reuse = reuse
        self._notes = [note] if note else []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="omni-readalong")
        self._futures: dict[int, Future[ChapterTimings]] = {}

    def chapter_ready(self, source: ChapterSource) -> None:
        """Queue a chapter whose final file exists (called from the assembly thread)."""
        if source.number not in self._futures:
            self._futures[source.number] = self._pool.submit(self._build, source)

    def _build(self, source: ChapterSource) -> ChapterTimings:
        return build_chapter_timings(
            source, recogniser=self._recogniser, cache=self._cache, language=self._language, reuse=self._reuse
        )

    def timings(self) -> list[ChapterTimings]:
        """Every queued chapter's timings in book order (waits; a chapter that failed is left out)."""
        out = []
        for number in sorted(self._futures):
            try:
                out.append(self._futures[number].result())
            except (OmniWebError, OSError, ValueError) as exc:
                _log.warning("Read-along timings of chapter %d failed: %s", number, exc)
                self._notes.append(f"chapter {number} has no timings ({exc})")
        return out

    def finish(
        self,
        *,
        book_path: Path,
        book_hrefs: Sequence[str],
        chapter_hrefs: dict[int, str],
        folder: Path,
        epub_name: str,
        subtitle_stems: dict[int, str],
        subtitle_folder: Path | None = None,
        narrator: str = "",
        bitrate_kbps: int = 64,
        codec: str = "aac",
    ) -> ReadalongOutputs:
        """Subtitles per chapter and the read-along EPUB.

        Args:
            book_hrefs: every chapter's ``source_href`` in book order (where each one starts).
            chapter_hrefs: chapter number → its ``source_href``, for the rendered ones.
            subtitle_stems: chapter number → file stem ("01 - Down the Rabbit-Hole").
            subtitle_folder: where subtitles go (the MP3 folder); default ``folder`` (the m4b's).
        """
        timings = self.timings()
        order = list(book_hrefs)
        overlays = []
        for chapter in timings:
            href = chapter_hrefs.get(chapter.number)
            if href is None:
                continue
            index = chapter.number - 1
            next_href = order[index + 1] if 0 <= index < len(order) - 1 else None
            overlays.append(OverlayChapter(chapter, href, next_href))
        epub: Path | None = None
        try:
            result = write_readalong_epub(book_path, overlays, folder / epub_name, bitrate_kbps=bitrate_kbps,
                                          narrator=narrator, codec=codec)
            epub = result.path
            if result.placed < result.sentences:
                self._notes.append(
                    f"{result.sentences - result.placed} of {result.sentences} spoken sentences "
                    "were not found in the book's text; their audio plays with the sentence before"
                )
            # Subtitles and the player show the sentence as printed, not its spoken form ("Dr." and
            # "1865", not "Doctor" and "eighteen sixty-five"; a lexicon respelling never shows).
            timings = [with_written_text(t, result.written.get(t.number, {})) for t in timings]
        except (OmniWebError, OSError) as exc:
            _log.warning("The read-along EPUB was not written: %s", exc)
            self._notes.append(f"the read-along EPUB was not written ({exc})")
        subtitles: list[Path] = []
        for chapter in timings:
            stem = subtitle_stems.get(chapter.number, f"{chapter.number:02d}")
            try:
                subtitles += write_subtitles(chapter, subtitle_folder or folder, stem)
            except OSError as exc:
                self._notes.append(f"subtitles of chapter {chapter.number} were not written ({exc})")
        return ReadalongOutputs(tuple(timings), tuple(subtitles), epub, tuple(self._notes))

    def close(self) -> None:
        """Stop without waiting (a cancelled job); finished timings files stay."""
        self._pool.shutdown(wait=False, cancel_futures=True)

"""The conversion's read-along step: chapter timings as chapter files land, outputs at the end.

Glue between the plan (which chunk of which chapter went into which file, with which pause) and
:mod:`omni_web.readalong`, so ``convert.py`` only calls three methods.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from omni_web.assemble import ChapterAudio, mp3_file_names
from omni_web.book import readalong_source
from omni_web.deliver.layout import BookPlace
from omni_web.languages import language_code
from omni_web.paths import DataPaths
from omni_web.pipeline.plan import ChapterWork, ConversionPlan
from omni_web.pipeline.request import ConvertRequest
from omni_web.readalong import ChapterSource, ChunkSource, ReadalongPass, choose_recogniser
from omni_web.readalong.asr import QaWords
from omni_web.settings import Settings

__all__ = ["READALONG_SUFFIX", "ConversionReadalong", "start_readalong"]

READALONG_SUFFIX = ".readalong.epub"

_log = logging.getLogger(__name__)


def _language(request: ConvertRequest, plan: ConversionPlan) -> str | None:
    """A Whisper language code: the request's language, else the book's, else None (detect)."""
    return language_code(request.language, plan.book.metadata.language) or None


def _asr_candidates(request: ConvertRequest, settings: Settings) -> list[str]:
    # The QA pass's model first (its transcripts and ours then come from the same model), then the
    # model the user installed for reference-clip transcripts.
    return [str(getattr(request, "qa_model", None) or ""),
            *(str(getattr(settings, name, "") or "") for name in ("qa_model", "transcription_model"))]


class ConversionReadalong:
    """One conversion's read-along pass."""

    def __init__(self, plan: ConversionPlan, session: ReadalongPass, qa_words: QaWords | None = None) -> None:
        self._plan = plan
        self._session = session
        self._qa_words = qa_words

    def chapter_ready(
        self,
        work: ChapterWork,
        chunk_paths: Mapping[str, Path],
        audio: ChapterAudio,
        *,
        chunk_starts_ms: Sequence[float] | None = None,
    ) -> None:
        """A chapter's final file exists: queue its timings (called from the assembly thread).

        ``chunk_starts_ms``: where each chunk starts in ``audio`` when the step that wrote it
        recorded that (mastering: lead-in, room tone); None for a plain join of chunks and pauses.
        """
        chunks = tuple(
            ChunkSource(item.text, chunk_paths[item.key], pause)
            for item, pause in zip(work.items, work.pauses_ms, strict=True)
        )
        self._session.chapter_ready(
            ChapterSource(
                number=work.number,
                title=work.chapter.title,
                audio_path=Path(audio.path),
                duration_s=audio.duration_ms / 1000,
                chunks=chunks,
                chunk_starts_s=tuple(ms / 1000 for ms in chunk_starts_ms) if chunk_starts_ms else None,
            )
        )

    def finish(
        self,
        chapters: list[ChapterAudio],
        *,
        place: BookPlace,
        mp3_dir: Path | None,
        settings: Settings,
        phase: Callable[[str, str], None],
    ) -> Path | None:
        """Write subtitles (next to the m4b, and the MP3s) and the read-along EPUB; returns the EPUB.

        The job's ``place`` names them (:mod:`omni_web.deliver.layout`); ``mp3_dir`` is where its
        MP3s were written, if anywhere.
        """
        folder = place.folder
        phase("read-along", "Aligning sentences to the audio and writing the read-along EPUB")
        plan = self._plan
        stems = {c.index: Path(name).stem for c, name in zip(chapters, mp3_file_names(chapters), strict=True)}
        # Beside the m4b the subtitles carry the job's name, so two jobs of one book (two voices)
        # keep their own; in the job's own MP3 folder they match the MP3s' names.
        beside_book = {number: f"{place.stem} - {stem}" for number, stem in stems.items()}
        # A book that came as PDF, text, DOCX... gets its overlays on an EPUB written from its Book.
        with readalong_source(plan.book, folder) as book_path:
            outputs = self._session.finish(
                book_path=book_path,
                book_hrefs=[c.source_href for c in plan.book.chapters],
                chapter_hrefs={w.number: w.chapter.source_href for w in plan.chapters},
                folder=folder,
                epub_name=place.beside(READALONG_SUFFIX).name,
                subtitle_stems=beside_book,
                narrator=plan.tags.narrator,
                bitrate_kbps=settings.aac_bitrate_kbps,
                codec=settings.readalong_audio,
            )
        if mp3_dir is not None and Path(mp3_dir) != Path(folder):
            from omni_web.readalong import write_subtitles

            for timings in outputs.timings:
                write_subtitles(timings, Path(mp3_dir), stems.get(timings.number, f"{timings.number:02d}"))
        for note in outputs.notes:
            _log.info("Read-along: %s", note)
        if self._qa_words is not None and self._qa_words.reused:
            _log.info(
                "Read-along: word times of %d chunks reused from the QA pass (not transcribed again)",
                self._qa_words.reused,
            )
        return outputs.epub

    def close(self) -> None:
        """Stop the background pass (the job ended or failed)."""
        self._session.close()


def start_readalong(
    request: ConvertRequest, plan: ConversionPlan, settings: Settings, paths: DataPaths
) -> ConversionReadalong | None:
    """The read-along pass when the request asks for it, else None."""
    if not getattr(request, "readalong", False):
        return None
    device = str(getattr(settings, "qa_device", "cpu") or "cpu")
    recogniser, note = choose_recogniser(
        _asr_candidates(request, settings), device="cpu" if device == "auto" else device
    )
    _log.info("Read-along: %s", note)
    qa_words = QaWords()  # the QA pass's words, when it heard the chunks with word times
    session = ReadalongPass(
        recogniser=recogniser,
        cache_dir=paths.chunk_cache_dir / "readalong-words",
        language=_language(request, plan),
        reuse=qa_words,
        note=note,
    )
    return ConversionReadalong(plan, session, qa_words)

"""Bind audio QA (omni_web.qa) to one conversion: options, the take requester, text edits, report.

The renderer sees only the ``ChunkCheck`` hook; this module decides the level, sends retakes with a
new seed where the catalog says the model takes one, runs speech recognition on its own thread,
applies the reviewer's text edits to the plan, and writes ``<Title>.qa.json`` into the book folder.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from omni_web.assemble import safe_filename
from omni_web.book import Book
from omni_web.catalog import CatalogEntry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice, VoiceKind
from omni_web.files import write_atomic
from omni_web.gpu import GpuProbe, probe_gpus
from omni_web.paths import DataPaths
from omni_web.pipeline.plan import ChapterWork, ConversionPlan, chapter_file_name
from omni_web.pipeline.request import ConvertRequest
from omni_web.qa import (
    QA_REPORT_SUFFIX,
    AsrPool,
    ChunkPlace,
    ChunkQa,
    QaLevel,
    QaOptions,
    QaProgress,
    QaReport,
    QaStore,
    TakeAudio,
    TokenBudget,
    VoiceChecks,
    asr_workers,
    language_code,
    load_encoder,
    load_recogniser,
    normalise_words,
    parse_level,
)
from omni_web.qa.asr_models import choose_asr_device
from omni_web.render import chunk_key
from omni_web.settings import Settings
from omni_web.text import CandidateKind, Pronouncer, find_candidates

__all__ = [
    "TEXT_EDITS_FILE",
    "JobQa",
    "apply_text_edits",
    "chunk_places",
    "load_text_edits",
    "progress_fields",
    "qa_names",
    "qa_options",
    "qa_report_path",
    "save_text_edit",
]

_log = logging.getLogger(__name__)

# The reviewer's text edits of one book: {original chunk text: text to speak instead}.
TEXT_EDITS_FILE = "qa-edits.json"


def qa_options(request: ConvertRequest, settings: Settings) -> QaOptions:
    """The job's QA choices: the request's, else the user's Settings."""
    level = parse_level(request.qa_level or settings.qa_level)
    device = settings.qa_device if settings.qa_device != "auto" else None  # None: chosen when the job starts
    return QaOptions(
        level=level,
        takes=request.qa_takes or settings.qa_takes,
        asr_model=request.qa_model or settings.qa_model,
        asr_device=device,
        word_times=request.readalong,  # the read-along pass reuses the words
        voice=settings.qa_voice,
    )


def load_text_edits(parts_dir: Path) -> dict[str, str]:
    """The book's text edits (empty when there are none or the file is unreadable)."""
    try:
        data = json.loads((parts_dir / TEXT_EDITS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def save_text_edit(parts_dir: Path, original: str, spoken: str) -> None:
    """Remember that ``original`` is to be spoken as ``spoken`` (an empty edit is dropped)."""
    edits = load_text_edits(parts_dir)
    if spoken.strip() and spoken.strip() != original:
        edits[original] = spoken.strip()
    else:
        edits.pop(original, None)
    parts_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(parts_dir / TEXT_EDITS_FILE, json.dumps(edits, ensure_ascii=False, indent=1))


def apply_text_edits(plan: ConversionPlan, edits: dict[str, str]) -> ConversionPlan:
    """The plan with edited chunks re-keyed (and their chapters renamed, so only they are rebuilt)."""
    if not edits:
        return plan
    chapters: list[ChapterWork] = []
    for work in plan.chapters:
        items = tuple(
            replace(item, text=edits[item.text], key=chunk_key(edits[item.text], plan.fingerprint))
            if item.text in edits
            else item
            for item in work.items
        )
        if items == work.items:
            chapters.append(work)
            continue
        name = chapter_file_name(work.number, [i.key for i in items], work.pauses_ms)
        chapters.append(replace(work, items=items, file_name=name))
    return replace(plan, chapters=tuple(chapters))


def chunk_places(plan: ConversionPlan) -> list[ChunkPlace]:
    """Every chunk of the plan, in reading order, as the QA report names it."""
    return [
        ChunkPlace(item.key, item.text, item.chapter_number, item.chapter_title, item.chunk_number)
        for work in plan.chapters
        for item in work.items
    ]


def qa_names(book: Book, pronouncer: Pronouncer | None, language: str | None) -> frozenset[str]:
    """Normalised words of the book's names and of the lexicon's spoken forms, as chunks say them.

    QA reports a take that says another word for one of them (for review; a lexicon entry fixes a
    misread name), so only words that are names, not ordinary words, are listed.
    """
    lang = language_code(language) or "en"
    words: set[str] = set()
    for candidate in find_candidates(book, language=language, pronouncer=pronouncer):
        if CandidateKind.NAME in candidate.kinds:
            spoken = pronouncer.apply(candidate.word) if pronouncer else candidate.word
            words.update(normalise_words(spoken, lang=lang))
    for entry in pronouncer.entries if pronouncer else ():
        words.update(normalise_words(entry.spoken, lang=lang))
    return frozenset(w for w in words if len(w) > 2)


def qa_report_path(book_folder: Path, plan: ConversionPlan, name: str | None = None) -> Path:
    """``<book folder>/<name>.qa.json``: the job's output name (as its m4b), else the title."""
    return book_folder / f"{name or safe_filename(plan.tags.title, fallback='audiobook')}{QA_REPORT_SUFFIX}"


def _voice_label(voice: VoiceChoice) -> str:
    """The voice as the duration tracker keys it (kind, name, clip)."""
    reference = voice.reference.name if voice.reference is not None else ""
    return f"{voice.kind.value}:{voice.name.lower()}:{reference}"


@dataclass
class JobQa:
    """QA for one run of a conversion; ``check`` is None with the level ``off``."""

    options: QaOptions
    check: ChunkQa | None
    asr: AsrPool | None
    # threads the renderer may run (requests stay at the job's concurrency)
    render_concurrency: int | Callable[[], int]
    device_note: str = ""  # where the QA recogniser runs and why (CUDA beside the server, or the CPU)

    @classmethod
    def for_job(
        cls,
        request: ConvertRequest,
        settings: Settings,
        *,
        entry: CatalogEntry,
        voice: VoiceChoice,
        client: SpeechClient,
        paths: DataPaths,
        concurrency: int | Callable[[], int],
        language: str | None,
        book: Book | None = None,
        pronouncer: Pronouncer | None = None,
        gpu_probe: Callable[[], GpuProbe] | None = None,
    ) -> JobQa:
        """Build the job's QA from the request and the settings."""
        options = qa_options(request, settings)
        if not options.level.checks:
            return cls(options, None, None, concurrency)

        def request_take(item: Any, seed: int | None, max_new_tokens: int | None) -> TakeAudio:
            chunk_voice = getattr(item, "voice", None) or voice  # a cast job's voice for this chunk
            result = client.speech(
                entry,
                SpeechRequest(
                    text=item.text,
                    voice=chunk_voice,
                    language=request.language,
                    seed=seed,
                    max_new_tokens=max_new_tokens,
                ),
            )
            return TakeAudio(result.audio, result.finish_reason, result.completion_tokens)

        asr = None
        device_note = ""
        asr_device = "cpu"
        if options.level is QaLevel.ASR:
            choice = choose_asr_device(
                options.asr_model, requested=options.asr_device, probe=gpu_probe or probe_gpus
            )
            device_note, asr_device = choice.note, choice.device
            _log.info("%s", choice.note)
            # On a CUDA device one worker suffices; on the CPU half the cores transcribe at once.
            workers = asr_workers() if choice.device == "cpu" else 1
            asr = AsrPool(lambda: _load_on(options.asr_model, choice.device, workers), workers=workers)
        check = ChunkQa(
            options,
            store=QaStore(paths.chunk_cache_dir),
            request_take=request_take,
            model_key=entry.key,
            voice_label=lambda item: _voice_label(getattr(item, "voice", None) or voice),
            language=language,
            accepts_seed=entry.accepts_seed,
            request_slots=concurrency,
            asr_pool=asr,
            names=qa_names(book, pronouncer, language) if asr is not None and book is not None else (),
            voices=_voice_checks(options, voice, device=asr_device),
            budget=TokenBudget(entry.max_new_tokens_limit),
        )
        # With ASR, threads waiting for their transcript must not leave the server idle: run twice
        # as many threads as requests; the request gate keeps the batch at `concurrency`.
        threads: int | Callable[[], int] = concurrency
        if asr is not None:
            threads = (lambda: 2 * concurrency()) if callable(concurrency) else 2 * concurrency
        return cls(options, check, asr, threads, device_note)

    def counts(self) -> QaProgress | None:
        """Verdicts so far (None with QA off)."""
        return self.check.counts() if self.check is not None else None

    def write_report(
        self,
        book_folder: Path,
        plan: ConversionPlan,
        request: ConvertRequest,
        parts_dir: Path,
        paths: DataPaths,
        *,
        always: bool = False,
        stem: str | None = None,
    ) -> Path | None:
        """Write ``<stem>.qa.json`` (default: the request's output name); returns its path. With QA off
        only when ``always`` (a chunk is flagged anyway: one the server could not say) or to bring an
        earlier report up to date. The report keeps the request as claimed, so a regenerate from it
        writes to the same place (omni_web/deliver/layout.py)."""
        path = qa_report_path(book_folder, plan, stem or request.output_name)
        if self.check is None and not always and not path.is_file():
            return None
        # The limits this job calibrated from its accepted takes (WER, recall, duration ratio).
        calibration = self.check.calibration.figures().to_dict() if self.check is not None else None
        settings = self.options.settings(calibration=calibration, asr_device=self.device_note or None)
        report = QaReport.build(
            chunk_places(plan),
            QaStore(paths.chunk_cache_dir),
            title=plan.tags.title,
            request=request.to_dict(),
            qa=settings,
            parts_dir=parts_dir,
            chapter_files={str(w.number): w.file_name for w in plan.chapters},
        )
        return report.write(path)

    def close(self) -> None:
        """Stop the ASR worker."""
        if self.asr is not None:
            self.asr.close()


def _voice_checks(options: QaOptions, voice: VoiceChoice, *, device: str) -> VoiceChecks | None:
    """The job's voice and reading checks (None with them off); the speaker encoder only at the asr
    level, on the recogniser's device, and a clone voice judged against its reference clip."""
    if not options.voice:
        return None

    def reference_of(item: Any) -> Path | None:
        chunk_voice = getattr(item, "voice", None) or voice
        return chunk_voice.reference if chunk_voice.kind is VoiceKind.CLONE else None

    encoder = (lambda: load_encoder(device)) if options.level is QaLevel.ASR else None
    return VoiceChecks(options.thresholds, encoder=encoder, reference_of=reference_of)


def _load_on(model: str, device: str, workers: int) -> Any:
    """Load the QA recogniser on ``device``; a CUDA load that fails (no CUDA runtime for CTranslate2,
    memory taken meanwhile) falls back to the CPU with a warning rather than losing QA."""
    from omni_web.errors import VoiceError

    try:
        return load_recogniser(model, device=device, workers=workers)
    except VoiceError as exc:
        if device != "cuda":
            raise
        _log.warning("QA speech recognition falls back to the CPU (int8): %s", exc)
        return load_recogniser(model, device="cpu", workers=asr_workers())


def progress_fields(qa: JobQa) -> dict[str, Any]:
    """The ``qa`` field of the progress document (nothing with QA off)."""
    counts = qa.counts()
    return {"qa": counts} if counts is not None else {}

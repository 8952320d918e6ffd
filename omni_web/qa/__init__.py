"""Audio QA: per-chunk checks (finish reason, duration, silence, clipping, speech recognition),
automatic retakes with the best take kept, records kept with the chunk, and the book's QA report.

Layering: QA knows chunks by key and text; the pipeline binds it to a job (plan, client, chunk
cache) and the renderer calls it through two hooks (``take`` and ``accept_cached``).
"""

from omni_web.qa.alignment import Alignment, align_transcript
from omni_web.qa.asr import (
    AsrPool,
    Heard,
    Recogniser,
    WhisperRecogniser,
    asr_workers,
    language_code,
    load_recogniser,
    model_folder,
)
from omni_web.qa.audio import AudioFigures, decode_wav, measure_audio
from omni_web.qa.budget import TokenBudget
from omni_web.qa.calibration import Calibration, CalibrationFigures
from omni_web.qa.detectors import Findings, find_faults
from omni_web.qa.drift import ChapterDrift
from omni_web.qa.findings import Finding, FindingKind
from omni_web.qa.hearing import VoiceChecks
from omni_web.qa.judge import asr_failures, basic_take, best_take, with_transcript
from omni_web.qa.marks import Mark, mark_text, marks_plain
from omni_web.qa.progress import QaProgress
from omni_web.qa.rate import DurationRateTracker, Expectation, TextUnits, text_units
from omni_web.qa.records import ChunkRecord, QaStore, TakeRecord, Verdict
from omni_web.qa.report import (
    QA_REPORT_SUFFIX,
    ChunkPlace,
    QaReport,
    QaSettings,
    ReportChunk,
    find_report,
    read_report,
)
from omni_web.qa.speaker import SpeakerEncoder, load_encoder
from omni_web.qa.takes import ChunkQa, QaItem, QaOptions, TakeAudio, take_seed
from omni_web.qa.thresholds import DEFAULT_THRESHOLDS, QaLevel, Thresholds, parse_level
from omni_web.qa.voice import Reading, VoiceJudge
from omni_web.qa.wer import TranscriptScore, normalise_words, score_transcript

__all__ = [
    "DEFAULT_THRESHOLDS",
    "Alignment",
    "Calibration",
    "CalibrationFigures",
    "Findings",
    "Mark",
    "align_transcript",
    "find_faults",
    "mark_text",
    "marks_plain",
    "QA_REPORT_SUFFIX",
    "AsrPool",
    "asr_workers",
    "AudioFigures",
    "ChunkPlace",
    "ChunkQa",
    "ChunkRecord",
    "DurationRateTracker",
    "Expectation",
    "ChapterDrift",
    "Finding",
    "FindingKind",
    "Heard",
    "QaProgress",
    "QaReport",
    "QaSettings",
    "ReportChunk",
    "Reading",
    "SpeakerEncoder",
    "TokenBudget",
    "VoiceChecks",
    "VoiceJudge",
    "load_encoder",
    "QaItem",
    "QaLevel",
    "QaOptions",
    "QaStore",
    "Recogniser",
    "TakeAudio",
    "TakeRecord",
    "TextUnits",
    "Thresholds",
    "TranscriptScore",
    "Verdict",
    "WhisperRecogniser",
    "asr_failures",
    "basic_take",
    "best_take",
    "decode_wav",
    "find_report",
    "language_code",
    "load_recogniser",
    "measure_audio",
    "model_folder",
    "normalise_words",
    "parse_level",
    "read_report",
    "score_transcript",
    "take_seed",
    "text_units",
    "with_transcript",
]

"""Takes: request a chunk, check it, request it again while it fails, keep the best take.

:class:`ChunkQa` is the renderer's hook for one job. ``take(item)`` returns the audio to accept
into the chunk cache and saves the chunk's record; ``accept_cached(item, path)`` tells the renderer
whether a cached file already has a verdict. A chunk that never passes keeps its best take and is
flagged: it never stops the job.

Requests hold one of ``request_slots`` only while talking to the server, so with the ``asr`` level
the renderer can run more threads than requests: some wait for their transcript while the others
keep the server's batch full.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from omni_web.errors import internal_error_message
from omni_web.qa.alignment import align_transcript
from omni_web.qa.asr import RECOGNITION_ERRORS, AsrPool, Heard, language_code
from omni_web.qa.audio import measure_audio
from omni_web.qa.budget import TokenBudget
from omni_web.qa.calibration import Calibration
from omni_web.qa.cues import cue_failures
from omni_web.qa.detectors import find_faults
from omni_web.qa.findings import FindingKind
from omni_web.qa.hearing import VoiceChecks, with_reading
from omni_web.qa.judge import basic_take, best_take, with_transcript
from omni_web.qa.progress import QaProgress
from omni_web.qa.rate import DurationRateTracker, text_units
from omni_web.qa.records import ChunkRecord, QaStore, TakeRecord, Verdict
from omni_web.qa.report import QaSettings
from omni_web.qa.thresholds import DEFAULT_THRESHOLDS, QaLevel, Thresholds
from omni_web.qa.voice import Reading
from omni_web.qa.wer import score_transcript

__all__ = ["ChunkQa", "QaItem", "QaOptions", "TakeAudio", "take_seed"]

_log = logging.getLogger(__name__)


class QaItem(Protocol):
    """What QA needs of a render item (``omni_web.render.RenderItem`` has it)."""

    key: str
    text: str


@dataclass(frozen=True, slots=True)
class TakeAudio:
    """What one request returned: the WAV, the server's ``X-Finish-Reason`` and ``X-Completion-Tokens``."""

    audio: bytes
    finish_reason: str | None = None
    completion_tokens: int | None = None


# Sends one request for the item: ``seed`` is None for the first take (the request as it always
# was), ``max_new_tokens`` None for the catalog's budget.
RequestTake = Callable[[QaItem, "int | None", "int | None"], TakeAudio]


@dataclass(slots=True)
class _Notes:
    """What a take's judging knew that its record does not keep (for learning once it is accepted)."""

    measured: bool = False  # judged against the job's own rate
    reading: Reading | None = None


@dataclass(frozen=True, slots=True)
class QaOptions:
    """The user's QA choices for one job."""

    level: QaLevel = QaLevel.BASIC
    takes: int = DEFAULT_THRESHOLDS.takes
    asr_model: str = "tiny.en"  # a faster-whisper size or a CTranslate2 model directory
    asr_device: str | None = "cpu"
    thresholds: Thresholds = field(default_factory=Thresholds)
    # Hear takes with word timestamps and keep the chosen take's words (the job makes a
    # read-along book); off otherwise, since they make the ASR pass slower.
    word_times: bool = False
    # Voice and reading checks: pace, pitch and loudness at every checked level, and who reads the
    # take (a speaker embedding) at the asr level.
    voice: bool = True

    def settings(self, **found: object) -> QaSettings:
        """The report's account of these choices (``found``: calibration, where the recogniser ran)."""
        settings = QaSettings(level=self.level.value, takes=self.takes, asr_model=self.asr_model)
        return replace(settings, **found)


class _RequestGate:
    """At most ``limit`` requests at once; ``limit`` may change (a router's capacity), so it is re-read."""

    def __init__(self, limit: int | Callable[[], int]) -> None:
        self._limit = limit if callable(limit) else (lambda: limit)
        self._busy = 0
        self._cond = threading.Condition()

    def __enter__(self) -> None:
        with self._cond:
            while self._busy >= max(1, self._limit()):
                self._cond.wait(timeout=0.5)
            self._busy += 1

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._busy -= 1
            self._cond.notify()


def take_seed(key: str, number: int) -> int:
    """A stable seed for take ``number`` of chunk ``key`` (a retake asks for other sampling)."""
    digest = hashlib.sha256(f"{key}:{number}".encode("ascii")).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


_READING = frozenset({FindingKind.PACE, FindingKind.PITCH, FindingKind.LOUDNESS})


def _reads_so_every_time(takes: list[TakeRecord]) -> bool:
    """True when the takes (two or more) failed only on reading checks, all of the same kinds."""
    kinds = {t.kinds for t in takes}
    return len(takes) >= 2 and len(kinds) == 1 and bool(next(iter(kinds))) and next(iter(kinds)) <= _READING


class ChunkQa:
    """Checks and retakes for one job's chunks; thread-safe (called from the render threads)."""

    def __init__(
        self,
        options: QaOptions,
        *,
        store: QaStore,
        request_take: RequestTake,
        model_key: str,
        voice_label: str | Callable[[QaItem], str],
        language: str | None,
        accepts_seed: bool,
        request_slots: int | Callable[[], int],
        asr_pool: AsrPool | None = None,
        tracker: DurationRateTracker | None = None,
        names: Collection[str] = (),
        voices: VoiceChecks | None = None,
        budget: TokenBudget | None = None,
    ) -> None:
        self.options = options
        self.store = store
        self._request_take = request_take
        self._model = model_key
        # The duration rate is per voice: a cast job speaks its chunks in several.
        self._voice_of = voice_label if callable(voice_label) else (lambda _item: voice_label)
        self._language = language_code(language)
        self._accepts_seed = accepts_seed
        self._slots = _RequestGate(request_slots)
        self._asr = asr_pool if options.level is QaLevel.ASR else None
        self.tracker = tracker or DurationRateTracker(options.thresholds)
        self.calibration = Calibration(options.thresholds)
        # Normalised words of the book's names and the lexicon's spoken forms: a take that says
        # another word for one of them is shown for review (a lexicon entry fixes it), not retaken.
        self._names = frozenset(names)
        # Voice identity and reading checks, and the token budget of every request (None: off).
        self.voices = voices
        self.budget = budget
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {v.value: 0 for v in Verdict} | {"requests": 0}
        self._flagged: list[str] = []  # keys of flagged chunks, for the review list of a running job

    # --- the renderer's hook ----------------------------------------------------------------------

    def accept_cached(self, item: QaItem, path: Path) -> bool:
        """True when the cached file of ``item`` has a verdict (so it is not requested again)."""
        record = self.store.load(item.key)
        if record is None:
            if self.options.level.checks:
                return False  # rendered with QA off: check it (take() reuses the file as take 1)
            self._count(Verdict.UNCHECKED)
            return True
        self._count(record.verdict, item.key)
        chosen = record.chosen_take
        if chosen is not None and chosen.passed:
            self.tracker.learn(record.text, chosen.duration_s, model=self._model, voice=self._voice_of(item))
            self._calibrate(record.text, chosen, measured=True)
        return True

    def take(self, item: QaItem) -> bytes:
        """Request, check and retake ``item``; save its record; return the audio to accept."""
        prior = self.store.load(item.key)
        history = prior.takes if prior is not None else ()
        number = prior.next_take_number if prior is not None else 1
        takes: list[TakeRecord] = []
        audio_of: dict[int, bytes] = {}
        notes: dict[int, _Notes] = {}  # take number -> what judging it knew
        unchecked = self.store.audio_path(item.key)
        if prior is None and unchecked.is_file():
            # A file from a QA-off run is the first take: checking it costs no request.
            audio = unchecked.read_bytes()
            takes.append(self._judge(item, number, None, TakeAudio(audio), notes))
            audio_of[number] = audio
            number += 1
        budget = self._first_budget(item)
        while self._again(takes) and len(takes) < max(1, self.options.takes):
            seed = take_seed(item.key, number) if number > 1 and self._accepts_seed else None
            if takes and FindingKind.BUDGET in takes[-1].kinds and self.budget is not None:
                budget = self.budget.larger(takes[-1].max_new_tokens)  # stopped at its budget: a larger one
            with self._slots:
                result = self._request_take(item, seed, budget)
            self._count_request()
            takes.append(
                replace(
                    self._judge(item, number, seed, result, notes),
                    max_new_tokens=budget,
                    completion_tokens=result.completion_tokens,
                )
            )
            audio_of[number] = result.audio
            number += 1
        best = best_take(takes)
        if not best.passed and _reads_so_every_time(takes[-2:]):
            # The last two takes are outliers of pace, pitch or loudness alike: that is how this
            # text reads (a line said quickly), not a fault of one take; kept, with a notice.
            best = best_take(takes[-2:])
            best = self._kept_as_it_reads(item, best, audio_of[best.number])
            takes = [best if t.number == best.number else t for t in takes]
        if best.passed:
            self._accept(item, best, notes.get(best.number) or _Notes())
            verdict = Verdict.PASSED if best is takes[0] and not history else Verdict.RETAKEN
        else:
            verdict = Verdict.FLAGGED
        # Word times belong to the audio in the book: only the chosen take keeps them.
        kept = tuple(t if t.number == best.number else t.without_words() for t in (*history, *takes))
        record = ChunkRecord(
            key=item.key,
            text=item.text,
            level=self.options.level.value,
            verdict=verdict,
            chosen=best.number,
            takes=kept,
            chapter=int(getattr(item, "chapter_number", 0) or 0),
            chunk=int(getattr(item, "chunk_number", 0) or 0),
        )
        self.store.save(record)
        self._count(verdict, item.key)
        return audio_of[best.number]

    def _kept_as_it_reads(self, item: QaItem, take: TakeRecord, audio: bytes) -> TakeRecord:
        """``take`` with its reading findings made notices; its words, if not heard yet (QA turned
        to the asr level on resume), are heard now, so a kept take is still checked for what it says."""
        take = replace(take, failures=(), notices=(*take.notices, *take.failures))
        if self._asr is not None and take.transcript is None:
            take = self._transcribe(item, take, audio, self.calibration.thresholds())
        return take

    # --- budgets and learning ---------------------------------------------------------------------

    def _first_budget(self, item: QaItem) -> int | None:
        if self.budget is None:
            return None
        return self.budget.for_text(self._voice_of(item), text_units(item.text).count)

    @staticmethod
    def _again(takes: list[TakeRecord]) -> bool:
        """True while the chunk needs another take: none yet, or the last failed (a take that
        stopped at a budget already doubled once is not asked a third time)."""
        if not takes:
            return True
        if takes[-1].passed:
            return False
        stopped = [t for t in takes if FindingKind.BUDGET in t.kinds and t.max_new_tokens is not None]
        return len(stopped) < 2

    def _accept(self, item: QaItem, take: TakeRecord, notes: _Notes) -> None:
        self._calibrate(item.text, take, measured=notes.measured)
        voice = self._voice_of(item)
        if self.voices is not None and notes.reading is not None:
            self.voices.learn(voice, notes.reading)
        if self.budget is not None:
            self.budget.learn(
                voice,
                units=text_units(item.text).count,
                tokens=take.completion_tokens,
                duration_s=take.duration_s,
            )

    # --- checks -----------------------------------------------------------------------------------

    def _calibrate(self, text: str, take: TakeRecord, *, measured: bool) -> None:
        # Ratios against the prior say how far the prior is off, not how takes spread: only
        # ratios against the job's own rate calibrate the duration limits.
        self.calibration.learn(
            wer=take.wer,
            recall=take.word_recall,
            duration_ratio=take.duration_ratio if measured else None,
            words=len(text.split()),
            units=text_units(text).count,
        )

    def _judge(
        self, item: QaItem, number: int, seed: int | None, result: TakeAudio, notes: dict[int, _Notes]
    ) -> TakeRecord:
        thresholds = self.calibration.thresholds()
        figures = measure_audio(result.audio, thresholds)
        voice = self._voice_of(item)
        expectation = self.tracker.expect(item.text, model=self._model, voice=voice)
        note = notes[number] = _Notes(measured=expectation.measured)
        take = basic_take(
            number=number,
            seed=seed,
            finish_reason=result.finish_reason,
            figures=figures,
            expectation=expectation,
            thresholds=thresholds,
        )
        signal_ok = (
            result.finish_reason != "length"
            and figures.duration_s > 0.05
            and figures.silence_share <= thresholds.max_silence_share
        )
        if signal_ok and take.passed and self.voices is not None:
            # Heard before the words: a take in another voice is retaken without its transcript.
            note.reading = self.voices.read(item, voice, result.audio, figures, len(item.text.split()))
            similarity, found = self.voices.check(voice, note.reading)
            take = with_reading(take, note.reading, similarity, found)
        if self._asr is not None and take.kinds <= _READING:
            # A take read too fast has often left words out: its transcript says which.
            take = self._transcribe(item, take, result.audio, thresholds)
        if signal_ok and not any(f.kind.skews_rate for f in take.failures):
            # Every take whose signal is sound feeds the rate: the median shrugs off the odd
            # loop or cut among them, and a model slower than the prior is learnt, not flagged.
            self.tracker.learn(item.text, figures.duration_s, model=self._model, voice=voice)
        return take

    def _transcribe(self, item: QaItem, take: TakeRecord, audio: bytes, thresholds: Thresholds) -> TakeRecord:
        assert self._asr is not None
        try:
            recogniser = self._asr.recogniser()
        except RECOGNITION_ERRORS as exc:  # a broken ASR model degrades QA to basic, with a note
            return replace(take, asr_note=f"speech recognition unavailable: {exc}")
        except Exception as exc:  # noqa: BLE001 - a bug, logged where the load failed; the book goes on
            return replace(take, asr_note=f"speech recognition skipped: {internal_error_message(exc)}")
        if not recogniser.covers(self._language):
            return replace(
                take,
                asr_note=(
                    f"speech recognition skipped: {recogniser.name} does not cover language "
                    f"'{self._language}'"
                ),
            )
        try:
            if self.options.word_times:
                heard = self._asr.submit_words(audio, self._language).result()
            else:
                heard = Heard(self._asr.submit(audio, self._language).result())
        except RECOGNITION_ERRORS as exc:  # one undecodable take must not stop the book
            return replace(take, asr_note=f"speech recognition failed on this take: {exc}")
        except Exception as exc:  # noqa: BLE001 - a bug: its traceback goes to the log, the book goes on
            _log.exception("QA speech recognition of chunk %s failed on a bug", item.key)
            return replace(take, asr_note=f"speech recognition skipped: {internal_error_message(exc)}")
        lang = self._language or "en"
        score = score_transcript(item.text, heard.text, lang=lang)
        findings = find_faults(
            align_transcript(item.text, heard.text, lang=lang), thresholds, names=self._names
        )
        take = with_transcript(take, heard.text, score, thresholds, findings)
        voice = getattr(item, "voice", None)
        leaked = cue_failures(
            self._model, getattr(voice, "delivery", None), text=item.text, transcript=heard.text
        )
        if leaked:
            take = replace(take, failures=(*take.failures, *leaked))
        if heard.words is not None:
            take = replace(take, words=heard.words, audio_sha256=hashlib.sha256(audio).hexdigest())
        return take

    # --- counts -----------------------------------------------------------------------------------

    def _count(self, verdict: Verdict, key: str = "") -> None:
        with self._lock:
            self._counts[verdict.value] += 1
            if verdict.needs_review and key:
                self._flagged.append(key)

    def _count_request(self) -> None:
        with self._lock:
            self._counts["requests"] += 1

    def counts(self) -> QaProgress:
        """Verdicts so far (cached chunks included)."""
        with self._lock:
            c = dict(self._counts)
            flagged = tuple(self._flagged)
        behind = self._asr.pending if self._asr is not None else 0
        return QaProgress(
            level=self.options.level.value,
            passed=c["passed"],
            retaken=c["retaken"],
            flagged=c["flagged"],
            accepted=c["accepted"],
            unchecked=c["unchecked"],
            requests=c["requests"],
            flagged_keys=flagged,
            behind=behind,
        )

"""Judge one take: the basic checks, the speech-recognition checks, and the choice of the best take.

Every failure is a :class:`~omni_web.qa.findings.Finding`: its kind, the sentence a user reads in the
review list ("the audio is 0.31 of the expected length: cut off or words skipped") and its figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from omni_web.qa.audio import AudioFigures
from omni_web.qa.detectors import Findings
from omni_web.qa.findings import Finding, FindingKind
from omni_web.qa.rate import Expectation, TextUnits
from omni_web.qa.records import TakeRecord
from omni_web.qa.thresholds import Thresholds
from omni_web.qa.wer import TranscriptScore

__all__ = ["asr_failures", "basic_take", "best_take", "is_short_line", "with_transcript"]


def basic_take(
    *,
    number: int,
    seed: int | None,
    finish_reason: str | None,
    figures: AudioFigures,
    expectation: Expectation,
    thresholds: Thresholds,
) -> TakeRecord:
    """The take's record with the finish reason, duration, silence and clipping checks applied."""
    failures: list[Finding] = []
    if finish_reason == "length":
        failures.append(
            Finding(
                FindingKind.BUDGET,
                "the model stopped at its token limit (finish reason 'length'): the end is cut off",
            )
        )
    ratio: float | None = None
    expected = expectation.seconds if expectation.units.count > 0 else None
    if expected:
        ratio = figures.duration_s / expected
    if figures.duration_s <= 0.05:
        failures.append(Finding(FindingKind.EMPTY, "the audio is empty", {"duration_s": figures.duration_s}))
    elif is_short_line(expectation.units, thresholds):
        failures.extend(_short_line_failures(figures, expectation.units.count, thresholds))
    else:
        failures.extend(_length_failures(figures, ratio, expectation, thresholds))
    if figures.longest_internal_silence_s > thresholds.max_internal_silence_s:
        pause = figures.longest_internal_silence_s
        failures.append(
            Finding(FindingKind.PAUSE, f"a silence of {pause:.1f} s inside the chunk", {"silence_s": pause})
        )
    if figures.clipped_share > thresholds.max_clipped_share:
        failures.append(
            Finding(
                FindingKind.CLIPPED,
                f"{figures.clipped_share:.2%} of the samples are clipped",
                {"clipped_share": figures.clipped_share},
            )
        )
    return TakeRecord(
        number=number,
        seed=seed,
        finish_reason=finish_reason,
        duration_s=figures.duration_s,
        expected_s=expected,
        duration_ratio=ratio,
        silence_share=figures.silence_share,
        longest_internal_silence_s=figures.longest_internal_silence_s,
        clipped_share=figures.clipped_share,
        failures=tuple(failures),
    )


def is_short_line(units: TextUnits, thresholds: Thresholds) -> bool:
    """True for a line of a few words ("Aye.", "Stand by!"), judged by its seconds of speech."""
    return units.script == "alphabetic" and 0 < units.words <= thresholds.short_line_words


def _short_line_failures(figures: AudioFigures, units: int, thresholds: Thresholds) -> list[Finding]:
    # Padding and pauses are most of a short take, so its silence share and its length against
    # the text say nothing; its seconds of speech do (see Thresholds.short_line_words).
    least, most = thresholds.short_speech_bounds(units)
    speech = figures.speech_s
    if speech < least:
        return [
            Finding(
                FindingKind.CUT,
                f"only {speech:.2f} s of speech for a short line (at least {least:.2f} s): silent or cut off",
                {"speech_s": speech, "least_s": least},
            )
        ]
    if speech > most:
        return [
            Finding(
                FindingKind.LOOP,
                f"{speech:.1f} s of speech for a short line (at most {most:.1f} s): a loop or babble",
                {"speech_s": speech, "most_s": most},
            )
        ]
    return []


def _length_failures(
    figures: AudioFigures, ratio: float | None, expectation: Expectation, thresholds: Thresholds
) -> list[Finding]:
    failures: list[Finding] = []
    if ratio is not None and expectation.units.count >= thresholds.min_units_for_ratio:
        low, high = thresholds.ratio_bounds(expectation.units.count, measured=expectation.measured)
        bounds = {"ratio": ratio, "low": low, "high": high}
        if ratio < low:
            failures.append(
                Finding(
                    FindingKind.CUT,
                    f"the audio is {ratio:.2f} of the expected length: cut off or words skipped",
                    bounds,
                )
            )
        elif ratio > high:
            failures.append(
                Finding(
                    FindingKind.LOOP,
                    f"the audio is {ratio:.2f} times the expected length: a loop or babble",
                    bounds,
                )
            )
    if figures.silence_share > thresholds.max_silence_share:
        failures.append(
            Finding(
                FindingKind.SILENT,
                f"{figures.silence_share:.0%} of the audio is silent",
                {"silence_share": figures.silence_share},
            )
        )
    return failures


def asr_failures(
    score: TranscriptScore, thresholds: Thresholds, duration_ratio: float | None = None
) -> list[Finding]:
    """Why a transcript does not match its text (empty when it does).

    ``duration_ratio`` (measured / expected audio length) separates skipped words (short audio)
    from words the recogniser missed in full-length audio.
    """
    failures: list[Finding] = []
    if score.reference_words < thresholds.min_words_for_asr:
        return failures
    share = score.transcript_words / score.reference_words
    short_audio = duration_ratio is None or duration_ratio < thresholds.skipped_max_ratio
    figures = {"wer": score.wer, "recall": score.recall, "word_share": share}
    if score.wer > thresholds.wer_limit(score.reference_words):
        failures.append(
            Finding(
                FindingKind.WER,
                f"the transcript differs from the text (word error rate {score.wer:.0%})",
                figures,
            )
        )
    elif score.recall >= thresholds.out_of_order_recall and score.wer >= thresholds.out_of_order_wer:
        failures.append(
            Finding(
                FindingKind.ORDER,
                f"the words are spoken out of order ({score.recall:.0%} heard, "
                f"word error rate {score.wer:.0%})",
                figures,
            )
        )
    if score.recall < thresholds.min_word_recall_any or (
        score.recall < thresholds.min_word_recall and short_audio
    ):
        failures.append(
            Finding(FindingKind.RECALL, f"only {score.recall:.0%} of the words were heard", figures)
        )
    if share < thresholds.min_word_share and short_audio:
        failures.append(
            Finding(
                FindingKind.SKIPPED,
                f"the transcript has {score.transcript_words} of "
                f"{score.reference_words} words and the audio is short: words skipped",
                figures,
            )
        )
    elif share > thresholds.max_word_share:
        failures.append(
            Finding(
                FindingKind.WORDY,
                f"the transcript has {share:.1f} times the words of the text: a loop or babble",
                figures,
            )
        )
    return failures


def with_transcript(
    take: TakeRecord,
    transcript: str,
    score: TranscriptScore,
    thresholds: Thresholds,
    findings: Findings | None = None,
) -> TakeRecord:
    """The take with its transcript, scores and any speech-recognition failures added.

    ``findings`` (the alignment checks: gaps, repeats, babble, misheard names) add their failures
    after the global ones, their notices for the reviewer, and notes on checks they skipped.
    """
    found = findings or Findings()
    failures = [*asr_failures(score, thresholds, take.duration_ratio), *found.failures]
    note = "; ".join(n for n in (take.asr_note, *found.notes) if n)
    return replace(
        take,
        transcript=transcript,
        wer=score.wer,
        word_recall=score.recall,
        failures=(*take.failures, *failures),
        notices=(*take.notices, *found.notices),
        asr_note=note,
    )


def _rank(take: TakeRecord) -> tuple[int, float, int, float]:
    distance = (
        abs(math.log(take.duration_ratio)) if take.duration_ratio and take.duration_ratio > 0 else math.inf
    )
    return (0 if take.passed else 1, take.wer if take.wer is not None else 0.0, len(take.failures), distance)


def best_take(takes: Sequence[TakeRecord]) -> TakeRecord:
    """A passing take first; then the lowest word error rate; then the duration nearest the expected."""
    if not takes:
        raise ValueError("no takes to choose from")
    return min(takes, key=_rank)

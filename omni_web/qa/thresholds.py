"""QA levels and every threshold a check uses, in one place, each with the reason for its value.

A threshold change here changes what is retaken and flagged everywhere (renderer, review, bench),
so the numbers are named and explained rather than scattered through the checks.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

__all__ = ["DEFAULT_THRESHOLDS", "QaLevel", "Thresholds", "parse_level"]


class QaLevel(enum.StrEnum):
    """How much checking every chunk gets before it is accepted."""

    OFF = "off"  # accept what the server returns (the behaviour before QA existed)
    BASIC = "basic"  # finish reason, duration against the text, silence, clipping (milliseconds)
    ASR = "asr"  # basic, plus a transcript compared with the text (faster-whisper, off the request path)

    @property
    def checks(self) -> bool:
        """True when chunks are checked at all."""
        return self is not QaLevel.OFF


def parse_level(value: str | QaLevel | None) -> QaLevel:
    """``off``/``basic``/``asr`` (any case); None means the default, ``basic``."""
    if value is None or value == "":
        return QaLevel.BASIC
    try:
        return QaLevel(str(value).strip().lower())
    except ValueError:
        raise ValueError(f"QA level must be off, basic or asr, not {value!r}") from None


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Every limit the checks apply; the defaults are what a new install uses."""

    # --- duration against the text -----------------------------------------------------------
    # Seconds per spoken character (letters and digits) before the job has measured its own rate:
    # narration at ~150 words/min with ~4.7 letters a word is ~0.085 s; models read a little faster.
    prior_s_per_char: float = 0.075
    # CJK scripts carry a syllable per character: ~4-5 characters/s in narration.
    prior_s_per_cjk_char: float = 0.22
    # Chunks measured before the job's own median replaces the prior (the median of 8 is robust to
    # two faulty takes among them).
    rate_min_samples: int = 8
    # Samples kept per model+voice+script; old ones age out so a long book follows drift.
    rate_window: int = 200
    # Allowed ratio of measured to expected duration, by text length. A third of the audio (a cut)
    # is 0.33 and a triple loop is 3.0; honest takes measured against the job's own rate fall in
    # 0.74-1.36 at every length (357 chunks of Alice on the fake server), real models a little
    # wider, and short chunks most (a single pause is a large share of them).
    ratio_long: tuple[float, float] = (0.55, 1.8)  # >= long_units characters
    ratio_medium: tuple[float, float] = (0.5, 2.0)  # >= medium_units characters
    ratio_short: tuple[float, float] = (0.45, 2.3)  # shorter texts (headings, one-liners)
    long_units: int = 200
    medium_units: int = 60
    # Before the job's own rate is known the prior can be off by a model's pace: widen by this.
    prior_widen: float = 1.25
    # Below this many characters the ratio says nothing useful ("I." can take 0.2 s or 1 s).
    min_units_for_ratio: int = 12
    # --- very short lines ("Aye.", "Sir?", "Stand by!") ------------------------------------------
    # Texts of at most this many words are judged by their speech in absolute seconds instead of
    # the duration ratio and the silence share. A one-word take is mostly the model's padding: flite
    # slt says "Queequeg!" in 0.36 s of a 0.93 s take, 61 % silent, and the expected length of a
    # few letters says nothing about a word said with feeling. Their transcript is not compared
    # either (min_words_for_asr): tiny.en hears a clean "Aye." as "Hi." and "Queequeg!" as "week",
    # and another take would be heard the same, so it would only be retaken three times and flagged.
    short_line_words: int = 3
    # Less speech than this is a silent or cut-off take: flite's shortest clean word ("Sir?") has
    # 0.29 s of speech above the silence level, and a take cut to 0.1 s of speech has at most 0.12.
    short_min_speech_s: float = 0.16
    # More speech than this (a base plus so much per spoken character) is a loop or babble: clean
    # flite lines reach at most half of it ("Aye." 0.36 s of 1.1, "Aye, aye, sir!" 0.82 of 1.7),
    # the word said six times over at least 1.5 times it ("Sir?" 1.68 s of 1.1).
    short_max_speech_s: float = 0.8
    short_max_speech_per_unit_s: float = 0.1
    # --- silence and clipping ------------------------------------------------------------------
    # A 20 ms window is "silent" below this RMS level in dBFS; speech sits at -30..-10 dBFS, room
    # noise and TTS tails well below -45.
    silence_dbfs: float = -45.0
    window_s: float = 0.02
    # Fail when more than this share of the chunk is silent: narration is ~15-35 % pauses.
    max_silence_share: float = 0.6
    # Fail on an internal silence (not counting the start and the end) longer than this: the
    # longest pause a narrator makes mid-chunk is ~1.5 s; models that stall leave several seconds.
    max_internal_silence_s: float = 3.0
    # A sample at or above this magnitude (of full scale) counts as clipped...
    clip_level: float = 0.999
    # ... and the chunk fails when more than this share of its samples are: a few isolated peaks
    # are inaudible, 0.1 % is audible crackle.
    max_clipped_share: float = 0.001
    # --- speech recognition --------------------------------------------------------------------
    # Word error rate above which a take fails: max_wer + max_wer_noise / sqrt(words). A small
    # Whisper model mishears names and synthetic voices, and on few words each miss weighs more:
    # tiny.en on espeak-ng scores at most 0.47 on clean chunks of 15+ words of a novel but 0.70 at
    # 10 words, while a take with its words shuffled scores 0.83+ at 26+ words and 0.73+ at 10
    # (270 Alice chunks, clean / shuffled / a third dropped). The limit is 0.66 at 40 words, 0.73 at
    # 10 and 0.8 at 4; a flat 0.65 flagged 4 of 90 clean chunks, this 1 (heard 1 word of 6).
    max_wer: float = 0.6
    max_wer_noise: float = 0.4
    # Share of the text's words (order ignored) the transcript must contain, and transcript words
    # per text word. Clean takes reach recall 0.6-0.95 and a share of 0.95-1.06 with tiny.en;
    # takes that skipped a third of their words reach 0.27-0.62 and 0.6-0.83. But a small model
    # also drops words of a clean take (recall 0.42 on a 12-word line, a share of 0.76 on a
    # 34-word one), so these two count as "words skipped" only when the audio is short as well:
    # skipped words shorten the audio (ratio 0.6-0.87), misheard ones do not (0.93-1.02).
    min_word_recall: float = 0.5
    min_word_share: float = 0.85
    skipped_max_ratio: float = 0.9
    # Recall below this fails whatever the duration: the audio says something else entirely.
    min_word_recall_any: float = 0.25
    max_word_share: float = 1.6  # a loop repeats the words 2-3 times
    # Words heard but out of order: recall at least this with a word error rate at least
    # out_of_order_wer. No clean take of the 270 Alice chunks reached both; shuffled short
    # lines that slip under the WER limit do ("You must come, you be the handstand here...":
    # recall 0.85, WER 0.69 on 13 words).
    out_of_order_recall: float = 0.75
    out_of_order_wer: float = 0.5
    # Below this many words a transcript comparison is noise (one misheard word is 50 %).
    min_words_for_asr: int = 4
    # --- where the transcript differs (omni_web/qa/alignment.py, detectors.py) ----------------
    # A recogniser's own errors are scattered; a model's dropped clause or repeated phrase is one
    # run. Measured with bench/measure_qa_faults.py (28 Alice chunks of ~110 words, tiny.en, greedy):
    # flite slt, clean: the largest region of net missing words per take was 0-2 (median 0), of net
    # extra words 0-4 (median 0), of words after the text 0-1; with 8 consecutive words left out
    # the gap measured 8-11 (every take), with 8 said twice the extra stretch 8-9, with 8 words of
    # babble the tail 8. espeak-ng, which tiny.en hears far worse (clean WER median 0.15 against
    # 0.04), clean over 16 such chunks: gaps 0-2 once the recogniser hears a lead-in (one take lost
    # its first 7 words without it, see omni_web/qa/asr.py), extra stretches 0-2; 8 words left out
    # measured 8-10, 8 said twice 8-14. A limit of 5 sits between both with room on either side and
    # still catches the clause of 5-6 words a model most often drops.
    gap_words: int = 5  # consecutive text words unheard
    repeat_words: int = 5  # transcript words heard again that match the text beside them
    extra_words: int = 5  # words heard before the text starts or after it ends
    # Words heard mid-text that neither repeat it nor stand for a text word (a hallucinated phrase):
    # rarer, and a recogniser's garbled stretch can look like it, so a wider limit.
    inserted_words: int = 8
    # Gap and repeat checks need a text long enough to hold such a run with text on both sides
    # (headings and one-liners skip them, with a note); babble is checked from min_words_for_asr.
    min_words_for_alignment: int = 12
    # --- per-job calibration (omni_web/qa/calibration.py) ---------------------------------------
    # Accepted takes (of min_words_for_alignment words or more) before the job's own WER, recall
    # and duration-ratio spread replaces the fixed limits above: 16 keeps the median and MAD
    # steady against two or three faulty takes that slipped through.
    calibration_min_samples: int = 16
    calibration_window: int = 200  # the most recent accepted takes, so a long book follows drift
    # Limit = median + k * sigma (MAD scaled to a standard deviation), k = 5. Measured on ~110-word
    # Alice chunks with tiny.en: flite slt clean WER median 0.04, sigma 0.055, max 0.20 gives a limit
    # of 0.31 (+0.04 for the length) where a fixed 0.64 let every 8-word gap (median 0.16) and most
    # thirds dropped pass on WER alone; espeak-ng clean median 0.15, sigma 0.05, max 0.27 gives 0.39,
    # below its takes with a third of the words dropped (median 0.53) and shuffled (0.95).
    calibration_sigmas: float = 5.0
    # Bounds for a calibrated limit: never so tight that one misheard name in a short text fails
    # it, and never looser than the fixed limits. The fixed limits already hold a voice tiny.en hears
    # badly (no clean espeak-ng take of 270 Alice chunks failed them), while a calibrated limit of
    # up to 0.8 on espeak-ng's spread let a shuffled one-line chunk through: calibration tightens.
    calibrated_max_wer: tuple[float, float] = (0.25, 0.6)
    calibrated_min_recall: tuple[float, float] = (0.5, 0.8)
    # Bounds of the calibrated duration ratio (medium and long texts): the low limit stays within
    # 0.5-0.8 and the high within 1.25-2.0 of the expected length.
    calibrated_ratio_low: tuple[float, float] = (0.5, 0.8)
    calibrated_ratio_high: tuple[float, float] = (1.25, 2.0)
    # --- voice identity and reading (omni_web/qa/voice.py) ----------------------------------------
    # Speaker-embedding similarity a take needs to its voice's centre before the job has calibrated
    # that voice. resemblyzer on one-sentence Alice takes: flite slt against its own centre
    # 0.97-0.99 (0.95 read 1.4 times faster), flite rms, awb, kal and espeak-ng against it 0.48-0.59.
    min_voice_similarity: float = 0.7
    # A calibrated limit (median - k sigma of the voice's accepted takes) stays within these.
    calibrated_voice_similarity: tuple[float, float] = (0.65, 0.8)
    # A built-in or designed voice has no reference: its centre is the mean of its first accepted
    # takes, so nothing is judged by voice before this many.
    voice_min_samples: int = 3
    voice_window: int = 200
    # Pace, pitch and loudness are judged on texts of at least this many words (a line of a few
    # words is said with any pace), once the voice has this many accepted takes to compare with.
    # Pace is counted in spoken characters and pauses per second (qa.rate.paced_units), whose spread
    # is narrow enough for 8-word lines and three takes (words per second swung 1.45 times between
    # clean espeak takes of short and long words).
    reading_min_words: int = 8
    reading_min_samples: int = 3
    # The least difference that fails a take, whatever the voice's spread: 1.22 times faster or
    # slower (log 0.2), 3 semitones, 6 dB. flite slt's pace spreads with sigma ~0.06 (log) over Alice
    # chunks; sox's tempo 1/1.4 measured only -0.2 on one of them, and a clean line 0.19 (letters
    # are not sounds: "filled with cupboards and shelves"). Its pitch centre is at 167-170 Hz (rms
    # 107, awb 127).
    pace_log_floor: float = 0.2
    # A reading outlier lies this many sigmas (MAD scaled) from the voice's median: 3 sigmas of
    # flite slt's pace is 1.2 times, where the 5 of the error-rate limits would let 1.4 through.
    reading_sigmas: float = 3.0
    pitch_semitones_floor: float = 3.0
    loudness_db_floor: float = 6.0
    # --- takes ---------------------------------------------------------------------------------
    takes: int = 3  # a failing chunk is requested up to this many times in all

    def wer_limit(self, words: int) -> float:
        """The highest word error rate a take of a ``words``-word text passes with."""
        return self.max_wer + self.max_wer_noise / math.sqrt(max(1, words))

    def short_speech_bounds(self, units: int) -> tuple[float, float]:
        """(least, most) seconds of speech a very short line of ``units`` characters passes with."""
        return self.short_min_speech_s, self.short_max_speech_s + self.short_max_speech_per_unit_s * units

    def ratio_bounds(self, units: int, *, measured: bool) -> tuple[float, float]:
        """(low, high) allowed duration ratio for a text of ``units`` characters."""
        if units >= self.long_units:
            low, high = self.ratio_long
        elif units >= self.medium_units:
            low, high = self.ratio_medium
        else:
            low, high = self.ratio_short
        if not measured:
            low, high = low / self.prior_widen, high * self.prior_widen
        return low, high


DEFAULT_THRESHOLDS = Thresholds()

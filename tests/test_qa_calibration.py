"""Per-job limits from the takes accepted so far, and the duration expected of initials."""

from __future__ import annotations

import random

import pytest

from omni_web.qa.calibration import Calibration
from omni_web.qa.rate import DurationRateTracker, text_units
from omni_web.qa.thresholds import DEFAULT_THRESHOLDS as T


def _feed(calibration: Calibration, wers: list[float], *, recall: float = 0.95) -> None:
    for wer in wers:
        calibration.learn(wer=wer, recall=recall, duration_ratio=1.0, words=100, units=500)


def test_the_fixed_limits_apply_until_enough_takes_are_accepted() -> None:
    calibration = Calibration(T)
    _feed(calibration, [0.04] * (T.calibration_min_samples - 1))
    assert not calibration.figures().calibrated
    assert calibration.thresholds() == T


def test_a_voice_heard_well_gets_tight_limits_and_one_heard_badly_loose_ones() -> None:
    rng = random.Random(3)
    well, badly = Calibration(T), Calibration(T)
    # The spreads measured with tiny.en (bench/measure_qa_faults.py): flite slt, espeak-ng.
    _feed(well, [max(0.0, rng.gauss(0.04, 0.05)) for _ in range(40)])
    _feed(badly, [max(0.0, rng.gauss(0.27, 0.06)) for _ in range(40)])
    tight, loose = well.thresholds(), badly.thresholds()
    assert T.calibrated_max_wer[0] <= tight.max_wer < 0.4 < T.max_wer
    assert 0.4 < loose.max_wer <= T.calibrated_max_wer[1] == T.max_wer  # never looser than the fixed limit
    # An 8-word gap in 110 words (WER median 0.16 on flite) passes the fixed limit, not the tight one;
    # no clean flite take (max 0.20) fails it.
    assert T.wer_limit(110) > 0.5 and 0.2 < tight.wer_limit(110) < 0.45
    figures = well.figures().to_dict()
    assert (
        figures["calibrated"]
        and figures["samples"] == 40
        and figures["max_wer"] == pytest.approx(tight.max_wer, abs=1e-3)
    )


def test_calibrated_limits_stay_within_their_sanity_bounds() -> None:
    perfect, hopeless = Calibration(T), Calibration(T)
    _feed(perfect, [0.0] * 30, recall=1.0)
    _feed(hopeless, [0.9] * 30, recall=0.2)
    assert perfect.thresholds().max_wer == T.calibrated_max_wer[0]
    assert perfect.thresholds().min_word_recall == T.calibrated_min_recall[1]
    assert hopeless.thresholds().max_wer == T.calibrated_max_wer[1]
    assert hopeless.thresholds().min_word_recall == T.calibrated_min_recall[0]


def test_duration_bounds_follow_the_jobs_spread() -> None:
    calibration = Calibration(T)
    rng = random.Random(5)
    for _ in range(30):
        calibration.learn(wer=None, recall=None, duration_ratio=rng.uniform(0.95, 1.05), words=100, units=500)
    low, high = calibration.thresholds().ratio_long
    assert (
        T.ratio_long[0] < low <= T.calibrated_ratio_low[1]
        and T.calibrated_ratio_high[0] <= high < T.ratio_long[1]
    )
    assert calibration.thresholds().ratio_short == T.ratio_short  # one-liners keep their wide bounds


def test_short_texts_do_not_calibrate() -> None:
    calibration = Calibration(T)
    for _ in range(30):
        calibration.learn(wer=0.5, recall=0.5, duration_ratio=2.0, words=5, units=20)
    assert calibration.figures().samples == 0 and calibration.figures().ratio_samples == 0


def test_initials_count_the_letters_of_their_spoken_names() -> None:
    # "George W.B. Towns" is said "George double-you bee Towns".
    assert text_units("George W.B. Towns").count == len("George") + len("doubleyou") + len("bee") + len(
        "Towns"
    )
    assert text_units("the BBC said").count == len("the") + len("beebeesee") + len("said")
    assert text_units("Alice was tired.").count == 13


def test_a_short_line_with_initials_is_not_called_a_loop() -> None:
    from omni_web.qa.audio import AudioFigures
    from omni_web.qa.judge import basic_take

    tracker = DurationRateTracker(T)
    for _ in range(T.rate_min_samples):
        tracker.learn(
            "Alice was beginning to get very tired of sitting by her sister.", 3.835, model="m", voice="v"
        )
    expectation = tracker.expect("George W.B. Towns", model="m", voice="v")
    # flite slt says the line above in 3.835 s and "George W.B. Towns" in 2.14 s: 1.9 times what
    # its 15 letters would take, 1.24 times its spoken letters.
    assert 2.14 / expectation.seconds == pytest.approx(1.24, abs=0.02)
    figures = AudioFigures(
        duration_s=2.14, silence_share=0.2, longest_internal_silence_s=0.0, clipped_share=0.0, peak_dbfs=-3.0
    )
    take = basic_take(
        number=1, seed=None, finish_reason="stop", figures=figures, expectation=expectation, thresholds=T
    )
    assert take.passed and take.duration_ratio < 1.3, take

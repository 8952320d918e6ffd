"""QA core: audio figures, the duration rate, transcript scores, take choice and the take loop."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from omni_web.qa import (
    ChunkQa,
    DurationRateTracker,
    FindingKind,
    QaLevel,
    QaOptions,
    QaStore,
    TakeAudio,
    Thresholds,
    Verdict,
    basic_take,
    best_take,
    measure_audio,
    parse_level,
    score_transcript,
    text_units,
)
from tests.fakes.fake_sgl_omni_audio import wav_bytes

pytestmark = pytest.mark.slow  # espeak-ng speech

RATE = 24000
TEXT = (
    "They were indeed a queer-looking party that assembled on the bank, the birds with draggled "
    "feathers, the animals with their fur clinging close to them, and all dripping wet, cross, and "
    "uncomfortable."
)


def _wav(samples: np.ndarray, rate: int = RATE) -> bytes:
    return wav_bytes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes(), rate=rate, channels=1)


def _speechlike(seconds: float, *, pause_every_s: float = 0.4, pause_s: float = 0.1) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    voiced = (t % pause_every_s) >= pause_s
    return (0.3 * np.sin(2 * np.pi * 140 * t) * voiced).astype(np.float32)


def _expected_s(text: str = TEXT) -> float:
    return text_units(text).count * Thresholds().prior_s_per_char


# --- audio figures ------------------------------------------------------------------------------


def test_speechlike_audio_has_pauses_but_is_not_silent() -> None:
    figures = measure_audio(_wav(_speechlike(6.0)), Thresholds())
    assert figures.duration_s == pytest.approx(6.0, abs=0.01)
    assert 0.15 < figures.silence_share < 0.35
    assert figures.longest_internal_silence_s < 0.2
    assert figures.clipped_share == 0


def test_silent_audio_and_a_long_internal_gap_are_measured() -> None:
    assert measure_audio(_wav(np.zeros(RATE * 5)), Thresholds()).silence_share == 1.0
    gap = np.concatenate([_speechlike(2.0), np.zeros(RATE * 4), _speechlike(2.0)])
    assert measure_audio(_wav(gap), Thresholds()).longest_internal_silence_s == pytest.approx(4.1, abs=0.15)


def test_clipping_is_the_share_of_full_scale_samples() -> None:
    loud = np.clip(_speechlike(3.0) * 10, -1, 1)
    assert measure_audio(_wav(loud), Thresholds()).clipped_share > 0.3


def test_not_a_wav_raises_value_error() -> None:
    with pytest.raises(ValueError, match="not a WAV"):
        measure_audio(b"hello", Thresholds())


# --- duration rate --------------------------------------------------------------------------------


def test_text_units_count_letters_or_cjk_characters() -> None:
    assert text_units("Hello, world 42!").count == 12
    units = text_units("他们确实是一群奇怪的人。")
    assert (units.script, units.count) == ("cjk", 11)


def test_rate_tracker_uses_the_prior_then_a_robust_median_per_voice() -> None:
    tracker = DurationRateTracker(Thresholds(rate_min_samples=8))
    assert tracker.expect(TEXT, model="m", voice="a").measured is False
    units = text_units(TEXT).count
    for _ in range(7):
        tracker.learn(TEXT, units * 0.1, model="m", voice="a")
    tracker.learn(TEXT, units * 0.3, model="m", voice="a")  # a loop among them
    tracker.learn(TEXT, units * 0.03, model="m", voice="a")  # and a cut
    expectation = tracker.expect(TEXT, model="m", voice="a")
    assert expectation.measured and expectation.seconds == pytest.approx(units * 0.1)
    # Another voice of the same model has its own rate.
    assert tracker.expect(TEXT, model="m", voice="b").measured is False


# --- transcripts ----------------------------------------------------------------------------------


def test_transcript_scores_normalise_case_punctuation_and_numbers() -> None:
    score = score_transcript("Chapter 3. It's 21 o'clock!", "chapter three, its twenty-one oclock")
    assert score.wer == 0 and score.recall == 1


def test_skipped_and_shuffled_words_score_apart_from_a_clean_transcript() -> None:
    words = TEXT.split()
    dropped = " ".join(w for i, w in enumerate(words) if i % 3 != 2)
    shuffled = " ".join(reversed(words))
    clean = score_transcript(TEXT, TEXT)
    skipped = score_transcript(TEXT, dropped)
    mixed = score_transcript(TEXT, shuffled)
    assert clean.wer == 0
    assert skipped.transcript_words / skipped.reference_words < 0.7
    assert mixed.recall == 1 and mixed.wer > 0.8


# --- judging --------------------------------------------------------------------------------------


def _kinds(findings) -> set[FindingKind]:
    return {f.kind for f in findings}


def _take(number: int, audio: np.ndarray, finish: str | None = "stop"):
    tracker = DurationRateTracker(Thresholds())
    return basic_take(
        number=number,
        seed=None,
        finish_reason=finish,
        figures=measure_audio(_wav(audio), Thresholds()),
        expectation=tracker.expect(TEXT, model="m", voice="v"),
        thresholds=Thresholds(),
    )


def test_basic_checks_catch_cut_loop_silence_and_length_finish() -> None:
    full = _expected_s()
    assert _take(1, _speechlike(full)).passed
    cut = _take(1, _speechlike(full / 3)).failures[0]
    assert (
        cut.kind is FindingKind.CUT and "cut off" in cut.message and cut.figures["ratio"] < cut.figures["low"]
    )
    assert _take(1, _speechlike(full * 3)).failures[0].kind is FindingKind.LOOP
    assert FindingKind.SILENT in _take(1, np.zeros(int(full * RATE))).kinds
    budget = _take(1, _speechlike(full), finish="length").failures[0]
    assert budget.kind is FindingKind.BUDGET and "token limit" in budget.message


def test_best_take_prefers_passing_then_the_nearest_duration() -> None:
    full = _expected_s()
    cut, near, far = (
        _take(1, _speechlike(full / 3)),
        _take(2, _speechlike(full)),
        _take(3, _speechlike(full * 1.4)),
    )
    assert best_take([cut, far, near]).number == 2
    assert best_take([cut, _take(4, _speechlike(full * 3))]).number in (1, 4)


def test_parse_level() -> None:
    assert parse_level(None) is QaLevel.BASIC
    assert parse_level("ASR") is QaLevel.ASR
    with pytest.raises(ValueError, match="off, basic or asr"):
        parse_level("full")


# --- the take loop ------------------------------------------------------------------------------


class _Item:
    def __init__(self, key: str, text: str = TEXT) -> None:
        self.key, self.text = key, text


class _Server:
    """Answers each request with the next queued fault (then clean audio); records the seeds."""

    def __init__(self, faults: list[str]) -> None:
        self.faults = list(faults)
        self.seeds: list[int | None] = []

    def __call__(self, item: _Item, seed: int | None, max_new_tokens: int | None = None) -> TakeAudio:
        text = item.text
        self.seeds.append(seed)
        fault = self.faults.pop(0) if self.faults else "clean"
        full = _expected_s(text)
        audio = {
            "clean": _speechlike(full),
            "cut": _speechlike(full / 3),
            "loop": _speechlike(full * 3),
            "silent": np.zeros(int(full * RATE)),
        }[fault]
        return TakeAudio(_wav(audio), "length" if fault == "length" else "stop")


def _qa(tmp_path: Path, server: _Server, *, accepts_seed: bool = True, takes: int = 3) -> ChunkQa:
    return ChunkQa(
        QaOptions(level=QaLevel.BASIC, takes=takes),
        store=QaStore(tmp_path),
        request_take=server,
        model_key="m",
        voice_label="v",
        language="English",
        accepts_seed=accepts_seed,
        request_slots=2,
    )


def test_a_failed_take_is_retaken_with_a_new_seed_and_recorded(tmp_path: Path) -> None:
    server = _Server(["cut", "loop"])
    qa = _qa(tmp_path, server)
    audio = qa.take(_Item("k1"))
    assert measure_audio(audio, Thresholds()).duration_s == pytest.approx(_expected_s(), abs=0.05)
    assert server.seeds[0] is None and None not in server.seeds[1:] and len(set(server.seeds[1:])) == 2
    record = QaStore(tmp_path).load("k1")
    assert record is not None and record.verdict is Verdict.RETAKEN and record.chosen == 3
    assert [t.passed for t in record.takes] == [False, False, True]
    assert qa.counts().retaken == 1 and qa.counts().requests == 3


def test_a_chunk_that_never_passes_is_flagged_with_its_best_take(tmp_path: Path) -> None:
    server = _Server(["silent", "loop", "cut"])
    qa = _qa(tmp_path, server)
    qa.take(_Item("k2"))
    record = QaStore(tmp_path).load("k2")
    assert record is not None and record.verdict is Verdict.FLAGGED and len(record.takes) == 3
    assert qa.counts().flagged == 1


def test_a_model_without_seed_gets_no_seed_on_retakes(tmp_path: Path) -> None:
    server = _Server(["cut"])
    _qa(tmp_path, server, accepts_seed=False).take(_Item("k3"))
    assert server.seeds == [None, None]


def test_a_cached_chunk_with_a_verdict_is_not_taken_again(tmp_path: Path) -> None:
    server = _Server([])
    first = _qa(tmp_path, server)
    (tmp_path / "k4.wav").write_bytes(first.take(_Item("k4")))
    resumed = _qa(tmp_path, _Server([]))
    assert resumed.accept_cached(_Item("k4"), tmp_path / "k4.wav") is True
    assert resumed.counts().passed == 1 and resumed.counts().requests == 0


def test_a_file_from_a_qa_off_run_is_checked_without_a_request(tmp_path: Path) -> None:
    (tmp_path / "k5.wav").write_bytes(_wav(_speechlike(_expected_s())))
    server = _Server([])
    qa = _qa(tmp_path, server)
    assert qa.accept_cached(_Item("k5"), tmp_path / "k5.wav") is False
    qa.take(_Item("k5"))
    assert server.seeds == [] and QaStore(tmp_path).load("k5").verdict is Verdict.PASSED


def test_missing_words_count_as_skipped_only_when_the_audio_is_short_too() -> None:
    from omni_web.qa import asr_failures

    words = TEXT.split()
    dropped = score_transcript(TEXT, " ".join(w for i, w in enumerate(words) if i % 3 != 2))
    assert FindingKind.SKIPPED in _kinds(asr_failures(dropped, Thresholds(), 0.7))
    # The same transcript of full-length audio: the recogniser missed words, the model did not.
    assert FindingKind.SKIPPED not in _kinds(asr_failures(dropped, Thresholds(), 1.0))
    shuffled = score_transcript(TEXT, " ".join(reversed(words)))
    assert FindingKind.WER in _kinds(asr_failures(shuffled, Thresholds(), 1.0))


class _EnglishOnly:
    name = "tiny.en"

    def __init__(self) -> None:
        self.calls = 0

    def covers(self, language: str | None) -> bool:
        return language in (None, "en")

    def transcribe(self, wav: bytes, language: str | None) -> str:
        self.calls += 1
        return TEXT


def test_asr_skips_a_language_the_model_does_not_cover_with_a_note(tmp_path: Path) -> None:
    from omni_web.qa import AsrPool

    recogniser = _EnglishOnly()
    pool = AsrPool(lambda: recogniser)
    qa = ChunkQa(
        QaOptions(level=QaLevel.ASR),
        store=QaStore(tmp_path),
        request_take=_Server([]),
        model_key="m",
        voice_label="v",
        language="French",
        accepts_seed=True,
        request_slots=1,
        asr_pool=pool,
    )
    qa.take(_Item("fr"))
    record = QaStore(tmp_path).load("fr")
    assert record.verdict is Verdict.PASSED and recogniser.calls == 0
    assert "does not cover language 'fr'" in record.takes[0].asr_note
    english = ChunkQa(
        QaOptions(level=QaLevel.ASR),
        store=QaStore(tmp_path),
        request_take=_Server([]),
        model_key="m",
        voice_label="v",
        language="English",
        accepts_seed=True,
        request_slots=1,
        asr_pool=pool,
    )
    english.take(_Item("en"))
    take = QaStore(tmp_path).load("en").takes[0]
    assert recogniser.calls == 1 and take.wer == 0 and take.transcript == TEXT
    pool.close()


class _Failing(_EnglishOnly):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def transcribe(self, wav: bytes, language: str | None) -> str:
        raise self.error


@pytest.mark.parametrize(
    ("error", "note", "logged_as_bug"),
    [
        (
            ValueError("Invalid data found when processing input"),
            "speech recognition failed on this take",
            False,
        ),
        (
            TypeError("'NoneType' object is not subscriptable"),
            "speech recognition skipped: Internal error",
            True,
        ),
    ],
)
def test_a_bug_in_recognition_is_logged_as_one_not_called_a_recognition_failure(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, error: Exception, note: str, logged_as_bug: bool
) -> None:
    from omni_web.qa import AsrPool

    pool = AsrPool(lambda: _Failing(error))
    qa = ChunkQa(
        QaOptions(level=QaLevel.ASR),
        store=QaStore(tmp_path),
        request_take=_Server([]),
        model_key="m",
        voice_label="v",
        language="English",
        accepts_seed=True,
        request_slots=1,
        asr_pool=pool,
    )
    with caplog.at_level("ERROR", logger="omni_web.qa.takes"):
        qa.take(_Item("en"))
    pool.close()
    take = QaStore(tmp_path).load("en").takes[0]
    assert take.asr_note.startswith(note), take.asr_note
    bugs = [r for r in caplog.records if r.name == "omni_web.qa.takes" and r.exc_info]
    assert bool(bugs) is logged_as_bug


def test_wer_limit_allows_more_misheard_words_on_short_texts_but_not_shuffles() -> None:
    from omni_web.qa import asr_failures

    thresholds = Thresholds()
    assert (
        thresholds.wer_limit(4)
        > thresholds.wer_limit(10)
        > thresholds.wer_limit(40)
        > thresholds.wer_limit(200)
    )
    assert 0.6 < thresholds.wer_limit(200) < thresholds.wer_limit(40) < 0.7
    # Real tiny.en transcripts of espeak-ng reading a 10-word line of Alice: misheard, then shuffled.
    text = 'The Hatter shook his head mournfully. "Not I!" he replied.'
    misheard = score_transcript(text, "The header shook his head more and fully. Now tie it. He replied.")
    shuffled = score_transcript(text, "Not replied, had or not in my head, shocking more infillie.")
    assert misheard.wer == pytest.approx(0.7)
    assert asr_failures(misheard, thresholds, 1.0) == []
    assert FindingKind.WER in _kinds(asr_failures(shuffled, thresholds, 1.0))


def test_english_contractions_score_as_written_out() -> None:
    score = score_transcript(
        "They're fond of it; I won't, can't and we've tried.",
        "They are fond of it. I will not, cannot, and we have tried.",
    )
    assert score.wer == 0.0 and score.recall == 1.0
    assert score_transcript("They're here.", "There here.").wer > 0  # the expansion is not a free pass


def test_reference_and_transcript_meet_in_the_spoken_form() -> None:
    # A model reads "CHAPTER II." as "chapter two"; the recogniser writes "Chapter 2"; "Mr." is "Mister".
    assert score_transcript("CHAPTER II. The Pool of Tears", "Chapter 2. The pool of tears.").wer == 0.0
    assert (
        score_transcript("Mr. Smith paid $5 in 1851.", "Mister Smith paid five dollars in 1851.").wer == 0.0
    )
    assert score_transcript("Louis XIV slept.", "Louis the 14th slept.").wer == 0.0


def test_asr_pool_size_is_half_the_cores_and_its_workers_run_at_once() -> None:
    import threading

    from omni_web.qa import AsrPool, asr_workers

    assert [asr_workers(n) for n in (1, 2, 3, 8, 64)] == [1, 1, 1, 4, 4]
    both_running = threading.Barrier(2, timeout=60)

    class _Concurrent:
        name = "two at once"

        def covers(self, language: str | None) -> bool:
            return True

        def transcribe(self, wav: bytes, language: str | None) -> str:
            both_running.wait()  # breaks (and raises) unless two transcriptions overlap
            return "ok"

    pool = AsrPool(lambda: _Concurrent(), workers=2)
    try:
        assert [f.result(timeout=90) for f in (pool.submit(b"", "en"), pool.submit(b"", "en"))] == [
            "ok",
            "ok",
        ]
    finally:
        pool.close()


def test_words_heard_out_of_order_fail_under_the_wer_limit() -> None:
    from omni_web.qa import asr_failures

    # Real tiny.en on espeak-ng reading a shuffled 13-word line: most words there, order gone.
    text = '"You must be," said the Cat, "or you wouldn\'t have come here."'
    score = score_transcript(text, "You must come, you be the handstand here, wouldn't cat, or you...")
    assert score.wer <= Thresholds().wer_limit(score.reference_words)
    order = [f for f in asr_failures(score, Thresholds(), 1.0) if f.kind is FindingKind.ORDER]
    assert order and "out of order" in order[0].message
    clean = score_transcript(text, "You must be, said the cat, or you wouldn't have come here.")
    assert asr_failures(clean, Thresholds(), 1.0) == []

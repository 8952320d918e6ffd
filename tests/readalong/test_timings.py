"""Chapter timings: built from chunk files and pauses, stored beside the chapter, read back after a
restart without transcribing again, rebuilt when a chunk is regenerated; subtitles from them."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest

from omni_web.files import file_sha256
from omni_web.qa import ChunkRecord, QaStore, TakeRecord, Verdict
from omni_web.readalong import (
    AsrWord,
    ChapterSource,
    ChunkSource,
    WordCache,
    build_chapter_timings,
    format_srt,
    format_vtt,
    load_timings,
    timings_path,
)
from tests.book_audio import chapter_file
from tests.fakes.fake_sgl_omni_audio import wav_bytes

pytestmark = pytest.mark.slow  # real ffmpeg (chapter audio from chunk files)

RATE = 16000


def _tone(path: Path, seconds: float, freq: float = 220.0) -> Path:
    t = np.arange(int(seconds * RATE)) / RATE
    samples = (0.2 * np.sin(2 * np.pi * freq * t) * 32767).astype("<i2")
    path.write_bytes(wav_bytes(samples.tobytes(), rate=RATE, channels=1))
    return path


class CountingRecogniser:
    """Hears the known text evenly spread over the file (stands in for faster-whisper's words)."""

    name = "counting"

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.calls = 0

    def words(self, audio_path: Path, language: str | None) -> list[AsrWord]:
        self.calls += 1
        words = self.texts[audio_path.name].split()
        with wave.open(str(audio_path), "rb") as handle:
            length = handle.getnframes() / handle.getframerate()
        step = length / len(words)
        return [AsrWord(w, i * step, (i + 1) * step) for i, w in enumerate(words)]


def _chapter(tmp_path: Path, texts: list[str], lengths: list[float], pauses: list[int]) -> ChapterSource:
    chunks = []
    for n, (text, length, pause) in enumerate(zip(texts, lengths, pauses, strict=True)):
        chunks.append(ChunkSource(text, _tone(tmp_path / f"chunk{n}.wav", length, 200 + 50 * n), pause))
    path, seconds = chapter_file(
        [(c.audio_path, c.pause_after_ms) for c in chunks], tmp_path / "003-abc.flac", rate=RATE
    )
    return ChapterSource(
        number=3, title="The Pool of Tears", audio_path=path, duration_s=seconds, chunks=tuple(chunks)
    )


TEXTS = [
    "The Pool of Tears",
    "Curiouser and curiouser! cried Alice. She was so much surprised.",
    "Good-bye, feet! For when she looked down at her feet, they seemed almost out of sight.",
]


def test_chunk_starts_are_exact_and_timings_survive_a_restart(tmp_path: Path) -> None:
    source = _chapter(tmp_path, TEXTS, [1.0, 3.0, 4.0], [900, 400, 0])
    recogniser = CountingRecogniser({f"chunk{n}.wav": t for n, t in enumerate(TEXTS)})
    cache = WordCache(tmp_path / "words")
    timings = build_chapter_timings(source, recogniser=recogniser, cache=cache, language="en")
    assert recogniser.calls == 3 and timings.source == "asr"
    assert timings.chunk_starts_s == (0.0, 1.9, 5.3)
    firsts = [
        s
        for s in timings.sentences
        if s.index == 0 or s.chunk_index != timings.sentences[s.index - 1].chunk_index
    ]
    assert [round(s.start_s, 3) for s in firsts] == [0.0, 1.9, 5.3]
    assert [s.text for s in timings.sentences][1:3] == [
        "Curiouser and curiouser! cried Alice.",
        "She was so much surprised.",
    ]
    second = timings.sentences[2]  # 5 of the chunk's 10 words come before it
    assert abs(second.start_s - (1.9 + 1.5 - 0.04)) < 0.01
    assert all(
        a.end_s <= b.start_s + 1e-6 for a, b in zip(timings.sentences, timings.sentences[1:], strict=False)
    )
    assert timings.sentences[-1].end_s <= source.duration_s + 1e-6
    stored = json.loads(timings_path(source.audio_path).read_text())
    assert stored["number"] == 3 and len(stored["sentences"]) == len(timings.sentences)
    assert load_timings(source.audio_path) == timings

    # A restart: the same chapter is read back, nothing is transcribed again.
    again = build_chapter_timings(source, recogniser=recogniser, cache=cache, language="en")
    assert again == timings and recogniser.calls == 3
    # Even with the timings file gone, the word cache spares the transcription.
    timings_path(source.audio_path).unlink()
    build_chapter_timings(source, recogniser=recogniser, cache=cache, language="en")
    assert recogniser.calls == 3


def test_a_regenerated_chunk_rebuilds_the_chapter_timings(tmp_path: Path) -> None:
    source = _chapter(tmp_path, TEXTS, [1.0, 3.0, 4.0], [900, 400, 0])
    recogniser = CountingRecogniser({f"chunk{n}.wav": t for n, t in enumerate(TEXTS)})
    cache = WordCache(tmp_path / "words")
    first = build_chapter_timings(source, recogniser=recogniser, cache=cache)
    _tone(tmp_path / "chunk1.wav", 5.0, 330)  # a new take, longer
    rebuilt = _chapter(tmp_path, TEXTS, [1.0, 5.0, 4.0], [900, 400, 0])
    second = build_chapter_timings(rebuilt, recogniser=recogniser, cache=cache)
    assert second.fingerprint != first.fingerprint
    assert second.chunk_starts_s == (0.0, 1.9, 7.3)
    assert recogniser.calls == 4  # only the new take was transcribed


def test_subtitles_have_the_title_first_and_one_cue_per_sentence(tmp_path: Path) -> None:
    source = _chapter(tmp_path, TEXTS[1:], [3.0, 4.0], [400, 0])
    timings = build_chapter_timings(source, recogniser=None, cache=None)
    assert timings.source == "estimate"
    vtt = format_vtt(timings)
    cues = vtt.split("\n\n")[1:]
    assert vtt.startswith("WEBVTT\n\n")
    assert cues[0].splitlines() == ["1", "00:00:00.000 --> 00:00:02.000", "The Pool of Tears"]
    assert cues[1].splitlines()[1].startswith("00:00:00.000 --> ")  # the text starts at once
    texts = [" ".join(c.splitlines()[2:]) for c in cues if c.strip()]
    assert texts == ["The Pool of Tears", *[s.text for s in timings.sentences]]
    srt = format_srt(timings)
    assert srt.startswith("1\n00:00:00,000 --> 00:00:02,000\nThe Pool of Tears\n\n2\n00:00:00,000 --> ")
    assert "\n4\n00:00:03,400 --> " in srt  # the second chunk starts after 3 s of audio and 0.4 s of pause


def _qa_take(number: int, words: list[tuple[str, float, float]] | None, audio: Path | None) -> TakeRecord:
    return TakeRecord(
        number=number,
        seed=None,
        finish_reason="stop",
        duration_s=3.0,
        expected_s=3.0,
        duration_ratio=1.0,
        silence_share=0.0,
        longest_internal_silence_s=0.0,
        clipped_share=0.0,
        transcript="heard",
        words=tuple(words) if words is not None else None,
        audio_sha256=file_sha256(audio) if audio is not None else "",
    )


_HEARD = [
    ("Curiouser", 0.1, 0.5),
    ("and", 0.5, 0.6),
    ("curiouser!", 0.6, 1.0),
    ("cried", 1.0, 1.2),
    ("Alice.", 1.2, 1.5),
    ("She", 2.0, 2.1),
    ("was", 2.1, 2.2),
    ("so", 2.2, 2.3),
    ("much", 2.3, 2.5),
    ("surprised.", 2.5, 3.0),
]


def _save_qa(folder: Path, verdict: Verdict, chosen: int, *takes: TakeRecord) -> None:
    """The QA record of chunk1 (the second chunk of the chapter)."""
    QaStore(folder).save(
        ChunkRecord(key="chunk1", text=TEXTS[1], level="asr", verdict=verdict, chosen=chosen, takes=takes)
    )


def test_word_times_kept_by_qa_are_used_instead_of_transcribing_again(tmp_path: Path) -> None:
    from omni_web.readalong.asr import QaWords

    source = _chapter(tmp_path, TEXTS[:2], [1.0, 3.0], [500, 0])
    chunk = tmp_path / "chunk1.wav"
    # Take 1 failed (its words, if any, are not the book's); take 2 is the chunk file.
    _save_qa(tmp_path, Verdict.RETAKEN, 2, _qa_take(1, None, None), _qa_take(2, _HEARD, chunk))
    recogniser = CountingRecogniser({f"chunk{n}.wav": t for n, t in enumerate(TEXTS)})
    reuse = QaWords()
    timings = build_chapter_timings(source, recogniser=recogniser, cache=None, reuse=reuse)
    assert recogniser.calls == 1 and reuse.reused == 1  # only the chunk QA did not hear with word times
    she = next(s for s in timings.sentences if s.text.startswith("She"))
    assert abs(she.start_s - (1.5 + 2.0 - 0.04)) < 0.01  # QA's words, not the even spread
    assert timings.source == "asr"


def test_qa_words_are_not_used_for_audio_that_is_no_longer_the_chosen_take(tmp_path: Path) -> None:
    from omni_web.readalong.asr import QaWords

    source = _chapter(tmp_path, TEXTS[:2], [1.0, 3.0], [500, 0])
    chunk = tmp_path / "chunk1.wav"
    # Words stored on a take that is not the chosen one are ignored.
    _save_qa(tmp_path, Verdict.RETAKEN, 2, _qa_take(1, _HEARD, chunk), _qa_take(2, None, None))
    assert QaWords().words(chunk, "en") is None
    # The chosen take's words, but the file was replaced since (a run with QA off re-rendered it).
    _save_qa(tmp_path, Verdict.PASSED, 1, _qa_take(1, _HEARD, chunk))
    assert QaWords().words(chunk, "en") is not None
    _tone(chunk, 3.0, 440)
    recogniser = CountingRecogniser({f"chunk{n}.wav": t for n, t in enumerate(TEXTS)})
    reuse = QaWords()
    build_chapter_timings(source, recogniser=recogniser, cache=None, reuse=reuse)
    assert recogniser.calls == 2 and reuse.reused == 0
    # QA heard nothing in its chosen take: that is used as it is (times estimated), not heard again.
    _save_qa(tmp_path, Verdict.FLAGGED, 1, _qa_take(1, [], chunk))
    assert QaWords().words(chunk, "en") == []


def test_chunk_starts_recorded_by_mastering_are_used_as_they_are(tmp_path: Path) -> None:
    from omni_web.readalong.audio import encode_chapter_aac

    plain = _chapter(tmp_path, TEXTS, [1.0, 3.0, 4.0], [900, 400, 0])
    # A mastered-like chapter: 0.5 s of lead-in before the first chunk, encoded to AAC in MP4.
    led, _ = chapter_file(
        [(c.audio_path, c.pause_after_ms) for c in plain.chunks],
        tmp_path / "led.flac",
        rate=RATE,
        lead_in_ms=500,
    )
    m4a_s = encode_chapter_aac(led, tmp_path / "003-abc.mastered.m4a")
    source = ChapterSource(
        number=3,
        title=plain.title,
        audio_path=tmp_path / "003-abc.mastered.m4a",
        duration_s=m4a_s,
        chunks=plain.chunks,
        chunk_starts_s=(0.5, 2.4, 5.8),
    )
    timings = build_chapter_timings(source, recogniser=None, cache=None)
    assert timings.chunk_starts_s == (0.5, 2.4, 5.8)
    assert timings.sentences[0].start_s == 0.5
    assert timings_path(source.audio_path).name == "003-abc.mastered.timings.json"
    # The EPUB carries a mastered .m4a as it is (copied, not encoded again).
    copy_s = encode_chapter_aac(source.audio_path, tmp_path / "copy.m4a")
    assert abs(copy_s - m4a_s) < 0.03

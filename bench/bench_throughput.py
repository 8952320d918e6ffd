"""Benchmark: how well the renderer keeps the server busy, and what each chunk costs the app.

1. Throughput: C chunks of a generated book against the fake sgl-omni set to B parallel slots and a
   fixed per-request latency L. The ideal time is ceil(C/B)·L; efficiency = ideal ÷ measured.
   The same run at --concurrency 1 is printed beside it (its ideal is C·L at B slots, which is
   what a one-at-a-time tool gets).
2. Per-chunk overhead: the app's own work per chunk (request body, WAV header check, atomic file
   write), timed in-process, and the end-to-end time per chunk against a zero-latency server.

    .venv/bin/python bench/bench_throughput.py [--chunks 256] [--slots 8] [--latency 0.25]

Not a test: it prints numbers. The fake server is started and stopped by its own pid.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.catalog import get_entry  # noqa: E402
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice, build_speech_payload  # noqa: E402
from omni_web.render import RenderItem, chunk_key, render_chunks, shaping_fingerprint, wav_duration_s  # noqa: E402
from omni_web.render.renderer import _write_atomic  # noqa: E402
from tests.fakes.sgl_omni import start_fake_server  # noqa: E402

MODEL = "qwen3_tts_0_6b_customvoice"
WORDS = ("the quick brown fox jumps over a lazy dog while seven wizards quietly judge every boxer").split()


def generated_items(count: int, words_per_chunk: int, salt: str) -> list[RenderItem]:
    """A generated book: ``count`` distinct chunks of sentence-like text."""
    fingerprint = shaping_fingerprint({"bench": salt})
    items = []
    for i in range(count):
        text = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(words_per_chunk)).capitalize() + f" {i}."
        items.append(RenderItem(chunk_key(text, fingerprint), text, i // 20, i // 20 + 1, "Bench", i % 20 + 1))
    return items


def timed_render(base_url: str, items: list[RenderItem], concurrency: int, cache_dir: Path) -> float:
    entry = get_entry(MODEL)
    voice = VoiceChoice.speaker("Vivian")
    with SpeechClient(base_url) as client:
        def synthesize(item: RenderItem) -> bytes:
            return client.speech(entry, SpeechRequest(text=item.text, voice=voice)).audio

        started = time.perf_counter()
        render_chunks(items, synthesize, cache_dir=cache_dir, concurrency=concurrency)
        return time.perf_counter() - started


def throughput(chunks: int, slots: int, latency_s: float, words: int) -> None:
    env = {"FAKE_SGL_SLOTS": str(slots), "FAKE_SGL_LATENCY_S": str(latency_s), "FAKE_SGL_SECONDS_PER_WORD": "0.05"}
    with tempfile.TemporaryDirectory() as tmp, start_fake_server(MODEL, env=env, log_path=Path(tmp) / "fake.log") as server:
        print(f"throughput: C={chunks} chunks of {words} words, fake server B={slots} slots, L={latency_s:.3f} s/request")
        for concurrency in (slots, 1):
            count = chunks if concurrency > 1 else max(slots, chunks // 8)  # keep the serial run short
            items = generated_items(count, words, salt=f"c{concurrency}")
            measured = timed_render(server.base_url, items, concurrency, Path(tmp) / f"c{concurrency}")
            ideal_parallel = math.ceil(count / slots) * latency_s
            ideal_own = math.ceil(count / concurrency) * latency_s
            print(
                f"  --concurrency {concurrency:>2}: {count} chunks in {measured:7.2f} s; "
                f"efficiency vs ceil(C/{concurrency})*L = {ideal_own / measured:.3f}; "
                f"vs the B={slots} ideal ceil(C/B)*L = {ideal_parallel / measured:.3f}; "
                f"{count / measured:6.1f} chunks/s"
            )


def overhead(chunks: int, words: int) -> None:
    entry = get_entry(MODEL)
    voice = VoiceChoice.speaker("Vivian")
    with tempfile.TemporaryDirectory() as tmp, start_fake_server(
        MODEL, env={"FAKE_SGL_LATENCY_S": "0", "FAKE_SGL_SECONDS_PER_WORD": "0.3"}, log_path=Path(tmp) / "fake.log"
    ) as server:
        with SpeechClient(server.base_url) as client:
            audio = client.speech(entry, SpeechRequest(text=" ".join(WORDS[:words]), voice=voice)).audio
        samples = []
        target = Path(tmp) / "overhead"
        target.mkdir()
        for i in range(chunks):
            started = time.perf_counter()
            build_speech_payload(entry, SpeechRequest(text=f"chunk {i} " + " ".join(WORDS), voice=voice),
                                 inline_reference=False)
            wav_duration_s(audio)
            _write_atomic(target / f"{i}.wav", audio)
            samples.append(time.perf_counter() - started)
        median_ms = statistics.median(samples) * 1000
        p95_ms = sorted(samples)[int(len(samples) * 0.95)] * 1000
        print(f"per-chunk app overhead (request body + WAV check + atomic write of {len(audio)} bytes): "
              f"median {median_ms:.3f} ms, p95 {p95_ms:.3f} ms (target < 2 ms)")
        items = generated_items(chunks, words, salt="zero-latency")
        measured = timed_render(server.base_url, items, 8, Path(tmp) / "zero")
        print(f"end to end at zero latency, 8 in flight: {measured / chunks * 1000:.2f} ms per chunk "
              f"(includes the fake server synthesising {len(audio)} bytes of WAV per chunk)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=256)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--words", type=int, default=40)
    args = parser.parse_args()
    throughput(args.chunks, args.slots, args.latency, args.words)
    overhead(args.chunks, args.words)


if __name__ == "__main__":
    main()

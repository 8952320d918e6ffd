"""Benchmark: how full the renderer keeps the server, with no --concurrency, and what each chunk costs.

1. Fill: C chunks against the fake sgl-omni as a batching server of width W (W requests generated at
   once, each taking L; the waiting queue bounded at W, as the real Qwen3-TTS builds it:
   max_queued_requests = max_running_requests; beyond it 503 "The request queue is full.").
   The renderer gets the number in flight the app gives it with no flag: for a server it did not
   start, the in-flight controller (omni_web/client/inflight.py) from the catalog's start; for a
   managed server started with the throughput profile, the profile's width. Ideal time is
   ceil(C/W)*L; efficiency = ideal / measured (the share of the batch kept full). "reached" is the
   share of the book done when W requests were first in flight. Rows: widths 8, 32, 64; the real
   router in front of two workers of width 32 (if the contract venv is built); a managed-style
   server started with configs/qwen3_tts_throughput.yaml.
2. Per-chunk overhead: the app's own work per chunk (request body, WAV header check, atomic file
   write), timed in-process, and the end-to-end time per chunk against a zero-latency server.

    .venv/bin/python bench/bench_throughput.py [--latency 1.0] [--rounds 30] [--no-router]

Not a test: it prints numbers. Every server is started and stopped by its own pid.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.catalog import get_entry  # noqa: E402
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice, build_speech_payload  # noqa: E402
from omni_web.client.inflight import InFlightController  # noqa: E402
from omni_web.paths import CONFIGS_DIR  # noqa: E402
from omni_web.render import RenderItem, chunk_key, render_chunks, shaping_fingerprint, wav_duration_s  # noqa: E402
from omni_web.render.renderer import _write_atomic  # noqa: E402
from omni_web.retry import NO_RETRY  # noqa: E402
from omni_web.server.serving import ForeignServing, SingleServing  # noqa: E402
from omni_web.server.status import Endpoint  # noqa: E402
from omni_web.server.widths import configured_width  # noqa: E402
from tests.fakes.sgl_omni import start_fake_server  # noqa: E402

MODEL = "qwen3_tts_0_6b_customvoice"
WORDS = ("the quick brown fox jumps over a lazy dog while seven wizards quietly judge every boxer").split()


def generated_items(count: int, words_per_chunk: int, salt: str) -> list[RenderItem]:
    """A generated book: ``count`` distinct chunks of sentence-like text."""
    fingerprint = shaping_fingerprint({"bench": salt})
    items = []
    for i in range(count):
        text = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(words_per_chunk)).capitalize() + f" {i}."
        items.append(
            RenderItem(chunk_key(text, fingerprint), text, i // 20, i // 20 + 1, "Bench", i % 20 + 1)
        )
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


@dataclass(frozen=True, slots=True)
class FillRun:
    """One book rendered against a server of known width, with the number the app chose."""

    label: str
    width: int
    chunks: int
    latency_s: float
    wall_s: float
    reached_share: float | None  # share of the book done when `width` were first in flight
    refusals: int
    full_at: int | None
    peak: int
    audio_per_wall_s: float
    history: tuple[int, ...]

    @property
    def efficiency(self) -> float:
        return math.ceil(self.chunks / self.width) * self.latency_s / self.wall_s

    def row(self) -> str:
        reached = f"{self.reached_share:.1%}" if self.reached_share is not None else "never"
        ok = self.efficiency >= 0.9 and self.reached_share is not None and self.reached_share <= 0.1
        steps = "->".join(str(n) for n in self.history[:8]) + ("..." if len(self.history) > 8 else "")
        return (
            f"{self.label:<28} {self.width:>5} {self.latency_s:>4g} {self.chunks:>6} {self.wall_s:>7.1f} "
            f"{self.efficiency:>6.3f} "
            f"{reached:>8} {self.refusals:>7} {self.full_at or '-':>7} {self.peak:>5} "
            f"{self.audio_per_wall_s:>7.1f}  {steps}  {'ok' if ok and self.refusals <= 5 else 'NOT MET'}"
        )


HEADER = (
    f"{'server':<28} {'width':>5} {'L s':>4} {'chunks':>6} {'wall s':>7} {'eff.':>6} {'reached':>8} "
    f"{'refused':>7} {'full at':>7} {'peak':>5} {'audio/s':>7}  in flight set to"
)


def fill(
    label: str,
    base_url: str,
    controller: InFlightController,
    *,
    width: int,
    chunks: int,
    latency_s: float,
    work: Path,
    local: bool = True,
) -> FillRun:
    """Render ``chunks`` generated chunks with ``controller`` deciding the number in flight."""
    entry = get_entry(MODEL)
    voice = VoiceChoice.speaker("Vivian")
    items = generated_items(chunks, 10, salt=f"{label}-{time.time()}")
    reached: list[int] = []
    with (
        SpeechClient(base_url, local_server=local, speech_retry=NO_RETRY) as client,
        client.metered(controller),
    ):

        def synthesize(item: RenderItem) -> bytes:
            return client.speech(entry, SpeechRequest(text=item.text, voice=voice)).audio

        def progress(p: object) -> None:
            if not reached and controller.state().in_flight >= width:
                reached.append(getattr(p, "chunks_done", 0))

        started = time.perf_counter()
        summary = render_chunks(
            items,
            synthesize,
            cache_dir=work / label.replace(" ", "-"),
            concurrency=controller,
            progress=progress,
        )
        wall = time.perf_counter() - started
    state = controller.state()
    return FillRun(
        label,
        width,
        chunks,
        latency_s,
        wall,
        reached[0] / chunks if reached else None,
        state.refusals,
        state.full_at,
        state.peak_in_flight,
        summary.progress.rendered_audio_s / wall,
        tuple(controller.history),
    )


def fill_foreign(width: int, *, latency_s: float, rounds: int, work: Path) -> FillRun:
    """A server we did not start, of width ``width``: the controller finds it from the catalog's start."""
    env = {
        "FAKE_SGL_SLOTS": str(width),
        "FAKE_SGL_QUEUE_LIMIT": str(width),
        "FAKE_SGL_LATENCY_S": str(latency_s),
        "FAKE_SGL_SECONDS_PER_WORD": "0.1",
    }
    with start_fake_server(MODEL, env=env, log_path=work / f"fake-{width}.log") as server:
        endpoint = Endpoint(base_url=server.base_url, model_key=MODEL, model_id=MODEL, owned=False)
        serving = ForeignServing(endpoint, patience_s=60, batch=get_entry(MODEL).default_concurrency)
        controller = serving.in_flight(get_entry(MODEL).default_concurrency)
        return fill(
            f"foreign, width {width}",
            server.base_url,
            controller,
            width=width,
            chunks=rounds * width,
            latency_s=latency_s,
            work=work,
        )


def fill_managed_profile(*, latency_s: float, rounds: int, work: Path) -> FillRun:
    """A server started with the throughput profile: its config's width, kept from the first request."""
    config = CONFIGS_DIR / "qwen3_tts_throughput.yaml"
    width = configured_width(config) or 0
    env = {"FAKE_SGL_LATENCY_S": str(latency_s), "FAKE_SGL_SECONDS_PER_WORD": "0.1"}  # width from the config
    with start_fake_server(
        MODEL, env=env, extra_args=["--config", str(config)], log_path=work / "fake-profile.log"
    ) as server:
        endpoint = Endpoint(base_url=server.base_url, model_key=MODEL, model_id=MODEL, owned=True)
        controller = SingleServing(None, endpoint, width=width).in_flight(
            get_entry(MODEL).default_concurrency
        )  # type: ignore[arg-type]
        return fill(
            "managed, throughput profile",
            server.base_url,
            controller,
            width=width,
            chunks=rounds * width,
            latency_s=latency_s,
            work=work,
        )


def throughput(latency_s: float, rounds: int, router_latency_s: float | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(
            f"fill: fake servers of width W, L={latency_s:g} s per request, {rounds} batches' worth of "
            "chunks, "
            "queue bounded at W; no --concurrency"
        )
        print(HEADER)
        for width in (8, 32, 64):
            _row(lambda w=width: fill_foreign(w, latency_s=latency_s, rounds=rounds, work=work))
        if router_latency_s is not None:
            from bench_router import fill_behind_router  # noqa: PLC0415 - it imports this module

            # The real router is Python on this machine's CPU: at 32-64 answers a second it, not the
            # workers, is the bottleneck, so its rows run longer requests (16 a second at 4 s).
            for fixed in (None, 2 * (32 + 1)):  # found, then the B x N + N a managed group would keep
                _row(
                    lambda f=fixed: fill_behind_router(
                        workers=2,
                        width=32,
                        latency_s=router_latency_s,
                        rounds=min(rounds, 20),
                        work=work,
                        fixed=f,
                    )
                )
        _row(lambda: fill_managed_profile(latency_s=latency_s, rounds=rounds, work=work))


def _row(run: Callable[[], object]) -> None:
    """Print one row; a row whose servers would not start says so and the others still run."""
    try:
        result = run()
    except Exception as exc:  # noqa: BLE001 - a bench prints what failed and goes on
        print(f"  row failed: {type(exc).__name__}: {str(exc).splitlines()[0]}", flush=True)
        return
    print(result if isinstance(result, str) else result.row(), flush=True)


def overhead(chunks: int, words: int) -> None:
    entry = get_entry(MODEL)
    voice = VoiceChoice.speaker("Vivian")
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_fake_server(
            MODEL,
            env={"FAKE_SGL_LATENCY_S": "0", "FAKE_SGL_SECONDS_PER_WORD": "0.3"},
            log_path=Path(tmp) / "fake.log",
        ) as server,
    ):
        with SpeechClient(server.base_url) as client:
            audio = client.speech(entry, SpeechRequest(text=" ".join(WORDS[:words]), voice=voice)).audio
        samples = []
        target = Path(tmp) / "overhead"
        target.mkdir()
        for i in range(chunks):
            started = time.perf_counter()
            build_speech_payload(
                entry,
                SpeechRequest(text=f"chunk {i} " + " ".join(WORDS), voice=voice),
                inline_reference=False,
            )
            wav_duration_s(audio)
            _write_atomic(target / f"{i}.wav", audio)
            samples.append(time.perf_counter() - started)
        median_ms = statistics.median(samples) * 1000
        p95_ms = sorted(samples)[int(len(samples) * 0.95)] * 1000
        print(
            f"per-chunk app overhead (request body + WAV check + atomic write of {len(audio)} bytes): "
            f"median {median_ms:.3f} ms, p95 {p95_ms:.3f} ms (target < 2 ms)"
        )
        items = generated_items(chunks, words, salt="zero-latency")
        measured = timed_render(server.base_url, items, 8, Path(tmp) / "zero")
        print(
            f"end to end at zero latency, 8 in flight: {measured / chunks * 1000:.2f} ms per chunk "
            f"(includes the fake server synthesising {len(audio)} bytes of WAV per chunk)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--latency", type=float, default=1.0, help="seconds per request (the issue's books: 2)"
    )
    parser.add_argument("--rounds", type=int, default=30, help="chunks = rounds x width")
    parser.add_argument(
        "--router-latency", type=float, default=4.0, help="seconds per request behind the router"
    )
    parser.add_argument("--no-router", action="store_true", help="skip the row behind the real router")
    parser.add_argument("--chunks", type=int, default=128, help="chunks for the per-chunk overhead")
    parser.add_argument("--words", type=int, default=40)
    args = parser.parse_args()
    throughput(args.latency, args.rounds, None if args.no_router else args.router_latency)
    overhead(args.chunks, args.words)


if __name__ == "__main__":
    main()

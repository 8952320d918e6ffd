r"""Benchmark on a real GPU: audio seconds per GPU-second per model and requests in flight, and books per
GPU-hour.

For each installed model (or --models), omni-web starts its managed server as a job would (the
throughput profile where the card has room for it), then renders the same generated chunks at
each number in flight (--in-flight, plus "found": the controller a job with no flag uses), while
NVML samples GPU 0. Printed per row:

- audio s / wall s: seconds of audio returned per second of wall time;
- audio s / GPU-s: the same per GPU-second (one GPU held for the whole wall time);
- audio s / busy GPU-s: per second the GPU was busy (NVML utilisation), what the engine could do;
- books / GPU-h: 10-hour books (36,000 s of audio) per GPU-hour at the wall rate.

    .venv/bin/python bench/bench_gpu.py [--models qwen3_tts_0_6b_customvoice] [--chunks 256] \
        [--in-flight 1,16,64]

Needs an NVIDIA GPU (NVML), the sglang-omni backend installed and the model's weights in the cache
(Models tab / python -m omni_web models install). Anything missing: it prints why and exits 0.
Not a test: it prints numbers. The server is started and stopped by the app's own manager.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_throughput import generated_items  # noqa: E402

from omni_web.catalog import get_entry  # noqa: E402
from omni_web.client import SpeechRequest, VoiceChoice  # noqa: E402
from omni_web.client.inflight import InFlightController  # noqa: E402
from omni_web.gpu import probe_gpus  # noqa: E402
from omni_web.gpuwatch import GpuSampler  # noqa: E402
from omni_web.models.cache import installed_keys  # noqa: E402
from omni_web.paths import data_root_from_env  # noqa: E402
from omni_web.render import RenderItem, render_chunks  # noqa: E402
from omni_web.server import ServerManager  # noqa: E402
from omni_web.settings import load_settings  # noqa: E402

BOOK_AUDIO_S = 36_000.0  # a 10-hour audiobook


def skip_reason(models: list[str]) -> str | None:
    """Why this machine cannot run the bench, or None."""
    probe = probe_gpus()
    if not probe.available:
        return probe.warning or "no NVIDIA GPU answers NVML"
    if not models:
        return "no model is installed (Models tab, or python -m omni_web models install)"
    missing = [key for key in models if key not in installed_keys()]
    if missing:
        return f"model weights not in the cache: {', '.join(missing)} (install them from the Models tab)"
    return None


def voice_for(key: str) -> VoiceChoice:
    entry = get_entry(key)
    if entry.preset_voices:
        return VoiceChoice.speaker(entry.preset_voices[0])
    return VoiceChoice.speaker(entry.default_voice)


def measure(manager: ServerManager, key: str, in_flight: str, chunks: int, work: Path) -> str:
    entry = get_entry(key)
    serving = manager.ensure_serving(entry)
    controller = (
        serving.in_flight(entry.default_concurrency)
        if in_flight == "found"
        else InFlightController.fixed(int(in_flight), margin=False)
    )
    items = generated_items(chunks, 30, salt=f"gpu-{key}-{in_flight}-{time.time()}")
    sampler = GpuSampler(interval_s=0.5)
    sampling = sampler.start()
    with serving.open_client() as client, client.metered(controller):

        def synthesize(item: RenderItem) -> bytes:
            return client.speech(entry, SpeechRequest(text=item.text, voice=voice_for(key))).audio

        started = time.perf_counter()
        summary = render_chunks(
            items, synthesize, cache_dir=work / f"{key}-{in_flight}", concurrency=controller
        )
        wall = time.perf_counter() - started
    usage = sampler.stop() if sampling else None
    per_wall = summary.progress.rendered_audio_s / wall
    per_busy = usage.audio_per_gpu_s(per_wall) if usage is not None else None
    state = controller.state()
    return (
        f"{key:<30} {in_flight:>9} {state.peak_in_flight:>5} {per_wall:>11.1f} {per_wall:>10.1f} "
        f"{(f'{per_busy:.1f}' if per_busy else '-'):>14} {per_wall * 3600 / BOOK_AUDIO_S:>10.2f}  "
        f"{usage.line if usage else 'no NVML samples'}; {serving.endpoint.tag or 'memory-safe profile'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", default="", help="comma-separated catalog keys (default: every installed one)"
    )
    parser.add_argument("--chunks", type=int, default=256)
    parser.add_argument("--in-flight", default="1,16,64,found")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m] or sorted(installed_keys())
    reason = skip_reason(models)
    if reason is not None:
        print(f"bench_gpu skipped: {reason}")
        return 0
    paths = data_root_from_env()
    manager = ServerManager(paths, load_settings(paths))
    print(
        f"{'model':<30} {'in flight':>9} {'peak':>5} {'audio/wall':>11} {'audio/GPU-s':>10} "
        f"{'audio/busy GPU-s':>14} {'books/GPU-h':>10}  GPU"
    )
    try:
        with tempfile.TemporaryDirectory(prefix="bench-gpu-") as tmp:
            for key in models:
                for in_flight in args.in_flight.split(","):
                    print(measure(manager, key, in_flight, args.chunks, Path(tmp)), flush=True)
    finally:
        manager.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

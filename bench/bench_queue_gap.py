"""Benchmark: how long the server sits idle between books when several are queued at once.

Three short generated books are queued together against the fake sgl-omni (B slots, latency L per
request, used as a remote server). A probe polls the server's ``/health`` every 20 ms and records
when requests are in flight; every idle stretch between the first and the last request is an idle
gap. With the worker's hand-off (the next book starts once the previous one's last chunks are in
flight) the gaps between books should stay under 2 s; the run without it (``overlap=None``: the
next book starts only after the previous one is mastered and joined) is printed beside it.

    .venv/bin/python bench/bench_queue_gap.py [--books 3] [--slots 4] [--latency 1.0] [--paragraphs 18]

Not a test: it prints numbers. The fake server is started and stopped by its own pid.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.client import SpeechClient  # noqa: E402
from omni_web.jobs import JobState, JobWorker  # noqa: E402
from omni_web.library import (  # noqa: E402
    CONVERT_JOB,
    Preset,  # noqa: E402
    make_convert_runner,
    same_server_work,
)
from omni_web.paths import DataPaths  # noqa: E402
from omni_web.services import AppServices  # noqa: E402
from tests.epub_builder import make_epub, xhtml  # noqa: E402
from tests.fakes.sgl_omni import start_fake_server  # noqa: E402

MODEL = "qwen3_tts_0_6b_customvoice"
_MARK = re.compile(r" (\d+)\.\d+\.\d+\.")
WORDS = "the quick brown fox jumps over a lazy dog while seven wizards quietly judge every boxer".split()


def make_book(path: Path, number: int, chapters: int, paragraphs: int) -> Path:
    docs = []
    for c in range(chapters):
        paras = "".join(
            f"<p>{' '.join(WORDS[(p + c + number) % len(WORDS) :] + WORDS)[:180].capitalize()} "
            f"{number}.{c}.{p}.</p>"
            for p in range(paragraphs)
        )
        docs.append((f"c{c}.xhtml", xhtml(f"<h1>Chapter {c + 1}</h1>{paras}")))
    return make_epub(path, docs, title=f"Bench book {number}", author="Bench")


class RequestTimes:
    """Every speech request's (book, start, end), from a wrapper around the client (the books' texts
    carry their number, ``" 2.0.3."``)."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, float, float]] = []
        self._lock = threading.Lock()
        self._original = SpeechClient.speech

    def __enter__(self) -> RequestTimes:
        original, spans, lock = self._original, self.spans, self._lock

        def speech(client, entry, request, *args, **kwargs):
            start = time.monotonic()
            try:
                return original(client, entry, request, *args, **kwargs)
            finally:
                match = _MARK.search(request.text)
                with lock:
                    spans.append((int(match.group(1)) if match else -1, start, time.monotonic()))

        SpeechClient.speech = speech
        return self

    def __exit__(self, *exc: object) -> None:
        SpeechClient.speech = self._original

    def boundaries(self, books: int) -> list[float]:
        """Per boundary k -> k+1: next book's first request start minus this book's last request end
        (negative: they overlapped by that much, so the server was not idle)."""
        out = []
        for k in range(books - 1):
            last_end = max(end for book, _, end in self.spans if book == k)
            first_start = min(start for book, start, _ in self.spans if book == k + 1)
            out.append(first_start - last_end)
        return out


class BusyProbe:
    """Polls /health; keeps (time, requests in flight) samples."""

    def __init__(self, base_url: str, interval_s: float = 0.02) -> None:
        self.samples: list[tuple[float, int]] = []
        self._url = f"{base_url}/health"
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> BusyProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        with httpx.Client(timeout=5) as client:
            while not self._stop.is_set():
                try:
                    states = client.get(self._url).json().get("request_states", {})
                    self.samples.append((time.monotonic(), sum(states.values())))
                except httpx.HTTPError:
                    pass
                self._stop.wait(self._interval)

    def idle_gaps(self, min_s: float = 0.05) -> list[tuple[float, float]]:
        """(start, length) of every idle stretch between the first and the last busy sample."""
        busy = [i for i, (_, n) in enumerate(self.samples) if n]
        if not busy:
            return []
        gaps, start = [], None
        for t, n in self.samples[busy[0] : busy[-1] + 1]:
            if n == 0 and start is None:
                start = t
            elif n and start is not None:
                if t - start >= min_s:
                    gaps.append((start, t - start))
                start = None
        return gaps


def run(books: int, paragraphs: int, slots: int, overlap: bool, tmp: Path, server_url: str) -> None:
    paths = DataPaths(root=tmp / ("overlap" if overlap else "serial")).ensure()
    paths.settings_file.write_text(
        yaml.safe_dump({"remote_url": server_url, "concurrency": slots}), encoding="utf-8"
    )
    services = AppServices.create(paths)
    worker = JobWorker(
        services.library.jobs,
        {CONVERT_JOB: make_convert_runner(paths, services.server)},
        idle_poll_s=0.2,
        overlap=same_server_work if overlap else None,
    )
    preset = Preset(name="bench", model_key=MODEL, voice={"kind": "speaker", "name": "Vivian"})
    services.library.queue.pause()  # queue all three first, as a user dropping them at once
    jobs = [
        services.library.submit_book(
            make_book(tmp / f"book-{overlap}-{n}.epub", n, 3, paragraphs), preset=preset
        )
        for n in range(books)
    ]
    with BusyProbe(server_url) as probe, RequestTimes() as requests:
        started = time.monotonic()
        services.library.queue.resume()
        worker.start()
        try:
            while not all(services.library.jobs.get(j.id).state.finished for j in jobs):
                time.sleep(0.1)
        finally:
            worker.stop()
        wall = time.monotonic() - started
    states = [services.library.jobs.get(j.id) for j in jobs]
    assert all(j.state is JobState.DONE for j in states), [j.error for j in states]
    gaps = probe.idle_gaps()
    chunks = sum(int(j.result.get("chunks_total") or 0) for j in states)
    label = (
        "hand-off (next book starts while the last chunks render)"
        if overlap
        else "no overlap (one book after the other)"
    )
    print(f"  {label}: {books} books, {chunks} chunks in {wall:.1f} s")
    edges = requests.boundaries(books)
    print(
        "    between books (next book's first request start - this book's last request end; <= 0: no idle): "
        + ", ".join(f"{gap:+.2f} s" for gap in edges)
        + f"; worst idle {max(max(edges), 0.0):.2f} s"
    )
    longest = max((length for _, length in gaps), default=0.0)
    print(
        f"    /health: idle stretches >= 50 ms anywhere between the first and the last request: {len(gaps)}; "
        f"longest {longest:.2f} s; total {sum(length for _, length in gaps):.2f} s"
    )
    for at, length in gaps:
        if length >= 0.5:
            print(f"      idle {length:.2f} s at +{at - started:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, default=3)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument(
        "--paragraphs", type=int, default=18, help="per chapter (3 chapters; about one chunk each)"
    )
    args = parser.parse_args()
    env = {
        "FAKE_SGL_SLOTS": str(args.slots),
        "FAKE_SGL_LATENCY_S": str(args.latency),
        "FAKE_SGL_SECONDS_PER_WORD": "0.05",
        "FAKE_SGL_WARMUP_S": "0",
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_fake_server(MODEL, env=env, log_path=Path(tmp) / "fake.log") as server,
    ):
        print(f"queue gap: fake server B={args.slots} slots, L={args.latency:.2f} s/request")
        for overlap in (True, False):
            run(args.books, args.paragraphs, args.slots, overlap, Path(tmp), server.base_url)
    return 0


if __name__ == "__main__":
    sys.exit(main())

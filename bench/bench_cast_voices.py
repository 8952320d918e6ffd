r"""Benchmark: does a full cast (a voice per main character, lines said their way) still fill the
server's batch? The same chapters rendered one voice, with a dialogue voice, and with the cast the
app picks with no click (eight Qwen3-TTS speakers, delivery labels on), against the fake sgl-omni
with B parallel slots and a per-request time that grows with the words. Slot fill is the time
requests spent in flight divided by (render time x B), the render time running from the first
request to the last answer ("voices" counts voice and delivery pairs); the cast's fill over the plain
book's is the efficiency the cast keeps. Short narration requests (4 words or fewer: "said the
Hatter") would be attribution fragments cut off their quote's narration.

    .venv/bin/python bench/bench_cast_voices.py [--book tests/data/pg11-alice.epub] [--slots 16] \
        [--chapters 12,13]

Not a test: it prints a table. The fake server is started and stopped by its own pid.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.book import load_book  # noqa: E402
from omni_web.cast import CastFile, saved_cast_path  # noqa: E402
from omni_web.cast.autocast import render_cast  # noqa: E402
from omni_web.catalog import get_entry  # noqa: E402
from omni_web.client import SpeechClient, VoiceChoice  # noqa: E402
from omni_web.paths import DataPaths  # noqa: E402
from omni_web.pipeline import ConvertRequest, plan_conversion, run_conversion  # noqa: E402
from omni_web.settings import Settings  # noqa: E402
from omni_web.voices import VoiceLibrary  # noqa: E402
from tests.fakes.sgl_omni import start_fake_server  # noqa: E402

MODEL = "qwen3_tts_0_6b_customvoice"


class TimedClient(SpeechClient):
    """A speech client that keeps how long each request was in flight."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.busy_s = 0.0
        self.first: float | None = None
        self.last = 0.0
        self._lock = threading.Lock()

    def speech(self, entry, request):  # noqa: ANN001, ANN201 - the client's own signature
        started = time.perf_counter()
        try:
            return super().speech(entry, request)
        finally:
            ended = time.perf_counter()
            with self._lock:
                self.busy_s += ended - started
                self.first = started if self.first is None else min(self.first, started)
                self.last = max(self.last, ended)

    @property
    def render_s(self) -> float:
        """From the first request sent to the last answer."""
        return self.last - (self.first or self.last)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--book", type=Path, default=ROOT / "tests" / "data" / "pg11-alice.epub")
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--chapters", default="12,13")
    args = parser.parse_args()
    book = load_book(args.book)
    entry = get_entry(MODEL)
    chapters = tuple(int(n) for n in args.chapters.split(","))
    base = ConvertRequest(
        book_path=args.book,
        model_key=MODEL,
        voice=VoiceChoice.speaker("Vivian"),
        chapters=chapters,
        concurrency=args.slots,
    )
    # A request's time grows with its words, as a real server's does (0.02 s fixed + the audio at 200x).
    env = {
        "FAKE_SGL_SLOTS": str(args.slots),
        "FAKE_SGL_LATENCY_S": "0.02",
        "FAKE_SGL_SECONDS_PER_WORD": "0.01",
    }
    rows = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_fake_server(MODEL, env=env, log_path=Path(tmp) / "f.log") as srv,
    ):
        paths = DataPaths(Path(tmp) / "root").ensure()
        CastFile(book="bench", auto=True).save(saved_cast_path(paths, book))
        full = render_cast(paths, book, entry, VoiceLibrary(paths))
        assert full is not None
        dialogue = replace(full, dialogue=VoiceChoice.speaker("Ryan"), characters=(), delivery=False)
        casts = (("one voice", None), ("dialogue voice", dialogue), ("full cast + delivery", full))
        for label, cast in casts:
            request = replace(base, cast=cast)
            items = plan_conversion(book, request, entry, Settings()).items
            fragments = sum(1 for i in items if i.speaker == "" and len(i.text.split()) <= 4)
            voices = len({repr(i.voice) for i in items})
            run_paths = DataPaths(Path(tmp) / label.replace(" ", "-").replace("+", "")).ensure()
            started = time.perf_counter()
            with TimedClient(srv.base_url) as client:
                run_conversion(request, paths=run_paths, settings=Settings(), client=client, book=book)
                wall = time.perf_counter() - started
                fill = client.busy_s / (client.render_s * args.slots)
            rows.append(
                (
                    label,
                    voices,
                    len(items),
                    sum(len(i.text.split()) for i in items) / len(items),
                    fragments,
                    client.render_s,
                    wall,
                    fill,
                )
            )
    plain_fill = rows[0][-1]
    print(f"{args.book.name}, chapters {chapters}, fake server B={args.slots} slots")
    print(
        f"{'run':<22}{'voices':>7}{'requests':>10}{'words/req':>10}{'fragments':>10}{'render s':>9}"
        f"{'wall s':>8}{'slot fill':>10}{'vs plain':>9}"
    )
    for label, voices, count, words, fragments, render_s, wall, fill in rows:
        print(
            f"{label:<22}{voices:>7}{count:>10}{words:>10.1f}{fragments:>10}{render_s:>9.2f}{wall:>8.2f}"
            f"{fill:>10.2f}{fill / plain_fill:>9.2f}"
        )


if __name__ == "__main__":
    main()

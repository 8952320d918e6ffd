from __future__ import annotations

import errno
import threading
import time
from pathlib import Path

import pytest

from omni_web.errors import ChunkFailed, DiskFullError, JobCancelled, ServerUnavailable, SpeechError
from omni_web.render import (
    RenderItem,
    RetryPolicy,
    chunk_key,
    render_chunks,
    shaping_fingerprint,
    wav_duration_s,
)
from tests.audio import wav_bytes


def make_wav(seconds: float, rate: int = 24000) -> bytes:
    return wav_bytes(seconds, rate)


def items(count: int, chapter: int = 0) -> list[RenderItem]:
    fp = shaping_fingerprint({"model": "m", "voice": "v"})
    return [
        RenderItem(
            key=chunk_key(f"text {chapter} {i}", fp),
            text=f"text {chapter} {i}",
            chapter_index=chapter,
            chapter_number=chapter + 1,
            chapter_title=f"Chapter {chapter + 1}",
            chunk_number=i + 1,
        )
        for i in range(count)
    ]


class CountingSynth:
    def __init__(self, latency_s: float = 0.0, seconds: float = 0.5) -> None:
        self.latency_s = latency_s
        self.seconds = seconds
        self.calls: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()

    def __call__(self, item: RenderItem) -> bytes:
        with self.lock:
            self.calls.append(item.text)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        time.sleep(self.latency_s)
        with self.lock:
            self.in_flight -= 1
        return make_wav(self.seconds)


def test_keys_change_with_what_shapes_the_audio() -> None:
    a = shaping_fingerprint({"model": "m", "voice": "v"})
    b = shaping_fingerprint({"model": "m", "voice": "w"})
    assert chunk_key("hello", a) != chunk_key("hello", b)
    assert chunk_key("hello", a) == chunk_key("hello", shaping_fingerprint({"voice": "v", "model": "m"}))


def test_keeps_n_requests_in_flight_and_writes_every_chunk(tmp_path: Path) -> None:
    synth = CountingSynth(latency_s=0.05)
    seen = []
    summary = render_chunks(items(24), synth, cache_dir=tmp_path, concurrency=6, progress=seen.append)
    assert synth.max_in_flight == 6
    assert len(synth.calls) == 24
    assert all(wav_duration_s(p) == pytest.approx(0.5) for p in summary.paths.values())
    assert summary.progress.chunks_done == 24 and summary.progress.audio_s == pytest.approx(12.0)
    assert seen[-1].fraction == 1.0 and seen[-1].realtime_factor > 0


def test_resume_renders_only_missing_chunks(tmp_path: Path) -> None:
    work = items(10)
    render_chunks(work[:6], CountingSynth(), cache_dir=tmp_path, concurrency=3)
    (tmp_path / f"{work[2].key}.wav").write_bytes(b"garbage")  # a damaged file is redone
    synth = CountingSynth()
    summary = render_chunks(work, synth, cache_dir=tmp_path, concurrency=3)
    assert sorted(synth.calls) == sorted([work[2].text] + [w.text for w in work[6:]])
    assert summary.progress.chunks_cached == 5
    assert summary.progress.eta_s == 0


def test_failed_chunk_names_chapter_chunk_and_text(tmp_path: Path) -> None:
    def synth(item: RenderItem) -> bytes:
        if item.text == "text 2 3":
            raise SpeechError("input must be at most 4096 characters", status_code=400)
        return make_wav(0.1)

    with pytest.raises(ChunkFailed) as info:
        render_chunks(items(5, chapter=2), synth, cache_dir=tmp_path, concurrency=1)
    message = str(info.value)
    assert "Chunk 4 of chapter 3" in message and "text 2 3" in message and "4096" in message
    assert info.value.chunk_number == 4
    # The chunks before it are on disk for a resume.
    assert len(list(tmp_path.glob("*.wav"))) == 3


def test_transient_errors_are_retried_with_backoff(tmp_path: Path) -> None:
    failures = {"n": 2}
    sleeps: list[float] = []

    def synth(item: RenderItem) -> bytes:
        if failures["n"]:
            failures["n"] -= 1
            raise SpeechError("CUDA out of memory", status_code=500)
        return make_wav(0.1)

    render_chunks(items(1), synth, cache_dir=tmp_path, concurrency=1, sleep=sleeps.append,
                  retry=RetryPolicy(attempts=3, backoff_s=1.0))
    assert sleeps == [1.0, 2.0]


def test_dead_server_is_recovered_and_the_job_goes_on(tmp_path: Path) -> None:
    state = {"alive": False, "recoveries": 0}

    def synth(item: RenderItem) -> bytes:
        if not state["alive"]:
            raise ServerUnavailable("connection refused")
        return make_wav(0.1)

    def recover(exc: Exception) -> bool:
        state["recoveries"] += 1
        state["alive"] = True
        return True

    summary = render_chunks(items(4), synth, cache_dir=tmp_path, concurrency=1, recover=recover,
                            sleep=lambda s: None)
    assert state["recoveries"] == 1 and summary.progress.chunks_done == 4


def test_cancel_stops_submitting(tmp_path: Path) -> None:
    synth = CountingSynth(latency_s=0.02)
    flag = threading.Event()

    def progress(p) -> None:
        if p.chunks_done >= 3:
            flag.set()

    with pytest.raises(JobCancelled):
        render_chunks(
            items(50), synth, cache_dir=tmp_path, concurrency=2, cancelled=flag.is_set, progress=progress
        )
    assert len(synth.calls) < 10


def test_disk_full_stops_with_a_clear_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = Path.write_bytes

    def full(self: Path, data: bytes) -> int:
        if self.name.endswith(".partial"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(self, data)

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(DiskFullError, match="is full"):
        render_chunks(items(2), CountingSynth(), cache_dir=tmp_path, concurrency=1)
    assert not list(tmp_path.iterdir())

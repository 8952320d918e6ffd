"""QA says when it is behind the server: takes waiting for speech recognition are counted."""

from __future__ import annotations

import threading

from omni_web.pipeline.progress import QaProgress
from omni_web.qa import AsrPool
from tests.fakes.fake_sgl_omni_audio import wav_bytes


class _SlowRecogniser:
    name = "slow"

    def __init__(self, release: threading.Event) -> None:
        self._release = release

    def covers(self, language: str | None) -> bool:
        return True

    def transcribe(self, wav: bytes, language: str | None) -> str:
        assert self._release.wait(60), "the test never released the recogniser"
        return "heard"


def test_the_pool_counts_takes_waiting_for_their_transcript_and_the_line_says_so() -> None:
    release = threading.Event()
    pool = AsrPool(lambda: _SlowRecogniser(release))
    wav = wav_bytes(b"\x00\x00" * 24000, rate=24000, channels=1)  # 1 s
    try:
        futures = [pool.submit(wav, "en") for _ in range(5)]
        assert pool.pending == 5
        line = QaProgress(level="asr", passed=3, behind=pool.pending).line
        assert line == "QA 3 passed, 0 retaken, 0 flagged; QA 5 chunks behind the server"
        release.set()
        assert [f.result(timeout=60) for f in futures] == ["heard"] * 5
        assert pool.pending == 0 and abs(pool.heard_audio_s - 5.0) < 1e-6
        assert "behind" not in QaProgress(level="asr", passed=8, behind=pool.pending).line
    finally:
        release.set()
        pool.close()
